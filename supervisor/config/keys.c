// SPDX-License-Identifier: MIT
/*
 * The configuration's keys: one table (section, name, kind, where it goes,
 * bounds), and the default ignores. values.c reads each kind (kinds.def).
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

/*
 * What tools routinely regenerate, so removing it is never "lost data".
 * A program-scoped rule applies only to that program: git managing .git/
 * is routine, anything else removing .git/ is a disaster.
 */
const char *const lg_steer_rules[LG_STEER_RULES] = {
	"volumetric", "same_target", "repeat",	      "budget",
	"failures",   "greeting",    "output_repeat",
};

const char *const lg_default_ignores[][2] = {
	{ "git", "**/.git" },
	/* agent CLIs pruning their own state (old sessions, todos, logs) */
	{ "claude.exe", "**/.claude" },
	{ "claude", "**/.claude" },
	{ "node", "**/.claude" },
	{ "codex", "**/.codex" },
	/* Codex clearing its sandbox's scratch a killed Codex left behind */
	{ "codex", "codex-bwrap-synthetic-mount-targets-*/" },
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

#define OFF(f) offsetof(struct lg_config, f)
const struct lg_config_key lg_config_keys[] = {
	{ "guard", "observe", K_BOOL, OFF(observe), 0, 0, NULL },
	{ "guard", "deny_errno", K_ERRNO, OFF(deny_errno), 0, 0, "EPERM" },
	{ "guard", "syscalls", K_SYSCALLS, OFF(syscalls), 0, 0,
	  "unlink, unlinkat, rmdir, truncate, ftruncate, rename" },
	{ "guard", "kill_grace", K_DURATION, OFF(kill_grace_ms), 0, 600000,
	  "2s" },
	{ "guard", "kill_leftovers", K_BOOL, OFF(kill_leftovers), 0, 0,
	  "true" },
	{ "guard", "isolate", K_BOOL, OFF(isolate), 0, 0, "true" },
	{ "guard", "state_dir", K_PATH, OFF(state_dir), 0, 0, NULL },
	{ "guard", "audit_log", K_PATH, OFF(audit_log), 0, 0, NULL },
	{ "guard", "metrics_file", K_PATH, OFF(metrics_file), 0, 0, NULL },
	{ "volumetric", "max_ops", K_UINT, OFF(guard.volumetric.max), 0,
	  1000000, "3" },
	{ "volumetric", "window", K_DURATION_U64,
	  OFF(guard.volumetric.window_ms), 1, 86400000, "60s" },
	{ "volumetric", "steer_at", K_UINT, OFF(guard.volumetric.steer_at), 0,
	  100000, "0" },
	{ "volumetric", "action", K_ACTION, OFF(guard.volumetric.action), 0, 0,
	  "kill" },
	{ "same_target", "max", K_UINT, OFF(guard.same_target.max), 0, 100000,
	  "3" },
	{ "same_target", "window", K_DURATION_U64,
	  OFF(guard.same_target.window_ms), 1, 86400000, "60s" },
	{ "same_target", "steer_at", K_UINT, OFF(guard.same_target.steer_at), 0,
	  100000, "0" },
	{ "same_target", "action", K_ACTION, OFF(guard.same_target.action), 0,
	  0, "kill" },
	{ "budget", "timeout", K_DURATION_U64, OFF(guard.budget.timeout_ms), 0,
	  31 * 86400000UL, NULL },
	{ "budget", "max_destructive_ops", K_UINT,
	  OFF(guard.budget.max_destructive_ops), 0, 100000000, NULL },
	{ "budget", "max_turns", K_UINT, OFF(guard.budget.max_turns), 0,
	  100000000, NULL },
	{ "budget", "max_tokens", K_U64, OFF(guard.budget.max_tokens), 0,
	  4000000000UL, NULL },
	{ "budget", "reserve", K_FRACTION, OFF(guard.budget.reserve), 0, 0,
	  "0.2" },
	{ "budget", "max_cost", K_MONEY, OFF(guard.budget.max_cost), 0,
	  100000000000UL /* cents: $1e9 */, NULL },
	{ "budget", "max_tool_calls", K_UINT, OFF(guard.budget.max_tool_calls),
	  0, 100000000, NULL },
	{ "budget", "max_processes", K_UINT, OFF(guard.budget.max_processes), 0,
	  4000000, NULL },
	{ "llm", "prices", K_PRICES, OFF(llm_prices), 0, 0, NULL },
	{ "llm", "variables", K_LLM_VARIABLES, OFF(llm_variables), 0, 0, NULL },
	{ "budget", "action", K_ACTION, OFF(guard.budget.action), 0, 0,
	  "kill" },
	{ "repeat", "threshold", K_UINT, OFF(guard.repeat.threshold), 0, 100000,
	  "3" },
	{ "repeat", "include_result", K_BOOL, OFF(guard.repeat.include_result),
	  0, 0, "true" },
	{ "repeat", "steer_at", K_UINT, OFF(guard.repeat.steer_at), 0, 100000,
	  "0" },
	{ "repeat", "action", K_ACTION, OFF(guard.repeat.action), 0, 0,
	  "kill" },
	{ "failures", "max", K_UINT, OFF(guard.failures.max), 0, 100000, "4" },
	{ "failures", "steer_at", K_UINT, OFF(guard.failures.steer_at), 0,
	  100000, "0" },
	{ "failures", "action", K_ACTION, OFF(guard.failures.action), 0, 0,
	  "warn" },
	{ "output_repeat", "enabled", K_BOOL, OFF(guard.output_repeat.enabled),
	  0, 0, "true" },
	{ "output_repeat", "window", K_UINT, OFF(guard.output_repeat.window),
	  10, 10000, "200" },
	{ "output_repeat", "threshold", K_UINT,
	  OFF(guard.output_repeat.threshold), 2, 100, "3" },
	{ "output_repeat", "sizes", K_SIZES, OFF(guard.output_repeat.sizes), 10,
	  1000, "50, 80, 120" },
	{ "output_repeat", "steer_at", K_UINT,
	  OFF(guard.output_repeat.steer_at), 0, 100000, "1" },
	{ "output_repeat", "action", K_ACTION, OFF(guard.output_repeat.action),
	  0, 0, "warn" },
	{ "output_repeat", "cut", K_BOOL, OFF(guard.output_repeat.cut), 0, 0,
	  "true" },
	{ "greeting", "enabled", K_BOOL, OFF(guard.greeting.enabled), 0, 0,
	  "true" },
	{ "greeting", "steer_at", K_UINT, OFF(guard.greeting.steer_at), 0,
	  100000, "1" },
	{ "greeting", "action", K_ACTION, OFF(guard.greeting.action), 0, 0,
	  "warn" },
	{ "flow", "enabled", K_BOOL, OFF(guard.flow.enabled), 0, 0, "true" },
	{ "flow", "max_depth", K_UINT, OFF(guard.flow.max_depth), 0, 60, "5" },
	{ "flow", "max_sessions", K_UINT, OFF(guard.flow.max_sessions), 0, 250,
	  "10" },
	{ "flow", "max_duration", K_DURATION_U64,
	  OFF(guard.flow.max_duration_ms), 0, 31 * 86400000UL, "5m" },
	{ "flow", "max_rate", K_UINT, OFF(guard.flow.max_rate), 0, 100000,
	  "20" },
	{ "flow", "rate_window", K_DURATION_U64, OFF(guard.flow.rate_window_ms),
	  1, 86400000, "60s" },
	{ "flow", "max_calls", K_UINT, OFF(guard.flow.max_calls), 0, 100000000,
	  "100" },
	{ "flow", "allow_self_calls", K_BOOL, OFF(guard.flow.allow_self_calls),
	  0, 0, NULL },
	{ "flow", "action", K_ACTION, OFF(guard.flow.action), 0, 0, "kill" },
	{ "flow", "no_work_calls", K_UINT, OFF(guard.flow.no_work_calls), 0,
	  100000, "5" },
	{ "flow", "no_work_gap", K_DURATION_U64, OFF(guard.flow.no_work_gap_ms),
	  0, 86400000, "10s" },
	{ "flow", "no_work_action", K_ACTION, OFF(guard.flow.no_work_action), 0,
	  0, "warn" },
	{ "bpf", "mode", K_BPF_MODE, OFF(bpf_mode), 0, 0, "auto" },
	{ "store", "backend", K_STORE_BACKEND, OFF(store_redis), 0, 0, NULL },
	{ "network", "egress", K_EGRESS, OFF(sealed), 0, 0, NULL },
	{ "store", "url", K_STORE_URL, OFF(store_url), 0, 0, NULL },
	{ "store", "prefix", K_STRING, OFF(store_prefix), 0, 0, NULL },
	{ "store", "password_env", K_STRING, OFF(store_password_env), 0, 0,
	  NULL },
	{ "store", "timeout", K_DURATION, OFF(store_timeout_ms), 1, 10000,
	  "200ms" },
	{ "store", "on_store_error", K_STORE_ERROR, OFF(store_fail), 0, 0,
	  "fail" },
	{ "bpf", "ring_kb", K_POW2, OFF(bpf_ring_kb), 4, 1048576, "256" },
	{ "ignore", "defaults", K_BOOL, OFF(default_ignores), 0, 0, "true" },
	{ "shim", "enabled", K_BOOL, OFF(shim), 0, 0, "true" },
	{ "llm", "proxy", K_BOOL, OFF(llm_proxy), 0, 0, "true" },
	{ "llm", "mode", K_LLM_MODE, OFF(llm_mode), 0, 0, "auto" },
	{ "llm", "decrypt", K_LLM_DECRYPT, OFF(llm_decrypt), 0, 0, NULL },
	{ "output", "watch", K_BOOL, OFF(watch_output), 0, 0, NULL },
	{ "shim", "gate_tools", K_STRING, OFF(gate_tools), 0, 0, NULL },
	{ "shim", "target_keys", K_STRING, OFF(target_keys), 0, 0, NULL },
	{ "shim", "url_targets", K_STRING, OFF(url_targets), 0, 0, NULL },
	{ "shim", "tool_endpoints", K_ENDPOINTS, OFF(tool_endpoints), 0, 0,
	  NULL },
	{ "shim", "judge_all", K_BOOL, OFF(judge_all), 0, 0, NULL },
	{ "shim", "max_memory", K_BYTES, OFF(shim_max_memory), 0, 0, "256M" },
	{ "remote", "enabled", K_BOOL, OFF(remote), 0, 0, "true" },
	{ "remote", "commands", K_STRING, OFF(remote_commands), 0, 0, NULL },
	{ "repeat", "ignore_keys", K_IGNORE_KEYS, OFF(repeat_ignore_keys), 0, 0,
	  NULL },
	{ "quarantine", "enabled", K_BOOL, OFF(quarantine), 0, 0, "true" },
	{ "quarantine", "on_full", K_ON_FULL, OFF(quarantine_deny), 0, 0,
	  "allow" },
	{ "quarantine", "max_bytes", K_BYTES, OFF(quarantine_max_bytes), 0, 0,
	  "1G" },
	{ "quarantine", "max_copy", K_BYTES, OFF(quarantine_max_copy), 0, 0,
	  "64M" },
	{ "quarantine", "keep_writes", K_BOOL, OFF(quarantine_keep_writes), 0,
	  0, "true" },
	{ "quarantine", "min_free", K_BYTES, OFF(quarantine_min_free), 0, 0,
	  "1G" },
	{ "quarantine", "min_free_fraction", K_FRACTION,
	  OFF(quarantine_min_free_fraction), 0, 0, "0.1" },
	{ "quarantine", "max_total", K_BYTES, OFF(quarantine_max_total), 0, 0,
	  "10G" },
	{ "quarantine", "max_age", K_DURATION_U64, OFF(quarantine_max_age_ms),
	  0, 3650 * 86400000UL, "7d" },
	{ "quarantine", "folders", K_DIRS, OFF(quarantine_folders), 0, 0,
	  NULL },
	{ "steer", "enabled", K_BOOL, OFF(steer), 0, 0, "true" },
	{ "steer", "volumetric", K_STRING, OFF(steer_text[0]), 0, 0, NULL },
	{ "steer", "same_target", K_STRING, OFF(steer_text[1]), 0, 0, NULL },
	{ "steer", "repeat", K_STRING, OFF(steer_text[2]), 0, 0, NULL },
	{ "steer", "budget", K_STRING, OFF(steer_text[3]), 0, 0, NULL },
	{ "steer", "failures", K_STRING, OFF(steer_text[4]), 0, 0, NULL },
	{ "steer", "greeting", K_STRING, OFF(steer_text[5]), 0, 0, NULL },
	{ "steer", "output_repeat", K_STRING, OFF(steer_text[6]), 0, 0, NULL },
	{ "record", "events", K_BOOL, OFF(record_events), 0, 0, "true" },
	{ "record", "max_bytes", K_BYTES, OFF(record_max_bytes), 0, 0, "64M" },
	{ "record", "text", K_BOOL, OFF(record_text), 0, 0, "true" },
	{ "record", "output", K_BOOL, OFF(record_output), 0, 0, "false" },
	{ "ignore", "path", K_IGNORE_PATH, 0, 0, 0, NULL },
	{ "ignore", "program", K_IGNORE_PROGRAM, 0, 0, 0, NULL },
};
#undef OFF
const size_t lg_config_nkeys =
	sizeof(lg_config_keys) / sizeof(lg_config_keys[0]);

const struct lg_option lg_options[] = {
	{ "config", 'c', "FILE", NULL, NULL, NULL,
	  "config file (default: $LGRUN_CONFIG, else " LG_SYSCONFDIR
	  "/lgrun.ini)" },
	{ "profile", 'p', "NAME", NULL, NULL, NULL,
	  "apply a profile (e.g. ci, bulk-cleanup)" },
	{ "agent", 'a', "NAME", NULL, NULL, NULL,
	  "agent name: picks [agent NAME] overrides (default: COMMAND's name)" },
	{ "session", 's', "ID", NULL, NULL, NULL,
	  "session id; a killed session refuses to start until reset" },
	/* over $LGRUN_STATE_DIR, which is over guard.state_dir */
	{ "state-dir", 'd', "DIR", NULL, NULL, NULL,
	  "killed markers, audit log, metrics (default: $LGRUN_STATE_DIR,\n"
	  "else guard.state_dir, else /var/lib/lgrun as root, else\n"
	  "$XDG_STATE_HOME/lgrun or ~/.local/state/lgrun; with no home\n"
	  "this user may write, a private /tmp/lgrun-UID)" },
	{ "timeout", 't', "DUR", "budget", "timeout", NULL,
	  "wall-clock budget, e.g. 90s, 10m; 0: none" },
	{ "observe", 'n', NULL, "guard", "observe", "true",
	  "dry run: never deny or kill, audit what would have tripped" },
	{ "watch-output", 0, NULL, "output", "watch", "true",
	  "pass stdout/stderr through lgrun to watch for repeated output" },
	{ "bpf", 0, "MODE", "bpf", "mode", NULL,
	  "the eBPF observer: auto (default: if it can load), on, off" },
	{ "verbose", 'v', NULL, NULL, NULL, NULL,
	  "more output (-vv: every destructive attempt)" },
	{ "help", 'h', NULL, NULL, NULL, NULL, "this help" },
	{ "version", 'V', NULL, NULL, NULL, NULL, "version" },
	{ NULL, 0, NULL, NULL, NULL, NULL, NULL },
};

int lg_config_set_option(struct lg_config *c, const struct lg_option *o,
			 const char *arg, struct lg_error *err)
{
	const char *value = o->arg ? arg : o->flag_value;
	const struct lg_config_key *k =
		o->section ? lg_config_key_find(o->section, o->key) : NULL;
	struct lg_error why = { "" };
	int r;

	if (!k)
		return lg_error_set(err, EINVAL, "--%s sets no config key",
				    o->name);
	r = lg_config_set_value(c, k, value ? value : "", true, &why);
	if (r < 0)
		lg_error_set(err, -r, "--%s: %s", o->name,
			     r == -ENOMEM ? "out of memory" : why.msg);
	return r;
}

const struct lg_config_key *lg_config_key_find(const char *section,
					       const char *name)
{
	for (size_t i = 0; i < lg_config_nkeys; i++)
		if (strcmp(lg_config_keys[i].section, section) == 0 &&
		    strcmp(lg_config_keys[i].name, name) == 0)
			return &lg_config_keys[i];
	return NULL;
}
