// SPDX-License-Identifier: MIT
/*
 * The value parsers of the configuration, pure: the store's URL, modes,
 * durations, errno names, booleans, syscall names, sizes. values.c
 * applies them to the keys (keys.c) with file and line.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "config.h"
#include "config_int.h"

int lg_store_url_parse(const char *url, char *host, size_t hsz, int *port,
		       char *path, size_t psz, int *db, struct lg_error *err)
{
	const char *p;

	*port = 6379;
	*db = 0;
	host[0] = path[0] = '\0';
	if (strncmp(url, "unix:", 5) == 0) {
		const char *q;

		p = url + 5;
		while (p[0] == '/' && p[1] == '/')
			p++; /* unix:///run/x.sock */
		q = strchr(p, '?');
		snprintf(path, psz, "%.*s", (int)(q ? q - p : (long)strlen(p)),
			 p);
		if (q && strncmp(q, "?db=", 4) == 0)
			*db = atoi(q + 4);
		if (path[0] != '/')
			return lg_error_set(
				err, EINVAL,
				"store.url '%s': a unix URL needs an absolute path (unix:/run/redis.sock)",
				url);
		return 0;
	}
	if (strncmp(url, "redis://", 8) != 0)
		return lg_error_set(
			err, EINVAL,
			"store.url '%s' is not redis://HOST:PORT/DB or unix:/PATH",
			url);
	p = url + 8;
	if (strchr(p, '@'))
		return lg_error_set(
			err, EINVAL,
			"store.url must not carry a password: put it in the environment variable named by store.password_env");
	{
		size_t n = strcspn(p, ":/");

		if (!n || n >= hsz)
			return lg_error_set(err, EINVAL,
					    "store.url '%s' has no host", url);
		snprintf(host, hsz, "%.*s", (int)n, p);
		p += n;
	}
	if (*p == ':') {
		char *end;
		long v = strtol(p + 1, &end, 10);

		if (end == p + 1 || v < 1 || v > 65535)
			return lg_error_set(err, EINVAL,
					    "store.url '%s' has a bad port",
					    url);
		*port = (int)v;
		p = end;
	}
	if (*p == '/' && p[1]) {
		char *end;
		long v = strtol(p + 1, &end, 10);

		if (end == p + 1 || *end || v < 0 || v > 1000)
			return lg_error_set(
				err, EINVAL,
				"store.url '%s' has a bad database number",
				url);
		*db = (int)v;
	} else if (*p && strcmp(p, "/") != 0) {
		return lg_error_set(err, EINVAL,
				    "store.url '%s': unexpected '%s'", url, p);
	}
	return 0;
}

int lg_bpf_mode_parse(const char *s)
{
	if (strcmp(s, "auto") == 0)
		return LG_BPF_AUTO;
	if (strcmp(s, "on") == 0)
		return LG_BPF_ON;
	if (strcmp(s, "off") == 0)
		return LG_BPF_OFF;
	return -EINVAL;
}

int lg_parse_duration_ms(const char *s, unsigned long *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || errno || v < 0)
		return -EINVAL;
	while (isspace((unsigned char)*end))
		end++;
	if (*end == '\0' || strcmp(end, "s") == 0)
		v *= 1000;
	else if (strcmp(end, "ms") == 0)
		;
	else if (strcmp(end, "m") == 0 || strcmp(end, "min") == 0)
		v *= 60000;
	else if (strcmp(end, "h") == 0)
		v *= 3600000;
	else if (strcmp(end, "d") == 0)
		v *= 86400000;
	else
		return -EINVAL;
	if (v > (double)ULONG_MAX / 2)
		return -ERANGE;
	*out = (unsigned long)(v + 0.5);
	return 0;
}

static const struct {
	const char *name;
	int value;
} errnos[] = {
	{ "EPERM", EPERM },   { "EACCES", EACCES }, { "EROFS", EROFS },
	{ "EBUSY", EBUSY },   { "EIO", EIO },	    { "ENOSPC", ENOSPC },
	{ "ENOENT", ENOENT }, { "EAGAIN", EAGAIN },
};

int lg_parse_errno(const char *s, int *out)
{
	for (size_t i = 0; i < sizeof(errnos) / sizeof(errnos[0]); i++) {
		if (strcmp(s, errnos[i].name) == 0) {
			*out = errnos[i].value;
			return 0;
		}
	}
	return -EINVAL;
}

const char *lg_errno_name(int e)
{
	for (size_t i = 0; i < sizeof(errnos) / sizeof(errnos[0]); i++)
		if (errnos[i].value == e)
			return errnos[i].name;
	return "E?";
}

int lg_parse_bool(const char *s, bool *out)
{
	static const char *const yes[] = { "true", "yes", "on", "1" };
	static const char *const no[] = { "false", "no", "off", "0" };

	for (size_t i = 0; i < 4; i++) {
		if (strcmp(s, yes[i]) == 0) {
			*out = true;
			return 0;
		}
		if (strcmp(s, no[i]) == 0) {
			*out = false;
			return 0;
		}
	}
	return -EINVAL;
}

static const struct {
	const char *name;
	unsigned bit;
} syscall_names[] = {
	{ "unlink", LG_SC_UNLINK },	  { "unlinkat", LG_SC_UNLINKAT },
	{ "rmdir", LG_SC_RMDIR },	  { "truncate", LG_SC_TRUNCATE },
	{ "ftruncate", LG_SC_FTRUNCATE }, { "open_trunc", LG_SC_OPEN_TRUNC },
	{ "rename", LG_SC_RENAME },
};

int lg_parse_syscalls(const char *s, unsigned *out, char *bad, size_t badsz)
{
	unsigned mask = 0;

	while (*s) {
		size_t n;
		size_t i;

		while (*s == ',' || isspace((unsigned char)*s))
			s++;
		if (!*s)
			break;
		n = strcspn(s, ", \t");
		for (i = 0;
		     i < sizeof(syscall_names) / sizeof(syscall_names[0]);
		     i++) {
			if (strlen(syscall_names[i].name) == n &&
			    strncmp(s, syscall_names[i].name, n) == 0)
				break;
		}
		if (i == sizeof(syscall_names) / sizeof(syscall_names[0])) {
			snprintf(bad, badsz, "%.*s", (int)n, s);
			return -EINVAL;
		}
		mask |= syscall_names[i].bit;
		s += n;
	}
	*out = mask;
	return 0;
}

/*
 * "50, 80, 120": 1 to LG_OUTPUT_REPEAT_MAX_SIZES whole numbers from min to
 * max, kept ascending without duplicates, the rest of out zeroed. On error
 * bad holds the offending item and the return says what is wrong.
 */
int lg_parse_sizes(const char *s, unsigned out[LG_OUTPUT_REPEAT_MAX_SIZES],
		   unsigned long min, unsigned long max, char *bad,
		   size_t badsz)
{
	unsigned v[LG_OUTPUT_REPEAT_MAX_SIZES] = { 0 };
	size_t n = 0;

	while (*s) {
		unsigned long ul;
		size_t len, i;
		char *end;

		while (*s == ',' || isspace((unsigned char)*s))
			s++;
		if (!*s)
			break;
		len = strcspn(s, ", \t");
		snprintf(bad, badsz, "%.*s", (int)len, s);
		if (!isdigit((unsigned char)*s))
			return -EINVAL;
		errno = 0;
		ul = strtoul(s, &end, 10);
		if (errno || end != s + len)
			return -EINVAL;
		if (ul < min || ul > max)
			return -ERANGE;
		s += len;
		for (i = 0; i < n && v[i] < ul; i++)
			;
		if (i < n && v[i] == ul)
			continue;
		if (n == LG_OUTPUT_REPEAT_MAX_SIZES)
			return -E2BIG;
		memmove(v + i + 1, v + i, (n - i) * sizeof(v[0]));
		v[i] = (unsigned)ul;
		n++;
	}
	if (!n) {
		bad[0] = '\0';
		return -ENODATA;
	}
	memcpy(out, v, sizeof(v));
	return 0;
}

int lg_parse_bytes(const char *s, uint64_t *out)
{
	static const char units[] = "KMGT";
	unsigned long long v;
	const char *u;
	char *end;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	if (*end && (u = strchr(units, *end)) != NULL) {
		for (int i = 0; i <= u - units; i++) {
			if (v > UINT64_MAX / 1024)
				return -EINVAL;
			v *= 1024;
		}
		end++;
		if (*end == 'i')
			end++;
	}
	if (*end == 'B')
		end++;
	if (*end)
		return -EINVAL;
	*out = v;
	return 0;
}
