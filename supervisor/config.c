// SPDX-License-Identifier: MIT
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

#ifndef LG_SYSCONFDIR
#define LG_SYSCONFDIR "/etc/lgrun"
#endif

/*
 * What tools routinely regenerate, so removing it is never "lost data".
 * A program-scoped rule applies only to that program: git managing .git/
 * is routine, anything else removing .git/ is a disaster.
 */
const char *const lg_default_ignores[][2] = {
	{ "git", "**/.git" },
	/* agent CLIs pruning their own state (old sessions, todos, logs) */
	{ "claude.exe", "**/.claude" },
	{ "claude", "**/.claude" },
	{ "node", "**/.claude" },
	{ "codex", "**/.codex" },
	{ "node", "**/.gemini" },
	{ NULL, "**/.git/*.lock" },
	{ NULL, "**/.git/**/*.lock" },
	{ NULL, "*.o" },
	{ NULL, "*.obj" },
	{ NULL, "*.lo" },
	{ NULL, "*.d" },
	{ NULL, "*.pyc" },
	{ NULL, "*.pyo" },
	{ NULL, "*-wal" },
	{ NULL, "*-shm" },
	{ NULL, "*-journal" },
	{ NULL, "*~" },
	{ NULL, ".*.swp" },
	{ NULL, ".*.swo" },
	{ NULL, ".#*" },
	{ NULL, "#*#" },
	{ NULL, "__pycache__/" },
	{ NULL, "node_modules/" },
	{ NULL, "site-packages/" },
	{ NULL, "dist-packages/" },
	{ NULL, ".cache/" },
	{ NULL, ".npm/" },
	{ NULL, ".yarn/" },
	{ NULL, ".pnpm-store/" },
	{ NULL, ".cargo/registry" },
	{ NULL, ".cargo/git" },
	{ NULL, ".m2/repository" },
	{ NULL, ".pytest_cache/" },
	{ NULL, ".mypy_cache/" },
	{ NULL, ".ruff_cache/" },
	{ NULL, ".tox/" },
	{ NULL, ".gradle/" },
	{ NULL, ".next/" },
	{ NULL, "*.egg-info/" },
	{ NULL, "build/" },
	{ NULL, "_build/" },
	{ NULL, "dist/" },
	{ NULL, "target/" },
	{ NULL, "cmake-build-*/" },
	{ NULL, "CMakeFiles/" },
	{ NULL, "pip-uninstall-*/" },
	{ NULL, "pip-install-*/" },
	{ NULL, "pip-req-build-*/" },
	{ NULL, "pip-unpack-*/" },
	{ NULL, "pip-build-env-*/" },
	{ NULL, "pip-ephem-wheel-cache-*/" },
	{ NULL, "pip-target-*/" },
	{ NULL, "pip-wheel-*/" },
	{ NULL, NULL },
};

enum ktype {
	K_BOOL,
	K_UINT,
	K_ULONG,
	K_U64,
	K_DURATION,
	K_DURATION_U64,
	K_ACTION,
	K_ERRNO,
	K_FRACTION,
	K_MONEY,
	K_STRING,
	K_SYSCALLS,
	K_SIZES,
	K_IGNORE_PATH,
	K_IGNORE_PROGRAM,
	K_BPF_MODE,
	K_POW2, /* unsigned, a power of two from min to max */
	K_STORE_BACKEND,
	K_STORE_ERROR,
	K_STORE_URL,
	K_ENDPOINTS, /* [shim] tool_endpoints */
	K_IGNORE_KEYS, /* [repeat] ignore_keys */
	K_LLM_MODE, /* [llm] mode */
	K_PRICES, /* [llm] prices */
	K_LLM_VARIABLES, /* [llm] variables */
	K_LLM_DECRYPT, /* [llm] decrypt */
	K_EGRESS, /* [network] egress */
};

struct key {
	const char *section, *name;
	enum ktype type;
	size_t off;
	unsigned long min, max;
};

#define OFF(f) offsetof(struct lg_config, f)
static const struct key keys[] = {
	{ "guard", "observe", K_BOOL, OFF(observe), 0, 0 },
	{ "guard", "deny_errno", K_ERRNO, OFF(deny_errno), 0, 0 },
	{ "guard", "syscalls", K_SYSCALLS, OFF(syscalls), 0, 0 },
	{ "guard", "kill_grace", K_DURATION, OFF(kill_grace_ms), 0, 600000 },
	{ "guard", "kill_leftovers", K_BOOL, OFF(kill_leftovers), 0, 0 },
	{ "guard", "isolate", K_BOOL, OFF(isolate), 0, 0 },
	{ "guard", "state_dir", K_STRING, OFF(state_dir), 0, 0 },
	{ "guard", "audit_log", K_STRING, OFF(audit_log), 0, 0 },
	{ "guard", "metrics_file", K_STRING, OFF(metrics_file), 0, 0 },
	{ "volumetric", "max_ops", K_UINT, OFF(guard.volumetric.max), 0,
	  1000000 },
	{ "volumetric", "window", K_DURATION_U64,
	  OFF(guard.volumetric.window_ms), 1, 86400000 },
	{ "volumetric", "action", K_ACTION, OFF(guard.volumetric.action), 0,
	  0 },
	{ "same_target", "max", K_UINT, OFF(guard.same_target.max), 0, 100000 },
	{ "same_target", "window", K_DURATION_U64,
	  OFF(guard.same_target.window_ms), 1, 86400000 },
	{ "same_target", "action", K_ACTION, OFF(guard.same_target.action), 0,
	  0 },
	{ "budget", "timeout", K_DURATION_U64, OFF(guard.budget.timeout_ms), 0,
	  31 * 86400000UL },
	{ "budget", "max_destructive_ops", K_UINT,
	  OFF(guard.budget.max_destructive_ops), 0, 100000000 },
	{ "budget", "max_turns", K_UINT, OFF(guard.budget.max_turns), 0,
	  100000000 },
	{ "budget", "max_tokens", K_U64, OFF(guard.budget.max_tokens), 0,
	  4000000000UL },
	{ "budget", "reserve", K_FRACTION, OFF(guard.budget.reserve), 0, 0 },
	{ "budget", "max_cost", K_MONEY, OFF(guard.budget.max_cost), 0, 0 },
	{ "budget", "max_tool_calls", K_UINT, OFF(guard.budget.max_tool_calls),
	  0, 100000000 },
	{ "budget", "max_processes", K_UINT, OFF(guard.budget.max_processes), 0,
	  4000000 },
	{ "llm", "prices", K_PRICES, OFF(llm_prices), 0, 0 },
	{ "llm", "variables", K_LLM_VARIABLES, OFF(llm_variables), 0, 0 },
	{ "budget", "action", K_ACTION, OFF(guard.budget.action), 0, 0 },
	{ "repeat", "threshold", K_UINT, OFF(guard.repeat.threshold), 0,
	  100000 },
	{ "repeat", "include_result", K_BOOL, OFF(guard.repeat.include_result),
	  0, 0 },
	{ "repeat", "action", K_ACTION, OFF(guard.repeat.action), 0, 0 },
	{ "failures", "max", K_UINT, OFF(guard.failures.max), 0, 100000 },
	{ "failures", "action", K_ACTION, OFF(guard.failures.action), 0, 0 },
	{ "output_repeat", "enabled", K_BOOL, OFF(guard.output_repeat.enabled),
	  0, 0 },
	{ "output_repeat", "window", K_UINT, OFF(guard.output_repeat.window),
	  10, 10000 },
	{ "output_repeat", "threshold", K_UINT,
	  OFF(guard.output_repeat.threshold), 2, 100 },
	{ "output_repeat", "sizes", K_SIZES, OFF(guard.output_repeat.sizes), 10,
	  1000 },
	{ "output_repeat", "action", K_ACTION, OFF(guard.output_repeat.action),
	  0, 0 },
	{ "greeting", "enabled", K_BOOL, OFF(guard.greeting.enabled), 0, 0 },
	{ "greeting", "action", K_ACTION, OFF(guard.greeting.action), 0, 0 },
	{ "flow", "enabled", K_BOOL, OFF(guard.flow.enabled), 0, 0 },
	{ "flow", "max_depth", K_UINT, OFF(guard.flow.max_depth), 0, 60 },
	{ "flow", "max_sessions", K_UINT, OFF(guard.flow.max_sessions), 0,
	  250 },
	{ "flow", "max_duration", K_DURATION_U64,
	  OFF(guard.flow.max_duration_ms), 0, 31 * 86400000UL },
	{ "flow", "max_rate", K_UINT, OFF(guard.flow.max_rate), 0, 100000 },
	{ "flow", "rate_window", K_DURATION_U64, OFF(guard.flow.rate_window_ms),
	  1, 86400000 },
	{ "flow", "max_calls", K_UINT, OFF(guard.flow.max_calls), 0,
	  100000000 },
	{ "flow", "allow_self_calls", K_BOOL, OFF(guard.flow.allow_self_calls),
	  0, 0 },
	{ "flow", "action", K_ACTION, OFF(guard.flow.action), 0, 0 },
	{ "flow", "no_work_calls", K_UINT, OFF(guard.flow.no_work_calls), 0,
	  100000 },
	{ "flow", "no_work_gap", K_DURATION_U64, OFF(guard.flow.no_work_gap_ms),
	  0, 86400000 },
	{ "flow", "no_work_action", K_ACTION, OFF(guard.flow.no_work_action), 0,
	  0 },
	{ "bpf", "mode", K_BPF_MODE, OFF(bpf_mode), 0, 0 },
	{ "store", "backend", K_STORE_BACKEND, OFF(store_redis), 0, 0 },
	{ "network", "egress", K_EGRESS, OFF(sealed), 0, 0 },
	{ "store", "url", K_STORE_URL, OFF(store_url), 0, 0 },
	{ "store", "prefix", K_STRING, OFF(store_prefix), 0, 0 },
	{ "store", "password_env", K_STRING, OFF(store_password_env), 0, 0 },
	{ "store", "timeout", K_DURATION, OFF(store_timeout_ms), 1, 10000 },
	{ "store", "on_store_error", K_STORE_ERROR, OFF(store_fail), 0, 0 },
	{ "bpf", "ring_kb", K_POW2, OFF(bpf_ring_kb), 4, 1048576 },
	{ "ignore", "defaults", K_BOOL, OFF(default_ignores), 0, 0 },
	{ "shim", "enabled", K_BOOL, OFF(shim), 0, 0 },
	{ "llm", "proxy", K_BOOL, OFF(llm_proxy), 0, 0 },
	{ "llm", "mode", K_LLM_MODE, OFF(llm_mode), 0, 0 },
	{ "llm", "decrypt", K_LLM_DECRYPT, OFF(llm_decrypt), 0, 0 },
	{ "output", "watch", K_BOOL, OFF(watch_output), 0, 0 },
	{ "shim", "gate_tools", K_STRING, OFF(gate_tools), 0, 0 },
	{ "shim", "target_keys", K_STRING, OFF(target_keys), 0, 0 },
	{ "shim", "url_targets", K_STRING, OFF(url_targets), 0, 0 },
	{ "shim", "tool_endpoints", K_ENDPOINTS, OFF(tool_endpoints), 0, 0 },
	{ "shim", "judge_all", K_BOOL, OFF(judge_all), 0, 0 },
	{ "repeat", "ignore_keys", K_IGNORE_KEYS, OFF(repeat_ignore_keys), 0,
	  0 },
	{ "ignore", "path", K_IGNORE_PATH, 0, 0, 0 },
	{ "ignore", "program", K_IGNORE_PROGRAM, 0, 0, 0 },
};
#undef OFF

void lg_config_init(struct lg_config *c)
{
	memset(c, 0, sizeof(*c));
	c->guard.volumetric = (struct lg_detector_cfg){ 3, 60000, LG_KILL };
	c->guard.same_target = (struct lg_detector_cfg){ 3, 60000, LG_KILL };
	c->guard.budget =
		(struct lg_budget_cfg){ .reserve = 0.2, .action = LG_KILL };
	c->guard.repeat = (struct lg_repeat_cfg){ 3, true, LG_KILL };
	c->guard.failures = (struct lg_failures_cfg){ 4, LG_WARN };
	/* Warn: a row of dashes or a progress bar repeats too. */
	c->guard.output_repeat = (struct lg_output_repeat_cfg){
		.enabled = true,
		.window = 200,
		.threshold = 3,
		.sizes = { 50, 80, 120 },
		.action = LG_WARN,
	};
	c->guard.greeting = (struct lg_greeting_cfg){ true, LG_WARN };
	c->guard.flow = (struct lg_flow_cfg){
		.enabled = true,
		.max_depth = 5,
		.max_sessions = 10,
		.max_duration_ms = 300000,
		.max_rate = 20,
		.rate_window_ms = 60000,
		.max_calls = 100,
		.action = LG_KILL,
		.no_work_calls = 5,
		.no_work_gap_ms = 10000,
		.no_work_action = LG_WARN,
	};
	c->syscalls = LG_SC_DEFAULT;
	c->deny_errno = EPERM;
	c->kill_grace_ms = 2000;
	c->kill_leftovers = true;
	c->isolate = true;
	c->default_ignores = true;
	c->shim = true;
	c->llm_proxy = true;
	c->llm_mode = LG_LLM_AUTO;
	c->bpf_mode = LG_BPF_AUTO;
	c->bpf_ring_kb = 256;
	c->store_timeout_ms = 200;
	c->store_fail = true;
}

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

void lg_config_free(struct lg_config *c)
{
	for (size_t i = 0; i < c->n_ignore; i++)
		lg_ignore_rule_free(&c->ignore[i]);
	free(c->ignore);
	free(c->state_dir);
	free(c->audit_log);
	free(c->metrics_file);
	free(c->gate_tools);
	free(c->target_keys);
	free(c->url_targets);
	free(c->tool_endpoints);
	free(c->repeat_ignore_keys);
	free(c->llm_prices);
	free(c->llm_variables);
	free(c->llm_decrypt);
	free(c->store_url);
	free(c->store_prefix);
	free(c->store_password_env);
	free(c->config_path);
	free(c->profile);
	free(c->agent);
	memset(c, 0, sizeof(*c));
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

static int add_ignore(struct lg_config *c, const char *program,
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

int lg_config_finish(struct lg_config *c, struct lg_error *err)
{
	if (c->store_redis && !c->store_url) {
		snprintf(
			err->msg, sizeof(err->msg),
			"%s: [store] backend = redis needs a url (url = redis://HOST:PORT/DB or unix:/PATH)",
			c->config_path ? c->config_path : "config");
		return -EINVAL;
	}
	if (!c->default_ignores)
		return 0;
	for (size_t i = 0; lg_default_ignores[i][1]; i++) {
		if (add_ignore(c, lg_default_ignores[i][0],
			       lg_default_ignores[i][1]) < 0) {
			snprintf(err->msg, sizeof(err->msg), "out of memory");
			return -ENOMEM;
		}
	}
	return 0;
}

enum phase { PH_BASE, PH_PROFILE, PH_AGENT };

struct parse {
	struct lg_config *c;
	enum phase phase;
	const char *profile, *agent;
	bool profile_file; /* parsing a profile file: its plain sections are the profile */
	bool saw_profile; /* a [profile NAME] section for the selected profile */
	const char *text; /* the source being parsed */
	int cur_line; /* line the reader handed to inih last */
	int err_line; /* line of the first error we saw */
	char msg[768]; /* first error, from the handler */
	/* keys set so far in this file, for the duplicate-key error */
	struct seen {
		char key[192];
		int line;
	} * seen;
	size_t nseen, seen_cap;
};

/* A key set twice in one section is an error: which one would win? */
static int check_duplicate(struct parse *p, const char *section,
			   const char *name, const struct key *k)
{
	char key[192];

	if (k->type == K_IGNORE_PATH || k->type == K_IGNORE_PROGRAM)
		return 0; /* repeated on purpose: one glob per line */
	snprintf(key, sizeof(key), "%s\n%s", section, name);
	for (size_t i = 0; i < p->nseen; i++)
		if (strcmp(p->seen[i].key, key) == 0)
			return p->seen[i].line;
	if (p->nseen == p->seen_cap) {
		size_t cap = p->seen_cap ? 2 * p->seen_cap : 32;
		struct seen *n = realloc(p->seen, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		p->seen = n;
		p->seen_cap = cap;
	}
	snprintf(p->seen[p->nseen].key, sizeof(p->seen[p->nseen].key), "%s",
		 key);
	p->seen[p->nseen++].line = p->cur_line;
	return 0;
}

static const struct key *find_key(const char *section, const char *name)
{
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (strcmp(keys[i].section, section) == 0 &&
		    strcmp(keys[i].name, name) == 0)
			return &keys[i];
	return NULL;
}

static bool known_section(const char *s)
{
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (strcmp(keys[i].section, s) == 0)
			return true;
	return false;
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
		return apply ? add_ignore(c, NULL, value) : 0;
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
		return apply ? add_ignore(c, prog, glob) : 0;
	}
	default:
		break;
	}
	return -EINVAL;
}

/* Parses value for k; applies it to c only when apply is set. */
static int set_value(struct lg_config *c, const struct key *k,
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

static int fail(struct parse *p, const char *fmt, const char *a, const char *b)
{
	if (!p->msg[0]) {
		snprintf(p->msg, sizeof(p->msg), fmt, a, b);
		p->err_line = p->cur_line;
	}
	return 0; /* inih: error on this line */
}

static int handler(void *user, const char *section, const char *name,
		   const char *value)
{
	struct parse *p = user;
	char msg[512] = "";
	const struct key *k;
	bool apply;
	int r;

	if (!name)
		return 1; /* a section header on its own */
	if (strncmp(section, "profile ", 8) == 0 ||
	    strncmp(section, "agent ", 6) == 0) {
		bool is_profile = section[0] == 'p';
		const char *who = section + (is_profile ? 8 : 6);
		const char *dot = strchr(name, '.');
		char sec[64];

		if (p->profile_file && is_profile)
			return fail(
				p,
				"[%s]: a profile file cannot hold other profiles%s",
				section, "");
		if (!dot || (size_t)(dot - name) >= sizeof(sec))
			return fail(
				p,
				"[%s]: key '%s' must be SECTION.KEY, e.g. volumetric.max_ops",
				section, name);
		memcpy(sec, name, (size_t)(dot - name));
		sec[dot - name] = '\0';
		k = find_key(sec, dot + 1);
		if (!k)
			return fail(p, "[%s]: unknown key '%s'", section, name);
		if (is_profile) {
			apply = p->phase == PH_PROFILE && p->profile &&
				strcmp(who, p->profile) == 0;
			if (apply)
				p->saw_profile = true;
		} else {
			apply = p->phase == PH_AGENT && p->agent &&
				strcmp(who, p->agent) == 0;
		}
	} else {
		if (!*section)
			return fail(p, "key '%s' is outside any [section]%s",
				    name, "");
		if (!known_section(section))
			return 0; /* reported at its header by the reader */
		k = find_key(section, name);
		if (!k)
			return fail(p, "unknown key '%s' in [%s]", name,
				    section);
		apply = p->profile_file ? p->phase == PH_PROFILE :
					  p->phase == PH_BASE;
	}
	r = check_duplicate(p, section, name, k);
	if (r > 0) {
		char what[256], first[32];

		snprintf(what, sizeof(what), "duplicate key '%s' in [%s]", name,
			 section);
		snprintf(first, sizeof(first), "%d", r);
		return fail(p, "%s (first set on line %s)", what, first);
	}
	if (r < 0)
		return fail(p, "out of memory%s%s", "", "");
	r = set_value(p->c, k, value, apply, msg, sizeof(msg));
	if (r == -ENOMEM)
		return fail(p, "out of memory%s%s", "", "");
	if (r < 0)
		return fail(p, "%s%s", msg, "");
	return 1;
}

struct reader {
	const char *pos;
	struct parse *p;
};

static bool section_ok(const char *name, size_t n)
{
	char sec[128];

	if (n >= sizeof(sec))
		return false;
	memcpy(sec, name, n);
	sec[n] = '\0';
	return known_section(sec) ||
	       (n > 8 && strncmp(sec, "profile ", 8) == 0) ||
	       (n > 6 && strncmp(sec, "agent ", 6) == 0);
}

/*
 * Feeds inih one line at a time, so we know the line of every error,
 * catch section headers we do not know (even ones with no keys under
 * them) and lines too long for inih's buffer.
 */
static char *read_line(char *str, int num, void *stream)
{
	struct reader *r = stream;
	struct parse *p = r->p;
	const char *nl, *b;
	size_t len, max = (size_t)num - 2;

	if (!*r->pos)
		return NULL;
	nl = strchr(r->pos, '\n');
	len = nl ? (size_t)(nl - r->pos) : strlen(r->pos);
	p->cur_line++;
	if (len > max) {
		char what[64];

		snprintf(what, sizeof(what), "%zu", max);
		fail(p, "line longer than %s characters%s", what, "");
		len = 0; /* hand inih an empty line: nothing half-parsed */
	}
	memcpy(str, r->pos, len);
	str[len] = '\n';
	str[len + 1] = '\0';
	r->pos += (nl ? (size_t)(nl - r->pos) + 1 : strlen(r->pos));
	for (b = str; *b == ' ' || *b == '\t'; b++)
		;
	if (*b == '[') {
		const char *e = strchr(b, ']');

		if (e && !section_ok(b + 1, (size_t)(e - b - 1))) {
			char sec[128];

			snprintf(sec, sizeof(sec), "%.*s", (int)(e - b - 1),
				 b + 1);
			fail(p, "unknown section [%s]%s", sec, "");
		}
	}
	return str;
}

static int run(struct parse *p, const char *text, const char *name,
	       struct lg_error *err)
{
	struct reader r = { text, p };
	int line;

	p->msg[0] = '\0';
	p->err_line = 0;
	p->cur_line = 0;
	p->text = text;
	p->nseen = 0;
	line = ini_parse_stream(read_line, &r, handler, p);
	if (line == 0 && !p->msg[0])
		return 0;
	if (line < 0) {
		snprintf(err->msg, sizeof(err->msg), "%s: cannot parse", name);
		return -EIO;
	}
	/* inih reports the first line it could not parse; ours may be later. */
	if (p->msg[0] && (line == 0 || p->err_line <= line))
		snprintf(err->msg, sizeof(err->msg), "%s:%d: %s", name,
			 p->err_line, p->msg);
	else
		snprintf(
			err->msg, sizeof(err->msg),
			"%s:%d: syntax error: expected [section] or key = value",
			name, line);
	return -EINVAL;
}

/* Config files are small: read them whole, so errors can point at lines. */
static int slurp(const char *path, char **out, struct lg_error *err)
{
	FILE *f = fopen(path, "re");
	size_t n, cap = 1 << 20;
	char *buf;
	int r;

	if (!f) {
		r = -errno;
		snprintf(err->msg, sizeof(err->msg),
			 "%s: cannot open config: %s", path, strerror(-r));
		return r;
	}
	buf = malloc(cap + 1);
	if (!buf) {
		fclose(f);
		return -ENOMEM;
	}
	n = fread(buf, 1, cap + 1, f);
	r = ferror(f) ? -EIO : 0;
	fclose(f);
	if (!r && n > cap) {
		snprintf(err->msg, sizeof(err->msg),
			 "%s: config larger than 1 MiB", path);
		r = -EFBIG;
	} else if (r) {
		snprintf(err->msg, sizeof(err->msg), "%s: cannot read config",
			 path);
	}
	if (r) {
		free(buf);
		return r;
	}
	buf[n] = '\0';
	*out = buf;
	return 0;
}

static int set_str(char **dst, const char *src)
{
	free(*dst);
	*dst = src ? strdup(src) : NULL;
	return src && !*dst ? -ENOMEM : 0;
}

static int load_profile_file(struct lg_config *c, const char *cfgpath,
			     const char *profile, const char *agent,
			     struct lg_error *err)
{
	char dirs[3][PATH_MAX];
	char path[PATH_MAX + 64];
	size_t nd = 0;
	struct parse p = {
		.c = c, .profile = profile, .agent = agent, .profile_file = true
	};
	char *text = NULL;
	bool found = false;
	int r;

	for (const char *s = profile; *s; s++) {
		if (!isalnum((unsigned char)*s) && *s != '-' && *s != '_' &&
		    *s != '.') {
			snprintf(
				err->msg, sizeof(err->msg),
				"profile name '%s' may only hold letters, digits, '-', '_' and '.'",
				profile);
			return -EINVAL;
		}
	}
	if (cfgpath) {
		const char *slash = strrchr(cfgpath, '/');

		if (slash)
			snprintf(dirs[nd++], PATH_MAX, "%.*s/profiles",
				 (int)(slash - cfgpath), cfgpath);
		else
			snprintf(dirs[nd++], PATH_MAX, "profiles");
	}
	snprintf(dirs[nd++], PATH_MAX, "%s/profiles", LG_SYSCONFDIR);
	if (nd == 2 && strcmp(dirs[0], dirs[1]) == 0)
		nd = 1;
	for (size_t i = 0; i < nd && !found; i++) {
		snprintf(path, sizeof(path), "%s/%s.ini", dirs[i], profile);
		found = access(path, F_OK) == 0;
	}
	if (!found) {
		snprintf(
			err->msg, sizeof(err->msg),
			"profile '%s' not found: no [profile %s] section in the config and no %s.ini in %s%s%s",
			profile, profile, profile, dirs[0],
			nd > 1 ? " or " : "", nd > 1 ? dirs[1] : "");
		return -ENOENT;
	}
	r = slurp(path, &text, err);
	if (r < 0)
		return r;
	p.phase = PH_PROFILE;
	r = run(&p, text, path, err);
	if (r == 0) {
		p.phase = PH_AGENT;
		r = run(&p, text, path, err);
	}
	free(text);
	free(p.seen);
	return r;
}

/* Runs one phase over the main source, if there is one. */
static int run_main(struct parse *p, const char *text, const char *name,
		    enum phase ph, struct lg_error *err)
{
	p->phase = ph;
	p->profile_file = false;
	return text ? run(p, text, name ? name : "<string>", err) : 0;
}

static int load(struct lg_config *c, const char *text, const char *path,
		const char *profile, const char *agent, struct lg_error *err)
{
	struct parse p = { .c = c, .profile = profile, .agent = agent };
	char *owned = NULL;
	bool from_file = path && !text;
	int r;

	err->msg[0] = '\0';
	if (set_str(&c->profile, profile) < 0 ||
	    set_str(&c->agent, agent) < 0 ||
	    (from_file && set_str(&c->config_path, path) < 0))
		return -ENOMEM;
	if (from_file) {
		r = slurp(path, &owned, err);
		if (r < 0)
			return r;
		text = owned;
	}
	/* Order of precedence: defaults < file < profile < agent. */
	r = run_main(&p, text, path, PH_BASE, err);
	if (!r)
		r = run_main(&p, text, path, PH_PROFILE, err);
	if (!r && profile && !p.saw_profile)
		r = load_profile_file(c, from_file ? path : NULL, profile,
				      agent, err);
	if (!r)
		r = run_main(&p, text, path, PH_AGENT, err);
	free(owned);
	free(p.seen);
	return r;
}

int lg_config_load(struct lg_config *c, const char *path, const char *profile,
		   const char *agent, struct lg_error *err)
{
	const char *env = getenv("LGRUN_CONFIG");
	char def[PATH_MAX];

	if (!path && env && *env)
		path = env;
	if (!path) {
		snprintf(def, sizeof(def), "%s/lgrun.ini", LG_SYSCONFDIR);
		if (access(def, R_OK) == 0)
			path = def;
	}
	return load(c, NULL, path, profile, agent, err);
}

int lg_config_load_string(struct lg_config *c, const char *text,
			  const char *name, const char *profile,
			  const char *agent, struct lg_error *err)
{
	return load(c, text, name, profile, agent, err);
}
