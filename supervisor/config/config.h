/* SPDX-License-Identifier: MIT */
/*
 * Configuration: built-in defaults, then the INI file, then the selected
 * profile, then [agent NAME] overrides. Any unknown section or key, bad
 * value or out-of-range number is an error naming file and line.
 */
#ifndef LG_CONFIG_H
#define LG_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "guard/classify.h"
#include "guard/guard.h"
#include "lib/error.h"

enum {
	LG_SC_UNLINK = 1u << 0,
	LG_SC_UNLINKAT = 1u << 1,
	LG_SC_RMDIR = 1u << 2,
	LG_SC_TRUNCATE = 1u << 3,
	LG_SC_FTRUNCATE = 1u << 4,
	LG_SC_OPEN_TRUNC = 1u << 5,
	/*
	 * rename, renameat, renameat2: never counted, but they tell where
	 * pre-existing content goes (a rename over it, a move to another
	 * filesystem), and guard lgrun's state
	 */
	LG_SC_RENAME = 1u << 6,
	/*
	 * Not a name in guard.syscalls: [quarantine] keep_writes. Opens for
	 * writing (O_WRONLY, O_RDWR, O_TRUNC; not O_APPEND, O_EXCL or
	 * O_PATH alone), creat and openat2 leave the kernel so the content
	 * from before the session is kept first; never counted.
	 */
	LG_SC_KEEP_WRITES = 1u << 7,
	/*
	 * Not a name in guard.syscalls either: execve and execveat leave the
	 * kernel when the eBPF observer may load, so a static or setuid
	 * program's syscalls are traced from its first instruction (the
	 * decision is made at its exec, before it runs).
	 */
	LG_SC_EXEC = 1u << 8,
	LG_SC_DEFAULT = LG_SC_UNLINK | LG_SC_UNLINKAT | LG_SC_RMDIR |
			LG_SC_TRUNCATE | LG_SC_FTRUNCATE | LG_SC_RENAME,
};

/* The rules that can steer ([steer] keys), in the order of steer_text. */
#define LG_STEER_RULES 7
extern const char *const lg_steer_rules[LG_STEER_RULES];

#define LG_DEFAULT_GATE_TOOLS "delete_*,drop_*,truncate_*,remove_*"
#define LG_DEFAULT_TARGET_KEYS "asset_id,schema,table,path,id,name"

/* The eBPF observer: auto (if it can load, in the background), on, off. */
enum lg_bpf_mode { LG_BPF_AUTO, LG_BPF_ON, LG_BPF_OFF };
/*
 * [llm] mode: base-URL variables (base_url), the proxy variables pointing
 * at lgrun's egress proxy (proxy), or both.
 */
/*
 * auto (the default): both when the command names an agent CLI lgrun knows
 * (lg_agentenv_is_agent), base_url for any other command; decided in lgrun
 * once the command is known.
 */
enum lg_llm_mode { LG_LLM_BASE_URL, LG_LLM_PROXY, LG_LLM_BOTH, LG_LLM_AUTO };
int lg_bpf_mode_parse(const char *s);
/*
 * A store URL, redis://HOST[:PORT][/DB] or unix:/PATH[?db=N]: 0, or
 * -EINVAL with err (a password in it is refused: use password_env).
 */
int lg_store_url_parse(const char *url, char *host, size_t hsz, int *port,
		       char *path, size_t psz, int *db, struct lg_error *err);

struct lg_config {
	struct lg_guard_cfg guard;
	unsigned syscalls;
	int deny_errno;
	bool observe;
	bool kill_leftovers; /* kill what is left when the command exits */
	bool isolate; /* root: state read-only, cgroup fixed, in the tree's view */
	unsigned long kill_grace_ms;
	char *state_dir; /* NULL: $LGRUN_STATE_DIR, XDG, /var/lib/lgrun */
	char *audit_log; /* NULL: <state_dir>/audit.jsonl */
	char *metrics_file; /* NULL: no metrics file */
	bool default_ignores;
	bool shim; /* preload the shim into the command's tree */
	bool llm_proxy; /* stand between the agent and its model API */
	int llm_mode; /* enum lg_llm_mode: how the agent is led to it */
	bool sealed; /* [network] egress = proxy-only: the egress proxy or nothing */
	char *llm_decrypt; /* HOST[:FORMAT][=UPSTREAM], ...: read by the egress proxy */
	bool watch_output; /* the command's stdout/stderr through lgrun */
	int bpf_mode; /* enum lg_bpf_mode */
	unsigned bpf_ring_kb; /* the observer's ring buffer, KiB, a power of 2 */
	/* [store]: counts shared by the supervisors of a session */
	bool store_redis; /* backend = redis (else memory) */
	char *store_url, *store_prefix, *store_password_env;
	unsigned long store_timeout_ms;
	bool store_fail; /* on_store_error = fail (else local) */
	/* [quarantine]: pre-existing data is kept before it is removed */
	bool quarantine;
	bool quarantine_deny; /* on_full = deny: refuse what cannot be kept */
	uint64_t quarantine_max_bytes; /* held per session at most; 0: no limit */
	uint64_t quarantine_max_copy; /* a truncated file copied up to this */
	bool quarantine_keep_writes; /* first write-open of a file: kept */
	/* keeping never takes a filesystem below this (the smaller one) */
	uint64_t quarantine_min_free;
	double quarantine_min_free_fraction;
	uint64_t quarantine_max_total; /* all sessions of the state dir */
	/*
	 * [steer]: lgrun's note in the model's context. Per rule (the order
	 * of lg_steer_rules): NULL or "note" (lgrun's words), "off", or a
	 * text of one's own.
	 */
	bool steer;
	char *steer_text[LG_STEER_RULES];
	uint64_t quarantine_max_age_ms; /* lgctl quarantine gc: older goes */
	char *quarantine_folders; /* "DIR,DIR": a folder of one's own per mount */
	/* [record]: the session's events, for lgctl replay (record.h) */
	bool record_events;
	bool record_text, record_output; /* model text; programs' output */
	uint64_t record_max_bytes;
	uint64_t shim_max_memory; /* [shim] max_memory */
	/* "MODEL_GLOB=IN/OUT, ..." USD per million tokens, for budget.max_cost */
	char *llm_prices;
	char *llm_variables; /* "VAR:FORMAT, ..." more base-URL variables */
	char *gate_tools; /* tool names whose calls are destructive (globs) */
	char *target_keys; /* argument keys naming a destructive call's target */
	char *url_targets; /* URL templates naming it: /assets/{asset_id} */
	char *tool_endpoints; /* HTTP endpoints whose requests are tool calls */
	bool judge_all; /* every HTTP and JSON-RPC call feeds the rules */
	bool remote; /* [remote] enabled: deletes off this host count */
	char *remote_commands; /* [remote] commands: more lines of cli.def's */
	/* argument keys left out of a call's signature (NULL: the defaults) */
	char *repeat_ignore_keys;
	struct lg_ignore_rule *ignore;
	size_t n_ignore;
	/* where the values came from, for -v and error messages */
	char *config_path;
	char *profile;
	char *agent;
};

void lg_config_init(struct lg_config *c);
void lg_config_free(struct lg_config *c);

/*
 * Loads path (NULL: the default config if one exists), the profile (NULL:
 * none) and the agent's overrides (NULL: none). 0 or -errno with err set.
 */
int lg_config_load(struct lg_config *c, const char *path, const char *profile,
		   const char *agent, struct lg_error *err);

/* Same, from a string; name is used in error messages. For tests. */
int lg_config_load_string(struct lg_config *c, const char *text,
			  const char *name, const char *profile,
			  const char *agent, struct lg_error *err);

/* Appends the shipped ignore rules when default_ignores is on. */
int lg_config_finish(struct lg_config *c, struct lg_error *err);

/*
 * lgrun's command line, in one table with the file's keys: an option is
 * lgrun's own (section NULL: the file to read, the session's name, ...)
 * or sets a config key over the file, read by that key's parser (the same
 * values, the same checks). lgrun's --help and getopt's list are made from
 * it. Ends with a NULL name.
 */
struct lg_option {
	const char *name; /* --name */
	int short_name; /* -x, or 0 */
	const char *arg; /* its value's name in the help; NULL: a flag */
	const char *section, *key; /* the key it sets, or NULL */
	const char *flag_value; /* a flag's value for that key */
	const char *help; /* a '\n' starts an indented line */
};
extern const struct lg_option lg_options[];

/* Sets o's key to arg (a flag: its value); err says --name and why. */
int lg_config_set_option(struct lg_config *c, const struct lg_option *o,
			 const char *arg, struct lg_error *err);

/*
 * The key table seen from outside the configuration, for the keys that
 * hold a whole number of some unit (a count, ms, cents): lgctl suggest
 * raises them. A key is found by its section and name (NULL: none).
 */
struct lg_config_key;
const struct lg_config_key *lg_config_key_find(const char *section,
					       const char *name);
/* Does k hold such a number? Then its bounds, in its unit. */
bool lg_config_key_number(const struct lg_config_key *k, uint64_t *min,
			  uint64_t *max);
/* k's value in c, and setting it (n clamped to k's bounds). */
uint64_t lg_config_number(const struct lg_config *c,
			  const struct lg_config_key *k);
void lg_config_set_number(struct lg_config *c, const struct lg_config_key *k,
			  uint64_t n);
/* n as the file spells it for k: 12, 90s, 2.50. */
void lg_config_spell_number(const struct lg_config_key *k, uint64_t n,
			    char *out, size_t size);

/* The shipped ignore rules, NULL-terminated pairs of program, glob. */
extern const char *const lg_default_ignores[][2];

int lg_parse_duration_ms(const char *s, unsigned long *out);
/* "1024", "512K", "100M", "2G", "1T" (powers of 1024; a B or iB after). */
int lg_parse_bytes(const char *s, uint64_t *out);
int lg_parse_errno(const char *s, int *out);
const char *lg_errno_name(int e);

#endif
