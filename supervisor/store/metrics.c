// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "lib/atomic.h"
#include "metrics.h"
#include "lib/cleanup.h"
#include "lib/termtext.h"

#define MAX_SERIES 512

static const struct {
	const char *name, *help;
} metric_help[] = {
	{ "lgrun_trips_total", "Sessions stopped by the lgrun guard." },
	{ "lgrun_events_total", "Events the guard saw, by source." },
	{ "lgrun_shim_dropped_events_total",
	  "Events the preload shim could not send (socket full)." },
	{ "lgrun_shim_refused_connections_total",
	  "Control-socket peers refused: not in the session's tree." },
	{ "lgrun_shim_malformed_frames_total",
	  "Malformed shim frames, counted and dropped." },
	{ "lgrun_gated_calls_total", "Tool calls held for a verdict." },
};

struct series {
	char name[64];
	char labels[320];
	unsigned long long n;
};

/*
 * A label value as the text format wants it: \\, \" and \n escaped, valid
 * UTF-8 (U+FFFD for bytes that are not, and for other control
 * characters), cut at a whole character.
 */
void lg_metrics_label(const char *s, char *out, size_t size)
{
	const unsigned char *c = (const unsigned char *)(s ? s : "");
	size_t o = 0, n = strlen((const char *)c);

	for (size_t i = 0; i < n;) {
		unsigned cp = 0;
		size_t len = lg_utf8_len(c + i, n - i, &cp);
		const char *put = (const char *)c + i;
		size_t k = len;

		if (cp == '\\' && len) {
			put = "\\\\";
			k = 2;
		} else if (cp == '"' && len) {
			put = "\\\"";
			k = 2;
		} else if (cp == '\n' && len) {
			put = "\\n";
			k = 2;
		} else if (!len || cp < 0x20 || (cp >= 0x7f && cp < 0xa0)) {
			put = "\xef\xbf\xbd";
			k = 3;
		}
		if (o + k + 1 > size)
			break;
		memcpy(out + o, put, k);
		o += k;
		i += len ? len : 1;
	}
	if (size)
		out[o] = '\0';
}

/* "name{labels} value" or "name value" */
static int parse(const char *line, struct series *s)
{
	const char *sp = strrchr(line, ' ');
	const char *br = strchr(line, '{');
	size_t nl;

	if (!sp || line[0] == '#')
		return -1;
	nl = br && br < sp ? (size_t)(br - line) : (size_t)(sp - line);
	if (!nl || nl >= sizeof(s->name))
		return -1;
	memcpy(s->name, line, nl);
	s->name[nl] = '\0';
	s->labels[0] = '\0';
	if (br && br < sp) {
		const char *end = strrchr(line, '}');

		if (!end || end > sp ||
		    (size_t)(end - br - 1) >= sizeof(s->labels))
			return -1;
		memcpy(s->labels, br + 1, (size_t)(end - br - 1));
		s->labels[end - br - 1] = '\0';
	}
	s->n = strtoull(sp + 1, NULL, 10);
	return 0;
}

static const char *help_of(const char *name)
{
	for (size_t i = 0; i < sizeof(metric_help) / sizeof(metric_help[0]);
	     i++)
		if (strcmp(metric_help[i].name, name) == 0)
			return metric_help[i].help;
	return "lgrun counter.";
}

struct series_out {
	const struct series *s;
	size_t n;
};
/* lg_write_atomic's fill: grouped by name, each with its HELP and TYPE once. */
static int write_series(int fd, void *ctx)
{
	const struct series_out *o = ctx;
	const struct series *s = o->s;
	int dfd = dup(fd), r = 0;
	FILE *f = dfd < 0 ? NULL : fdopen(dfd, "w");

	if (!f) {
		r = -errno;
		if (dfd >= 0)
			close(dfd);
		return r;
	}
	for (size_t i = 0; i < o->n; i++) {
		bool first = true;

		for (size_t j = 0; j < i && first; j++)
			if (strcmp(s[j].name, s[i].name) == 0)
				first = false;
		if (!first)
			continue;
		fprintf(f, "# HELP %s %s\n# TYPE %s counter\n", s[i].name,
			help_of(s[i].name), s[i].name);
		for (size_t j = i; j < o->n; j++) {
			if (strcmp(s[j].name, s[i].name) != 0)
				continue;
			if (s[j].labels[0])
				fprintf(f, "%s{%s} %llu\n", s[j].name,
					s[j].labels, s[j].n);
			else
				fprintf(f, "%s %llu\n", s[j].name, s[j].n);
		}
	}
	if (fflush(f) != 0)
		r = -errno;
	if (fclose(f) != 0 && !r)
		r = -errno;
	return r;
}

int lg_metrics_add(const char *path, const struct lg_metric_inc *inc,
		   size_t ninc)
{
	static struct series s[MAX_SERIES];
	char lock[PATH_MAX + 8], line[512];
	size_t n = 0;
	LG_AUTOCLOSE int lfd = -1; /* held locked until the return */
	int fd;
	FILE *f;

	snprintf(lock, sizeof(lock), "%s.lock", path);
	/* never through a symlink: a name someone else planted */
	lfd = open(lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0640);
	if (lfd < 0)
		return -errno;
	if (flock(lfd, LOCK_EX) < 0)
		return -errno;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	f = fd < 0 ? NULL : fdopen(fd, "r");
	if (!f && fd >= 0)
		close(fd);
	if (f) {
		while (fgets(line, sizeof(line), f) && n < MAX_SERIES) {
			line[strcspn(line, "\n")] = '\0';
			if (parse(line, &s[n]) == 0)
				n++;
		}
		fclose(f);
	}
	for (size_t k = 0; k < ninc; k++) {
		size_t i;

		for (i = 0; i < n; i++)
			if (strcmp(s[i].name, inc[k].name) == 0 &&
			    strcmp(s[i].labels, inc[k].labels) == 0)
				break;
		if (i == n) {
			if (n == MAX_SERIES)
				continue;
			snprintf(s[n].name, sizeof(s[n].name), "%s",
				 inc[k].name);
			snprintf(s[n].labels, sizeof(s[n].labels), "%s",
				 inc[k].labels);
			s[n++].n = 0;
		}
		s[i].n += inc[k].n;
	}
	/* no fsync: a counter may lose an increment in a crash, not its file */
	return lg_write_atomic(path, 0640, false, write_series,
			       &(struct series_out){ s, n });
}

int lg_metrics_count_trip(const char *path, const char *agent,
			  const char *reason)
{
	char ea[128], er[128], labels[320];
	struct lg_metric_inc inc;

	lg_metrics_label(agent ? agent : "", ea, sizeof(ea));
	lg_metrics_label(reason, er, sizeof(er));
	snprintf(labels, sizeof(labels), "agent=\"%s\",reason=\"%s\"", ea, er);
	inc = (struct lg_metric_inc){ "lgrun_trips_total", labels, 1 };
	return lg_metrics_add(path, &inc, 1);
}
