// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "metrics.h"

#define MAX_SERIES 256

struct series {
	char labels[320];
	unsigned long long n;
};

/* Label values are escaped as the text format wants. */
static void label_escape(const char *s, char *out, size_t size)
{
	size_t o = 0;

	for (; *s && o + 3 < size; s++) {
		if (*s == '\\' || *s == '"') {
			out[o++] = '\\';
			out[o++] = *s;
		} else if (*s == '\n') {
			out[o++] = '\\';
			out[o++] = 'n';
		} else {
			out[o++] = *s;
		}
	}
	out[o] = '\0';
}

int lg_metrics_count_trip(const char *path, const char *agent,
			  const char *reason)
{
	static const char name[] = "lgrun_trips_total";
	static struct series s[MAX_SERIES];
	char lock[PATH_MAX + 8], tmp[PATH_MAX + 16], line[512];
	char ea[128], er[128], want[320];
	size_t n = 0, i;
	int lfd, r = 0;
	FILE *f;

	label_escape(agent ? agent : "", ea, sizeof(ea));
	label_escape(reason, er, sizeof(er));
	snprintf(want, sizeof(want), "{agent=\"%s\",reason=\"%s\"}", ea, er);
	snprintf(lock, sizeof(lock), "%s.lock", path);
	lfd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0640);
	if (lfd < 0)
		return -errno;
	if (flock(lfd, LOCK_EX) < 0) {
		r = -errno;
		goto out;
	}
	f = fopen(path, "re");
	if (f) {
		while (fgets(line, sizeof(line), f) && n < MAX_SERIES) {
			char *sp;

			if (strncmp(line, name, sizeof(name) - 1) != 0 ||
			    line[sizeof(name) - 1] != '{')
				continue;
			sp = strrchr(line, ' ');
			if (!sp || (size_t)(sp - line) - (sizeof(name) - 1) >=
					   sizeof(s[n].labels))
				continue;
			snprintf(s[n].labels, sizeof(s[n].labels), "%.*s",
				 (int)(sp - line - (sizeof(name) - 1)),
				 line + sizeof(name) - 1);
			s[n].n = strtoull(sp + 1, NULL, 10);
			n++;
		}
		fclose(f);
	}
	for (i = 0; i < n; i++)
		if (strcmp(s[i].labels, want) == 0)
			break;
	if (i == n && n < MAX_SERIES) {
		snprintf(s[n].labels, sizeof(s[n].labels), "%s", want);
		s[n++].n = 0;
	}
	if (i < n)
		s[i].n++;
	snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, getpid());
	f = fopen(tmp, "we");
	if (!f) {
		r = -errno;
		goto out;
	}
	fprintf(f, "# HELP %s Sessions stopped by the lgrun guard.\n", name);
	fprintf(f, "# TYPE %s counter\n", name);
	for (i = 0; i < n; i++)
		fprintf(f, "%s%s %llu\n", name, s[i].labels, s[i].n);
	if (fflush(f) != 0 || fsync(fileno(f)) < 0)
		r = -errno;
	if (fclose(f) != 0 && !r)
		r = -errno;
	if (!r && rename(tmp, path) < 0)
		r = -errno;
	if (r)
		unlink(tmp);
out:
	close(lfd);
	return r;
}
