/* SPDX-License-Identifier: MIT */
/*
 * The one event type every source (seccomp, shim, proxy, bpf, output) turns
 * its observations into before the guard sees them. Strings are borrowed:
 * they only need to live for the duration of lg_guard_feed().
 */
#ifndef LG_EVENT_H
#define LG_EVENT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

enum lg_event_kind {
	LG_EV_DESTRUCTIVE, /* an attempt to remove or truncate something */
	LG_EV_TICK, /* time passed; lets time-based rules fire */
	LG_EV_OP_RESULT, /* a file op's outcome (shim): result is 0 or errno */
	LG_EV_TOOL_DONE, /* a tool call and its result, matched (shim, proxy) */
	LG_EV_TURN, /* a model response ended (proxy) */
	LG_EV_TEXT, /* streamed model text, a delta (proxy) or output */
	LG_EV_PROCESSES, /* how many processes the tree has now (timer) */
	LG_EV_CALL, /* agent to agent: a nested session starts, an A2A call */
	LG_EV_RETURN, /* ... and ends: control goes back to the caller */
	LG_EV_WORK, /* the session wrote something (bpf counters) */
	/* Kinds the session reads and keeps from the guard (no rule counts them): */
	LG_EV_RENAME, /* a rename, target to dst (seccomp) */
	/* a destructive attempt whose arguments could not be read: result is the errno */
	LG_EV_UNREADABLE,
	/* a call of a program an agent runs, not an agent's decision (shim) */
	LG_EV_OBSERVED,
	LG_EV_EGRESS, /* a connection through the egress proxy ended */
	/* The supervisor's own word to the session (notice, counters): */
	LG_EV_WARN, /* a warning that is not a detector's */
	LG_EV_REFUSED, /* a proxy refused a connection from outside the tree */
	LG_EV_STOP, /* the supervisor, or another of the session's, stops it */
	LG_EV_COUNTERS, /* the shim's and the observer's counters, its state */
	LG_EV_TREE_OVER, /* the tree's last process ended: what is judged then */
	LG_EV_KINDS
};

enum lg_source {
	LG_SRC_SECCOMP,
	LG_SRC_SHIM,
	LG_SRC_PROXY,
	LG_SRC_BPF,
	LG_SRC_OUTPUT,
	LG_SRC_TIMER,
};

enum lg_op {
	LG_OP_NONE,
	LG_OP_UNLINK,
	LG_OP_RMDIR,
	LG_OP_TRUNCATE, /* truncate/ftruncate to length 0 */
	LG_OP_SHRINK, /* truncate/ftruncate to a length > 0 */
	LG_OP_OPEN_TRUNC, /* open(O_TRUNC), creat */
	LG_OP_TOOL_DELETE,
	LG_OP_WRITE, /* an open for writing (results only) */
	LG_OP_RENAME, /* results only */
	LG_OP_AGENT_CALL, /* a flow's call (nested lgrun, A2A) */
	/* an open for writing without O_TRUNC: kept first, never counted */
	LG_OP_OPEN_WRITE,
	/*
	 * data off this host destroyed (issue 38): an HTTP DELETE answered
	 * 2xx, a DROP, TRUNCATE or unqualified DELETE a database answered;
	 * the system is lg_event.system. Nothing of it can be kept.
	 */
	LG_OP_REMOTE_DELETE,
	/* a hard link: another name for an inode (seccomp; results only) */
	LG_OP_LINK,
	/* a name made: a file created, mkdir, symlink (the undo's record) */
	LG_OP_MAKE,
	/* a mode changed: chmod, fchmod, fchmodat (the undo's record) */
	LG_OP_CHMOD,
	/*
	 * an open for writing of a block device that holds data (a
	 * filesystem, a partition table, any signature; or mounted, or held):
	 * the device's content written over (mkfs, dd of=, wipefs), counted
	 * once per device; what it holds is lg_event.system. Nothing of it
	 * can be kept.
	 */
	LG_OP_DEVICE_WRITE,
	LG_OP_COUNT,
};

/* What a destructive attempt would destroy; decided at the edge from facts. */
enum lg_class {
	LG_CLASS_DESTROY, /* pre-existing data that exists now: counts */
	LG_CLASS_MISSING, /* target does not exist: the op will fail */
	LG_CLASS_SESSION, /* created by the session itself (temp, build output) */
	LG_CLASS_IGNORED, /* an ignore glob covers it */
	LG_CLASS_HARMLESS, /* nothing lost: empty file, shrink, deleted fd */
	LG_CLASS_RECOVERABLE, /* git removes what its object database holds */
	/*
	 * one name of pre-existing data that other hard links still hold:
	 * nothing lost, but an attempt on that target (same target counts it)
	 */
	LG_CLASS_LINKED,
	/*
	 * the source of a move to another filesystem, whose copy is at the
	 * destination (same type, size and modification time): nothing lost
	 */
	LG_CLASS_MOVED,
	/*
	 * an earlier version renamed away from its path (sed -i.bak, an
	 * editor's backup) while that path holds content again
	 */
	LG_CLASS_SUPERSEDED,
	/*
	 * no data to lose: unlink of a symlink (its target is untouched) or of
	 * an empty file; an attempt on that target all the same
	 */
	LG_CLASS_NO_DATA,
	/*
	 * a known compressor removes the original it has just written out
	 * transformed next to it (gzip f: f.gz; gzip -d f.gz: f): nothing lost
	 */
	LG_CLASS_TRANSFORMED,
	/*
	 * the removal an agent's tool delete decided moments ago (an MCP
	 * server's unlink of the path its delete_file got): counted there
	 */
	LG_CLASS_TOOL_DELETED,
	/*
	 * a build output its tool's clean verb removes (make clean, cargo
	 * clean, git clean -X...), untracked, an output by its own evidence:
	 * made again by the next build (issue 41)
	 */
	LG_CLASS_REGENERABLE,
};

/*
 * Which file a destructive attempt was about, as it was when decided: the
 * inode, its birth (an inode number is reused at once by the next file
 * made: the birth tells them apart) and its last write. 0s: not a file (a
 * tool delete) or unknown.
 */
struct lg_target_id {
	uint64_t dev, ino;
	int64_t birth_ns; /* birth time, or the change time without one */
	int64_t mtime_ns;
	/* who asked, and when (monotonic): its op has run by its next one */
	pid_t tid;
	uint64_t at_ms;
	int64_t size; /* before the op: a stub after it is no rewrite */
};

struct lg_facts;
struct lg_egress_flow;
struct lg_notice;
struct lg_counters;

struct statx; /* <sys/stat.h>: the target's, passed through */

struct lg_event {
	enum lg_event_kind kind;
	enum lg_source source;
	enum lg_op op;
	enum lg_class cls;
	pid_t pid;
	const char *exe; /* program basename, may be NULL */
	const char *target; /* absolute path or tool-level target */
	struct lg_target_id id; /* LG_EV_DESTRUCTIVE on a file */
	/*
	 * LG_EV_DESTRUCTIVE from seccomp, when at: the directory holding the
	 * target as the tree sees it (O_PATH, open while the event is fed)
	 * and the target's name in it: what the quarantine keeps from when
	 * target does not name it in lgrun's view (another mount namespace,
	 * a bind mount, a path past PATH_MAX).
	 */
	bool at;
	/*
	 * LG_EV_DESTRUCTIVE of an open: it has O_CREAT, so a missing target
	 * is made by it (what a restore sets aside)
	 */
	bool creates;
	/* ... an O_APPEND open: the undo records the size it had */
	bool appends;
	int at_dirfd;
	const char *at_name;
	/*
	 * With at: the target's statx, read from at_dirfd just before the
	 * facts were made from it (NULL: not read), and its directory's
	 * device and inode (0: not known). The quarantine's link from lgrun's
	 * view of that same directory then needs no statx of what it kept.
	 */
	const struct statx *at_st;
	uint64_t at_dir_dev, at_dir_ino;
	/*
	 * LG_EV_DESTRUCTIVE: no attempt but what the session left: a file it
	 * emptied (op, an uncounted O_TRUNC open) and left empty at its end
	 * (issue 27), or while it runs, left_quiet_s after the open with no
	 * writer (issue 41); left_stub: not empty but cut to a stub
	 * (lg_stub_of). Nothing is refused: it happened.
	 */
	bool left_empty, left_stub;
	unsigned left_quiet_s; /* 0: judged at the tree's end */
	/*
	 * LG_EV_DESTRUCTIVE of LG_OP_REMOTE_DELETE: the system it ran on
	 * ("http", "postgres"); of LG_OP_DEVICE_WRITE, what the device holds
	 * ("an ext4 filesystem", lg_blockdev_holds). happened: judged at its answer, it ran (the
	 * verdict can stop what comes after it, not undo it). asked: the
	 * request, before it leaves (only a blocked session refuses it).
	 */
	const char *system;
	bool happened, asked;
	uint64_t chan; /* the shim's pairing of a request and its answer */
	/* LG_EV_OBSERVED: a remote resource the session made (its target) */
	const char *made;
	/*
	 * LG_EV_DESTRUCTIVE of LG_OP_REMOTE_DELETE, system "exec": an exec's
	 * command line (argv[0..argc)), its directory, its program (the
	 * image's basename), and whether the shim will be in it (a dynamic
	 * image, not setuid, LD_PRELOAD naming lgrun's shim)
	 */
	int argc;
	const char *const *argv;
	const char *cwd, *program;
	bool shim;
	/* LG_EV_OP_RESULT */
	int result; /* 0: success, else the errno */
	/* LG_EV_TOOL_DONE */
	const char *tool; /* tool name, or "HTTP DELETE" and the like */
	const char *args; /* canonical JSON of the arguments */
	const char *result_digest; /* hash of the result, "" when none */
	/*
	 * LG_EV_DESTRUCTIVE of a tool delete: args is its JSON arguments (MCP)
	 * and url the request's path (HTTP), when the shim sent them: what the
	 * server may remove (session/removal.c)
	 */
	const char *url;
	const char *args_preview, *result_preview; /* short, for humans */
	uint64_t stream; /* which conversation or process: runs are per stream */
	/* LG_EV_TURN */
	uint64_t tokens_in, tokens_out;
	unsigned turn_tool_calls; /* tool calls made in this turn */
	const char *stop_reason;
	const char *turn_text; /* the turn's text, possibly cut; "" if none */
	double cost; /* USD, from the config's price table; 0 when unpriced */
	/* LG_EV_TEXT */
	const char *text;
	size_t text_len;
	bool can_cut; /* the proxy can end the response here (issue 28) */
	/* LG_EV_PROCESSES */
	unsigned processes;
	/*
	 * LG_EV_CALL, LG_EV_RETURN: session names (a name is a session's
	 * identity in the chain). from NULL: a user starts the flow. flow is
	 * the correlation id, inherited from the flow's first session; NULL
	 * or "" on an agent's call is refused.
	 */
	const char *flow, *from, *to;
	/*
	 * What only the session reads. LG_EV_DESTRUCTIVE of a file and
	 * LG_EV_RENAME: what the edge read of the target (classify.h); the
	 * session classifies it (cls, id).
	 */
	const struct lg_facts *facts;
	/*
	 * LG_EV_RENAME: its destination, resolved; flags are renameat2's;
	 * cross_fs when target and dst's directory are on different mounts
	 * (EXDEV: a copy follows).
	 */
	const char *dst;
	const struct lg_facts *dst_facts;
	unsigned rename_flags;
	bool cross_fs;
	unsigned proto; /* LG_EV_OBSERVED: enum lg_wire_proto */
	const struct lg_egress_flow *egress; /* LG_EV_EGRESS */
	/* LG_EV_WARN, LG_EV_REFUSED, LG_EV_STOP (sink.h) */
	const struct lg_notice *notice;
	const struct lg_counters *counters; /* LG_EV_COUNTERS (sink.h) */
};

const char *lg_op_name(enum lg_op op);
const char *lg_class_name(enum lg_class cls);
const char *lg_source_name(enum lg_source src);
const char *lg_kind_name(enum lg_event_kind k);
/* A name back to its value (lg_*_name's), or -1. */
int lg_kind_parse(const char *s);
int lg_op_parse(const char *s);
int lg_class_parse(const char *s);
int lg_source_parse(const char *s);

#endif
