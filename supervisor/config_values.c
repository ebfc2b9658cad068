// SPDX-License-Identifier: MIT
/*
 * The values of the configuration's keys, by kind (config_keys.c): each
 * checked where it is read, by the parser its user calls, so that an error
 * names its file and line.
 */
#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "config.h"
#include "canon.h"
#include "proxy.h"
#include "text.h"
#include "../preload/recog.h"
#include "config_int.h"

int lg_store_url_parse(const char *url, char *host, size_t hsz, int *port,
		       char *path, size_t psz, int *db, char *why, size_t wsz)
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
		if (path[0] != '/') {
			snprintf(
				why, wsz,
				"store.url '%s': a unix URL needs an absolute path (unix:/run/redis.sock)",
				url);
			return -EINVAL;
		}
		return 0;
	}
	if (strncmp(url, "redis://", 8) != 0) {
		snprintf(
			why, wsz,
			"store.url '%s' is not redis://HOST:PORT/DB or unix:/PATH",
			url);
		return -EINVAL;
	}
	p = url + 8;
	if (strchr(p, '@')) {
		snprintf(
			why, wsz,
			"store.url must not carry a password: put it in the environment variable named by store.password_env");
		return -EINVAL;
	}
	{
		size_t n = strcspn(p, ":/");

		if (!n || n >= hsz) {
			snprintf(why, wsz, "store.url '%s' has no host", url);
			return -EINVAL;
		}
		snprintf(host, hsz, "%.*s", (int)n, p);
		p += n;
	}
	if (*p == ':') {
		char *end;
		long v = strtol(p + 1, &end, 10);

		if (end == p + 1 || v < 1 || v > 65535) {
			snprintf(why, wsz, "store.url '%s' has a bad port",
				 url);
			return -EINVAL;
		}
		*port = (int)v;
		p = end;
	}
	if (*p == '/' && p[1]) {
		char *end;
		long v = strtol(p + 1, &end, 10);

		if (end == p + 1 || *end || v < 0 || v > 1000) {
			snprintf(why, wsz,
				 "store.url '%s' has a bad database number",
				 url);
			return -EINVAL;
		}
		*db = (int)v;
	} else if (*p && strcmp(p, "/") != 0) {
		snprintf(why, wsz, "store.url '%s': unexpected '%s'", url, p);
		return -EINVAL;
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

static int parse_bool(const char *s, bool *out)
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

static int parse_syscalls(const char *s, unsigned *out, char *bad, size_t badsz)
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
static int parse_sizes(const char *s, unsigned out[LG_OUTPUT_REPEAT_MAX_SIZES],
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

int lg_config_add_ignore(struct lg_config *c, const char *program,
			 const char *glob)
{
	struct lg_ignore_rule *r;

	r = realloc(c->ignore, (c->n_ignore + 1) * sizeof(*r));
	if (!r)
		return -ENOMEM;
	c->ignore = r;
	if (lg_ignore_rule_init(&c->ignore[c->n_ignore], program, glob) < 0)
		return -ENOMEM;
	c->n_ignore++;
	return 0;
}

/*
 * [llm] prices, variables and decrypt, read by the parsers that use them
 * (text.c, proxy_routes.c) so that a wrong entry is named with its file
 * and line here, not when the session starts.
 */
static int check_llm_value(enum ktype t, const char *value, char *msg,
			   size_t msgsz)
{
	struct lg_proxy_route routes[16];
	struct lg_proxy_decrypt hosts[LG_PROXY_DECRYPT_MAX];
	size_t nr = 3, nh = 0; /* after the three base-URL routes */
	const char *bad = value;
	double a, b;

	switch (t) {
	case K_PRICES:
		if (lg_price_lookup(value, NULL, &a, &b, &bad) >= 0)
			return 0;
		snprintf(
			msg, msgsz,
			"llm.prices: cannot read the entry '%.*s': write MODEL_GLOB=IN/OUT in USD per million tokens, e.g. claude-sonnet-*=3/15",
			(int)strcspn(bad, ","), bad);
		return -EINVAL;
	case K_LLM_VARIABLES:
		if (lg_proxy_extra_routes(value, routes, nr, 16, &bad) >= 0)
			return 0;
		snprintf(
			msg, msgsz,
			"llm.variables: cannot read '%.*s': write VARIABLE:FORMAT, the format one of anthropic, openai, gemini (at most 13)",
			(int)strcspn(bad, ", \t"), bad);
		return -EINVAL;
	case K_LLM_DECRYPT:
		if (lg_proxy_decrypt_routes(value, routes, &nr, 16, hosts, &nh,
					    &bad) >= 0)
			return 0;
		snprintf(
			msg, msgsz,
			"llm.decrypt: cannot read '%.*s': write HOST[:FORMAT][=UPSTREAM] or default (" LG_PROXY_DECRYPT_DEFAULT
			"), each host once, the format anthropic, openai or gemini (needed for a host not in the default list), the upstream an http:// or https:// URL; at most 8 hosts",
			(int)strcspn(bad, ", \t"), bad);
		return -EINVAL;
	default:
		return 0;
	}
}

/* Numbers, durations, booleans, amounts. */
static int set_number(struct lg_config *c, const struct key *k,
		      const char *value, bool apply, char *msg, size_t msgsz)
{
	char *base = (char *)c;
	unsigned long ul;
	char *end;
	bool b;

	switch (k->type) {
	case K_BOOL:
		if (parse_bool(value, &b) < 0)
			goto bad_bool;
		if (apply)
			*(bool *)(base + k->off) = b;
		return 0;
	case K_UINT:
	case K_ULONG:
	case K_U64:
		if (!isdigit((unsigned char)value[0]))
			goto bad_number;
		errno = 0;
		ul = strtoul(value, &end, 10);
		if (errno || *end)
			goto bad_number;
		if (ul < k->min || ul > k->max)
			goto out_of_range;
		if (apply) {
			if (k->type == K_UINT)
				*(unsigned *)(base + k->off) = (unsigned)ul;
			else if (k->type == K_U64)
				*(uint64_t *)(base + k->off) = ul;
			else
				*(unsigned long *)(base + k->off) = ul;
		}
		return 0;
	case K_DURATION:
	case K_DURATION_U64:
		if (lg_parse_duration_ms(value, &ul) < 0) {
			snprintf(
				msg, msgsz,
				"%s.%s: '%s' is not a duration (a number of seconds, or with a unit: 500ms, 30s, 5m, 1h)",
				k->section, k->name, value);
			return -EINVAL;
		}
		if (ul < k->min || ul > k->max) {
			snprintf(msg, msgsz,
				 "%s.%s: %s is out of range (%lums to %lums)",
				 k->section, k->name, value, k->min, k->max);
			return -ERANGE;
		}
		if (apply) {
			if (k->type == K_DURATION)
				*(unsigned long *)(base + k->off) = ul;
			else
				*(uint64_t *)(base + k->off) = ul;
		}
		return 0;
	case K_POW2:
		errno = 0;
		ul = isdigit((unsigned char)value[0]) ?
			     strtoul(value, &end, 10) :
			     0;
		if (!ul || errno || *end || (ul & (ul - 1)) || ul < k->min ||
		    ul > k->max) {
			snprintf(
				msg, msgsz,
				"%s.%s: '%s' is not a power of two from %lu to %lu",
				k->section, k->name, value, k->min, k->max);
			return -EINVAL;
		}
		if (apply)
			*(unsigned *)(base + k->off) = (unsigned)ul;
		return 0;
	case K_FRACTION: {
		double d;

		errno = 0;
		d = strtod(value, &end);
		if (end == value || *end || errno || d < 0 || d >= 1) {
			snprintf(
				msg, msgsz,
				"%s.%s: '%s' must be a fraction from 0 to below 1 (e.g. 0.2)",
				k->section, k->name, value);
			return -ERANGE;
		}
		if (apply)
			*(double *)(base + k->off) = d;
		return 0;
	}
	case K_MONEY: {
		double d;

		errno = 0;
		d = strtod(value[0] == '$' ? value + 1 : value, &end);
		if (end == value || *end || errno || d < 0 || d > 1e9) {
			snprintf(
				msg, msgsz,
				"%s.%s: '%s' is not an amount of US dollars (e.g. 2.50)",
				k->section, k->name, value);
			return -ERANGE;
		}
		if (apply)
			*(double *)(base + k->off) = d;
		return 0;
	}
	default:
		break;
	}
	return -EINVAL;
bad_bool:
	snprintf(msg, msgsz, "%s.%s: '%s' is not a boolean (true or false)",
		 k->section, k->name, value);
	return -EINVAL;
bad_number:
	snprintf(msg, msgsz, "%s.%s: '%s' is not a whole number", k->section,
		 k->name, value);
	return -EINVAL;
out_of_range:
	snprintf(msg, msgsz, "%s.%s: %s is out of range (%lu to %lu)",
		 k->section, k->name, value, k->min, k->max);
	return -ERANGE;
}

/* One word of a set (an action, a mode), an errno, the store's URL. */
static int set_word(struct lg_config *c, const struct key *k, const char *value,
		    bool apply, char *msg, size_t msgsz)
{
	char *base = (char *)c;
	int e;

	(void)c;
	switch (k->type) {
	case K_BPF_MODE: {
		int m = lg_bpf_mode_parse(value);

		if (m < 0) {
			snprintf(msg, msgsz,
				 "%s.%s: '%s' is not a mode (auto, on or off)",
				 k->section, k->name, value);
			return -EINVAL;
		}
		if (apply)
			*(int *)(base + k->off) = m;
		return 0;
	}
	case K_LLM_MODE: {
		static const char *const modes[] = { "base_url", "proxy",
						     "both", "auto" };
		int m = -1;

		for (int i = 0; i < 4; i++)
			if (strcmp(value, modes[i]) == 0)
				m = i;
		if (m < 0) {
			snprintf(
				msg, msgsz,
				"%s.%s: '%s' is not a mode (auto, base_url, proxy or both)",
				k->section, k->name, value);
			return -EINVAL;
		}
		if (apply)
			*(int *)(base + k->off) = m;
		return 0;
	}
	case K_EGRESS:
		if (strcmp(value, "open") && strcmp(value, "proxy-only")) {
			snprintf(msg, msgsz,
				 "%s.%s: '%s' is not open or proxy-only",
				 k->section, k->name, value);
			return -EINVAL;
		}
		if (apply)
			*(bool *)(base + k->off) =
				strcmp(value, "proxy-only") == 0;
		return 0;
	case K_STORE_BACKEND:
		if (strcmp(value, "memory") && strcmp(value, "redis")) {
			snprintf(
				msg, msgsz,
				"%s.%s: '%s' is not a backend (memory or redis)",
				k->section, k->name, value);
			return -EINVAL;
		}
		if (apply)
			*(bool *)(base + k->off) = strcmp(value, "redis") == 0;
		return 0;
	case K_STORE_ERROR:
		if (strcmp(value, "fail") && strcmp(value, "local")) {
			snprintf(msg, msgsz, "%s.%s: '%s' is not fail or local",
				 k->section, k->name, value);
			return -EINVAL;
		}
		if (apply)
			*(bool *)(base + k->off) = strcmp(value, "fail") == 0;
		return 0;
	case K_STORE_URL: {
		char host[256], path[256], why[300];
		int port, db;
		char **p = (char **)(base + k->off);

		if (lg_store_url_parse(value, host, sizeof(host), &port, path,
				       sizeof(path), &db, why,
				       sizeof(why)) < 0) {
			snprintf(msg, msgsz, "%s", why);
			return -EINVAL;
		}
		if (!apply)
			return 0;
		free(*p);
		*p = strdup(value);
		return *p ? 0 : -ENOMEM;
	}
	case K_ACTION: {
		enum lg_verdict v;

		if (lg_verdict_parse(value, &v) < 0 || v == LG_ALLOW) {
			snprintf(
				msg, msgsz,
				"%s.%s: '%s' is not an action (warn, deny or kill)",
				k->section, k->name, value);
			return -EINVAL;
		}
		if (apply)
			*(enum lg_verdict *)(base + k->off) = v;
		return 0;
	}
	case K_ERRNO:
		if (lg_parse_errno(value, &e) < 0) {
			snprintf(
				msg, msgsz,
				"%s.%s: '%s' is not a supported errno (EPERM, EACCES, EROFS, EBUSY, EIO, ENOSPC, ENOENT, EAGAIN)",
				k->section, k->name, value);
			return -EINVAL;
		}
		if (apply)
			*(int *)(base + k->off) = e;
		return 0;
	default:
		break;
	}
	return -EINVAL;
}

/* Strings and lists: globs, syscalls, sizes, keys, [llm] tables. */
static int set_list(struct lg_config *c, const struct key *k, const char *value,
		    bool apply, char *msg, size_t msgsz)
{
	char *base = (char *)c;

	switch (k->type) {
	case K_ENDPOINTS:
	case K_IGNORE_KEYS: {
		char bad[128];

		if (k->type == K_ENDPOINTS &&
		    !lg_recog_endpoints_valid(value, bad, sizeof(bad))) {
			snprintf(
				msg, msgsz,
				"%s.%s: '%s' is not an endpoint ([http://][HOST][:PORT][/PATH], e.g. localhost:8080, /api/tools/*)",
				k->section, k->name, bad);
			return -EINVAL;
		}
		if (k->type == K_IGNORE_KEYS &&
		    !lg_canon_ignore_valid(value, bad, sizeof(bad))) {
			snprintf(
				msg, msgsz,
				"%s.%s: '%s' is not TOOL:KEY or *:KEY (e.g. Bash:description)",
				k->section, k->name, bad);
			return -EINVAL;
		}
	}
		/* fall through */
	case K_PRICES:
	case K_LLM_VARIABLES:
	case K_LLM_DECRYPT:
		if (k->type != K_IGNORE_KEYS &&
		    check_llm_value(k->type, value, msg, msgsz) < 0)
			return -EINVAL;
		/* fall through */
	case K_STRING: {
		char **p = (char **)(base + k->off);
		char *s;

		if (!*value && k->type == K_STRING) {
			snprintf(msg, msgsz, "%s.%s: empty value", k->section,
				 k->name);
			return -EINVAL;
		}
		if (!apply)
			return 0;
		s = strdup(value);
		if (!s)
			return -ENOMEM;
		free(*p);
		*p = s;
		return 0;
	}
	case K_SYSCALLS: {
		char bad[64];
		unsigned mask;

		if (parse_syscalls(value, &mask, bad, sizeof(bad)) < 0) {
			snprintf(
				msg, msgsz,
				"%s.%s: unknown syscall '%s' (known: unlink, unlinkat, rmdir, truncate, ftruncate, rename, open_trunc)",
				k->section, k->name, bad);
			return -EINVAL;
		}
		if (apply)
			*(unsigned *)(base + k->off) = mask;
		return 0;
	}
	case K_SIZES: {
		unsigned v[LG_OUTPUT_REPEAT_MAX_SIZES];
		char bad[64];

		switch (parse_sizes(value, v, k->min, k->max, bad,
				    sizeof(bad))) {
		case 0:
			break;
		case -ERANGE:
			snprintf(msg, msgsz,
				 "%s.%s: %s is out of range (%lu to %lu)",
				 k->section, k->name, bad, k->min, k->max);
			return -ERANGE;
		case -E2BIG:
			snprintf(msg, msgsz, "%s.%s: more than %d sizes",
				 k->section, k->name,
				 LG_OUTPUT_REPEAT_MAX_SIZES);
			return -EINVAL;
		default:
			snprintf(
				msg, msgsz,
				"%s.%s: '%s' is not a list of whole numbers (e.g. 50, 80, 120)",
				k->section, k->name, bad[0] ? bad : value);
			return -EINVAL;
		}
		if (apply)
			memcpy(base + k->off, v, sizeof(v));
		return 0;
	}
	case K_IGNORE_PATH:
		if (!*value) {
			snprintf(msg, msgsz, "ignore.path: empty glob");
			return -EINVAL;
		}
		return apply ? lg_config_add_ignore(c, NULL, value) : 0;
	case K_IGNORE_PROGRAM: {
		char prog[256];
		size_t n = strcspn(value, " \t");
		const char *glob = value + n;

		while (*glob == ' ' || *glob == '\t')
			glob++;
		if (!n || n >= sizeof(prog) || !*glob) {
			snprintf(
				msg, msgsz,
				"ignore.program: '%s' must be 'PROGRAM GLOB', e.g. 'git **/.git'",
				value);
			return -EINVAL;
		}
		memcpy(prog, value, n);
		prog[n] = '\0';
		return apply ? lg_config_add_ignore(c, prog, glob) : 0;
	}
	default:
		break;
	}
	return -EINVAL;
}

/* Parses value for k; applies it to c only when apply is set. */
int lg_config_set_value(struct lg_config *c, const struct key *k,
			const char *value, bool apply, char *msg, size_t msgsz)
{
	switch (k->type) {
	case K_BOOL:
	case K_UINT:
	case K_ULONG:
	case K_U64:
	case K_DURATION:
	case K_DURATION_U64:
	case K_POW2:
	case K_FRACTION:
	case K_MONEY:
		return set_number(c, k, value, apply, msg, msgsz);
	case K_BPF_MODE:
	case K_LLM_MODE:
	case K_EGRESS:
	case K_STORE_BACKEND:
	case K_STORE_ERROR:
	case K_STORE_URL:
	case K_ACTION:
	case K_ERRNO:
		return set_word(c, k, value, apply, msg, msgsz);
	default:
		return set_list(c, k, value, apply, msg, msgsz);
	}
}
