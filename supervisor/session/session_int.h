/* SPDX-License-Identifier: MIT */
/*
 * Inside the session: its state and the lock every public function holds
 * (HOLD), shared by session.c (the events and their handlers), fs.c
 * (destructive file operations: renames, decisions), keep.c (what the
 * quarantine keeps), removal.c (a removal's facts: tool deletes,
 * compressors, moves; provenance/ asked whether it is loss), emptied.c
 * (files emptied or cut to a stub, judged after the fact), facts.c (the
 * facts the file handlers share), act.c (what the findings make the
 * session do), feed.c (every feed of a guard, recorded), steer.c (the
 * notes to the model), audit.c (the audit records), end.c (the end
 * record) and status.c (the state file, the metrics). Calls go one way:
 * session.c -> fs.c -> keep.c and removal.c -> facts.c; session.c, fs.c
 * and keep.c -> emptied.c; fs.c and emptied.c -> decide.c -> act.c and
 * feed.c; fs.c -> act.c and feed.c -> steer.c -> audit.c; end.c ->
 * audit.c. What is lost and what lives on is provenance's
 * (provenance/prov.h, s->prov), asked with the lock held.
 */
#ifndef LG_SESSION_INT_H
#define LG_SESSION_INT_H

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>
#include "../../preload/wire.h"
#include "guard/cli.h"
#include "record/audit.h"
#include "lib/canon.h"
#include "lib/cleanup.h"
#include "lib/json.h"
#include "tree/cgroup.h"
#include "provenance/lineage.h"
#include "provenance/prov.h"
#include "turns.h"
#include "lib/log.h"
#include "store/metrics.h"
#include "seccomp/pathres.h"
#include "provenance/programs.h"
#include "quarantine/quarantine.h"
#include "record/record.h"
#include "egress/egress.h"
#include "session.h"
#include "store/state.h"
#include "lib/text.h"

struct lg_archive_index; /* provenance/archive.h */

#define RECENT 16
#define MAX_WOULD_TRIP_RECORDS 20
/* Warnings of one reason recorded at most; the rest are counted. */
#define MAX_WARN_RECORDS 20
/* git's removals of content not in its object database, remembered */
#define LOST_BY_GIT 1024
/* recent tool deletes and the paths they named (removal.c) */
#define TOOL_DELETES 16
/* remote resources the session made, remembered (remote.c) */
#define REMOTE_OWN 1024
/* the model's tool deletes remembered (fs.c) */
#define MODEL_DELETES 16
/* processes whose command line was judged at their exec (remote.c) */
#define SESS_EXECS 32
#define SESS_DEVICES 64
#define TOOL_VALUES 4
#define TOOL_VALUE_MAX 1024

struct recent {
	uint64_t t_ms;
	enum lg_op op;
	enum lg_class cls;
	enum lg_verdict verdict;
	pid_t pid;
	char exe[64];
	char target[1024];
};

/* A note for the model (steer.c). */
#define SESS_NOTES 32
struct sess_note {
	const char *rule, *reason; /* the guard's static strings */
	char text[LG_STEER_TEXT_MAX];
	char digest[LG_DIGEST_HEX];
	bool placed; /* in a request of conv, at */
	bool once; /* placed in a stateful request: never again */
	uint64_t conv;
	size_t at;
};

#define EMPTIED_MAX 4096 /* files emptied, checked at the tree's end */

struct lg_session {
	const struct lg_config *cfg;
	struct lg_session_info info;
	struct lg_guard *guard;
	/* terminal output has its own repeated-output state (not model text) */
	struct lg_guard *out_guard;
	bool has_program_rules;
	struct recent recent[RECENT];
	size_t nrecent, recent_head;
	bool blocked, kill_pending;
	struct lg_finding trip;
	enum lg_op trip_op;
	pid_t trip_pid;
	char trip_exe[64];
	char trip_target[1024];
	char trip_summary[LG_SUMMARY_MAX + 32];
	struct lg_session_stats st;
	struct lg_shim_stats shim;
	void (*on_kill)(void *ctx);
	void *on_kill_ctx;
	bool kill_start; /* decided: on_kill() on the outermost release */
	bool trip_left; /* by a file left emptied or a stub (emptied.c) */
	uint64_t kill_deferred_ms; /* when a deferred kill was decided */
	/*
	 * The session's lock: every public function holds it for its whole
	 * body (HOLD), and none calls another: what they share is a sess_*
	 * function, which expects the lock held. No other module takes it.
	 * A notice fed by a callback made under it is taken as it is held
	 * (feed_held).
	 */
	pthread_mutex_t mu;
	/* a deny on the model's path: model calls are refused from now on */
	bool model_blocked;
	bool unpriced_warned;
	/*
	 * The agent's turns (issue 40): turn counts the model's responses
	 * that carried tool calls in the main conversation (main_conv: the
	 * first seen making calls); turn_ns, when the current one began (a
	 * file the tree stamps from then on is newer: lg_real_start_after).
	 * Every record, index line and recorded event says its turn.
	 */
	struct lg_turns turns;
	bool cut_text; /* on_text: output_repeat's warning says "cut" */
	char deny_summary[LG_SUMMARY_MAX + 32];
	char bpf_state[300];
	bool bpf_counted;
	uint64_t bpf_drops, bpf_syscalls, bpf_bytes, bpf_bypass, bpf_direct;
	char bpf_tracing[200];
	void (*lineage)(void *ctx, pid_t pid, char *out, size_t size);
	void *lineage_ctx;
	char trip_lineage[1024]; /* from /proc, when the kill was decided */
	const struct lg_shared_windows *shared; /* the store's, or NULL */
	bool (*store_up)(void *ctx); /* set: refuse while it is down */
	void *store_ctx;
	bool store_refusing;
	bool peer_killed; /* the kill came from another supervisor */
	struct {
		const char *reason; /* static strings of the guard */
		unsigned n;
	} warns[32];
	pid_t feeding_tid; /* whose attempt the guard is deciding */
	/*
	 * That attempt's directory as the tree sees it (an O_PATH fd, open
	 * while it is decided) and its path, whose first feeding_dirlen bytes
	 * name it: "has it come back?" of a file beside it is one lookup
	 * there, not a walk of the whole path (rm -r asks once per removal).
	 */
	bool feeding_at;
	int feeding_dirfd;
	const char *feeding_path;
	size_t feeding_dirlen;
	/* where pre-existing content went: renames, truncations, moves */
	struct lg_lineage *content;
	struct lg_programs *programs; /* what program-scoped rules mean */
	/* is this loss? what provenance remembers (provenance/prov.h) */
	struct lg_prov *prov;
	struct sess_tool_delete {
		uint64_t at_ms; /* 0: a free slot */
		bool used; /* a removal was taken for it already */
		unsigned n;
		char values[TOOL_VALUES][TOOL_VALUE_MAX];
	} tool_deletes[TOOL_DELETES];
	unsigned tool_deletes_next;
	char *remote_own[REMOTE_OWN]; /* remote.c */
	unsigned remote_own_next;
	/* the model's tool deletes, counted at the proxy (fs.c) */
	struct sess_model_delete {
		uint64_t at_ms; /* 0: a free slot */
		bool used; /* the shim's call of it came */
		char name[96], target[256];
	} model_deletes[MODEL_DELETES];
	unsigned model_deletes_next;
	struct lg_cli_table *cli; /* the commands read at exec (remote.c) */
	/*
	 * Block devices opened for writing (fs.c), judged once each: counted
	 * (one decision, however many opens mkfs makes), or empty at the
	 * first, and the session's from then on. By device number and disk
	 * sequence (a loop device attached to another file is another).
	 */
	struct sess_device {
		uint64_t rdev, seq;
	} devices[SESS_DEVICES];
	unsigned devices_next;
	char device_holds[64]; /* what the last one judged held */
	bool remote_ran; /* the last remote delete counted had run (its answer) */
	char remote_system[16]; /* and its system: http, postgres, exec */
	/*
	 * Processes whose command line was judged at their exec (remote.c):
	 * counted there (their wire's deletes are that same decision), or
	 * left to their wire, whose answers count (pending: counted when it
	 * turns out opaque, TLS).
	 */
	struct sess_exec {
		pid_t pid; /* 0: a free slot */
		uint64_t at_ms;
		bool counted;
		unsigned n;
		char targets[LG_CLI_TARGETS][LG_CLI_TARGET_MAX];
		char verb[64], exe[32];
	} execs[SESS_EXECS];
	unsigned execs_next;
	/*
	 * Pre-existing files an uncounted O_TRUNC open emptied (their content
	 * kept): one left empty when the tree is over counts as destroyed
	 * (sess_on_tree_over). The first EMPTIED_MAX; the rest are counted.
	 */
	struct sess_emptied {
		char *path;
		char *before; /* its name before the session, or NULL */
		char exe[64]; /* the program that emptied it */
		struct lg_facts f; /* as it was before the open */
		struct lg_facts id; /* the file now (a rename's: another) */
		struct lg_lines_sample sample; /* its body's lines */
		pid_t pid;
		uint64_t at_ms, recheck_ms; /* emptied; a writer held it */
		bool judged; /* counted, or written again */
	} * emptied;
	size_t n_emptied;
	uint64_t emptied_unchecked;
	uint64_t emptied_next_ms; /* when one is to be judged (0: none) */
	/* sess_on_unreadable said why a process's memory is closed to lgrun */
	bool unreadable_said;
	struct lg_quarantine *quarantine; /* [quarantine] enabled, or NULL */
	unsigned not_kept; /* removals of pre-existing data not kept */
	/* what no rule counts and could not be kept (sess_keep_anyway) */
	unsigned not_kept_quiet;
	char kept_audit_id[256]; /* the record that says the quarantine holds */
	unsigned kept_audit_n; /* its number, reserved at the first try */
	bool kept_audited; /* written: something is kept */
	/* keeping the session's own version (fs.c's turn_record): quiet */
	bool keeping_own;
	/*
	 * Where the tree started, what a rewind puts back: the turn's own
	 * versions are kept below it only (the agent's state elsewhere,
	 * its transcripts and databases, would be copied every turn)
	 */
	char project[PATH_MAX];
	unsigned audit_seq; /* the session's audit records so far */
	struct lg_record *rec; /* [record] events, or NULL */
	uint64_t feed_now; /* the time of the feed under way (recorded) */
	/* the egress proxy's flows, by host:port (the first ones) */
	struct egress_host {
		char host[LG_EGRESS_HOST_MAX];
		uint16_t port;
		uint64_t conns;
		bool warned; /* a decryption failed: said once */
	} * egress;
	size_t n_egress;
	uint64_t egress_conns, egress_failed, egress_up, egress_down;
	uint64_t egress_hosts_dropped;
	/* connections to lgrun's proxies from outside the tree: refused */
	uint64_t refused_outsiders;
	/* hashes of the paths, a ring: see sess_restored() */
	uint64_t lost_by_git[LOST_BY_GIT];
	size_t nlost, lost_head;
	/* the programs of the last processes seen, so every event names one */
	struct {
		pid_t pid;
		uint64_t read_ms; /* when exe was read */
		char exe[64];
	} exes[32];
	unsigned exes_next;
	struct sess_note notes[SESS_NOTES];
	size_t nnotes;
};

/* How long an allowed op may wait in the kernel before it runs. */
#define PENDING_MS 1000
#define MAX_EGRESS_HOSTS 256 /* recorded one by one; more are counted */
/* How long a failed rename to another filesystem explains a removal. */
#define MOVE_MAX_AGE_MS (30ULL * 60 * 1000)

/* The session whose lock this thread holds (HOLD), or NULL. */
extern _Thread_local const struct lg_session *sess_held;

static inline struct lg_session *lg_session_hold(const struct lg_session *cs)
{
	/* the lock is the session's own, whatever the caller may change */
	struct lg_session *s = (struct lg_session *)cs;

	int r = pthread_mutex_lock(&s->mu);

	if (r != 0) { /* EDEADLK: a public function called another */
		fprintf(stderr, "lgrun: the session's lock: %s\n", strerror(r));
		abort();
	}
	sess_held = s;
	return s;
}

/*
 * Leaves the lock, and starts a kill decided under it, outside the lock
 * and before the caller answers the tripping operation.
 */
static inline void lg_session_release(struct lg_session **held)
{
	struct lg_session *s = *held;
	bool start = false;

	sess_held = NULL;
	if (s->kill_start) {
		s->kill_start = false;
		start = s->on_kill != NULL;
	}
	pthread_mutex_unlock(&s->mu);
	if (start)
		s->on_kill(s->on_kill_ctx);
}

/* Holds s's lock until the enclosing function returns (LG_HOLD). */
#define HOLD(s) LG_HOLD(lg_session, s)

void sess_remember(struct lg_session *s, uint64_t now, pid_t pid, enum lg_op op,
		   enum lg_class cls, enum lg_verdict v, const char *exe,
		   const char *target);

/* A record begun: its head, the event's name (audit.c). */
void sess_json_head(struct lg_session *s, struct lg_json *j, const char *event);
/* Falco's fields (audit.h) of one of the session's records. */
void sess_falco_fields(const struct lg_session *s, struct lg_json *j,
		       const char *event, const struct lg_falco *f);
/* What the quarantine holds of the session, for its trip and end records. */
void sess_kept_fields(const struct lg_session *s, struct lg_json *j);
/* A block device written over, let through: nothing of it was kept. */
void sess_audit_device(struct lg_session *s, pid_t pid, const char *exe,
		       const char *target);
void sess_audit(struct lg_session *s, struct lg_json *j, bool sync);
void sess_audit_simple(struct lg_session *s, const char *event,
		       const char *summary);
/* Before the first entry: the record the quarantine's entries name. */
void sess_steer_findings(struct lg_session *s, const struct lg_findings *out);
void sess_audit_steer(struct lg_session *s, const char *rule,
		      const char *reason, const char *digest, const char *uri,
		      uint64_t conv, size_t at, bool observe, const char *text);
void sess_reserve_quarantine_id(struct lg_session *s);
void sess_audit_quarantine(struct lg_session *s);

void sess_audit_finding(struct lg_session *s, const struct lg_finding *f,
			const char *event, enum lg_op op, pid_t pid,
			const char *exe, const char *target, bool sync);

int sess_store_gate(struct lg_session *s, pid_t pid, const char *exe);

int sess_act(struct lg_session *s, const struct lg_findings *out, enum lg_op op,
	     pid_t pid, const char *exe, const char *target,
	     struct lg_session_verdict *v);

/* The recording of this run (record.h); without it the session goes on. */
void sess_record_open(struct lg_session *s, const struct lg_config *cfg,
		      const struct lg_session_info *info);
/* Every feed of a guard goes here: recorded (record.h) with its verdict. */
enum lg_verdict sess_feed(struct lg_session *s, struct lg_guard *g,
			  const struct lg_event *ev,
			  const struct lg_guard_env *env,
			  struct lg_findings *out);
int sess_judge(struct lg_session *s, struct lg_guard *g, struct lg_event *ev,
	       bool restored, struct lg_session_verdict *v);

/* The handlers of lg_session_feed() that live with what they use. */
/* remote.c: data off this host (issue 38) */
int sess_on_remote_delete(struct lg_session *s, struct lg_event *ev,
			  struct lg_session_verdict *v);
void sess_remote_made(struct lg_session *s, const char *target);
void sess_remote_free(struct lg_session *s);
/*
 * Is pid, or an ancestor of it, a command counted at its exec lately (its
 * own removals are that decision: git push removing a ref it deleted)?
 */
bool sess_exec_did(struct lg_session *s, pid_t pid, uint64_t now);
/* the shim found pid's traffic opaque (TLS): what its exec left pending */
int sess_remote_opaque(struct lg_session *s, pid_t pid);
int sess_on_destructive(struct lg_session *s, struct lg_event *ev,
			struct lg_session_verdict *v);
int sess_on_rename(struct lg_session *s, struct lg_event *ev,
		   struct lg_session_verdict *v);
int sess_on_unreadable(struct lg_session *s, struct lg_event *ev,
		       struct lg_session_verdict *v);
/* LG_EV_WARN, LG_EV_REFUSED, LG_EV_COUNTERS (audit.c) */
void sess_warn(struct lg_session *s, const char *rule, const char *reason,
	       pid_t pid, const char *exe, const char *summary);
int sess_on_warn(struct lg_session *s, struct lg_event *ev,
		 struct lg_session_verdict *v);
int sess_on_refused(struct lg_session *s, struct lg_event *ev,
		    struct lg_session_verdict *v);
int sess_on_counters(struct lg_session *s, struct lg_event *ev,
		     struct lg_session_verdict *v);
int sess_on_egress(struct lg_session *s, struct lg_event *ev,
		   struct lg_session_verdict *v);

/* fs.c: the tree is over: files it emptied and left so (LG_EV_TREE_OVER) */
int sess_on_tree_over(struct lg_session *s, struct lg_event *ev,
		      struct lg_session_verdict *v);
/* What a file judged after the fact was left as (emptied.c) */
struct sess_left {
	bool stub; /* a stub (lg_stub_of), not empty */
	unsigned quiet_s; /* judged while the tree ran, so long after */
};
int sess_decide(struct lg_session *s, pid_t pid, enum lg_op op,
		const struct sess_left *left, const char *path,
		const struct lg_facts *f, struct lg_session_verdict *v);

/* facts.c: the facts fs.c, keep.c and removal.c share */
bool sess_our_binary(pid_t pid);
/* How fresh the program sess_exe_of() names is (facts.c). */
enum { EXE_CACHED, EXE_RECENT, EXE_NOW };
void sess_exe_of(struct lg_session *s, pid_t pid, int fresh, char *out,
		 size_t size);
uint64_t sess_path_hash(const char *p);
void sess_lost_by_git_add(struct lg_session *s, const char *path);
bool sess_lost_by_git(const struct lg_session *s, const char *path);
int64_t sess_ns(struct statx_timestamp t);
bool sess_restored(void *ctx, const char *target, enum lg_op op,
		   const struct lg_target_id *id);
bool sess_under(const char *path, const char *dir);
bool sess_protected_path(const struct lg_session *s, const char *path);
struct lg_inode_key sess_inode_key(const struct lg_facts *f);
void sess_lineage_facts(const struct lg_session *s, struct lg_facts *f);
const char *sess_name_before(const struct lg_session *s,
			     const struct lg_facts *f, const char *path,
			     char *buf, size_t size);
void sess_inherits(struct lg_session *s, const struct lg_facts *f);

/* keep.c: what the quarantine keeps */
int sess_keep(struct lg_session *s, const struct lg_event *ev,
	      const struct lg_facts *f);
/*
 * Pre-existing data no rule counts (an ignored name, a symlink, an empty
 * file, one of several hard links), about to be removed: kept when it can
 * be, never refused.
 */
void sess_keep_anyway(struct lg_session *s, const struct lg_event *ev,
		      const struct lg_facts *f);
/* Existed when the agent's turn began, unchanged since (issue 40). */
bool sess_turn_old(const struct lg_session *s, const struct lg_facts *f);
void sess_made(struct lg_session *s, pid_t pid, const char *path,
	       const struct lg_facts *f);
/* a file of the kernel's own filesystems (/proc, /sys, cgroups...) */
bool sess_kernel_file(const struct lg_event *ev);
int sess_on_write_open(struct lg_session *s, struct lg_event *ev,
		       const struct lg_facts *facts);
bool sess_kept_already(const struct lg_session *s, const struct lg_facts *f);
/* emptied.c: files emptied or cut to a stub, judged after the fact */
void sess_emptied_add(struct lg_session *s, const struct lg_event *ev,
		      const char *path, const struct lg_facts *f,
		      const struct lg_facts *now);
void sess_emptied_free(struct lg_session *s);
uint64_t sess_emptied_deadline(const struct lg_session *s);
void sess_emptied_due(struct lg_session *s, struct lg_session_verdict *v);

/* removal.c: a removal's facts */
bool sess_moved_copy(struct lg_session *s, const char *path,
		     const struct lg_facts *f, uint64_t now_ms);
bool sess_superseded(const struct lg_session *s, const struct lg_facts *f);
void sess_tool_delete_remember(struct lg_session *s, const struct lg_event *ev,
			       uint64_t now);
int sess_removal_facts(struct lg_session *s, const struct lg_event *ev,
		       struct lg_facts *f);

#endif
