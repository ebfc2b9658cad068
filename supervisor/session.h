/* SPDX-License-Identifier: MIT */
/*
 * One supervised session: owns the guard, turns gathered facts into
 * events, keeps the recent events for the audit record, and remembers the
 * trip. The notify loop asks it for verdicts; lgrun acts on the trip.
 */
#ifndef LG_SESSION_H
#define LG_SESSION_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "classify.h"
#include "clock.h"
#include "config.h"
#include "guard/guard.h"

struct lg_session;

struct lg_session_info {
	const char *id, *agent, *state_dir, *audit_path, *metrics_path;
	/* the flow's correlation id and this session's name in its chains;
	 * the session starts the flow (a user's call) */
	const char *flow, *name;
	int64_t start_real_ns;
	uint64_t start_mono_ms;
};

struct lg_session *lg_session_new(const struct lg_config *cfg,
				  const struct lg_session_info *info);
void lg_session_free(struct lg_session *s);

/*
 * The session's lock is its own: every function here takes it (no caller
 * does). fn is called once a kill is decided, by the thread that decided
 * it, after that thread has left the lock and before the tripping
 * operation is answered, so that the tree stops before it can take
 * another step. lgrun writes cgroup.kill there.
 */
void lg_session_on_kill(struct lg_session *s, void (*fn)(void *ctx), void *ctx);

/*
 * While set on a thread, a kill the guard decides on that thread waits:
 * the proxy first answers the agent with the reason, then lgrun applies
 * it (kill_pending is set).
 */
void lg_session_defer_kill(struct lg_session *s, bool defer);

/*
 * A model turn seen by the proxy: counted for the session record and fed
 * to the guard (turn and token budgets, the greeting detector). text is
 * the turn's text, possibly cut.
 */
void lg_session_llm_turn(struct lg_session *s, const char *model,
			 const char *stop_reason, uint64_t in_tokens,
			 uint64_t out_tokens, unsigned tool_calls,
			 const char *text);
/* Streamed model text, a delta at a time (the output repeat detector). */
void lg_session_llm_text(struct lg_session *s, const char *p, size_t n);

/* Repeat judges calls without their results (repeat.include_result off). */
bool lg_session_judge_calls(const struct lg_session *s);

/* repeat.ignore_keys, or the defaults (LG_DEFAULT_IGNORE_KEYS). */
const char *lg_session_ignore_keys(const struct lg_session *s);

/*
 * A call the shim saw that is not an agent's decision (a health check, a
 * test suite's request, a language server's method): counted and shown at
 * -vv, fed to no rule. proto: enum lg_wire_proto.
 */
void lg_session_observed(struct lg_session *s, pid_t pid, const char *exe,
			 unsigned proto, const char *tool,
			 const char *args_preview, const char *result_preview);

/* A kill, or a deny decided on the model's path: refuse model calls. */
bool lg_session_model_blocked(const struct lg_session *s);

/* The user-facing reason the session stopped, for an error response. */
void lg_session_stop_message(const struct lg_session *s, char *out,
			     size_t size);

/*
 * 0 while the session runs, else the errno that refuses whatever the tree
 * tries (it is blocked), in one look.
 */
int lg_session_refusal(const struct lg_session *s);

/*
 * A destructive attempt with its facts: 0 to let it run, else an errno
 * (the session's refusal when it is blocked, a trip while it was read).
 */
int lg_session_decide(struct lg_session *s, pid_t pid, enum lg_op op,
		      const char *path, const struct lg_facts *f);
/*
 * A rename (never counted), src and dst resolved, their facts not
 * following a final symlink; flags are renameat2's, cross_fs when src and
 * dst's directory are on different mounts (EXDEV: a copy follows). 0 to let
 * it run, else an errno (it would move or replace lgrun's state).
 */
int lg_session_rename(struct lg_session *s, pid_t pid, const char *src,
		      const char *dst, const struct lg_facts *fs,
		      const struct lg_facts *fd, unsigned flags, bool cross_fs);
/*
 * A destructive tool call held back by the shim (an HTTP DELETE, a
 * delete_* tool): tool-level deletes always count. 0 to let it go, else
 * the errno to refuse it with.
 */
int lg_session_gate(struct lg_session *s, pid_t pid, const char *exe,
		    const char *tool, const char *target);
/*
 * An agent-to-agent call of the session's flow: a nested lgrun starting
 * (from: the session it runs in, to: its name), an A2A request (to: the
 * endpoint). 0 to let it go, else the errno to refuse it with; why gets
 * the user-facing reason of a refusal.
 */
int lg_session_call(struct lg_session *s, pid_t pid, const char *exe,
		    const char *flow, const char *from, const char *to,
		    char *why, size_t why_size);
/* The session did work nobody reported otherwise (bytes written). */
void lg_session_work(struct lg_session *s);
/* Its end: control goes back from `from` to `to`. */
void lg_session_return(struct lg_session *s, const char *flow, const char *from,
		       const char *to);
const char *lg_session_flow(const struct lg_session *s);
const char *lg_session_name(const struct lg_session *s);

/* A file operation's outcome, from the shim: result is 0 or an errno. */
void lg_session_op_result(struct lg_session *s, pid_t pid, const char *exe,
			  enum lg_op op, const char *path, int result);
/* The same, seen by the eBPF observer (a process without the shim). */
void lg_session_bpf_result(struct lg_session *s, pid_t pid, const char *exe,
			   enum lg_op op, const char *path, int result);
/*
 * A tool call matched with its result. args is the canonical JSON of the
 * arguments; digest identifies the result.
 */
void lg_session_tool_done(struct lg_session *s, pid_t pid, const char *exe,
			  const char *tool, const char *args,
			  const char *digest, const char *args_preview,
			  const char *result_preview, uint64_t stream);

/*
 * The target's arguments could not be read: the attempt is refused with
 * the errno returned.
 */
int lg_session_unreadable(struct lg_session *s, pid_t pid, enum lg_op op,
			  int err);
/* Cleaned lines of the command's output (--watch-output). */
void lg_session_output_text(struct lg_session *s, const char *p, size_t n);
/* The tree's process count now (budget.max_processes). */
void lg_session_processes(struct lg_session *s, unsigned n);
/* Time-based rules; call when lg_session_next_deadline() is reached. */
void lg_session_tick(struct lg_session *s);
uint64_t lg_session_next_deadline(const struct lg_session *s);

/* Set once the guard decided to kill (never in observe mode). */
bool lg_session_kill_pending(const struct lg_session *s);
/*
 * When a kill decided on the proxy's path (defer_kill set) was decided
 * (lg_mono_ms), or 0: the agent is being told why, and the tree waits.
 */
uint64_t lg_session_kill_deferred(const struct lg_session *s);
const char *lg_session_trip_summary(const struct lg_session *s);
const char *lg_session_trip_reason(const struct lg_session *s);

/*
 * After the tree is dead: the trip's audit record (fsync'ed), the killed
 * marker, the metrics. method and kill_ms describe the kill; survivors
 * counts what still runs, escaped what had left the cgroup. 0, or -errno
 * when the killed marker could not be written (the session is not
 * blocked); *audit_err (if given): 0 or why the record was not written.
 */
int lg_session_record_trip(struct lg_session *s, const char *method,
			   double kill_ms, int survivors, unsigned escaped,
			   int *audit_err);
/* Adds this session's counters to the metrics file (once, at the end). */
void lg_session_write_metrics(struct lg_session *s);

/* The session's record in the state dir; state is running, exited, ... */
void lg_session_write_state(struct lg_session *s, const char *state,
			    int exit_status, pid_t pid);
/*
 * The session's one terminal record: end is completed, cancelled,
 * timed_out, budget_exceeded, tripped or error. fsync'ed.
 */
void lg_session_audit_end(struct lg_session *s, const char *end,
			  int exit_status, const char *summary);
void lg_session_audit_simple(struct lg_session *s, const char *event,
			     const char *summary);

/* A warning that is not a detector's (rule and reason name it). */
void lg_session_warn(struct lg_session *s, const char *rule, const char *reason,
		     pid_t pid, const char *exe, const char *summary);
/* The eBPF observer: its state ("attached", "off: why") and counters. */
void lg_session_bpf_state(struct lg_session *s, const char *state);
/* direct: connects off this host around the egress proxy */
void lg_session_bpf_stats(struct lg_session *s, uint64_t drops,
			  uint64_t syscalls, uint64_t bytes_written,
			  uint64_t bypass_warnings, uint64_t direct);
/* Windows shared with the session's other supervisors (the store). */
void lg_session_shared(struct lg_session *s,
		       const struct lg_shared_windows *shared);
/* on_store_error = fail: destructive ops are refused while up() is false. */
void lg_session_store_required(struct lg_session *s, bool (*up)(void *ctx),
			       void *ctx);
/*
 * Another supervisor of the session tripped (the store's kill channel):
 * this one kills its tree too (reason killed_by_peer).
 */
void lg_session_peer_kill(struct lg_session *s, const char *summary);
bool lg_session_peer_killed(const struct lg_session *s);
/*
 * The supervisor itself stops the session (reason: a short name for the
 * audit; the summary says why). Like a trip; the main loop kills.
 */
void lg_session_supervisor_kill(struct lg_session *s, const char *reason,
				const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Where the trip record gets the tripping process's ancestry from. */
void lg_session_lineage_fn(struct lg_session *s,
			   void (*fn)(void *ctx, pid_t pid, char *out,
				      size_t size),
			   void *ctx);

/* Shim connection counters, recorded with the session's state. */
void lg_session_shim_stats(struct lg_session *s, uint64_t accepted,
			   uint64_t refused, uint64_t malformed,
			   uint64_t dropped, uint64_t gates, uint64_t tls);

struct lg_session_stats {
	uint64_t attempts, counted, denied, unreadable, would_trip, tool_calls;
	uint64_t warnings_suppressed; /* past MAX_WARN_RECORDS of a reason */
	uint64_t ev_seccomp, ev_shim, ev_proxy, ev_bpf; /* events by source */
	/* calls of the programs an agent runs: observed, judged by no rule */
	uint64_t observed_http, observed_jsonrpc;
	uint64_t recoverable; /* removals git can give back: not counted */
	uint64_t moved; /* sources of moves to another filesystem, copied */
	uint64_t renames; /* seen, never counted (they tell where content went) */
	uint64_t turns, tokens_in, tokens_out, max_tokens_stops;
	double cost; /* USD, from [llm] prices */
};
void lg_session_stats(const struct lg_session *s, struct lg_session_stats *st);

struct lg_egress_flow;
/*
 * A connection through the egress proxy ended: counted; its first one to a
 * host:port is audited (host, port, program: never a URL or a header).
 */
void lg_session_egress(struct lg_session *s, const struct lg_egress_flow *f);

#endif
