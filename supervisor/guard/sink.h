/* SPDX-License-Identifier: MIT */
/*
 * The session as its sources see it: the one way in for what they saw,
 * and the few questions they ask before they build an event. lgrun fills
 * one (lgrun/setup.c, thin wrappers over session/session.h) and hands it
 * to the notify step, the control socket, the eBPF observer and the LLM
 * proxy at their setup; none of them includes the session. A call through
 * it is a direct call of a function pointer: no allocation, no lock of its
 * own (the session locks itself).
 */
#ifndef LG_SINK_H
#define LG_SINK_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "event.h"
#include "guard.h"

struct sockaddr_in;

/*
 * What the session made of an event: the guard's verdict (LG_ALLOW when
 * no rule was asked), and for the operation the errno to refuse it with
 * (0: let it go) and a refusal's user-facing reason.
 */
struct lg_session_verdict {
	enum lg_verdict verdict;
	enum lg_class cls; /* a destructive file operation's class */
	int err;
	char why[LG_SUMMARY_MAX + 32];
	/*
	 * LG_EV_TEXT that can_cut: output_repeat fired and [output_repeat]
	 * cut is on, so the proxy ends the response (issue 28).
	 */
	bool cut;
};

struct lg_sink {
	/*
	 * The one way in: the event a source saw (event.h says what each
	 * kind carries). The session takes its lock, does its bookkeeping,
	 * feeds the guard and applies the findings (audit, deny, kill).
	 * Returns v->err: 0, or the errno to refuse the operation with; v may
	 * be NULL.
	 */
	int (*feed)(void *ctx, const struct lg_event *ev,
		    struct lg_session_verdict *v);
	/*
	 * 0 while the session runs, else the errno that refuses whatever the
	 * tree tries (it is blocked), in one look.
	 */
	int (*refusal)(void *ctx);
	/*
	 * While set on a thread, a kill the guard decides on that thread
	 * waits for the main loop: the caller first says why (a nested
	 * lgrun's refusal, the proxy's answer to the agent).
	 */
	void (*defer_kill)(void *ctx, bool defer);
	/*
	 * Execs: does any need its command line read ([remote] on), and does
	 * an exec of program (its image's basename: kubectl, psql, curl...)?
	 * No lock: the table does not change. The notify step then feeds
	 * LG_EV_DESTRUCTIVE, op LG_OP_REMOTE_DELETE, system "exec".
	 */
	bool (*reads_commands)(void *ctx);
	bool (*reads_command_of)(void *ctx, const char *program);
	/*
	 * What the session is, set with the sink and as long-lived as the
	 * session: its flow's correlation id and its name in its chains (""
	 * when none), repeat.ignore_keys (the argument keys left out of a
	 * call's signature: lg_canon_call).
	 */
	const char *flow, *name, *ignore_keys;
	void *ctx; /* the session */
};

/*
 * The supervisor's word to the session, fed as an event (the sink's feed):
 *  - LG_EV_WARN: a warning that is not a detector's: rule and reason name
 *    it, pid and exe (0, NULL: lgrun's) who, summary what.
 *  - LG_EV_REFUSED: a connection to one of lgrun's proxies (rule: "egress"
 *    or "LLM") that did not come from the tree (it lacked the session's
 *    secret); summary says why. Counted (the end record's
 *    refused_outsiders); the first ones audited, with the peer's address
 *    and the owner of its socket when found.
 *  - LG_EV_STOP: the session stops like a trip, and the main loop kills:
 *    rule "store" when another supervisor of the session tripped (the
 *    store's kill channel; reason killed_by_peer, summary its trip's),
 *    else the supervisor's own (reason a short name, summary why).
 */
struct lg_notice {
	const char *rule, *reason, *summary;
	pid_t pid;
	const char *exe;
	const struct sockaddr_in *peer; /* LG_EV_REFUSED, NULL: unknown */
};
/* Feeds n as an event of kind (LG_EV_WARN, LG_EV_REFUSED, LG_EV_STOP). */
static inline void lg_sink_notice(const struct lg_sink *k,
				  enum lg_event_kind kind,
				  const struct lg_notice *n)
{
	struct lg_event ev = { .kind = kind, .notice = n };

	k->feed(k->ctx, &ev, NULL);
}

/* The eBPF observer's counters (LG_EV_COUNTERS). */
struct lg_bpf_stats {
	uint64_t drops; /* events the ring buffer could not take */
	uint64_t syscalls; /* the session's, while sys_enter was attached */
	uint64_t bytes_written; /* by the session's threads (wchar) */
	uint64_t bypass_warnings;
	uint64_t direct; /* connects off this host around the egress proxy */
	/* "off", or since when and why syscalls were traced */
	const char *syscall_tracing;
};

/* The shim's connections and frames (control.h counts them). */
struct lg_shim_stats {
	uint64_t accepted, refused, malformed, dropped, gates, tls;
};

/*
 * LG_EV_COUNTERS: counters kept with the session's state; what is set is
 * taken (the observer's state, its counters, the shim's).
 */
struct lg_counters {
	const char *bpf_state; /* "attached", "off: why" */
	const struct lg_bpf_stats *bpf;
	const struct lg_shim_stats *shim;
};
static inline void lg_sink_counters(const struct lg_sink *k,
				    const struct lg_counters *c)
{
	struct lg_event ev = { .kind = LG_EV_COUNTERS, .counters = c };

	k->feed(k->ctx, &ev, NULL);
}
#endif
