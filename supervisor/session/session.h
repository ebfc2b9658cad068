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

#include "guard/classify.h"
#include "lib/clock.h"
#include "config/config.h"
#include "guard/guard.h"
#include "guard/sink.h"
#include "proxy/proxy.h"

struct lg_session;
struct sockaddr_in;

struct lg_session_info {
	const char *id, *agent, *state_dir, *audit_path, *metrics_path;
	const char *cgroup; /* the tree's leaf, NULL: none */
	/* the flow's correlation id and this session's name in its chains;
	 * the session starts the flow (a user's call) */
	const char *flow, *name;
	int64_t start_real_ns;
	uint64_t start_mono_ms;
	/* the options that set config keys, [["--name", "arg"|null], ...] */
	const char *options;
	/* the quarantine index's lines on their way (spill.h), or NULL */
	struct lg_spill *spill;
	/* the recording's (lg_record_spill), or NULL: the recording's own */
	struct lg_spill *rec_spill;
};

struct lg_session *lg_session_new(const struct lg_config *cfg,
				  const struct lg_session_info *info);
void lg_session_free(struct lg_session *s);

/* The session's lock is its own: every function here takes it (no caller
 * does). */
/*
 * What the session calls back (lg_session_bind: the members given are set,
 * those left NULL keep what an earlier bind set; none: not called).
 *  - on_kill: called once a kill is decided, by the thread that decided
 *    it, after that thread has left the lock and before the tripping
 *    operation is answered, so that the tree stops before it can take
 *    another step. lgrun writes cgroup.kill there.
 *  - lineage: where the trip record gets the tripping process's ancestry.
 *  - shared: windows shared with the session's other supervisors.
 *  - store_up: on_store_error = fail: destructive ops are refused while it
 *    is false.
 */
struct lg_session_hooks {
	void (*on_kill)(void *ctx);
	void *on_kill_ctx;
	void (*lineage)(void *ctx, pid_t pid, char *out, size_t size);
	void *lineage_ctx;
	const struct lg_shared_windows *shared;
	bool (*store_up)(void *ctx);
	void *store_ctx;
};
void lg_session_bind(struct lg_session *s, const struct lg_session_hooks *h);

/*
 * While set on a thread, a kill the guard decides on that thread waits:
 * the proxy first answers the agent with the reason, then lgrun applies
 * it (kill_pending is set).
 */
void lg_session_defer_kill(struct lg_session *s, bool defer);

/*
 * What the session made of an event (struct lg_session_verdict), the
 * supervisor's word (struct lg_notice, struct lg_counters) and the sink
 * lgrun makes of the functions below for the session's sources: guard/sink.h.
 */

/*
 * The one way in for every source: the event it saw (event.h says what
 * each kind carries). The session takes its lock, does its bookkeeping,
 * feeds the guard and applies the findings (audit, deny, kill). Returns
 * v->err; v may be NULL.
 *  - LG_EV_DESTRUCTIVE: a file's (facts set: the session classifies it;
 *    refused while the session is blocked, a trip while it was read) or a
 *    tool-level delete held back by the shim (op LG_OP_TOOL_DELETE,
 *    always counted).
 *  - LG_EV_RENAME: never counted; refused when it would move or replace
 *    lgrun's state. LG_EV_UNREADABLE: always refused.
 *  - LG_EV_CALL: an agent-to-agent call of the session's flow (a nested
 *    lgrun starting: from its session, to its name; an A2A request: to
 *    the endpoint). LG_EV_RETURN: control goes back.
 *  - LG_EV_TURN: target is the model's name (may be ""); priced here.
 *  - LG_EV_TEXT: the model's (LG_SRC_PROXY) or the terminal's
 *    (LG_SRC_OUTPUT, --watch-output) text.
 *  - LG_EV_TOOL_DONE: pid 0 when it came through the LLM proxy.
 *  - LG_EV_OBSERVED, LG_EV_EGRESS, LG_EV_WORK: counted, judged by no rule
 *    (the first connection to a host:port is audited).
 *  - LG_EV_PROCESSES, LG_EV_TICK: the timers' (budget.max_processes, the
 *    time-based rules: see lg_session_next_deadline()).
 */
int lg_session_feed(struct lg_session *s, const struct lg_event *ev,
		    struct lg_session_verdict *v);

/*
 * 0 while the session runs, else the errno that refuses whatever the tree
 * tries (it is blocked), in one look.
 */
int lg_session_refusal(const struct lg_session *s);
/*
 * Does an exec of program (its image's basename) need its command line
 * read (a CLI of [remote]'s table: kubectl, psql, curl...)? No lock: the
 * table does not change. The notify step then feeds LG_EV_DESTRUCTIVE,
 * op LG_OP_REMOTE_DELETE, system "exec", with the command line.
 */
bool lg_session_exec_wanted(const struct lg_session *s, const char *program);
/* Does any exec need its command line read ([remote] enabled)? */
bool lg_session_cli_on(const struct lg_session *s);
/*
 * Set once a kill is decided (never in observe mode): the main loop and
 * the notify thread ask it after every step (lg_session_view has more).
 */
bool lg_session_kill_pending(const struct lg_session *s);
/*
 * The notify thread, once it answered: whether a kill is pending
 * (LG_SETTLE_TRIP) and whether the main loop should flush soon
 * (LG_SETTLE_FLUSH: the quarantine index's held entries fill half their
 * room; their lines are made by the main thread, lg_session_record_flush,
 * off the tree's path).
 */
enum { LG_SETTLE_TRIP = 1, LG_SETTLE_FLUSH = 2 };
unsigned lg_session_settle(struct lg_session *s);

/* When the guard's time-based rules want an LG_EV_TICK (0: never). */
uint64_t lg_session_next_deadline(const struct lg_session *s);

/*
 * The recording's buffer (record.h) is written within 250 ms of its first
 * unwritten event (lgctl top reads it live): when that is (0: nothing
 * waits), and the write.
 */
uint64_t lg_session_record_due(const struct lg_session *s);
void lg_session_record_flush(struct lg_session *s);

/*
 * After the tree is dead: the trip's audit record (fsync'ed), the killed
 * marker, the metrics. method and kill_ms describe the kill (method NULL:
 * the trip was judged after the tree had ended, nothing refused or killed); survivors
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

struct lg_session_stats {
	uint64_t attempts, counted, denied, unreadable, would_trip, tool_calls;
	uint64_t warnings_suppressed; /* past MAX_WARN_RECORDS of a reason */
	uint64_t ev_seccomp, ev_shim, ev_proxy, ev_bpf; /* events by source */
	/* calls of the programs an agent runs: observed, judged by no rule */
	uint64_t observed_http, observed_jsonrpc;
	uint64_t recoverable; /* removals git can give back: not counted */
	uint64_t moved; /* sources of moves to another filesystem, copied */
	uint64_t renames; /* seen, never counted (they tell where content went) */
	uint64_t kept_writes; /* pre-existing files kept at a write-open */
	uint64_t left_empty; /* of those, emptied and left empty: destroyed */
	uint64_t remote_deletes; /* counted deletes off this host (issue 38) */
	uint64_t device_writes; /* counted block devices written over */
	uint64_t steers, steers_dropped; /* notes to the model (issue 28) */
	uint64_t responses_cut; /* looping responses the proxy ended */
	uint64_t turns, tokens_in, tokens_out, max_tokens_stops;
	double cost; /* USD, from [llm] prices */
};

/*
 * Feeds n as an event of kind (LG_EV_WARN, LG_EV_REFUSED, LG_EV_STOP):
 * sink.h says what each one is.
 */
static inline void lg_session_notice(struct lg_session *s,
				     enum lg_event_kind kind,
				     const struct lg_notice *n)
{
	struct lg_event ev = { .kind = kind, .notice = n };

	lg_session_feed(s, &ev, NULL);
}
static inline void lg_session_counters(struct lg_session *s,
				       const struct lg_counters *c)
{
	struct lg_event ev = { .kind = LG_EV_COUNTERS, .counters = c };

	lg_session_feed(s, &ev, NULL);
}
/*
 * The session as one look (taken under its lock, read outside it): how it
 * stands, its trip, what the quarantine holds of it, its counters.
 */
struct lg_session_view {
	const char *flow, *name; /* "" when none */
	bool kill_pending;
	uint64_t kill_deferred_ms; /* a deferred kill's decision, 0: none */
	bool peer_killed; /* stopped by another supervisor of the session */
	const char *trip_reason; /* NULL: no trip */
	/* the tripping op ran off this host: it could not be refused */
	bool trip_remote;
	/* tripped by a file found emptied or a stub: nothing to refuse */
	bool trip_left;
	char trip_summary[LG_SUMMARY_MAX + 32];
	bool quarantine; /* on */
	unsigned turn; /* the agent's turn now (issue 40), 0: none */
	unsigned kept_files, kept_dirs, not_kept;
	uint64_t kept_bytes;
	struct lg_session_stats stats;
	/* repeat.ignore_keys, or the defaults (LG_DEFAULT_IGNORE_KEYS) */
	const char *ignore_keys;
};
void lg_session_view(const struct lg_session *s, struct lg_session_view *v);
/*
 * What only the LLM proxy asks (lgrun/proxy.c makes its lg_proxy_ops of
 * them, beside the sink; proxy.h says what each one is): whether model
 * calls are refused and why, whether calls are judged alone and a looping
 * text cut (config: no lock), the notes to the model, a model's tool call.
 */
bool lg_session_model_blocked(const struct lg_session *s);
void lg_session_stop_message(const struct lg_session *s, char *out,
			     size_t size);
bool lg_session_judge_calls(const struct lg_session *s);
bool lg_session_cuts_text(const struct lg_session *s);
size_t lg_session_steer(struct lg_session *s, uint64_t conv, size_t items,
			bool stateful, bool agentic, const char *uri,
			struct lg_steer_note *out, size_t max);
void lg_session_model_call(struct lg_session *s, uint64_t conv, bool first,
			   const char *tool, const char *args);
#endif
