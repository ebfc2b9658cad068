// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "audit.h"
#include "lib/json.h"

/*
 * The civil date of a day since 1970-01-01 (proleptic Gregorian, in eras of
 * 400 years). Not gmtime_r: glibc reads /etc/localtime at its first call.
 */
static void civil(int64_t days, int *y, int *m, int *d)
{
	int64_t z = days + 719468, era = (z >= 0 ? z : z - 146096) / 146097;
	int64_t doe = z - era * 146097; /* [0, 146096] */
	int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100); /* from March */
	int64_t mp = (5 * doy + 2) / 153;

	*d = (int)(doy - (153 * mp + 2) / 5 + 1);
	*m = (int)(mp < 10 ? mp + 3 : mp - 9);
	*y = (int)(yoe + era * 400 + (*m <= 2));
}

static int64_t floor_div(int64_t a, int64_t b)
{
	return a / b - (a % b < 0);
}

void lg_time_iso(int64_t real_ns, char *buf, size_t size)
{
	int64_t ms = floor_div(real_ns, 1000000), s = floor_div(ms, 1000);
	int64_t days = floor_div(s, 86400), sec = s - days * 86400;
	int y, m, d;

	civil(days, &y, &m, &d);
	snprintf(buf, size, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", y, m, d,
		 (int)(sec / 3600), (int)(sec / 60 % 60), (int)(sec % 60),
		 (int)(ms - s * 1000));
}

void lg_audit_begin(struct lg_json *j, int64_t now, const char *session,
		    const char *tag, char *id_out, size_t id_size)
{
	char t[40], id[256], own[32];

	if (!tag) {
		snprintf(own, sizeof(own), "%lld", (long long)(now / 1000000));
		tag = own;
	}
	lg_time_iso(now, t, sizeof(t));
	snprintf(id, sizeof(id), "%s#%s", session, tag);
	lg_json_begin(j);
	lg_json_str(j, "time", t);
	lg_json_str(j, "id", id);
	lg_json_str(j, "session", session);
	if (id_out)
		snprintf(id_out, id_size, "%s", id);
}

void lg_audit_falco(struct lg_json *j, const char *session, const char *agent,
		    const char *event, const struct lg_falco *f)
{
	struct lg_json o = { 0 }, t = { 0 };
	char host[256] = "";

	gethostname(host, sizeof(host) - 1);
	lg_json_str(j, "priority", f->priority);
	lg_json_str(j, "output", f->output ? f->output : event);
	lg_json_str(j, "source", "lgrun");
	lg_json_str(j, "hostname", host);
	lg_json_append(&t, "[\"lgrun\",", 9);
	lg_json_quote(&t, event);
	if (f->rule) {
		lg_json_append(&t, ",", 1);
		lg_json_quote(&t, f->rule);
	}
	lg_json_append(&t, "]", 1);
	lg_json_raw(j, "tags", t.buf ? t.buf : "[]");
	lg_json_begin(&o);
	lg_json_str(&o, "lgrun.session", session);
	if (agent)
		lg_json_str(&o, "lgrun.agent", agent);
	lg_json_str(&o, "lgrun.event", event);
	if (f->rule)
		lg_json_str(&o, "lgrun.rule", f->rule);
	if (f->op)
		lg_json_str(&o, "evt.type", f->op);
	if (f->target)
		lg_json_str(&o, "fd.name", f->target);
	if (f->pid > 0)
		lg_json_int(&o, "proc.pid", f->pid);
	if (f->exe && *f->exe)
		lg_json_str(&o, "proc.name", f->exe);
	lg_json_raw(j, "output_fields", lg_json_end(&o));
	lg_json_free(&o);
	lg_json_free(&t);
}

int lg_audit_append(const char *path, const char *line, bool sync)
{
	struct iovec iov[3] = { { "\n", 1 },
				{ (void *)line, strlen(line) },
				{ "\n", 1 } };
	struct stat st;
	char last = '\n';
	int fd, r = 0;

	fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
		  0640);
	if (fd < 0)
		fd = open(path,
			  O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW |
				  O_CLOEXEC,
			  0640);
	if (fd < 0)
		return -errno;
	/*
	 * A record starts on a line of its own: a half line someone else
	 * left at the end does not swallow it.
	 */
	if (fstat(fd, &st) == 0 && st.st_size > 0 &&
	    pread(fd, &last, 1, st.st_size - 1) != 1)
		last = '\n';
	/* One writev: concurrent sessions sharing the log never interleave. */
	if (last == '\n' ? writev(fd, iov + 1, 2) < 0 : writev(fd, iov, 3) < 0)
		r = -errno;
	if (!r && sync && fsync(fd) < 0)
		r = -errno;
	close(fd);
	return r;
}
