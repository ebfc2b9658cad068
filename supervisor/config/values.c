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
#include "lib/canon.h"
#include "proxy/proxy.h"
#include "lib/text.h"
#include "../../preload/recog.h"
#include "config_int.h"

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
/* A duration in ms (K_DURATION, K_DURATION_U64), from min to max. */
static int set_duration(struct lg_config *c, const struct key *k,
			const char *value, bool apply, char *msg, size_t msgsz)
{
	char *base = (char *)c;
	unsigned long ul;

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
}

/* A fraction (K_FRACTION) or an amount of dollars (K_MONEY). */
static int set_real(struct lg_config *c, const struct key *k, const char *value,
		    bool apply, char *msg, size_t msgsz)
{
	bool money = k->type == K_MONEY;
	const char *num = money && value[0] == '$' ? value + 1 : value;
	char *end;
	double d;

	errno = 0;
	d = strtod(num, &end);
	if (end == num || *end || errno || d < 0 ||
	    (money ? d > 1e9 : d >= 1)) {
		snprintf(
			msg, msgsz,
			money ? "%s.%s: '%s' is not an amount of US dollars (e.g. 2.50)" :
				"%s.%s: '%s' must be a fraction from 0 to below 1 (e.g. 0.2)",
			k->section, k->name, value);
		return -ERANGE;
	}
	if (apply)
		*(double *)((char *)c + k->off) = d;
	return 0;
}

static int set_number(struct lg_config *c, const struct key *k,
		      const char *value, bool apply, char *msg, size_t msgsz)
{
	char *base = (char *)c;
	unsigned long ul;
	char *end;
	bool b;

	switch (k->type) {
	case K_BOOL:
		if (lg_parse_bool(value, &b) < 0)
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

/* A key whose value is one of two words, kept as a bool (the second). */
static int set_choice(struct lg_config *c, const struct key *k,
		      const char *value, bool apply, char *msg, size_t msgsz)
{
	static const struct {
		enum ktype type;
		const char *no, *yes, *what;
	} words[] = {
		{ K_STORE_BACKEND, "memory", "redis",
		  "a backend (memory or redis)" },
		{ K_STORE_ERROR, "local", "fail", "fail or local" },
		{ K_ON_FULL, "allow", "deny", "allow or deny" },
		{ K_EGRESS, "open", "proxy-only", "open or proxy-only" },
	};

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		if (words[i].type != k->type)
			continue;
		if (strcmp(value, words[i].no) && strcmp(value, words[i].yes)) {
			snprintf(msg, msgsz, "%s.%s: '%s' is not %s",
				 k->section, k->name, value, words[i].what);
			return -EINVAL;
		}
		if (apply)
			*(bool *)((char *)c + k->off) =
				strcmp(value, words[i].yes) == 0;
		return 0;
	}
	return -EINVAL;
}

/* One word of a set (an action, a mode), an errno, the store's URL. */
static int set_word(struct lg_config *c, const struct key *k, const char *value,
		    bool apply, char *msg, size_t msgsz)
{
	char *base = (char *)c;
	int e;

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

/* A set of names (K_SYSCALLS) or of sizes (K_SIZES). */
static int set_set(struct lg_config *c, const struct key *k, const char *value,
		   bool apply, char *msg, size_t msgsz)
{
	char *base = (char *)c;

	switch (k->type) {
	case K_SYSCALLS: {
		char bad[64];
		unsigned mask;

		if (lg_parse_syscalls(value, &mask, bad, sizeof(bad)) < 0) {
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

		switch (lg_parse_sizes(value, v, k->min, k->max, bad,
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
	default:
		break;
	}
	return -EINVAL;
}

/* An [ignore] rule: a glob, or a program and its glob. */
static int set_ignore(struct lg_config *c, const struct key *k,
		      const char *value, bool apply, char *msg, size_t msgsz)
{
	switch (k->type) {
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

/* "DIR,DIR": absolute paths, none empty, none with a comma's neighbours. */
static bool dirs_valid(const struct key *k, const char *value, char *msg,
		       size_t msgsz)
{
	const char *p = value;

	do {
		size_t n;

		p += strspn(p, " \t");
		n = strcspn(p, ",");
		if (p[0] != '/' || n >= 4096) {
			snprintf(
				msg, msgsz,
				"%s.%s: '%.*s' is not an absolute directory (DIR,DIR..., e.g. /data/.lgrun-quarantine)",
				k->section, k->name, (int)(n < 200 ? n : 200),
				p);
			return false;
		}
		p += n;
	} while (*p++ == ',');
	return true;
}

/* Strings and lists: endpoints, keys, [llm] tables, plain strings. */
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
	case K_DIRS:
		if (k->type == K_DIRS && !dirs_valid(k, value, msg, msgsz))
			return -EINVAL;
		/* fall through */
	case K_PRICES:
	case K_LLM_VARIABLES:
	case K_LLM_DECRYPT:
		if (k->type != K_IGNORE_KEYS && k->type != K_DIRS &&
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
	case K_POW2:
		return set_number(c, k, value, apply, msg, msgsz);
	case K_DURATION:
	case K_DURATION_U64:
		return set_duration(c, k, value, apply, msg, msgsz);
	case K_FRACTION:
	case K_MONEY:
		return set_real(c, k, value, apply, msg, msgsz);
	case K_BYTES: {
		uint64_t n;

		if (lg_parse_bytes(value, &n) < 0) {
			snprintf(
				msg, msgsz,
				"%s.%s: '%s' is not a size (bytes, or with a unit: 512K, 100M, 2G)",
				k->section, k->name, value);
			return -EINVAL;
		}
		if (apply)
			*(uint64_t *)((char *)c + k->off) = n;
		return 0;
	}
	case K_SYSCALLS:
	case K_SIZES:
		return set_set(c, k, value, apply, msg, msgsz);
	case K_IGNORE_PATH:
	case K_IGNORE_PROGRAM:
		return set_ignore(c, k, value, apply, msg, msgsz);
	case K_STORE_BACKEND:
	case K_STORE_ERROR:
	case K_ON_FULL:
	case K_EGRESS:
		return set_choice(c, k, value, apply, msg, msgsz);
	case K_BPF_MODE:
	case K_LLM_MODE:
	case K_STORE_URL:
	case K_ACTION:
	case K_ERRNO:
		return set_word(c, k, value, apply, msg, msgsz);
	default:
		return set_list(c, k, value, apply, msg, msgsz);
	}
}
