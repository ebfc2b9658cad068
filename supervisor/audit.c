// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "audit.h"

void lg_json_append(struct lg_json *j, const char *s, size_t n)
{
	if (j->len + n + 1 > j->cap) {
		size_t cap = j->cap ? j->cap : 256;
		char *b;

		while (j->len + n + 1 > cap)
			cap *= 2;
		b = realloc(j->buf, cap);
		if (!b)
			return;
		j->buf = b;
		j->cap = cap;
	}
	memcpy(j->buf + j->len, s, n);
	j->len += n;
	j->buf[j->len] = '\0';
}

static void put(struct lg_json *j, const char *s)
{
	lg_json_append(j, s, strlen(s));
}

void lg_json_quote(struct lg_json *j, const char *s)
{
	static const char hex[] = "0123456789abcdef";

	put(j, "\"");
	for (const unsigned char *c = (const unsigned char *)(s ? s : ""); *c;
	     c++) {
		char e[7];

		if (*c == '"' || *c == '\\') {
			e[0] = '\\';
			e[1] = (char)*c;
			lg_json_append(j, e, 2);
		} else if (*c < 0x20 || *c == 0x7f) {
			memcpy(e, "\\u00", 4);
			e[4] = hex[*c >> 4];
			e[5] = hex[*c & 15];
			lg_json_append(j, e, 6);
		} else {
			lg_json_append(j, (const char *)c, 1);
		}
	}
	put(j, "\"");
}

void lg_json_begin(struct lg_json *j)
{
	j->len = 0;
	j->first = true;
	put(j, "{");
}

static void key(struct lg_json *j, const char *k)
{
	if (!j->first)
		put(j, ",");
	j->first = false;
	lg_json_quote(j, k);
	put(j, ":");
}

void lg_json_str(struct lg_json *j, const char *k, const char *val)
{
	key(j, k);
	if (val)
		lg_json_quote(j, val);
	else
		put(j, "null");
}

void lg_json_int(struct lg_json *j, const char *k, long long val)
{
	char b[32];

	key(j, k);
	snprintf(b, sizeof(b), "%lld", val);
	put(j, b);
}

void lg_json_num(struct lg_json *j, const char *k, double val)
{
	char b[64];

	key(j, k);
	snprintf(b, sizeof(b), "%.3f", val);
	put(j, b);
}

void lg_json_bool(struct lg_json *j, const char *k, bool val)
{
	key(j, k);
	put(j, val ? "true" : "false");
}

void lg_json_raw(struct lg_json *j, const char *k, const char *val)
{
	key(j, k);
	put(j, val);
}

const char *lg_json_end(struct lg_json *j)
{
	put(j, "}");
	return j->buf ? j->buf : "{}";
}

void lg_json_free(struct lg_json *j)
{
	free(j->buf);
	memset(j, 0, sizeof(*j));
}

void lg_time_iso(int64_t real_ns, char *buf, size_t size)
{
	time_t t = (time_t)(real_ns / 1000000000LL);
	struct tm tm;
	char s[32];

	gmtime_r(&t, &tm);
	strftime(s, sizeof(s), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, size, "%s.%03dZ", s, (int)((real_ns / 1000000LL) % 1000));
}

int lg_audit_append(const char *path, const char *line, bool sync)
{
	struct iovec iov[2] = { { (void *)line, strlen(line) }, { "\n", 1 } };
	int fd, r = 0;

	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
	if (fd < 0)
		return -errno;
	/* One writev: concurrent sessions sharing the log never interleave. */
	if (writev(fd, iov, 2) < 0)
		r = -errno;
	if (!r && sync && fsync(fd) < 0)
		r = -errno;
	close(fd);
	return r;
}

void lg_json_field(const char *json, const char *key, char *out, size_t size)
{
	char pat[64];
	const char *p;
	size_t n = 0;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	out[0] = '\0';
	p = strstr(json, pat);
	if (!p)
		return;
	p += strlen(pat);
	if (*p == '"') {
		for (p++; *p && *p != '"' && n + 1 < size; p++) {
			if (*p == '\\' && p[1])
				p++;
			out[n++] = *p;
		}
	} else {
		while (*p && *p != ',' && *p != '}' && n + 1 < size)
			out[n++] = *p++;
	}
	out[n] = '\0';
}
