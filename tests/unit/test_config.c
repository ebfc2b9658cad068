// SPDX-License-Identifier: MIT
/* Unit tests for config.c: defaults, INI parsing, profiles, agents, errors. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "config/config.h"
#include "config/config_int.h"

/* Each test gets a fresh config in *state, freed by the teardown. */
static int setup(void **state)
{
	struct lg_config *c = calloc(1, sizeof(*c));

	if (!c)
		return -1;
	lg_config_init(c);
	*state = c;
	return 0;
}

static int teardown(void **state)
{
	lg_config_free(*state);
	free(*state);
	return 0;
}

static void load_ok(struct lg_config *c, const char *text, const char *profile,
		    const char *agent)
{
	struct lg_error err = { "" };
	int r = lg_config_load_string(c, text, "test.ini", profile, agent,
				      &err);

	if (r != 0)
		fail_msg("load failed (%d): %s", r, err.msg);
}

static size_t n_default_ignores(void)
{
	size_t n = 0;

	while (lg_default_ignores[n][1])
		n++;
	return n;
}

static void test_defaults(void **state)
{
	const struct lg_config *c = *state;

	assert_int_equal(c->guard.volumetric.max, 3);
	assert_int_equal(c->guard.volumetric.window_ms, 60000);
	assert_int_equal(c->guard.volumetric.action, LG_KILL);
	assert_int_equal(c->guard.same_target.max, 3);
	assert_int_equal(c->guard.same_target.window_ms, 60000);
	assert_int_equal(c->guard.same_target.action, LG_KILL);
	assert_int_equal(c->guard.budget.timeout_ms, 0);
	assert_int_equal(c->guard.budget.max_destructive_ops, 0);
	assert_true(c->guard.budget.reserve > 0.199 &&
		    c->guard.budget.reserve < 0.201);
	assert_int_equal(c->guard.budget.action, LG_KILL);
	assert_int_equal(c->guard.repeat.threshold, 3);
	assert_true(c->guard.repeat.include_result);
	assert_int_equal(c->guard.repeat.action, LG_KILL);
	assert_int_equal(c->guard.failures.max, 4);
	assert_int_equal(c->guard.failures.action, LG_WARN);
	assert_int_equal(c->guard.budget.max_turns, 0);
	assert_int_equal(c->guard.budget.max_tokens, 0);
	assert_true(c->guard.output_repeat.enabled);
	assert_int_equal(c->guard.output_repeat.window, 200);
	assert_int_equal(c->guard.output_repeat.threshold, 3);
	assert_int_equal(c->guard.output_repeat.sizes[0], 50);
	assert_int_equal(c->guard.output_repeat.sizes[1], 80);
	assert_int_equal(c->guard.output_repeat.sizes[2], 120);
	for (size_t i = 3; i < LG_OUTPUT_REPEAT_MAX_SIZES; i++)
		assert_int_equal(c->guard.output_repeat.sizes[i], 0);
	assert_int_equal(c->guard.output_repeat.action, LG_WARN);
	assert_true(c->guard.greeting.enabled);
	assert_int_equal(c->guard.greeting.action, LG_WARN);
	assert_int_equal(c->deny_errno, EPERM);
	assert_int_equal(c->syscalls, LG_SC_DEFAULT);
	assert_int_equal(c->syscalls & LG_SC_OPEN_TRUNC, 0);
	assert_int_equal(c->syscalls &
				 (LG_SC_UNLINK | LG_SC_UNLINKAT | LG_SC_RMDIR |
				  LG_SC_TRUNCATE | LG_SC_FTRUNCATE),
			 LG_SC_UNLINK | LG_SC_UNLINKAT | LG_SC_RMDIR |
				 LG_SC_TRUNCATE | LG_SC_FTRUNCATE);
	assert_false(c->observe);
	assert_true(c->kill_leftovers);
	assert_int_equal(c->kill_grace_ms, 2000);
	assert_true(c->default_ignores);
	assert_int_equal(c->n_ignore, 0);
	assert_null(c->state_dir);
	assert_null(c->audit_log);
	assert_null(c->metrics_file);
	/* the rest of the key table's defaults */
	assert_true(c->isolate);
	assert_true(c->shim);
	assert_true(c->llm_proxy);
	assert_int_equal(c->llm_mode, LG_LLM_AUTO);
	assert_int_equal(c->bpf_mode, LG_BPF_AUTO);
	assert_int_equal(c->bpf_ring_kb, 256);
	assert_int_equal(c->store_timeout_ms, 200);
	assert_true(c->store_fail);
	assert_false(c->store_redis);
	assert_null(c->store_url);
	assert_true(c->guard.flow.enabled);
	assert_int_equal(c->guard.flow.max_depth, 5);
	assert_int_equal(c->guard.flow.max_sessions, 10);
	assert_int_equal(c->guard.flow.max_duration_ms, 300000);
	assert_int_equal(c->guard.flow.max_rate, 20);
	assert_int_equal(c->guard.flow.rate_window_ms, 60000);
	assert_int_equal(c->guard.flow.max_calls, 100);
	assert_int_equal(c->guard.flow.action, LG_KILL);
	assert_int_equal(c->guard.flow.no_work_calls, 5);
	assert_int_equal(c->guard.flow.no_work_gap_ms, 10000);
	assert_int_equal(c->guard.flow.no_work_action, LG_WARN);
	assert_false(c->guard.flow.allow_self_calls);
}

/* An empty file, or one with only comments, changes nothing. */
static void test_empty_keeps_defaults(void **state)
{
	struct lg_config *c = *state;

	load_ok(c, "", NULL, NULL);
	load_ok(c,
		"; a comment\n"
		"# another\n"
		"\n"
		"[volumetric]\n"
		"; max_ops = 50\n",
		NULL, NULL);
	assert_int_equal(c->guard.volumetric.max, 3);
	assert_int_equal(c->guard.volumetric.window_ms, 60000);
	assert_int_equal(c->n_ignore, 0);
}

static void test_every_key(void **state)
{
	struct lg_config *c = *state;

	load_ok(c,
		"[guard]\n"
		"observe = true\n"
		"deny_errno = EACCES\n"
		"syscalls = unlink, open_trunc\n"
		"kill_grace = 500ms\n"
		"kill_leftovers = no\n"
		"state_dir = /var/tmp/lg\n"
		"audit_log = /var/tmp/lg/audit.jsonl\n"
		"metrics_file = /var/tmp/lg/lgrun.prom\n"
		"[volumetric]\n"
		"max_ops = 10\n"
		"window = 30s\n"
		"action = deny\n"
		"[same_target]\n"
		"max = 5\n"
		"window = 5m\n"
		"action = warn\n"
		"[budget]\n"
		"timeout = 1h\n"
		"max_destructive_ops = 100\n"
		"max_turns = 40\n"
		"max_tokens = 2000000\n"
		"reserve = 0.25\n"
		"action = deny\n"
		"[repeat]\n"
		"threshold = 5\n"
		"include_result = false\n"
		"action = warn\n"
		"[failures]\n"
		"max = 7\n"
		"action = kill\n"
		"[output_repeat]\n"
		"enabled = false\n"
		"window = 300\n"
		"threshold = 4\n"
		"sizes = 60, 40\n"
		"action = deny\n"
		"[greeting]\n"
		"enabled = no\n"
		"action = kill\n"
		"[ignore]\n"
		"defaults = false\n"
		"path = /data/scratch/**\n"
		"program = git **/.git/**\n",
		NULL, NULL);
	assert_true(c->observe);
	assert_int_equal(c->deny_errno, EACCES);
	assert_int_equal(c->syscalls, LG_SC_UNLINK | LG_SC_OPEN_TRUNC);
	assert_int_equal(c->kill_grace_ms, 500);
	assert_false(c->kill_leftovers);
	assert_string_equal(c->state_dir, "/var/tmp/lg");
	assert_string_equal(c->audit_log, "/var/tmp/lg/audit.jsonl");
	assert_string_equal(c->metrics_file, "/var/tmp/lg/lgrun.prom");
	assert_int_equal(c->guard.volumetric.max, 10);
	assert_int_equal(c->guard.volumetric.window_ms, 30000);
	assert_int_equal(c->guard.volumetric.action, LG_DENY);
	assert_int_equal(c->guard.same_target.max, 5);
	assert_int_equal(c->guard.same_target.window_ms, 300000);
	assert_int_equal(c->guard.same_target.action, LG_WARN);
	assert_int_equal(c->guard.budget.timeout_ms, 3600000);
	assert_int_equal(c->guard.budget.max_destructive_ops, 100);
	assert_true(c->guard.budget.reserve > 0.249 &&
		    c->guard.budget.reserve < 0.251);
	assert_int_equal(c->guard.budget.action, LG_DENY);
	assert_int_equal(c->guard.repeat.threshold, 5);
	assert_false(c->guard.repeat.include_result);
	assert_int_equal(c->guard.repeat.action, LG_WARN);
	assert_int_equal(c->guard.failures.max, 7);
	assert_int_equal(c->guard.failures.action, LG_KILL);
	assert_int_equal(c->guard.budget.max_turns, 40);
	assert_int_equal(c->guard.budget.max_tokens, 2000000);
	assert_false(c->guard.output_repeat.enabled);
	assert_int_equal(c->guard.output_repeat.window, 300);
	assert_int_equal(c->guard.output_repeat.threshold, 4);
	assert_int_equal(c->guard.output_repeat.sizes[0], 40);
	assert_int_equal(c->guard.output_repeat.sizes[1], 60);
	assert_int_equal(c->guard.output_repeat.sizes[2], 0);
	assert_int_equal(c->guard.output_repeat.action, LG_DENY);
	assert_false(c->guard.greeting.enabled);
	assert_int_equal(c->guard.greeting.action, LG_KILL);
	assert_false(c->default_ignores);
	assert_int_equal(c->n_ignore, 2);
	assert_null(c->ignore[0].program);
	assert_string_equal(c->ignore[0].glob, "/data/scratch/**");
	assert_string_equal(c->ignore[1].program, "git");
	assert_string_equal(c->ignore[1].glob, "**/.git/**");
}

/* A later value replaces an earlier one (strings are not leaked). */
static void test_bool_values(void **state)
{
	static const struct {
		const char *text;
		bool want;
	} tc[] = {
		{ "true", true }, { "yes", true },    { "on", true },
		{ "1", true },	  { "false", false }, { "no", false },
		{ "off", false }, { "0", false },
	};
	struct lg_config *c = *state;

	for (size_t i = 0; i < sizeof(tc) / sizeof(tc[0]); i++) {
		char text[64];

		c->observe = !tc[i].want;
		snprintf(text, sizeof(text), "[guard]\nobserve = %s\n",
			 tc[i].text);
		load_ok(c, text, NULL, NULL);
		if (c->observe != tc[i].want)
			fail_msg("observe = %s: got %d", tc[i].text,
				 c->observe);
	}
}

static void test_syscalls(void **state)
{
	static const struct {
		const char *text;
		unsigned want;
	} tc[] = {
		{ "unlink", LG_SC_UNLINK },
		{ "unlink,unlinkat", LG_SC_UNLINK | LG_SC_UNLINKAT },
		{ "rmdir , truncate,ftruncate",
		  LG_SC_RMDIR | LG_SC_TRUNCATE | LG_SC_FTRUNCATE },
		{ "unlink, unlinkat, rmdir, truncate, ftruncate, rename, open_trunc",
		  LG_SC_DEFAULT | LG_SC_OPEN_TRUNC },
		{ "unlink, unlinkat, rmdir, truncate, ftruncate",
		  LG_SC_DEFAULT & ~LG_SC_RENAME },
		{ "open_trunc open_trunc", LG_SC_OPEN_TRUNC },
	};
	struct lg_config *c = *state;

	for (size_t i = 0; i < sizeof(tc) / sizeof(tc[0]); i++) {
		char text[128];

		snprintf(text, sizeof(text), "[guard]\nsyscalls = %s\n",
			 tc[i].text);
		load_ok(c, text, NULL, NULL);
		if (c->syscalls != tc[i].want)
			fail_msg("syscalls = %s: got %#x, want %#x", tc[i].text,
				 c->syscalls, tc[i].want);
	}
}

static void test_numbers_at_limits(void **state)
{
	struct lg_config *c = *state;

	load_ok(c,
		"[volumetric]\n"
		"max_ops = 0\n"
		"window = 1ms\n"
		"[same_target]\n"
		"max = 100000\n"
		"window = 86400s\n"
		"[budget]\n"
		"reserve = 0\n"
		"[guard]\n"
		"kill_grace = 10m\n"
		"[repeat]\n"
		"threshold = 0\n"
		"[failures]\n"
		"max = 100000\n",
		NULL, NULL);
	assert_int_equal(c->guard.volumetric.max, 0);
	assert_int_equal(c->guard.volumetric.window_ms, 1);
	assert_int_equal(c->guard.same_target.max, 100000);
	assert_int_equal(c->guard.same_target.window_ms, 86400000);
	assert_true(c->guard.budget.reserve == 0);
	assert_int_equal(c->kill_grace_ms, 600000);
	assert_int_equal(c->guard.repeat.threshold, 0);
	assert_int_equal(c->guard.failures.max, 100000);
	load_ok(c,
		"[shim]\ntool_endpoints = localhost:8080/api, /assets\n"
		"judge_all = true\n[repeat]\nignore_keys = Bash:description\n",
		NULL, NULL);
	assert_string_equal(c->tool_endpoints, "localhost:8080/api, /assets");
	assert_true(c->judge_all);
	assert_string_equal(c->repeat_ignore_keys, "Bash:description");
	/* an empty list: no endpoint declared, no key ignored */
	load_ok(c, "[shim]\ntool_endpoints =\n[repeat]\nignore_keys =\n", NULL,
		NULL);
	assert_string_equal(c->repeat_ignore_keys, "");
	load_ok(c, "[volumetric]\nmax_ops = 1000000\n", NULL, NULL);
	assert_int_equal(c->guard.volumetric.max, 1000000);
	load_ok(c, "[repeat]\nthreshold = 100000\n[failures]\nmax = 0\n", NULL,
		NULL);
	assert_int_equal(c->guard.repeat.threshold, 100000);
	assert_int_equal(c->guard.failures.max, 0);
	load_ok(c,
		"[budget]\n"
		"max_turns = 100000000\n"
		"max_tokens = 4000000000\n"
		"[output_repeat]\n"
		"window = 10\n"
		"threshold = 2\n"
		"sizes = 1000,10\n",
		NULL, NULL);
	assert_int_equal(c->guard.budget.max_turns, 100000000);
	assert_int_equal(c->guard.budget.max_tokens, 4000000000ULL);
	assert_int_equal(c->guard.output_repeat.window, 10);
	assert_int_equal(c->guard.output_repeat.threshold, 2);
	assert_int_equal(c->guard.output_repeat.sizes[0], 10);
	assert_int_equal(c->guard.output_repeat.sizes[1], 1000);
	assert_int_equal(c->guard.output_repeat.sizes[2], 0);
	load_ok(c,
		"[budget]\n"
		"max_turns = 0\n"
		"max_tokens = 0\n"
		"[output_repeat]\n"
		"window = 10000\n"
		"threshold = 100\n",
		NULL, NULL);
	assert_int_equal(c->guard.budget.max_turns, 0);
	assert_int_equal(c->guard.budget.max_tokens, 0);
	/* all 64 bits of max_tokens are written */
	c->guard.budget.max_tokens = UINT64_MAX;
	load_ok(c, "[budget]\nmax_tokens = 5\n", NULL, NULL);
	assert_int_equal(c->guard.budget.max_tokens, 5);
	assert_int_equal(c->guard.output_repeat.window, 10000);
	assert_int_equal(c->guard.output_repeat.threshold, 100);
}

/* sizes: any separators, kept ascending, duplicates once, the rest 0. */
static void test_output_repeat_sizes(void **state)
{
	static const struct {
		const char *text;
		unsigned want[LG_OUTPUT_REPEAT_MAX_SIZES];
	} tc[] = {
		{ "50", { 50 } },
		{ "120,80,50", { 50, 80, 120 } },
		{ " 80 ,, 80 50\t", { 50, 80 } },
		{ "10,20,30,40,50,60,70,80",
		  { 10, 20, 30, 40, 50, 60, 70, 80 } },
		{ "80,80,80,80,80,80,80,80,80,80", { 80 } },
	};
	struct lg_config *c = *state;

	for (size_t i = 0; i < sizeof(tc) / sizeof(tc[0]); i++) {
		char text[128];

		/* a longer list first: nothing of it may be left over */
		load_ok(c, "[output_repeat]\nsizes = 11,12,13,14,15,16,17,18\n",
			NULL, NULL);
		snprintf(text, sizeof(text), "[output_repeat]\nsizes = %s\n",
			 tc[i].text);
		load_ok(c, text, NULL, NULL);
		for (size_t k = 0; k < LG_OUTPUT_REPEAT_MAX_SIZES; k++)
			if (c->guard.output_repeat.sizes[k] != tc[i].want[k])
				fail_msg("sizes = %s: [%zu] is %u, want %u",
					 tc[i].text, k,
					 c->guard.output_repeat.sizes[k],
					 tc[i].want[k]);
	}
}

struct err_case {
	const char *text;
	const char *want; /* err.msg starts with this */
};

static void check_errors(const struct err_case *tc, size_t n)
{
	int bad = 0;

	for (size_t i = 0; i < n; i++) {
		struct lg_config c;
		struct lg_error err = { "" };
		int r;

		lg_config_init(&c);
		r = lg_config_load_string(&c, tc[i].text, "test.ini", NULL,
					  NULL, &err);
		if (r != -EINVAL ||
		    strncmp(err.msg, tc[i].want, strlen(tc[i].want)) != 0) {
			print_error("case %zu: got %d '%s'\n     want '%s'\n",
				    i, r, err.msg, tc[i].want);
			bad++;
		}
		lg_config_free(&c);
	}
	assert_int_equal(bad, 0);
}

#define CHECK_ERRORS(tbl) check_errors(tbl, sizeof(tbl) / sizeof(tbl[0]))

static void test_errors(void **state)
{
	static const struct err_case tc[] = {
		{ "[guard]\nobserve = true\n[x]\nfoo = 1\n",
		  "test.ini:3: unknown section [x]" },
		{ "[shim]\ntool_endpoints = /a, host:port\n",
		  "test.ini:2: shim.tool_endpoints: 'host:port' is not an endpoint" },
		{ "[repeat]\nignore_keys = Bash:description, reason\n",
		  "test.ini:2: repeat.ignore_keys: 'reason' is not TOOL:KEY" },
		{ "[shim]\njudge_all = sometimes\n",
		  "test.ini:2: shim.judge_all: 'sometimes' is not a boolean" },
		{ "[shim]\ntool_endpoints = /a\ntool_endpoints = /b\n",
		  "test.ini:3: duplicate key 'tool_endpoints' in [shim] (first set on line 2)" },
		{ "[volumetric]\nmax_ops = 1\n[same_target]\nmax = 2\n[volumetric]\nmax_ops = 5\n",
		  "test.ini:6: duplicate key 'max_ops' in [volumetric] (first set on line 2)" },
		{ "[profile x]\nvolumetric.max_ops = 1\nvolumetric.max_ops = 2\n",
		  "test.ini:3: duplicate key 'volumetric.max_ops' in [profile x]" },
		{ "[bogus]\nfoo = 1\n", "test.ini:1: unknown section [bogus]" },
		{ "[quarantine]\nmax_bytes = 5 parsecs\n",
		  "test.ini:2: quarantine.max_bytes: '5 parsecs' is not a size" },
		{ "[quarantine]\nmax_bytes = 99999999999T\n",
		  "test.ini:2: quarantine.max_bytes: '99999999999T' is not a size" },
		{ "[quarantine]\non_full = maybe\n",
		  "test.ini:2: quarantine.on_full: 'maybe' is not allow, deny or refuse" },
		{ "[quarantine]\nfolders = /a, b\n",
		  "test.ini:2: quarantine.folders: 'b' is not an absolute directory (DIR,DIR..., e.g. /data/.lgrun-quarantine)" },
		{ "[quarantine]\nfolders = /a,\n",
		  "test.ini:2: quarantine.folders: '' is not an absolute directory (DIR,DIR..., e.g. /data/.lgrun-quarantine)" },
		{ "[guard]\nbogus = 1\n",
		  "test.ini:2: unknown key 'bogus' in [guard]" },
		{ "[volumetric]\nmax = 1\n",
		  "test.ini:2: unknown key 'max' in [volumetric]" },
		{ "[guard]\nobserve = maybe\n",
		  "test.ini:2: guard.observe: 'maybe' is not a boolean (true or false)" },
		{ "[ignore]\ndefaults = 2\n",
		  "test.ini:2: ignore.defaults: '2' is not a boolean" },
		{ "[volumetric]\nmax_ops = many\n",
		  "test.ini:2: volumetric.max_ops: 'many' is not a whole number" },
		{ "[volumetric]\nmax_ops = -1\n",
		  "test.ini:2: volumetric.max_ops: '-1' is not a whole number" },
		{ "[volumetric]\nmax_ops = 12abc\n",
		  "test.ini:2: volumetric.max_ops: '12abc' is not a whole number" },
		{ "[volumetric]\nmax_ops = 99999999999999999999999\n",
		  "test.ini:2: volumetric.max_ops: '99999999999999999999999' is not a whole number" },
		{ "[volumetric]\nmax_ops = 1000001\n",
		  "test.ini:2: volumetric.max_ops: 1000001 is out of range (0 to 1000000)" },
		{ "[same_target]\nmax = 100001\n",
		  "test.ini:2: same_target.max: 100001 is out of range (0 to 100000)" },
		{ "[volumetric]\nwindow = 5x\n",
		  "test.ini:2: volumetric.window: '5x' is not a duration (a number of seconds, or with a unit: 500ms, 30s, 5m, 1h)" },
		{ "[budget]\ntimeout = soon\n",
		  "test.ini:2: budget.timeout: 'soon' is not a duration" },
		{ "[volumetric]\nwindow = 0\n",
		  "test.ini:2: volumetric.window: 0 is out of range (1ms to 86400000ms)" },
		{ "[guard]\nkill_grace = 11m\n",
		  "test.ini:2: guard.kill_grace: 11m is out of range (0ms to 600000ms)" },
		{ "[volumetric]\naction = allow\n",
		  "test.ini:2: volumetric.action: 'allow' is not an action (warn, deny or kill)" },
		{ "[budget]\naction = stop\n",
		  "test.ini:2: budget.action: 'stop' is not an action (warn, deny or kill)" },
		{ "[guard]\ndeny_errno = EFOO\n",
		  "test.ini:2: guard.deny_errno: 'EFOO' is not a supported errno (EPERM, EACCES, EROFS, EBUSY, EIO, ENOSPC, ENOENT, EAGAIN)" },
		{ "[guard]\ndeny_errno = 1\n",
		  "test.ini:2: guard.deny_errno: '1' is not a supported errno" },
		{ "[budget]\nreserve = 1\n",
		  "test.ini:2: budget.reserve: '1' must be a fraction from 0 to below 1 (e.g. 0.2)" },
		{ "[budget]\nreserve = -0.1\n",
		  "test.ini:2: budget.reserve: '-0.1' must be a fraction" },
		{ "[budget]\nreserve = 20%\n",
		  "test.ini:2: budget.reserve: '20%' must be a fraction" },
		{ "[budget]\nreserve = nan\n",
		  "test.ini:2: budget.reserve: 'nan' must be a fraction" },
		{ "[quarantine]\nmin_free_fraction = -nan\n",
		  "test.ini:2: quarantine.min_free_fraction: '-nan' must be a fraction" },
		{ "[budget]\nmax_cost = $nan\n",
		  "test.ini:2: budget.max_cost: '$nan' is not an amount of US dollars (e.g. 2.50)" },
		{ "[guard]\nsyscalls = unlink, chmod\n",
		  "test.ini:2: guard.syscalls: unknown syscall 'chmod' (known: unlink, unlinkat, rmdir, truncate, ftruncate, rename, open_trunc)" },
		{ "[ignore]\nprogram = git\n",
		  "test.ini:2: ignore.program: 'git' must be 'PROGRAM GLOB'" },
		{ "[ignore]\nprogram =\n",
		  "test.ini:2: ignore.program: '' must be 'PROGRAM GLOB'" },
		{ "[ignore]\npath =\n", "test.ini:2: ignore.path: empty glob" },
		{ "[guard]\nstate_dir =\n",
		  "test.ini:2: guard.state_dir: empty value" },
		/* paths lgrun writes: never against the current directory */
		{ "[guard]\nstate_dir = relative/dir\n",
		  "test.ini:2: guard.state_dir: 'relative/dir' is not an absolute path" },
		{ "[guard]\nmetrics_file = lgrun.prom\n",
		  "test.ini:2: guard.metrics_file: 'lgrun.prom' is not an absolute path" },
		{ "[guard]\nobserve = true\nthis line has no equals sign\n",
		  "test.ini:3: syntax error: expected [section] or key = value" },
		/* a key before any section */
		{ "observe = true\n",
		  "test.ini:1: key 'observe' is outside any [section]" },
		/* a header with nothing under it is still checked */
		{ "[guard]\nobserve = true\n[volumetrc]\n",
		  "test.ini:3: unknown section [volumetrc]" },
		/* longer than inih's line buffer: refused, not half-parsed */
		{ "[ignore]\npath = /x/"
		  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n",
		  "test.ini:2: line longer than" },
		/* comments and blank lines count */
		{ "; lgrun\n\n# config\n[guard]\n\nbogus = 1\n",
		  "test.ini:6: unknown key 'bogus' in [guard]" },
		/* profile and agent sections hold SECTION.KEY */
		{ "[profile bulk]\nmax_ops = 5\n",
		  "test.ini:2: [profile bulk]: key 'max_ops' must be SECTION.KEY" },
		{ "[agent claude]\nvolumetric.bogus = 5\n",
		  "test.ini:2: [agent claude]: unknown key 'volumetric.bogus'" },
		{ "[agent claude]\nnosuch.max = 5\n",
		  "test.ini:2: [agent claude]: unknown key 'nosuch.max'" },
		/* values in sections not selected are still checked */
		{ "[profile other]\nvolumetric.max_ops = lots\n",
		  "test.ini:2: volumetric.max_ops: 'lots' is not a whole number" },
		{ "[agent other]\nsame_target.action = allow\n",
		  "test.ini:2: same_target.action: 'allow' is not an action" },
		/* repeat: "< 1 disables" is spelled 0; negatives are refused */
		{ "[repeat]\nthreshold = -1\n",
		  "test.ini:2: repeat.threshold: '-1' is not a whole number" },
		{ "[repeat]\nthreshold = 100001\n",
		  "test.ini:2: repeat.threshold: 100001 is out of range (0 to 100000)" },
		{ "[repeat]\nthreshold = three\n",
		  "test.ini:2: repeat.threshold: 'three' is not a whole number" },
		{ "[repeat]\ninclude_result = sometimes\n",
		  "test.ini:2: repeat.include_result: 'sometimes' is not a boolean (true or false)" },
		{ "[repeat]\naction = allow\n",
		  "test.ini:2: repeat.action: 'allow' is not an action (warn, deny or kill)" },
		{ "[repeat]\nmax = 3\n",
		  "test.ini:2: unknown key 'max' in [repeat]" },
		{ "[failures]\nmax = -4\n",
		  "test.ini:2: failures.max: '-4' is not a whole number" },
		{ "[failures]\nmax = 100001\n",
		  "test.ini:2: failures.max: 100001 is out of range (0 to 100000)" },
		{ "[failures]\naction = halt\n",
		  "test.ini:2: failures.action: 'halt' is not an action (warn, deny or kill)" },
		{ "[failures]\nwindow = 60s\n",
		  "test.ini:2: unknown key 'window' in [failures]" },
		{ "[failures]\nsteer_at = -1\n",
		  "test.ini:2: failures.steer_at: '-1' is not a whole number" },
		{ "[failures]\nsteer_at = 100001\n",
		  "test.ini:2: failures.steer_at: 100001 is out of range (0 to 100000)" },
		{ "[failure]\nmax = 4\n",
		  "test.ini:1: unknown section [failure]" },
		{ "[agent claude]\nrepeat.include_results = true\n",
		  "test.ini:2: [agent claude]: unknown key 'repeat.include_results'" },
		{ "[profile p]\nfailures.max = lots\n",
		  "test.ini:2: failures.max: 'lots' is not a whole number" },
		/* the model's turns and tokens */
		{ "[budget]\nmax_turns = -1\n",
		  "test.ini:2: budget.max_turns: '-1' is not a whole number" },
		{ "[budget]\nmax_turns = 100000001\n",
		  "test.ini:2: budget.max_turns: 100000001 is out of range (0 to 100000000)" },
		{ "[budget]\nmax_tokens = 2M\n",
		  "test.ini:2: budget.max_tokens: '2M' is not a whole number" },
		{ "[budget]\nmax_tokens = 4000000001\n",
		  "test.ini:2: budget.max_tokens: 4000000001 is out of range (0 to 4000000000)" },
		{ "[budget]\nmax_token = 5\n",
		  "test.ini:2: unknown key 'max_token' in [budget]" },
		/* output_repeat */
		{ "[output_repeat]\nenabled = sure\n",
		  "test.ini:2: output_repeat.enabled: 'sure' is not a boolean (true or false)" },
		{ "[output_repeat]\nwindow = 9\n",
		  "test.ini:2: output_repeat.window: 9 is out of range (10 to 10000)" },
		{ "[output_repeat]\nwindow = 10001\n",
		  "test.ini:2: output_repeat.window: 10001 is out of range (10 to 10000)" },
		{ "[output_repeat]\nthreshold = 1\n",
		  "test.ini:2: output_repeat.threshold: 1 is out of range (2 to 100)" },
		{ "[output_repeat]\nthreshold = 101\n",
		  "test.ini:2: output_repeat.threshold: 101 is out of range (2 to 100)" },
		{ "[output_repeat]\nsizes = 50, abc\n",
		  "test.ini:2: output_repeat.sizes: 'abc' is not a list of whole numbers (e.g. 50, 80, 120)" },
		{ "[output_repeat]\nsizes = 50;80\n",
		  "test.ini:2: output_repeat.sizes: '50;80' is not a list of whole numbers" },
		{ "[output_repeat]\nsizes = -50\n",
		  "test.ini:2: output_repeat.sizes: '-50' is not a list of whole numbers" },
		{ "[output_repeat]\nsizes = 50, 99999999999999999999999\n",
		  "test.ini:2: output_repeat.sizes: '99999999999999999999999' is not a list" },
		{ "[output_repeat]\nsizes =\n",
		  "test.ini:2: output_repeat.sizes: '' is not a list of whole numbers" },
		{ "[output_repeat]\nsizes = , ,\n",
		  "test.ini:2: output_repeat.sizes: ', ,' is not a list of whole numbers" },
		{ "[output_repeat]\nsizes = 50, 9\n",
		  "test.ini:2: output_repeat.sizes: 9 is out of range (10 to 1000)" },
		{ "[output_repeat]\nsizes = 1001\n",
		  "test.ini:2: output_repeat.sizes: 1001 is out of range (10 to 1000)" },
		{ "[output_repeat]\nsizes = 10,20,30,40,50,60,70,80,90\n",
		  "test.ini:2: output_repeat.sizes: more than 8 sizes" },
		{ "[output_repeat]\naction = allow\n",
		  "test.ini:2: output_repeat.action: 'allow' is not an action (warn, deny or kill)" },
		{ "[output_repeat]\nmax = 3\n",
		  "test.ini:2: unknown key 'max' in [output_repeat]" },
		{ "[output_repeat]\nsteer_at = once\n",
		  "test.ini:2: output_repeat.steer_at: 'once' is not a whole number" },
		{ "[output_repeat]\nsteer_at = 100001\n",
		  "test.ini:2: output_repeat.steer_at: 100001 is out of range (0 to 100000)" },
		{ "[output-repeat]\nenabled = true\n",
		  "test.ini:1: unknown section [output-repeat]" },
		/* greeting */
		{ "[greeting]\nenabled = 2\n",
		  "test.ini:2: greeting.enabled: '2' is not a boolean (true or false)" },
		{ "[greeting]\naction = none\n",
		  "test.ini:2: greeting.action: 'none' is not an action (warn, deny or kill)" },
		{ "[greeting]\nthreshold = 1\n",
		  "test.ini:2: unknown key 'threshold' in [greeting]" },
		{ "[greeting]\nsteer_at = -1\n",
		  "test.ini:2: greeting.steer_at: '-1' is not a whole number" },
		{ "[greeting]\nsteer_at = 100001\n",
		  "test.ini:2: greeting.steer_at: 100001 is out of range (0 to 100000)" },
		{ "[profile p]\ngreeting.steer_at = x\n",
		  "test.ini:2: greeting.steer_at: 'x' is not a whole number" },
		{ "[agent claude]\ngreeting.window = 1\n",
		  "test.ini:2: [agent claude]: unknown key 'greeting.window'" },
		{ "[profile p]\noutput_repeat.sizes = x\n",
		  "test.ini:2: output_repeat.sizes: 'x' is not a list" },
	};

	(void)state;
	CHECK_ERRORS(tc);
}

/* The first error is the one reported, with its own line. */
static void test_first_error_wins(void **state)
{
	static const struct err_case tc[] = {
		{ "[guard]\nbogus = 1\nobserve = maybe\n",
		  "test.ini:2: unknown key 'bogus' in [guard]" },
		{ "[guard]\nobserve = maybe\n[x]\ny = 1\n",
		  "test.ini:2: guard.observe: 'maybe' is not a boolean" },
		/* a syntax error before a bad value: line and message agree */
		{ "[guard]\nno equals here\nbogus = 1\n",
		  "test.ini:2: syntax error: expected [section] or key = value" },
		{ "[guard\nobserve = true\n",
		  "test.ini:1: syntax error: expected [section] or key = value" },
	};

	(void)state;
	CHECK_ERRORS(tc);
}

static const char profiles_text[] = "[volumetric]\n"
				    "max_ops = 4\n"
				    "[profile bulk]\n"
				    "volumetric.max_ops = 500\n"
				    "volumetric.window = 10m\n"
				    "ignore.path = /bulk/**\n"
				    "[agent claude]\n"
				    "volumetric.max_ops = 7\n"
				    "same_target.max = 2\n"
				    "ignore.path = /claude/**\n"
				    "[ignore]\n"
				    "path = /base/**\n";

static void test_no_profile_no_agent(void **state)
{
	struct lg_config *c = *state;

	load_ok(c, profiles_text, NULL, NULL);
	assert_int_equal(c->guard.volumetric.max, 4);
	assert_int_equal(c->guard.volumetric.window_ms, 60000);
	assert_int_equal(c->guard.same_target.max, 3);
	assert_int_equal(c->n_ignore, 1);
	assert_string_equal(c->ignore[0].glob, "/base/**");
	assert_null(c->profile);
	assert_null(c->agent);
}

static void test_profile_applies(void **state)
{
	struct lg_config *c = *state;

	load_ok(c, profiles_text, "bulk", NULL);
	assert_int_equal(c->guard.volumetric.max, 500);
	assert_int_equal(c->guard.volumetric.window_ms, 600000);
	assert_int_equal(c->guard.same_target.max, 3);
	assert_string_equal(c->profile, "bulk");
	/* base rules once, then the profile's */
	assert_int_equal(c->n_ignore, 2);
	assert_string_equal(c->ignore[0].glob, "/base/**");
	assert_string_equal(c->ignore[1].glob, "/bulk/**");
}

static void test_agent_applies(void **state)
{
	struct lg_config *c = *state;

	load_ok(c, profiles_text, NULL, "claude");
	assert_int_equal(c->guard.volumetric.max, 7);
	assert_int_equal(c->guard.volumetric.window_ms, 60000);
	assert_int_equal(c->guard.same_target.max, 2);
	assert_string_equal(c->agent, "claude");
	assert_int_equal(c->n_ignore, 2);
	assert_string_equal(c->ignore[1].glob, "/claude/**");
}

static void test_other_agent_does_not_apply(void **state)
{
	struct lg_config *c = *state;

	load_ok(c, profiles_text, NULL, "codex");
	assert_int_equal(c->guard.volumetric.max, 4);
	assert_int_equal(c->guard.same_target.max, 3);
	assert_int_equal(c->n_ignore, 1);
}

/* The agent's overrides win over the profile. */
static void test_agent_wins_over_profile(void **state)
{
	struct lg_config *c = *state;

	load_ok(c, profiles_text, "bulk", "claude");
	assert_int_equal(c->guard.volumetric.max, 7);
	assert_int_equal(c->guard.volumetric.window_ms, 600000);
	assert_int_equal(c->guard.same_target.max, 2);
	assert_int_equal(c->n_ignore, 3);
	assert_string_equal(c->ignore[0].glob, "/base/**");
	assert_string_equal(c->ignore[1].glob, "/bulk/**");
	assert_string_equal(c->ignore[2].glob, "/claude/**");
}

/* The new detectors' keys go through profiles and agents like the rest. */
static void test_repeat_failures_overrides(void **state)
{
	static const char text[] = "[repeat]\n"
				   "threshold = 4\n"
				   "[failures]\n"
				   "max = 6\n"
				   "[profile strict]\n"
				   "repeat.threshold = 2\n"
				   "failures.action = deny\n"
				   "[agent claude]\n"
				   "repeat.include_result = no\n"
				   "repeat.action = deny\n"
				   "failures.max = 0\n";
	struct lg_config *c = *state;

	load_ok(c, text, NULL, NULL);
	assert_int_equal(c->guard.repeat.threshold, 4);
	assert_true(c->guard.repeat.include_result);
	assert_int_equal(c->guard.failures.max, 6);
	assert_int_equal(c->guard.failures.action, LG_WARN);
	lg_config_free(c);
	lg_config_init(c);
	load_ok(c, text, "strict", NULL);
	assert_int_equal(c->guard.repeat.threshold, 2);
	assert_int_equal(c->guard.failures.action, LG_DENY);
	assert_int_equal(c->guard.failures.max, 6);
	lg_config_free(c);
	lg_config_init(c);
	load_ok(c, text, "strict", "claude");
	assert_int_equal(c->guard.repeat.threshold, 2);
	assert_false(c->guard.repeat.include_result);
	assert_int_equal(c->guard.repeat.action, LG_DENY);
	assert_int_equal(c->guard.failures.max, 0);
	assert_int_equal(c->guard.failures.action, LG_DENY);
}

/* The model-text detectors and the turn budget through profiles, agents. */
static void test_model_keys_overrides(void **state)
{
	static const char text[] = "[output_repeat]\n"
				   "sizes = 60\n"
				   "[budget]\n"
				   "max_turns = 100\n"
				   "[profile strict]\n"
				   "output_repeat.action = kill\n"
				   "budget.max_tokens = 500000\n"
				   "[agent codex]\n"
				   "output_repeat.enabled = false\n"
				   "output_repeat.sizes = 90, 70\n"
				   "greeting.action = deny\n"
				   "budget.max_turns = 20\n";
	struct lg_config *c = *state;

	load_ok(c, text, NULL, NULL);
	assert_int_equal(c->guard.output_repeat.sizes[0], 60);
	assert_int_equal(c->guard.output_repeat.sizes[1], 0);
	assert_int_equal(c->guard.output_repeat.action, LG_WARN);
	assert_int_equal(c->guard.budget.max_turns, 100);
	assert_int_equal(c->guard.budget.max_tokens, 0);
	lg_config_free(c);
	lg_config_init(c);
	load_ok(c, text, "strict", "codex");
	assert_int_equal(c->guard.output_repeat.action, LG_KILL);
	assert_false(c->guard.output_repeat.enabled);
	assert_int_equal(c->guard.output_repeat.sizes[0], 70);
	assert_int_equal(c->guard.output_repeat.sizes[1], 90);
	assert_int_equal(c->guard.output_repeat.sizes[2], 0);
	assert_int_equal(c->guard.greeting.action, LG_DENY);
	assert_true(c->guard.greeting.enabled);
	assert_int_equal(c->guard.budget.max_tokens, 500000);
	assert_int_equal(c->guard.budget.max_turns, 20);
}

/*
 * Is "section.name" documented in file: a line starting with key_prefix
 * name key_suffix after the section's heading (sec_fmt), before the next?
 */
static bool documented(const char *file, const char *sec_fmt,
		       const char *key_fmt, const char *section,
		       const char *name)
{
	char line[2048], heading[128], want[128];
	bool in = false, found = false;
	FILE *f = fopen(file, "r");

	assert_non_null(f);
	snprintf(heading, sizeof(heading), sec_fmt, section);
	snprintf(want, sizeof(want), key_fmt, name);
	while (!found && fgets(line, sizeof(line), f)) {
		if (strncmp(line, heading, strlen(heading)) == 0)
			in = true;
		else if (line[0] == sec_fmt[0] && line[1] == sec_fmt[1])
			in = false; /* another section */
		else if (in && strncmp(line, want, strlen(want)) == 0)
			found = true;
	}
	fclose(f);
	return found;
}

/*
 * Every key of the table is in conf/lgrun.ini under its section, and so in
 * lgrun.ini(5), which is made from it (man/ini2man.awk).
 */
static void test_every_key_documented(void **state)
{
	(void)state;
	for (size_t i = 0; i < lg_config_nkeys; i++) {
		const struct lg_config_key *k = &lg_config_keys[i];

		if (!documented(LG_SYSCONFDIR "/lgrun.ini", "[%s]\n",
				"; %s =", k->section, k->name))
			fail_msg("%s.%s is not in conf/lgrun.ini", k->section,
				 k->name);
		if (!documented(LG_MANPAGE, ".SS [%s]\n",
				"\\fB%s\\fR =", k->section, k->name))
			fail_msg("%s.%s is not in lgrun.ini(5)", k->section,
				 k->name);
	}
}

/*
 * conf/lgrun.ini shows every key with its default, commented out: with
 * those lines uncommented it loads, and changes nothing.
 */
static void test_shipped_ini_shows_defaults(void **state)
{
	static const char *const want[] = {
		"|budget.max_turns|",	     "|budget.max_tokens|",
		"|output_repeat.enabled|",   "|output_repeat.window|",
		"|output_repeat.threshold|", "|output_repeat.sizes|",
		"|output_repeat.action|",    "|greeting.enabled|",
		"|greeting.action|",	     "|failures.max|",
		"|volumetric.max_ops|",
	};
	struct lg_config *c = *state, def;
	char line[1024], sec[64] = "", seen[4096] = "|", *text;
	size_t o = 0, keys = 0, cap = 1 << 16;
	FILE *f = fopen(LG_SYSCONFDIR "/lgrun.ini", "r");

	assert_non_null(f);
	text = calloc(1, cap);
	assert_non_null(text);
	while (fgets(line, sizeof(line), f)) {
		char name[64], *eq, *val, *end;
		int n = 0;

		if (line[0] == '[') {
			o += (size_t)snprintf(text + o, cap - o, "%s", line);
			sscanf(line, "[%63[a-z_]]", sec);
			continue;
		}
		/* "; name = value   ; comment" */
		if (sscanf(line, "; %63[a-z_] =%n", name, &n) != 1 || !n ||
		    strncmp(line, "; ", 2) != 0 || line[2] == ' ')
			continue;
		eq = line + n;
		val = eq + strspn(eq, " ");
		end = *val == ';' ? val : strstr(val, " ;");
		if (!end)
			end = val + strcspn(val, "\n");
		while (end > val && end[-1] == ' ')
			end--;
		*end = '\0';
		/* no default to show, or a placeholder */
		if (!*val || strcmp(name, "path") == 0 ||
		    strcmp(name, "program") == 0)
			continue;
		o += (size_t)snprintf(text + o, cap - o, "%s = %s\n", name,
				      val);
		snprintf(seen + strlen(seen), sizeof(seen) - strlen(seen),
			 "%s.%s|", sec, name);
		keys++;
	}
	fclose(f);
	assert_true(o < cap - 1);
	load_ok(c, text, NULL, NULL);
	free(text);
	assert_true(keys >= 30);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (!strstr(seen, want[i]))
			fail_msg("lgrun.ini does not show %s", want[i]);
	lg_config_init(&def);
	assert_memory_equal(&c->guard.volumetric, &def.guard.volumetric,
			    sizeof(def.guard.volumetric));
	assert_memory_equal(&c->guard.same_target, &def.guard.same_target,
			    sizeof(def.guard.same_target));
	assert_int_equal(c->guard.budget.timeout_ms,
			 def.guard.budget.timeout_ms);
	assert_int_equal(c->guard.budget.max_destructive_ops,
			 def.guard.budget.max_destructive_ops);
	assert_int_equal(c->guard.budget.max_turns, def.guard.budget.max_turns);
	assert_int_equal(c->guard.budget.max_tokens,
			 def.guard.budget.max_tokens);
	assert_true(c->guard.budget.reserve == def.guard.budget.reserve);
	assert_int_equal(c->guard.budget.action, def.guard.budget.action);
	assert_int_equal(c->guard.repeat.threshold, def.guard.repeat.threshold);
	assert_int_equal(c->guard.repeat.include_result,
			 def.guard.repeat.include_result);
	assert_int_equal(c->guard.repeat.action, def.guard.repeat.action);
	assert_int_equal(c->guard.failures.max, def.guard.failures.max);
	assert_int_equal(c->guard.failures.action, def.guard.failures.action);
	assert_int_equal(c->guard.output_repeat.enabled,
			 def.guard.output_repeat.enabled);
	assert_int_equal(c->guard.output_repeat.window,
			 def.guard.output_repeat.window);
	assert_int_equal(c->guard.output_repeat.threshold,
			 def.guard.output_repeat.threshold);
	assert_memory_equal(c->guard.output_repeat.sizes,
			    def.guard.output_repeat.sizes,
			    sizeof(def.guard.output_repeat.sizes));
	assert_int_equal(c->guard.output_repeat.action,
			 def.guard.output_repeat.action);
	assert_int_equal(c->guard.greeting.enabled, def.guard.greeting.enabled);
	assert_int_equal(c->guard.greeting.action, def.guard.greeting.action);
	assert_int_equal(c->syscalls, def.syscalls);
	assert_int_equal(c->deny_errno, def.deny_errno);
	assert_int_equal(c->observe, def.observe);
	assert_int_equal(c->kill_grace_ms, def.kill_grace_ms);
	assert_int_equal(c->kill_leftovers, def.kill_leftovers);
	assert_int_equal(c->default_ignores, def.default_ignores);
	assert_int_equal(c->shim, def.shim);
	assert_int_equal(c->llm_proxy, def.llm_proxy);
	assert_string_equal(c->gate_tools ? c->gate_tools : "",
			    LG_DEFAULT_GATE_TOOLS);
	assert_string_equal(c->target_keys ? c->target_keys : "",
			    LG_DEFAULT_TARGET_KEYS);
	assert_int_equal(c->n_ignore, 0);
	lg_config_free(&def);
}

/* Precedence does not depend on the order of sections in the file. */
static void test_precedence_not_order(void **state)
{
	struct lg_config *c = *state;

	load_ok(c,
		"[agent claude]\n"
		"volumetric.window = 2m\n"
		"[profile bulk]\n"
		"volumetric.max_ops = 500\n"
		"volumetric.window = 10m\n"
		"[volumetric]\n"
		"max_ops = 4\n"
		"window = 30s\n",
		"bulk", "claude");
	assert_int_equal(c->guard.volumetric.max, 500);
	assert_int_equal(c->guard.volumetric.window_ms, 120000);
}

static void test_profile_not_found(void **state)
{
	struct lg_config *c = *state;
	struct lg_error err = { "" };
	int r;

	r = lg_config_load_string(c, profiles_text, "test.ini",
				  "no-such-profile", NULL, &err);
	assert_int_equal(r, -ENOENT);
	assert_non_null(strstr(err.msg, "profile 'no-such-profile' not found"));
}

static void test_profile_bad_name(void **state)
{
	struct lg_config *c = *state;
	struct lg_error err = { "" };
	int r;

	r = lg_config_load_string(c, "", "test.ini", "../../etc/passwd", NULL,
				  &err);
	assert_int_equal(r, -EINVAL);
	assert_non_null(strstr(err.msg, "profile name '../../etc/passwd'"));
}

/* The shipped profiles (conf/profiles) load. */
static void test_shipped_profiles(void **state)
{
	struct lg_config *c = *state;

	load_ok(c, "", "ci", NULL);
	assert_true(c->guard.budget.timeout_ms > 0);
	assert_true(c->guard.budget.max_destructive_ops > 0);
	lg_config_free(c);
	lg_config_init(c);
	load_ok(c, "", "bulk-cleanup", NULL);
	assert_true(c->guard.volumetric.max > 3);
	assert_int_equal(c->guard.same_target.max, 3);
}

static void test_ignore_rules(void **state)
{
	struct lg_config *c = *state;

	load_ok(c,
		"[ignore]\n"
		"path = /data/**\n"
		"program = git **/.git/**\n"
		"path = *.bak\n"
		"program = make\t  build/**\n",
		NULL, NULL);
	assert_int_equal(c->n_ignore, 4);
	assert_null(c->ignore[0].program);
	assert_string_equal(c->ignore[0].glob, "/data/**");
	assert_string_equal(c->ignore[1].program, "git");
	assert_string_equal(c->ignore[1].glob, "**/.git/**");
	assert_null(c->ignore[2].program);
	assert_string_equal(c->ignore[2].glob, "*.bak");
	assert_string_equal(c->ignore[3].program, "make");
	assert_string_equal(c->ignore[3].glob, "build/**");
	/* the rules work */
	assert_ptr_equal(lg_ignored(c->ignore, c->n_ignore, "/r/.git/HEAD",
				    "git"),
			 &c->ignore[1]);
	assert_null(lg_ignored(c->ignore, c->n_ignore, "/r/.git/HEAD", "rm"));
	assert_ptr_equal(lg_ignored(c->ignore, c->n_ignore, "/x/a.bak", "rm"),
			 &c->ignore[2]);
	assert_ptr_equal(lg_ignored(c->ignore, c->n_ignore, "/data/x/y", NULL),
			 &c->ignore[0]);
}

static void test_finish_appends_defaults(void **state)
{
	struct lg_config *c = *state;
	struct lg_error err = { "" };
	size_t nd = n_default_ignores();

	assert_true(nd > 10);
	load_ok(c, "[ignore]\npath = /mine/**\n", NULL, NULL);
	assert_int_equal(lg_config_finish(c, &err), 0);
	assert_int_equal(c->n_ignore, 1 + nd);
	assert_string_equal(c->ignore[0].glob, "/mine/**");
	for (size_t i = 0; i < nd; i++) {
		const struct lg_ignore_rule *r = &c->ignore[1 + i];

		assert_string_equal(r->glob, lg_default_ignores[i][1]);
		if (lg_default_ignores[i][0])
			assert_string_equal(r->program,
					    lg_default_ignores[i][0]);
		else
			assert_null(r->program);
	}
	/* a few shipped rules, as behaviour */
	assert_non_null(lg_ignored(c->ignore, c->n_ignore, "/p/a.o", "cc"));
	assert_non_null(lg_ignored(c->ignore, c->n_ignore,
				   "/p/node_modules/x/y.js", "npm"));
	assert_non_null(lg_ignored(c->ignore, c->n_ignore,
				   "/p/pkg/__pycache__/m.pyc", "python3"));
	assert_non_null(lg_ignored(c->ignore, c->n_ignore, "/p/.git/objects/ab",
				   "git"));
	assert_null(
		lg_ignored(c->ignore, c->n_ignore, "/p/.git/objects/ab", "rm"));
	assert_null(lg_ignored(c->ignore, c->n_ignore, "/p/src/main.c", "rm"));
	assert_null(lg_ignored(c->ignore, c->n_ignore, "/p/README.md", "rm"));
}

static void test_finish_without_defaults(void **state)
{
	struct lg_config *c = *state;
	struct lg_error err = { "" };

	load_ok(c, "[ignore]\ndefaults = false\npath = /mine/**\n", NULL, NULL);
	assert_int_equal(lg_config_finish(c, &err), 0);
	assert_int_equal(c->n_ignore, 1);
	assert_null(lg_ignored(c->ignore, c->n_ignore, "/p/a.o", "cc"));
}

static void test_finish_alone(void **state)
{
	struct lg_config *c = *state;
	struct lg_error err = { "" };

	assert_int_equal(lg_config_finish(c, &err), 0);
	assert_int_equal(c->n_ignore, n_default_ignores());
}

static void test_parse_duration(void **state)
{
	static const struct {
		const char *s;
		unsigned long ms;
	} ok[] = {
		{ "500ms", 500 },   { "30s", 30000 },	 { "5m", 300000 },
		{ "1h", 3600000 },  { "60", 60000 },	 { "0", 0 },
		{ "1.5s", 1500 },   { "5min", 300000 },	 { "2h", 7200000 },
		{ "0.5", 500 },	    { "1ms", 1 },	 { "90s", 90000 },
		{ "1d", 86400000 }, { "7d", 604800000 },
	};
	static const char *const bad[] = { "",	 "abc",	 "5x",	"-1", "5 days",
					   "ms", "5sec", "1dd", "5mm" };

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		unsigned long v = 12345;

		if (lg_parse_duration_ms(ok[i].s, &v) != 0 || v != ok[i].ms)
			fail_msg("'%s': got %lu, want %lu", ok[i].s, v,
				 ok[i].ms);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		unsigned long v = 12345;

		if (lg_parse_duration_ms(bad[i], &v) == 0)
			fail_msg("'%s' parsed as %lu", bad[i], v);
		assert_int_equal(v, 12345);
	}
}

static const struct lg_option *option(const char *name)
{
	for (const struct lg_option *o = lg_options; o->name; o++)
		if (strcmp(o->name, name) == 0)
			return o;
	fail_msg("no option --%s", name);
	return NULL;
}

/*
 * The command line and the file share one table: an option that sets a
 * key is read by that key's parser, with the option named in the error.
 */
static void test_options(void **state)
{
	struct lg_config *c = *state;
	struct lg_error err;

	for (const struct lg_option *o = lg_options; o->name; o++) {
		err.msg[0] = '\0';
		if (!o->section) {
			assert_int_equal(lg_config_set_option(c, o, "x", &err),
					 -EINVAL);
			assert_non_null(strstr(err.msg, "sets no config key"));
			continue;
		}
		/* each names a key of the file's: a bad value is that key's error */
		if (o->arg) {
			assert_true(lg_config_set_option(c, o, "no such value",
							 &err) < 0);
			assert_null(strstr(err.msg, "sets no config key"));
			assert_int_equal(strncmp(err.msg, "--", 2), 0);
			assert_non_null(strstr(err.msg, o->key));
		} else {
			assert_int_equal(lg_config_set_option(c, o, NULL, &err),
					 0);
		}
	}
	assert_true(c->observe);
	assert_true(c->watch_output);
	assert_int_equal(
		lg_config_set_option(c, option("timeout"), "90s", &err), 0);
	assert_int_equal(c->guard.budget.timeout_ms, 90000);
	assert_int_equal(lg_config_set_option(c, option("timeout"), "5x", &err),
			 -EINVAL);
	assert_string_equal(
		err.msg,
		"--timeout: budget.timeout: '5x' is not a duration (a number of seconds, or with a unit: 500ms, 30s, 5m, 1h)");
	assert_int_equal(c->guard.budget.timeout_ms, 90000);
	assert_int_equal(lg_config_set_option(c, option("bpf"), "off", &err),
			 0);
	assert_int_equal(c->bpf_mode, LG_BPF_OFF);
}

static void test_quarantine_keys(void **state)
{
	struct lg_config *c = *state;

	assert_true(c->quarantine);
	assert_false(c->quarantine_deny);
	assert_true(c->quarantine_max_bytes == 1024ULL * 1024 * 1024);
	load_ok(c, "[quarantine]\non_full = deny\nmax_bytes = 512K\n", NULL,
		NULL);
	assert_true(c->quarantine_deny);
	assert_true(c->quarantine_max_bytes == 512 * 1024);
	load_ok(c, "[quarantine]\nmax_bytes = 100MiB\n", NULL, NULL);
	assert_true(c->quarantine_max_bytes == 100ULL * 1024 * 1024);
	load_ok(c, "[quarantine]\nmax_bytes = 4096\n", NULL, NULL);
	assert_true(c->quarantine_max_bytes == 4096);
	assert_null(c->quarantine_folders);
	load_ok(c, "[quarantine]\nfolders = /data/q, /srv/.q/\n", NULL, NULL);
	assert_string_equal(c->quarantine_folders, "/data/q, /srv/.q/");
}

/* Issue 27's keeping and issue 28's steering keys, their defaults. */
static void test_keep_and_steer_keys(void **state)
{
	struct lg_config *c = *state;

	assert_true(c->quarantine_keep_writes);
	assert_true(c->quarantine_min_free == 1024ULL * 1024 * 1024);
	assert_true(c->quarantine_min_free_fraction > 0.09 &&
		    c->quarantine_min_free_fraction < 0.11);
	assert_true(c->quarantine_max_total == 10ULL * 1024 * 1024 * 1024);
	assert_true(c->steer);
	assert_null(c->steer_text[0]);
	assert_int_equal(c->guard.volumetric.steer_at, 0);
	load_ok(c,
		"[quarantine]\nkeep_writes = false\nmin_free = 64M\n"
		"[steer]\nvolumetric = off\nrepeat = Stop and ask the user.\n"
		"[volumetric]\nsteer_at = 1\n",
		NULL, NULL);
	assert_false(c->quarantine_keep_writes);
	assert_true(c->quarantine_min_free == 64ULL * 1024 * 1024);
	assert_string_equal(c->steer_text[0], "off");
	assert_string_equal(lg_steer_rules[2], "repeat");
	assert_string_equal(c->steer_text[2], "Stop and ask the user.");
	assert_int_equal(c->guard.volumetric.steer_at, 1);
	load_ok(c, "[steer]\nenabled = false\n", NULL, NULL);
	assert_false(c->steer);
}

/*
 * The ladder of seed 004's detectors (issue 28): failures' steer_at 0 is
 * its default level (at max with warn, max - 1 with deny or kill);
 * greeting and output_repeat note one firing before a deny or kill.
 */
static void test_ladder_keys(void **state)
{
	struct lg_config *c = *state;

	assert_int_equal(c->guard.failures.steer_at, 0);
	assert_int_equal(c->guard.greeting.steer_at, 1);
	assert_int_equal(c->guard.output_repeat.steer_at, 1);
	assert_int_equal(lg_failures_steer_level(&c->guard.failures), 4);
	load_ok(c, "[failures]\naction = kill\n", NULL, NULL);
	assert_int_equal(lg_failures_steer_level(&c->guard.failures), 3);
	load_ok(c,
		"[failures]\nsteer_at = 2\n[greeting]\nsteer_at = 0\n"
		"[output_repeat]\nsteer_at = 3\n",
		NULL, NULL);
	assert_int_equal(c->guard.failures.steer_at, 2);
	assert_int_equal(lg_failures_steer_level(&c->guard.failures), 2);
	assert_int_equal(c->guard.greeting.steer_at, 0);
	assert_int_equal(c->guard.output_repeat.steer_at, 3);
	load_ok(c, "[profile quiet]\ngreeting.steer_at = 5\n", "quiet", NULL);
	assert_int_equal(c->guard.greeting.steer_at, 5);
}

static void test_parse_errno(void **state)
{
	static const struct {
		const char *s;
		int e;
	} tc[] = {
		{ "EPERM", EPERM },   { "EACCES", EACCES },
		{ "EROFS", EROFS },   { "EBUSY", EBUSY },
		{ "EIO", EIO },	      { "ENOSPC", ENOSPC },
		{ "ENOENT", ENOENT }, { "EAGAIN", EAGAIN },
	};
	static const char *const bad[] = { "",	"eperm",  "EFOO",
					   "1", "EPERM ", "ENOTEMPTY" };
	int e;

	(void)state;
	for (size_t i = 0; i < sizeof(tc) / sizeof(tc[0]); i++) {
		e = -1;
		assert_int_equal(lg_parse_errno(tc[i].s, &e), 0);
		assert_int_equal(e, tc[i].e);
		assert_string_equal(lg_errno_name(tc[i].e), tc[i].s);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		e = -1;
		assert_int_equal(lg_parse_errno(bad[i], &e), -EINVAL);
		assert_int_equal(e, -1);
	}
	assert_string_equal(lg_errno_name(ENOTEMPTY), "E?");
}

/*
 * The table of kinds (kinds.def): each one parses and stores, and a key
 * names one of them; a kind whose store frees owns what it stores.
 */
static void test_kinds_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < K_NKINDS; i++) {
		const struct lg_kind *k = &lg_kinds[i];

		assert_non_null(k->name);
		if (!k->parse || !k->store || !k->store->apply)
			fail_msg("kind %s: no parse or apply", k->name);
		if (k->spell && (!k->store->get || !k->store->set))
			fail_msg("kind %s: spelt as a number, not one",
				 k->name);
	}
	for (size_t i = 0; i < lg_config_nkeys; i++) {
		const struct lg_config_key *k = &lg_config_keys[i];

		assert_true(k->type < K_NKINDS);
		assert_true(k->min <= k->max);
		assert_ptr_equal(lg_config_key_find(k->section, k->name), k);
	}
	assert_null(lg_config_key_find("volumetric", "max_op"));
	assert_null(lg_config_key_find("nosuch", "max_ops"));
}

/*
 * The number keys as lgctl suggest sees them: a value spelt as the file
 * would reads back the same, at the bounds and between; setting one
 * outside the bounds holds the nearest.
 */
static void test_number_keys(void **state)
{
	static const struct {
		const char *section, *name;
		uint64_t n;
		const char *spelt;
	} tc[] = {
		{ "volumetric", "max_ops", 12, "12" },
		{ "budget", "timeout", 90000, "90s" },
		{ "budget", "timeout", 1500, "1500ms" },
		{ "budget", "max_cost", 250, "2.50" },
		{ "budget", "max_cost", 7, "0.07" },
		{ "budget", "max_tokens", 4000000000ULL, "4000000000" },
	};
	struct lg_config *c = *state;
	size_t numbers = 0;
	struct lg_error err = { "" };
	char out[64];

	for (size_t i = 0; i < sizeof(tc) / sizeof(tc[0]); i++) {
		const struct lg_config_key *k =
			lg_config_key_find(tc[i].section, tc[i].name);

		assert_non_null(k);
		lg_config_spell_number(k, tc[i].n, out, sizeof(out));
		assert_string_equal(out, tc[i].spelt);
	}
	for (size_t i = 0; i < lg_config_nkeys; i++) {
		const struct lg_config_key *k = &lg_config_keys[i];
		uint64_t min, max, at[3];

		if (!lg_config_key_number(k, &min, &max))
			continue;
		numbers++;
		at[0] = min;
		at[1] = min + (max - min) / 3;
		at[2] = max;
		for (int j = 0; j < 3; j++) {
			lg_config_spell_number(k, at[j], out, sizeof(out));
			if (lg_config_set_value(c, k, out, true, &err) < 0)
				fail_msg("%s.%s = %s: %s", k->section, k->name,
					 out, err.msg);
			assert_int_equal(lg_config_number(c, k), at[j]);
		}
		lg_config_set_number(c, k, max + 1);
		assert_int_equal(lg_config_number(c, k), max);
		if (min > 0) {
			lg_config_set_number(c, k, min - 1);
			assert_int_equal(lg_config_number(c, k), min);
		}
	}
	/* the counts, durations and the amount suggest raises, and more */
	assert_true(numbers >= 12);
	assert_false(
		lg_config_key_number(lg_config_key_find("budget", "reserve"),
				     &(uint64_t){ 0 }, &(uint64_t){ 0 }));
	assert_false(lg_config_key_number(lg_config_key_find("bpf", "ring_kb"),
					  &(uint64_t){ 0 }, &(uint64_t){ 0 }));
}

/* A config file with a profile file next to it, through lg_config_load. */
struct tree {
	char dir[64];
	char ini[128];
	char profiles[128];
	char nightly[192];
	char bad[192];
};

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

static struct tree the_tree;

static struct tree *tree(void)
{
	return &the_tree;
}

static int tree_setup(void **state)
{
	struct tree *t = tree();

	snprintf(t->dir, sizeof(t->dir), "/tmp/lgrun-test-config.XXXXXX");
	if (!mkdtemp(t->dir))
		return -1;
	snprintf(t->ini, sizeof(t->ini), "%s/lgrun.ini", t->dir);
	snprintf(t->profiles, sizeof(t->profiles), "%s/profiles", t->dir);
	snprintf(t->nightly, sizeof(t->nightly), "%s/nightly.ini", t->profiles);
	snprintf(t->bad, sizeof(t->bad), "%s/bad.ini", t->profiles);
	if (mkdir(t->profiles, 0700) < 0)
		return -1;
	return setup(state);
}

static int tree_teardown(void **state)
{
	struct tree *t = tree();

	unlink(t->nightly);
	unlink(t->bad);
	unlink(t->ini);
	rmdir(t->profiles);
	rmdir(t->dir);
	return teardown(state);
}

static void test_load_file_with_profile_file(void **state)
{
	struct lg_config *c = *state;
	struct tree *t = tree();
	struct lg_error err = { "" };
	int r;

	write_file(t->ini, "[volumetric]\n"
			   "max_ops = 4\n"
			   "[agent claude]\n"
			   "same_target.max = 2\n");
	write_file(t->nightly, "[volumetric]\n"
			       "max_ops = 50\n"
			       "[budget]\n"
			       "timeout = 30m\n"
			       "[agent claude]\n"
			       "volumetric.max_ops = 60\n");
	r = lg_config_load(c, t->ini, "nightly", NULL, &err);
	if (r)
		fail_msg("%d: %s", r, err.msg);
	assert_int_equal(c->guard.volumetric.max, 50);
	assert_int_equal(c->guard.budget.timeout_ms, 1800000);
	assert_int_equal(c->guard.same_target.max, 3);
	assert_string_equal(c->config_path, t->ini);

	lg_config_free(c);
	lg_config_init(c);
	r = lg_config_load(c, t->ini, "nightly", "claude", &err);
	if (r)
		fail_msg("%d: %s", r, err.msg);
	assert_int_equal(c->guard.volumetric.max, 60);
	assert_int_equal(c->guard.same_target.max, 2);

	lg_config_free(c);
	lg_config_init(c);
	r = lg_config_load(c, t->ini, NULL, NULL, &err);
	assert_int_equal(r, 0);
	assert_int_equal(c->guard.volumetric.max, 4);
	assert_int_equal(c->guard.budget.timeout_ms, 0);
}

static void test_load_file_errors(void **state)
{
	struct lg_config *c = *state;
	struct tree *t = tree();
	struct lg_error err = { "" };
	char want[256];
	int r;

	write_file(t->ini, "[volumetric]\nmax_ops = 4\n");
	write_file(t->bad, "; bad profile\n"
			   "[volumetric]\n"
			   "max_ops = x\n");
	r = lg_config_load(c, t->ini, "bad", NULL, &err);
	assert_int_equal(r, -EINVAL);
	snprintf(want, sizeof(want),
		 "%s:3: volumetric.max_ops: 'x' is not a whole number", t->bad);
	assert_string_equal(err.msg, want);

	lg_config_free(c);
	lg_config_init(c);
	write_file(t->bad, "[profile inner]\nvolumetric.max_ops = 5\n");
	r = lg_config_load(c, t->ini, "bad", NULL, &err);
	assert_int_equal(r, -EINVAL);
	snprintf(want, sizeof(want), "%s:2: [profile inner]: ", t->bad);
	assert_true(strncmp(err.msg, want, strlen(want)) == 0);

	lg_config_free(c);
	lg_config_init(c);
	write_file(t->ini, "[guard]\n\nobserve = perhaps\n");
	r = lg_config_load(c, t->ini, NULL, NULL, &err);
	assert_int_equal(r, -EINVAL);
	snprintf(want, sizeof(want), "%s:3: guard.observe: ", t->ini);
	assert_true(strncmp(err.msg, want, strlen(want)) == 0);

	lg_config_free(c);
	lg_config_init(c);
	snprintf(want, sizeof(want), "%s/missing.ini", t->dir);
	r = lg_config_load(c, want, NULL, NULL, &err);
	assert_int_equal(r, -ENOENT);
	assert_true(strncmp(err.msg, want, strlen(want)) == 0);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
#define TT(fn) cmocka_unit_test_setup_teardown(fn, tree_setup, tree_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_defaults),
		T(test_empty_keeps_defaults),
		T(test_every_key),
		T(test_bool_values),
		T(test_syscalls),
		T(test_numbers_at_limits),
		T(test_output_repeat_sizes),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_first_error_wins),
		T(test_no_profile_no_agent),
		T(test_profile_applies),
		T(test_agent_applies),
		T(test_other_agent_does_not_apply),
		T(test_agent_wins_over_profile),
		T(test_repeat_failures_overrides),
		T(test_model_keys_overrides),
		T(test_shipped_ini_shows_defaults),
		T(test_precedence_not_order),
		T(test_profile_not_found),
		T(test_profile_bad_name),
		T(test_shipped_profiles),
		T(test_ignore_rules),
		T(test_finish_appends_defaults),
		T(test_finish_without_defaults),
		T(test_finish_alone),
		cmocka_unit_test(test_parse_duration),
		cmocka_unit_test(test_parse_errno),
		cmocka_unit_test(test_kinds_table),
		T(test_number_keys),
		T(test_options),
		T(test_quarantine_keys),
		T(test_keep_and_steer_keys),
		T(test_ladder_keys),
		T(test_every_key_documented),
		TT(test_load_file_with_profile_file),
		TT(test_load_file_errors),
	};

	return cmocka_run_group_tests_name("config", tests, NULL, NULL);
}
