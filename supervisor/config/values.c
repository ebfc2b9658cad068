// SPDX-License-Identifier: MIT
/*
 * The values of the configuration's keys, by kind (kinds.def): each kind's
 * parser reads and checks the text, with the parser its user calls, so
 * that an error names its file and line; its store puts the value in
 * struct lg_config at the key's offset, and frees it.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* The messages most kinds share. */
static int not_a(const struct lg_config_key *k, const char *s, const char *what,
		 struct lg_error *err)
{
	return lg_error_set(err, EINVAL, "%s.%s: '%s' is not %s", k->section,
			    k->name, s, what);
}

static int out_of_range(const struct lg_config_key *k, const char *item,
			const char *unit, struct lg_error *err)
{
	return lg_error_set(err, ERANGE,
			    "%s.%s: %s is out of range (%lu%s to %lu%s)",
			    k->section, k->name, item, k->min, unit, k->max,
			    unit);
}

/* Numbers, durations, amounts. */
static int parse_whole(const struct lg_config_key *k, const char *s,
		       union lg_value *v, struct lg_error *err)
{
	char *end;

	if (!isdigit((unsigned char)s[0]))
		return not_a(k, s, "a whole number", err);
	errno = 0;
	v->n = strtoul(s, &end, 10);
	if (errno || *end)
		return not_a(k, s, "a whole number", err);
	if (v->n < k->min || v->n > k->max)
		return out_of_range(k, s, "", err);
	return 0;
}

static int parse_pow2(const struct lg_config_key *k, const char *s,
		      union lg_value *v, struct lg_error *err)
{
	char what[64], *end;
	uint64_t n;

	errno = 0;
	n = isdigit((unsigned char)s[0]) ? strtoul(s, &end, 10) : 0;
	if (!n || errno || *end || (n & (n - 1)) || n < k->min || n > k->max) {
		snprintf(what, sizeof(what), "a power of two from %lu to %lu",
			 k->min, k->max);
		return not_a(k, s, what, err);
	}
	v->n = n;
	return 0;
}

static int parse_bytes(const struct lg_config_key *k, const char *s,
		       union lg_value *v, struct lg_error *err)
{
	if (lg_parse_bytes(s, &v->n) < 0)
		return not_a(k, s,
			     "a size (bytes, or with a unit: 512K, 100M, 2G)",
			     err);
	return 0;
}

static int parse_duration(const struct lg_config_key *k, const char *s,
			  union lg_value *v, struct lg_error *err)
{
	unsigned long ms;

	if (lg_parse_duration_ms(s, &ms) < 0)
		return not_a(
			k, s,
			"a duration (a number of seconds, or with a unit: 500ms, 30s, 5m, 1h)",
			err);
	if (ms < k->min || ms > k->max)
		return out_of_range(k, s, "ms", err);
	v->n = ms;
	return 0;
}

/* A non-negative real, all of s; false: not one (nor is "nan"). */
static bool real(const char *s, double *d)
{
	char *end;

	errno = 0;
	*d = strtod(s, &end);
	return end != s && !*end && !errno && *d >= 0;
}

static int parse_fraction(const struct lg_config_key *k, const char *s,
			  union lg_value *v, struct lg_error *err)
{
	if (!real(s, &v->d) || v->d >= 1)
		return lg_error_set(
			err, ERANGE,
			"%s.%s: '%s' must be a fraction from 0 to below 1 (e.g. 0.2)",
			k->section, k->name, s);
	return 0;
}

static int parse_money(const struct lg_config_key *k, const char *s,
		       union lg_value *v, struct lg_error *err)
{
	if (!real(s[0] == '$' ? s + 1 : s, &v->d) || v->d < k->min / 100.0 ||
	    v->d > k->max / 100.0) {
		not_a(k, s, "an amount of US dollars (e.g. 2.50)", err);
		return -ERANGE;
	}
	return 0;
}

/* One word of a set: a boolean, an action, a mode, an errno. */
static int parse_bool(const struct lg_config_key *k, const char *s,
		      union lg_value *v, struct lg_error *err)
{
	if (lg_parse_bool(s, &v->b) < 0)
		return not_a(k, s, "a boolean (true or false)", err);
	return 0;
}

static int parse_action(const struct lg_config_key *k, const char *s,
			union lg_value *v, struct lg_error *err)
{
	if (lg_verdict_parse(s, &v->verdict) < 0 || v->verdict == LG_ALLOW)
		return not_a(k, s, "an action (warn, deny or kill)", err);
	return 0;
}

static int parse_errno(const struct lg_config_key *k, const char *s,
		       union lg_value *v, struct lg_error *err)
{
	if (lg_parse_errno(s, &v->i) < 0)
		return not_a(
			k, s,
			"a supported errno (EPERM, EACCES, EROFS, EBUSY, EIO, ENOSPC, ENOENT, EAGAIN)",
			err);
	return 0;
}

static int parse_bpf_mode(const struct lg_config_key *k, const char *s,
			  union lg_value *v, struct lg_error *err)
{
	v->i = lg_bpf_mode_parse(s);
	if (v->i < 0)
		return not_a(k, s, "a mode (auto, on or off)", err);
	return 0;
}

static int parse_llm_mode(const struct lg_config_key *k, const char *s,
			  union lg_value *v, struct lg_error *err)
{
	/* in the order of enum lg_llm_mode */
	static const char *const modes[] = { "base_url", "proxy", "both",
					     "auto" };

	for (v->i = 0; v->i < 4; v->i++)
		if (strcmp(s, modes[v->i]) == 0)
			return 0;
	return not_a(k, s, "a mode (auto, base_url, proxy or both)", err);
}

/* One of two words, kept as a bool: true for the second (yes). */
static int choice(const struct lg_config_key *k, const char *s,
		  union lg_value *v, struct lg_error *err, const char *no,
		  const char *yes, const char *what)
{
	if (strcmp(s, no) && strcmp(s, yes))
		return not_a(k, s, what, err);
	v->b = strcmp(s, yes) == 0;
	return 0;
}

#define LG_CHOICE(NAME, NO, YES, WHAT)                                        \
	static int parse_##NAME(const struct lg_config_key *k, const char *s, \
				union lg_value *v, struct lg_error *err)      \
	{                                                                     \
		return choice(k, s, v, err, NO, YES, WHAT);                   \
	}
LG_CHOICE(store_backend, "memory", "redis", "a backend (memory or redis)")
LG_CHOICE(store_error, "local", "fail", "fail or local")
#undef LG_CHOICE

/* allow, or deny (its other name: refuse, issue 39's word) */
static int parse_on_full(const struct lg_config_key *k, const char *s,
			 union lg_value *v, struct lg_error *err)
{
	if (strcmp(s, "refuse") == 0)
		s = "deny";
	return choice(k, s, v, err, "allow", "deny", "allow, deny or refuse");
}

#define LG_CHOICE(NAME, NO, YES, WHAT)                                        \
	static int parse_##NAME(const struct lg_config_key *k, const char *s, \
				union lg_value *v, struct lg_error *err)      \
	{                                                                     \
		return choice(k, s, v, err, NO, YES, WHAT);                   \
	}
LG_CHOICE(egress, "open", "proxy-only", "open or proxy-only")
#undef LG_CHOICE

/* Sets: syscall names (a mask), output sizes. */
static int parse_syscalls(const struct lg_config_key *k, const char *s,
			  union lg_value *v, struct lg_error *err)
{
	char bad[64];
	unsigned mask;

	if (lg_parse_syscalls(s, &mask, bad, sizeof(bad)) < 0)
		return lg_error_set(
			err, EINVAL,
			"%s.%s: unknown syscall '%s' (known: unlink, unlinkat, rmdir, truncate, ftruncate, rename, open_trunc)",
			k->section, k->name, bad);
	v->n = mask;
	return 0;
}

static int parse_sizes(const struct lg_config_key *k, const char *s,
		       union lg_value *v, struct lg_error *err)
{
	char bad[64];

	switch (lg_parse_sizes(s, v->sizes, k->min, k->max, bad, sizeof(bad))) {
	case 0:
		return 0;
	case -ERANGE:
		return out_of_range(k, bad, "", err);
	case -E2BIG:
		return lg_error_set(err, EINVAL, "%s.%s: more than %d sizes",
				    k->section, k->name,
				    LG_OUTPUT_REPEAT_MAX_SIZES);
	default:
		return not_a(k, bad[0] ? bad : s,
			     "a list of whole numbers (e.g. 50, 80, 120)", err);
	}
}

/* Strings: plain ones, and those their users read (checked here). */
static int parse_string(const struct lg_config_key *k, const char *s,
			union lg_value *v, struct lg_error *err)
{
	if (!*s)
		return lg_error_set(err, EINVAL, "%s.%s: empty value",
				    k->section, k->name);
	v->s = s;
	return 0;
}

/*
 * A path lgrun writes (the state dir, the audit log, the metrics file):
 * absolute, never resolved against wherever lgrun happens to start.
 */
static int parse_path(const struct lg_config_key *k, const char *s,
		      union lg_value *v, struct lg_error *err)
{
	if (!*s)
		return lg_error_set(err, EINVAL, "%s.%s: empty value",
				    k->section, k->name);
	if (s[0] != '/')
		return lg_error_set(
			err, EINVAL,
			"%s.%s: '%.200s' is not an absolute path: name it from / (a relative one would depend on where lgrun starts)",
			k->section, k->name, s);
	v->s = s;
	return 0;
}

static int parse_store_url(const struct lg_config_key *k, const char *s,
			   union lg_value *v, struct lg_error *err)
{
	char host[256], path[256];
	int port, db;

	(void)k;
	if (lg_store_url_parse(s, host, sizeof(host), &port, path, sizeof(path),
			       &db, err) < 0)
		return -EINVAL;
	v->s = s;
	return 0;
}

static int parse_endpoints(const struct lg_config_key *k, const char *s,
			   union lg_value *v, struct lg_error *err)
{
	char bad[128];

	if (!lg_recog_endpoints_valid(s, bad, sizeof(bad)))
		return not_a(
			k, bad,
			"an endpoint ([http://][HOST][:PORT][/PATH], e.g. localhost:8080, /api/tools/*)",
			err);
	v->s = s;
	return 0;
}

static int parse_ignore_keys(const struct lg_config_key *k, const char *s,
			     union lg_value *v, struct lg_error *err)
{
	char bad[128];

	if (!lg_canon_ignore_valid(s, bad, sizeof(bad)))
		return not_a(k, bad,
			     "TOOL:KEY or *:KEY (e.g. Bash:description)", err);
	v->s = s;
	return 0;
}

/* "DIR,DIR": absolute paths, none empty, none with a comma's neighbours. */
static int parse_dirs(const struct lg_config_key *k, const char *s,
		      union lg_value *v, struct lg_error *err)
{
	const char *p = s;

	do {
		size_t n;

		p += strspn(p, " \t");
		n = strcspn(p, ",");
		if (p[0] != '/' || n >= 4096)
			return lg_error_set(
				err, EINVAL,
				"%s.%s: '%.*s' is not an absolute directory (DIR,DIR..., e.g. /data/.lgrun-quarantine)",
				k->section, k->name, (int)(n < 200 ? n : 200),
				p);
		p += n;
	} while (*p++ == ',');
	v->s = s;
	return 0;
}

/*
 * [llm] prices, variables and decrypt, read by the parsers that use them
 * (text.c, proxy/routes.c) so that a wrong entry is named with its file
 * and line here, not when the session starts.
 */
static int parse_prices(const struct lg_config_key *k, const char *s,
			union lg_value *v, struct lg_error *err)
{
	const char *bad = s;
	double a, b;

	(void)k;
	v->s = s;
	if (lg_price_lookup(s, NULL, &a, &b, &bad) >= 0)
		return 0;
	return lg_error_set(
		err, EINVAL,
		"llm.prices: cannot read the entry '%.*s': write MODEL_GLOB=IN/OUT in USD per million tokens, e.g. claude-sonnet-*=3/15",
		(int)strcspn(bad, ","), bad);
}

static int parse_llm_variables(const struct lg_config_key *k, const char *s,
			       union lg_value *v, struct lg_error *err)
{
	struct lg_proxy_route routes[16];
	const char *bad = s;

	(void)k;
	v->s = s;
	/* after the three base-URL routes */
	if (lg_proxy_extra_routes(s, routes, 3, 16, &bad) >= 0)
		return 0;
	return lg_error_set(
		err, EINVAL,
		"llm.variables: cannot read '%.*s': write VARIABLE:FORMAT, the format one of anthropic, openai, gemini (at most 13)",
		(int)strcspn(bad, ", \t"), bad);
}

static int parse_llm_decrypt(const struct lg_config_key *k, const char *s,
			     union lg_value *v, struct lg_error *err)
{
	struct lg_proxy_route routes[16];
	struct lg_proxy_decrypt hosts[LG_PROXY_DECRYPT_MAX];
	size_t nr = 3, nh = 0; /* after the three base-URL routes */
	const char *bad = s;

	(void)k;
	v->s = s;
	if (lg_proxy_decrypt_routes(s, routes, &nr, 16, hosts, &nh, &bad) >= 0)
		return 0;
	return lg_error_set(
		err, EINVAL,
		"llm.decrypt: cannot read '%.*s': write HOST[:FORMAT][=UPSTREAM] or default (" LG_PROXY_DECRYPT_DEFAULT
		"), each host once, the format anthropic, openai or gemini (needed for a host not in the default list), the upstream an http:// or https:// URL; at most 8 hosts",
		(int)strcspn(bad, ", \t"), bad);
}

/* An [ignore] rule: a glob, or a program and its glob. */
static int parse_ignore_path(const struct lg_config_key *k, const char *s,
			     union lg_value *v, struct lg_error *err)
{
	(void)k;
	if (!*s)
		return lg_error_set(err, EINVAL, "ignore.path: empty glob");
	v->ignore.program[0] = '\0';
	v->ignore.glob = s;
	return 0;
}

static int parse_ignore_program(const struct lg_config_key *k, const char *s,
				union lg_value *v, struct lg_error *err)
{
	size_t n = strcspn(s, " \t");
	const char *glob = s + n;

	(void)k;
	while (*glob == ' ' || *glob == '\t')
		glob++;
	if (!n || n >= sizeof(v->ignore.program) || !*glob)
		return lg_error_set(
			err, EINVAL,
			"ignore.program: '%s' must be 'PROGRAM GLOB', e.g. 'git **/.git'",
			s);
	memcpy(v->ignore.program, s, n);
	v->ignore.program[n] = '\0';
	v->ignore.glob = glob;
	return 0;
}

/*
 * The stores: one per type of field. The parsers have checked the value
 * against the key's bounds, which fit the field.
 */
#define LG_SCALAR_STORE(NAME, T, MEMBER)                          \
	static int apply_##NAME(struct lg_config *c, void *field, \
				const union lg_value *v)          \
	{                                                         \
		(void)c;                                          \
		*(T *)field = (T)v->MEMBER;                       \
		return 0;                                         \
	}
LG_SCALAR_STORE(bool, bool, b)
LG_SCALAR_STORE(int, int, i)
LG_SCALAR_STORE(verdict, enum lg_verdict, verdict)
LG_SCALAR_STORE(uint, unsigned, n)
LG_SCALAR_STORE(ulong, unsigned long, n)
LG_SCALAR_STORE(u64, uint64_t, n)
LG_SCALAR_STORE(double, double, d)
#undef LG_SCALAR_STORE

/* The numbers lgctl suggest raises, read and written whole. */
#define LG_WHOLE(NAME, T)                               \
	static uint64_t get_##NAME(const void *field)   \
	{                                               \
		return *(const T *)field;               \
	}                                               \
	static void set_##NAME(void *field, uint64_t n) \
	{                                               \
		*(T *)field = (T)n;                     \
	}
LG_WHOLE(uint, unsigned)
LG_WHOLE(ulong, unsigned long)
LG_WHOLE(u64, uint64_t)
#undef LG_WHOLE

/* Dollars in a double, as a whole number of cents. */
static uint64_t get_cents(const void *field)
{
	return (uint64_t)llround(*(const double *)field * 100.0);
}

static void set_cents(void *field, uint64_t n)
{
	*(double *)field = (double)n / 100.0;
}

static int apply_string(struct lg_config *c, void *field,
			const union lg_value *v)
{
	char *s = strdup(v->s);

	(void)c;
	if (!s)
		return -ENOMEM;
	free(*(char **)field);
	*(char **)field = s;
	return 0;
}

static void free_string(void *field)
{
	free(*(char **)field);
}

static int apply_sizes(struct lg_config *c, void *field,
		       const union lg_value *v)
{
	(void)c;
	memcpy(field, v->sizes, sizeof(v->sizes));
	return 0;
}

static int apply_ignore(struct lg_config *c, void *field,
			const union lg_value *v)
{
	(void)field;
	return lg_config_add_ignore(
		c, v->ignore.program[0] ? v->ignore.program : NULL,
		v->ignore.glob);
}

static const struct lg_store store_bool = { .apply = apply_bool };
static const struct lg_store store_int = { .apply = apply_int };
static const struct lg_store store_verdict = { .apply = apply_verdict };
static const struct lg_store store_uint = { .apply = apply_uint,
					    .get = get_uint,
					    .set = set_uint };
static const struct lg_store store_ulong = { .apply = apply_ulong,
					     .get = get_ulong,
					     .set = set_ulong };
static const struct lg_store store_u64 = { .apply = apply_u64,
					   .get = get_u64,
					   .set = set_u64 };
static const struct lg_store store_double = { .apply = apply_double };
static const struct lg_store store_cents = { .apply = apply_double,
					     .get = get_cents,
					     .set = set_cents };
static const struct lg_store store_string = { .apply = apply_string,
					      .free = free_string };
static const struct lg_store store_sizes = { .apply = apply_sizes };
static const struct lg_store store_ignore = { .apply = apply_ignore,
					      .appends = true };

/* Whole numbers as the file writes them. */
static void spell_count(uint64_t n, char *out, size_t size)
{
	snprintf(out, size, "%llu", (unsigned long long)n);
}

static void spell_ms(uint64_t n, char *out, size_t size)
{
	snprintf(out, size, n % 1000 ? "%llums" : "%llus",
		 (unsigned long long)(n % 1000 ? n : n / 1000));
}

static void spell_cents(uint64_t n, char *out, size_t size)
{
	snprintf(out, size, "%llu.%02llu", (unsigned long long)(n / 100),
		 (unsigned long long)(n % 100));
}

const struct lg_kind lg_kinds[K_NKINDS] = {
#define LG_KIND(NAME, PARSE, STORE, SPELL) \
	[K_##NAME] = { #NAME, PARSE, &STORE, SPELL },
#include "kinds.def"
#undef LG_KIND
};

/* Parses value for k; applies it to c only when apply is set. */
int lg_config_set_value(struct lg_config *c, const struct lg_config_key *k,
			const char *value, bool apply, struct lg_error *err)
{
	const struct lg_kind *kind = &lg_kinds[k->type];
	union lg_value v;
	int r = kind->parse(k, value, &v, err);

	if (r < 0 || !apply)
		return r;
	return kind->store->apply(c, (char *)c + k->off, &v);
}

bool lg_config_key_number(const struct lg_config_key *k, uint64_t *min,
			  uint64_t *max)
{
	if (!lg_kinds[k->type].spell || !lg_key_store(k)->get)
		return false;
	*min = k->min;
	*max = k->max;
	return true;
}

uint64_t lg_config_number(const struct lg_config *c,
			  const struct lg_config_key *k)
{
	return lg_key_store(k)->get((const char *)c + k->off);
}

void lg_config_set_number(struct lg_config *c, const struct lg_config_key *k,
			  uint64_t n)
{
	n = n < k->min ? k->min : n > k->max ? k->max : n;
	lg_key_store(k)->set((char *)c + k->off, n);
}

void lg_config_spell_number(const struct lg_config_key *k, uint64_t n,
			    char *out, size_t size)
{
	lg_kinds[k->type].spell(n, out, size);
}
