// SPDX-License-Identifier: MIT
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

#include "../preload/wire.h"
#include "audit.h"
#include "canon.h"
#include "cgroup.h"
#include "lineage.h"
#include "log.h"
#include "metrics.h"
#include "pathres.h"
#include "programs.h"
#include "egress.h"
#include "session.h"
#include "state.h"
#include "text.h"

#define RECENT 16
#define MAX_WOULD_TRIP_RECORDS 20
/* Warnings of one reason recorded at most; the rest are counted. */
#define MAX_WARN_RECORDS 20
/* git's removals of content not in its object database, remembered */
#define LOST_BY_GIT 1024

struct recent {
	uint64_t t_ms;
	enum lg_op op;
	enum lg_class cls;
	enum lg_verdict verdict;
	pid_t pid;
	char exe[64];
	char target[1024];
};

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
	uint64_t shim[6]; /* accepted, refused, malformed, dropped, gates, tls */
	void (*on_kill)(void *ctx);
	void *on_kill_ctx;
	bool kill_start; /* decided: on_kill() on the outermost release */
	uint64_t kill_deferred_ms; /* when a deferred kill was decided */
	/*
	 * The session's lock: every public function holds it for its whole
	 * body (HOLD). Recursive, since they call one another; depth is the
	 * holder's count. No other module takes it.
	 */
	pthread_mutex_t mu;
	unsigned depth;
	/* a deny on the model's path: model calls are refused from now on */
	bool model_blocked;
	bool unpriced_warned;
	char deny_summary[LG_SUMMARY_MAX + 32];
	char bpf_state[300];
	bool bpf_counted;
	uint64_t bpf_drops, bpf_syscalls, bpf_bytes, bpf_bypass, bpf_direct;
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
	/* where pre-existing content went: renames, truncations, moves */
	struct lg_lineage *content;
	struct lg_programs *programs; /* what program-scoped rules mean */
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
	/* hashes of the paths, a ring: see restored() */
	uint64_t lost_by_git[LOST_BY_GIT];
	size_t nlost, lost_head;
	/* the programs of the last processes seen, so every event names one */
	struct {
		pid_t pid;
		char exe[64];
	} exes[32];
	unsigned exes_next;
};

/*
 * A kill decided on this thread while it is set waits (defer_kill): the
 * proxy or the control socket first answers the agent with the reason.
 * Per thread: a kill decided meanwhile on another thread (the notify
 * thread's unlink) is not held back by it.
 */
static _Thread_local bool defer_here;

static struct lg_session *hold(const struct lg_session *cs)
{
	/* the lock is the session's own, whatever the caller may change */
	struct lg_session *s = (struct lg_session *)cs;

	pthread_mutex_lock(&s->mu);
	s->depth++;
	return s;
}

/*
 * Leaves the lock; the outermost release starts a kill decided under it,
 * outside the lock and before the caller answers the tripping operation.
 */
static void release(struct lg_session **held)
{
	struct lg_session *s = *held;
	bool start = false;

	if (--s->depth == 0 && s->kill_start) {
		s->kill_start = false;
		start = s->on_kill != NULL;
	}
	pthread_mutex_unlock(&s->mu);
	if (start)
		s->on_kill(s->on_kill_ctx);
}

/* Holds s's lock until the enclosing function returns. */
#define HOLD(s)                  \
	struct lg_session *held_ \
		__attribute__((cleanup(release), unused)) = hold(s)

bool lg_session_judge_calls(const struct lg_session *s)
{
	HOLD(s);
	return s->cfg->guard.repeat.threshold &&
	       !s->cfg->guard.repeat.include_result;
}

const char *lg_session_ignore_keys(const struct lg_session *s)
{
	HOLD(s);
	return s->cfg->repeat_ignore_keys ? s->cfg->repeat_ignore_keys :
					    LG_DEFAULT_IGNORE_KEYS;
}

void lg_session_observed(struct lg_session *s, pid_t pid, const char *exe,
			 unsigned proto, const char *tool,
			 const char *args_preview, const char *result_preview)
{
	HOLD(s);
	if (proto == LG_P_HTTP)
		s->st.observed_http++;
	else
		s->st.observed_jsonrpc++;
	lg_dbg("observed %s(%s) -> %s by %s[%d]", tool, args_preview,
	       result_preview, exe, pid);
}

bool lg_session_model_blocked(const struct lg_session *s)
{
	HOLD(s);
	return s->blocked || s->model_blocked;
}

static int act(struct lg_session *s, const struct lg_findings *out,
	       enum lg_op op, pid_t pid, const char *exe, const char *target);

void lg_session_defer_kill(struct lg_session *s, bool defer)
{
	(void)s;
	defer_here = defer;
}

void lg_session_llm_turn(struct lg_session *s, const char *model,
			 const char *stop_reason, uint64_t in_tokens,
			 uint64_t out_tokens, unsigned tool_calls,
			 const char *text)
{
	HOLD(s);
	struct lg_guard_env env = { lg_mono_ms(), NULL, s, s->shared, NULL };
	struct lg_event ev = { .kind = LG_EV_TURN,
			       .source = LG_SRC_PROXY,
			       .exe = "model",
			       .target = model && *model ? model : "model",
			       .tokens_in = in_tokens,
			       .tokens_out = out_tokens,
			       .turn_tool_calls = tool_calls,
			       .stop_reason = stop_reason ? stop_reason : "",
			       .turn_text = text ? text : "" };
	struct lg_findings out;
	double pin = 0, pout = 0;

	/* Priced here, at the edge: the guard only adds up dollars. */
	if (lg_price_lookup(s->cfg->llm_prices, model, &pin, &pout, NULL) > 0)
		ev.cost =
			((double)in_tokens * pin + (double)out_tokens * pout) /
			1e6;
	else if (s->cfg->guard.budget.max_cost > 0 && !s->unpriced_warned) {
		char msg[300];

		s->unpriced_warned = true;
		snprintf(
			msg, sizeof(msg),
			"warning: model '%s' has no price in [llm] prices: its turns do not count toward budget.max_cost",
			model && *model ? model : "?");
		lg_warn("%s", msg + 9);
		lg_session_audit_simple(s, "warn", msg);
	}
	s->st.cost += ev.cost;
	s->st.turns++;
	s->st.ev_proxy++;
	s->st.tokens_in += in_tokens;
	s->st.tokens_out += out_tokens;
	if (stop_reason && (strcmp(stop_reason, "max_tokens") == 0 ||
			    strcmp(stop_reason, "length") == 0 ||
			    strcmp(stop_reason, "MAX_TOKENS") == 0 ||
			    strcmp(stop_reason, "max_output_tokens") == 0))
		s->st.max_tokens_stops++;
	lg_dbg("model turn (%s): %s, %llu in, %llu out, %u tool call(s)",
	       model && *model ? model : "?", stop_reason ? stop_reason : "?",
	       (unsigned long long)in_tokens, (unsigned long long)out_tokens,
	       tool_calls);
	if (lg_guard_feed(s->guard, &ev, &env, &out) != LG_ALLOW)
		act(s, &out, LG_OP_NONE, 0, "model", ev.target);
}

void lg_session_llm_text(struct lg_session *s, const char *p, size_t n)
{
	HOLD(s);
	struct lg_guard_env env = { lg_mono_ms(), NULL, s, s->shared, NULL };
	struct lg_event ev = { .kind = LG_EV_TEXT,
			       .source = LG_SRC_PROXY,
			       .exe = "model",
			       .target = "model text",
			       .text = p,
			       .text_len = n };
	struct lg_findings out;

	if (lg_guard_feed(s->guard, &ev, &env, &out) != LG_ALLOW)
		act(s, &out, LG_OP_NONE, 0, "model", "model text");
}

void lg_session_stop_message(const struct lg_session *s, char *out, size_t size)
{
	HOLD(s);
	if (s->kill_pending || s->blocked)
		snprintf(
			out, size,
			"lgrun stopped this agent session (%s): %s. The agent was looping, so no further model or tool calls are allowed. An operator can inspect the audit log and allow the session to run again with: lgctl reset %s",
			s->trip.reason ? s->trip.reason : "tripped",
			s->trip.summary, s->info.id);
	else if (s->model_blocked)
		snprintf(
			out, size,
			"lgrun refuses further model calls in this session (%s). The agent was looping; end the task here.",
			s->deny_summary);
	else
		snprintf(out, size, "lgrun refused this request");
}

void lg_session_on_kill(struct lg_session *s, void (*fn)(void *ctx), void *ctx)
{
	HOLD(s);
	s->on_kill = fn;
	s->on_kill_ctx = ctx;
}

uint64_t lg_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int64_t lg_real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

struct lg_session *lg_session_new(const struct lg_config *cfg,
				  const struct lg_session_info *info)
{
	struct lg_session *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->cfg = cfg;
	s->info = *info;
	{
		pthread_mutexattr_t a;

		pthread_mutexattr_init(&a);
		pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
		pthread_mutex_init(&s->mu, &a);
		pthread_mutexattr_destroy(&a);
	}
	s->guard = lg_guard_new(&cfg->guard, info->start_mono_ms);
	s->content = lg_lineage_new(0);
	if (!s->guard || !s->content) {
		lg_guard_free(s->guard);
		lg_lineage_free(s->content);
		free(s);
		return NULL;
	}
	{
		const char *names[64] = { "git" };
		size_t n = 1;

		for (size_t i = 0; i < cfg->n_ignore; i++) {
			if (!cfg->ignore[i].program)
				continue;
			s->has_program_rules = true;
			if (n < sizeof(names) / sizeof(names[0]))
				names[n++] = cfg->ignore[i].program;
		}
		/* PATH now: what the names meant when the session began */
		s->programs = lg_programs_new(names, n, getenv("PATH"),
					      info->start_real_ns);
	}
	if (info->flow && info->name) {
		struct lg_guard_env env = { info->start_mono_ms, NULL, s, NULL,
					    NULL };
		struct lg_event ev = { .kind = LG_EV_CALL,
				       .source = LG_SRC_SHIM,
				       .flow = info->flow,
				       .to = info->name };
		struct lg_findings out;

		lg_guard_feed(s->guard, &ev, &env, &out);
	}
	if (cfg->watch_output) {
		struct lg_guard_cfg oc;

		memset(&oc, 0, sizeof(oc));
		oc.output_repeat = cfg->guard.output_repeat;
		s->out_guard = lg_guard_new(&oc, info->start_mono_ms);
	}
	return s;
}

void lg_session_free(struct lg_session *s)
{
	if (!s)
		return;
	lg_guard_free(s->guard);
	lg_guard_free(s->out_guard);
	lg_lineage_free(s->content);
	lg_programs_free(s->programs);
	free(s->egress);
	pthread_mutex_destroy(&s->mu);
	free(s);
}

bool lg_session_blocked(const struct lg_session *s)
{
	HOLD(s);
	return s->blocked;
}

int lg_session_deny_errno(const struct lg_session *s)
{
	HOLD(s);
	return s->cfg->deny_errno;
}

bool lg_session_kill_pending(const struct lg_session *s)
{
	HOLD(s);
	return s->kill_pending;
}

uint64_t lg_session_kill_deferred(const struct lg_session *s)
{
	HOLD(s);
	return s->kill_pending ? s->kill_deferred_ms : 0;
}

const char *lg_session_trip_summary(const struct lg_session *s)
{
	HOLD(s);
	return s->trip_summary;
}

const char *lg_session_trip_reason(const struct lg_session *s)
{
	HOLD(s);
	return s->trip.reason;
}

void lg_session_stats(const struct lg_session *s, struct lg_session_stats *st)
{
	HOLD(s);
	*st = s->st;
}

/*
 * A nested lgrun writes its records into the same state directory by
 * rename: the same executable as this one (by inode, not by name) may.
 */
static bool our_binary(pid_t pid)
{
	static dev_t dev;
	static ino_t ino;
	char p[64];
	struct stat st;

	if (!ino) {
		if (stat("/proc/self/exe", &st) < 0)
			return false;
		dev = st.st_dev;
		ino = st.st_ino;
	}
	snprintf(p, sizeof(p), "/proc/%d/exe", pid);
	return stat(p, &st) == 0 && st.st_ino == ino && st.st_dev == dev;
}

static void read_exe(pid_t pid, char *out, size_t size)
{
	char p[64], buf[PATH_MAX];
	ssize_t n;

	snprintf(p, sizeof(p), "/proc/%d/exe", pid);
	n = readlink(p, buf, sizeof(buf) - 1);
	if (n <= 0) {
		snprintf(out, size, "?");
		return;
	}
	buf[n] = '\0';
	lg_path_strip_deleted(buf);
	snprintf(out, size, "%s", lg_path_basename(buf));
}

/*
 * The program doing an op. fresh: read it now (what counts must name the
 * program as it is); else a process seen before keeps the name read then
 * (one readlink per process on the hot path, not one per op; a process
 * that execs after its first op is named after its first program).
 */
static void exe_of(struct lg_session *s, pid_t pid, bool fresh, char *out,
		   size_t size)
{
	const size_t n = sizeof(s->exes) / sizeof(s->exes[0]);

	for (size_t i = 0; i < n; i++) {
		if (s->exes[i].pid != pid)
			continue;
		if (fresh)
			read_exe(pid, s->exes[i].exe, sizeof(s->exes[i].exe));
		snprintf(out, size, "%s", s->exes[i].exe);
		return;
	}
	read_exe(pid, out, size);
	s->exes[s->exes_next % n].pid = pid;
	snprintf(s->exes[s->exes_next % n].exe,
		 sizeof(s->exes[s->exes_next % n].exe), "%s", out);
	s->exes_next++;
}

static uint64_t path_hash(const char *p)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *p; p++)
		h = (h ^ (uint8_t)*p) * 1099511628211ULL;
	return h;
}

/*
 * A ring as large as any realistic volumetric window's entries: a path
 * forgotten here could again pass for an overwrite.
 */
static void lost_by_git_add(struct lg_session *s, const char *path)
{
	s->lost_by_git[(s->lost_head + s->nlost) % LOST_BY_GIT] =
		path_hash(path);
	if (s->nlost == LOST_BY_GIT)
		s->lost_head = (s->lost_head + 1) % LOST_BY_GIT;
	else
		s->nlost++;
}

static bool lost_by_git(const struct lg_session *s, const char *path)
{
	uint64_t h = path_hash(path);

	for (size_t i = 0; i < s->nlost; i++)
		if (s->lost_by_git[i] == h)
			return true;
	return false;
}

/*
 * The guard's question: has a target removed earlier come back? Not where
 * git removed content its object database does not hold (reset --hard,
 * checkout -- f over changes): git writes the committed content there,
 * and the removed content is gone.
 */
/* How long an allowed op may wait in the kernel before it runs. */
#define PENDING_MS 1000

static int64_t ns(struct statx_timestamp t)
{
	return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static bool restored(void *ctx, const char *target, enum lg_op op,
		     const struct lg_target_id *id)
{
	const struct lg_session *s = ctx;
	bool trunc = op == LG_OP_TRUNCATE || op == LG_OP_OPEN_TRUNC;
	struct statx st;
	bool same;

	if (op == LG_OP_UNLINK && s && lost_by_git(s, target))
		return false;
	if (statx(AT_FDCWD, target, trunc ? 0 : AT_SYMLINK_NOFOLLOW,
		  STATX_INO | STATX_SIZE | STATX_BTIME | STATX_CTIME |
			  STATX_MTIME,
		  &st) != 0)
		return false;
	if (trunc && st.stx_size == 0)
		return false;
	same = id->ino && st.stx_ino == id->ino &&
	       makedev(st.stx_dev_major, st.stx_dev_minor) == id->dev &&
	       ns((st.stx_mask & STATX_BTIME) ? st.stx_btime : st.stx_ctime) ==
		       id->birth_ns;
	if (!same)
		return true; /* another file at the path: an overwrite */
	if (trunc && ns(st.stx_mtime) != id->mtime_ns)
		return true; /* truncated, then written again */
	/*
	 * The same file, as it was: either the op has not run yet (a
	 * parallel rm, allowed, waits in the kernel) and it counts, or it
	 * ran and failed (EACCES, EBUSY, EISDIR) and lost nothing. The
	 * thread that asked has finished it if it is asking again now;
	 * another thread's op has surely run after PENDING_MS.
	 */
	return id->tid == s->feeding_tid ||
	       lg_mono_ms() - id->at_ms > PENDING_MS;
}

static void remember(struct lg_session *s, uint64_t now, pid_t pid,
		     enum lg_op op, enum lg_class cls, enum lg_verdict v,
		     const char *exe, const char *target)
{
	struct recent *r = &s->recent[(s->recent_head + s->nrecent) % RECENT];

	if (s->nrecent == RECENT)
		s->recent_head = (s->recent_head + 1) % RECENT;
	else
		s->nrecent++;
	r->t_ms = now;
	r->op = op;
	r->cls = cls;
	r->verdict = v;
	r->pid = pid;
	snprintf(r->exe, sizeof(r->exe), "%s", exe ? exe : "");
	snprintf(r->target, sizeof(r->target), "%s", target);
}

static void json_recent(struct lg_session *s, struct lg_json *j)
{
	struct lg_json arr = { 0 };

	lg_json_append(&arr, "[", 1);
	for (size_t i = 0; i < s->nrecent; i++) {
		struct recent *r = &s->recent[(s->recent_head + i) % RECENT];
		struct lg_json e = { 0 };

		lg_json_begin(&e);
		lg_json_num(&e, "t",
			    (double)(r->t_ms - s->info.start_mono_ms) / 1000.0);
		lg_json_str(&e, "op", lg_op_name(r->op));
		lg_json_str(&e, "target", r->target);
		if (r->op != LG_OP_AGENT_CALL)
			lg_json_str(&e, "class", lg_class_name(r->cls));
		lg_json_str(&e, "verdict", lg_verdict_name(r->verdict));
		lg_json_int(&e, "pid", r->pid);
		lg_json_str(&e, "exe", r->exe);
		if (i)
			lg_json_append(&arr, ",", 1);
		lg_json_end(&e);
		if (e.buf)
			lg_json_append(&arr, e.buf, e.len);
		lg_json_free(&e);
	}
	lg_json_append(&arr, "]", 1);
	lg_json_raw(j, "recent", arr.buf ? arr.buf : "[]");
	lg_json_free(&arr);
}

static void json_head(struct lg_session *s, struct lg_json *j,
		      const char *event)
{
	char t[40];

	lg_time_iso(lg_real_ns(), t, sizeof(t));
	lg_json_begin(j);
	lg_json_str(j, "time", t);
	lg_json_str(j, "session", s->info.id);
	lg_json_str(j, "agent", s->info.agent);
	lg_json_str(j, "event", event);
}

static void audit(struct lg_session *s, struct lg_json *j, bool sync)
{
	int r = lg_audit_append(s->info.audit_path, lg_json_end(j), sync);

	if (r < 0)
		lg_err("cannot write the audit log %s: %s", s->info.audit_path,
		       strerror(-r));
}

#define MAX_EGRESS_HOSTS 256 /* recorded one by one; more are counted */

void lg_session_egress(struct lg_session *s, const struct lg_egress_flow *f)
{
	HOLD(s);
	struct egress_host *h = NULL;

	s->egress_conns++;
	s->egress_up += f->up;
	s->egress_down += f->down;
	if (f->error)
		s->egress_failed++;
	for (size_t i = 0; i < s->n_egress && !h; i++)
		if (s->egress[i].port == f->port &&
		    strcmp(s->egress[i].host, f->host) == 0)
			h = &s->egress[i];
	if (h) {
		h->conns++;
		goto warn;
	}
	if (s->n_egress >= MAX_EGRESS_HOSTS) {
		s->egress_hosts_dropped++;
		return;
	}
	if (!s->egress) {
		s->egress = calloc(MAX_EGRESS_HOSTS, sizeof(*s->egress));
		if (!s->egress)
			return;
	}
	h = &s->egress[s->n_egress++];
	snprintf(h->host, sizeof(h->host), "%s", f->host);
	h->port = f->port;
	h->conns = 1;
	{
		/* a new destination: host and port only, never a URL */
		struct lg_json j = { 0 };
		char exe[64];

		json_head(s, &j, "egress");
		lg_json_str(&j, "host", f->host);
		lg_json_int(&j, "port", f->port);
		lg_json_str(&j, "via",
			    f->decrypted		 ? "decrypt" :
			    f->kind == LG_EGRESS_CONNECT ? "connect" :
							   "http");
		if (f->pid > 0) {
			read_exe(f->pid, exe, sizeof(exe));
			lg_json_int(&j, "pid", f->pid);
			lg_json_str(&j, "exe", exe);
		}
		if (f->error)
			lg_json_str(&j, "error", f->error);
		lg_json_end(&j);
		if (lg_audit_append(s->info.audit_path, j.buf, false) < 0)
			lg_dbg("cannot write the audit log %s",
			       s->info.audit_path);
		lg_json_free(&j);
	}
	lg_dbg("egress: %s:%u%s%s", f->host, f->port, f->error ? ": " : "",
	       f->error ? f->error : "");
warn:
	if (f->decrypted && f->error && !h->warned) {
		/* the agent's own traffic failed because of us: say so */
		h->warned = true;
		lg_warn("egress proxy: a decrypted connection to %s failed: %s (a client with a CA store of its own cannot trust lgrun's session CA; [llm] mode = base_url leaves its TLS alone)",
			f->host, f->error);
	}
}

/*
 * An agent CLI that ran without one model turn through lgrun: if it did
 * talk to its model, that traffic went around the proxy. Said, never
 * guessed at: "model_traffic": "not seen" in the end record.
 */
static bool model_unseen(const struct lg_session *s)
{
	static const char *const clis[] = { "claude", "codex", "gemini" };
	const char *a = s->info.agent ? s->info.agent : "";

	if (!s->cfg->llm_proxy || s->st.turns)
		return false;
	for (size_t i = 0; i < sizeof(clis) / sizeof(clis[0]); i++)
		if (strcmp(a, clis[i]) == 0)
			return true;
	return false;
}

void lg_session_audit_end(struct lg_session *s, const char *end,
			  int exit_status, const char *summary)
{
	HOLD(s);
	struct lg_json j = { 0 };
	int r;

	if (model_unseen(s))
		lg_warn("no model turn of %s went through lgrun in this session: if it talked to its model, that traffic went around lgrun (a base URL of its own, a CA store of its own, a connection that ignores the proxy variables%s); [llm] mode = both and -v tell more",
			s->info.agent,
			s->bpf_direct ? ": see the direct connections above" :
					"");
	json_head(s, &j, "session_end");
	lg_json_str(&j, "end", end);
	lg_json_int(&j, "exit_status", exit_status);
	lg_json_str(&j, "summary", summary);
	lg_json_num(&j, "duration_s",
		    (double)(lg_mono_ms() - s->info.start_mono_ms) / 1000.0);
	lg_json_int(&j, "destructive_attempts", (long long)s->st.attempts);
	lg_json_int(&j, "tool_calls", (long long)s->st.tool_calls);
	if (s->st.observed_http + s->st.observed_jsonrpc)
		lg_json_int(&j, "observed_calls",
			    (long long)(s->st.observed_http +
					s->st.observed_jsonrpc));
	lg_json_int(&j, "model_turns", (long long)s->st.turns);
	if (s->st.recoverable)
		lg_json_int(&j, "recoverable", (long long)s->st.recoverable);
	if (s->st.moved)
		lg_json_int(&j, "moved", (long long)s->st.moved);
	if (s->st.warnings_suppressed)
		lg_json_int(&j, "warnings_suppressed",
			    (long long)s->st.warnings_suppressed);
	{
		struct lg_flow_stats fs;
		uint64_t rej = 0;

		lg_guard_flow_stats(s->guard, &fs);
		for (int i = 0; i < LG_FLOW_NRULES; i++)
			if (i != LG_FLOW_R_NO_WORK)
				rej += fs.rejected[i];
		if (fs.calls || rej) {
			lg_json_int(&j, "agent_calls", (long long)fs.calls);
			lg_json_int(&j, "agent_calls_rejected", (long long)rej);
			lg_json_int(&j, "longest_chain", fs.longest);
		}
	}
	if (model_unseen(s))
		lg_json_str(&j, "model_traffic", "not seen");
	if (s->cfg->sealed) /* the egress proxy was the only way out */
		lg_json_str(&j, "network", "proxy-only");
	if (s->egress_conns) {
		lg_json_int(&j, "egress_connections",
			    (long long)s->egress_conns);
		lg_json_int(&j, "egress_hosts",
			    (long long)(s->n_egress + s->egress_hosts_dropped));
		lg_json_int(&j, "egress_bytes_up", (long long)s->egress_up);
		lg_json_int(&j, "egress_bytes_down", (long long)s->egress_down);
		if (s->egress_failed)
			lg_json_int(&j, "egress_failed",
				    (long long)s->egress_failed);
	}
	if (s->bpf_state[0])
		lg_json_str(&j, "bpf", s->bpf_state);
	if (s->bpf_counted) {
		lg_json_int(&j, "bpf_drops", (long long)s->bpf_drops);
		lg_json_int(&j, "syscalls", (long long)s->bpf_syscalls);
		lg_json_int(&j, "bytes_written", (long long)s->bpf_bytes);
		lg_json_int(&j, "shim_bypass", (long long)s->bpf_bypass);
		if (s->bpf_direct)
			lg_json_int(&j, "direct_connections",
				    (long long)s->bpf_direct);
	}
	r = lg_audit_append(s->info.audit_path, lg_json_end(&j), true);
	if (r < 0)
		lg_err("cannot write the audit log %s: %s", s->info.audit_path,
		       strerror(-r));
	lg_json_free(&j);
}

void lg_session_warn(struct lg_session *s, const char *rule, const char *reason,
		     pid_t pid, const char *exe, const char *summary)
{
	HOLD(s);
	struct lg_json j = { 0 };
	char line[LG_SUMMARY_MAX + 32];

	snprintf(line, sizeof(line), "warning: %s", summary);
	lg_warn("%s", line);
	json_head(s, &j, "warn");
	lg_json_str(&j, "rule", rule);
	lg_json_str(&j, "reason", reason);
	lg_json_str(&j, "action", "warn");
	lg_json_str(&j, "summary", line);
	lg_json_int(&j, "pid", pid);
	lg_json_str(&j, "exe", exe);
	audit(s, &j, false);
	lg_json_free(&j);
}

void lg_session_bpf_state(struct lg_session *s, const char *state)
{
	HOLD(s);
	snprintf(s->bpf_state, sizeof(s->bpf_state), "%s", state);
}

void lg_session_bpf_stats(struct lg_session *s, uint64_t drops,
			  uint64_t syscalls, uint64_t bytes_written,
			  uint64_t bypass_warnings, uint64_t direct)
{
	HOLD(s);
	s->bpf_counted = true;
	s->bpf_direct = direct;
	s->bpf_drops = drops;
	s->bpf_syscalls = syscalls;
	s->bpf_bytes = bytes_written;
	s->bpf_bypass = bypass_warnings;
	if (drops) {
		char msg[256];

		snprintf(
			msg, sizeof(msg),
			"the eBPF observer dropped %llu events (its ring buffer was full): raise [bpf] ring",
			(unsigned long long)drops);
		lg_session_warn(s, "bpf", "bpf_drops", 0, "lgrun", msg);
	}
}

void lg_session_shared(struct lg_session *s,
		       const struct lg_shared_windows *shared)
{
	HOLD(s);
	s->shared = shared;
}

void lg_session_store_required(struct lg_session *s, bool (*up)(void *ctx),
			       void *ctx)
{
	HOLD(s);
	s->store_up = up;
	s->store_ctx = ctx;
}

void lg_session_peer_kill(struct lg_session *s, const char *summary)
{
	HOLD(s);
	if (s->kill_pending)
		return;
	s->kill_pending = true;
	s->blocked = true;
	s->peer_killed = true;
	memset(&s->trip, 0, sizeof(s->trip));
	s->trip.action = LG_KILL;
	s->trip.rule = "store";
	s->trip.reason = "killed_by_peer";
	if (strncmp(summary, "session_killed: ", 16) == 0)
		summary += 16;
	snprintf(s->trip.summary, sizeof(s->trip.summary),
		 "another supervisor of the session tripped: %s", summary);
	s->trip_op = LG_OP_NONE;
	snprintf(s->trip_summary, sizeof(s->trip_summary), "session_killed: %s",
		 s->trip.summary);
}

void lg_session_supervisor_kill(struct lg_session *s, const char *reason,
				const char *fmt, ...)
{
	HOLD(s);
	va_list ap;

	if (s->kill_pending)
		return;
	s->kill_pending = true;
	s->blocked = true;
	memset(&s->trip, 0, sizeof(s->trip));
	s->trip.action = LG_KILL;
	s->trip.rule = "supervisor";
	s->trip.reason = reason;
	va_start(ap, fmt);
	vsnprintf(s->trip.summary, sizeof(s->trip.summary), fmt, ap);
	va_end(ap);
	s->trip_op = LG_OP_NONE;
	snprintf(s->trip_summary, sizeof(s->trip_summary), "session_killed: %s",
		 s->trip.summary);
}

bool lg_session_peer_killed(const struct lg_session *s)
{
	HOLD(s);
	return s->peer_killed;
}

void lg_session_lineage_fn(struct lg_session *s,
			   void (*fn)(void *ctx, pid_t pid, char *out,
				      size_t size),
			   void *ctx)
{
	HOLD(s);
	s->lineage = fn;
	s->lineage_ctx = ctx;
}

void lg_session_audit_simple(struct lg_session *s, const char *event,
			     const char *summary)
{
	HOLD(s);
	struct lg_json j = { 0 };

	json_head(s, &j, event);
	if (summary)
		lg_json_str(&j, "summary", summary);
	audit(s, &j, false);
	lg_json_free(&j);
}

static const char *prefix_for(enum lg_verdict v, bool observe)
{
	if (observe)
		return "would_kill";
	switch (v) {
	case LG_KILL:
		return "session_killed";
	case LG_DENY:
		return "op_denied";
	default:
		return "warning";
	}
}

static void audit_finding(struct lg_session *s, const struct lg_finding *f,
			  const char *event, enum lg_op op, pid_t pid,
			  const char *exe, const char *target, bool sync)
{
	struct lg_json j = { 0 };
	char summary[LG_SUMMARY_MAX + 32];

	snprintf(summary, sizeof(summary), "%s: %s",
		 prefix_for(f->action, s->cfg->observe && f->action > LG_WARN),
		 f->summary);
	json_head(s, &j, event);
	lg_json_str(&j, "rule", f->rule);
	lg_json_str(&j, "reason", f->reason);
	lg_json_str(&j, "action", lg_verdict_name(f->action));
	lg_json_bool(&j, "observe", s->cfg->observe);
	lg_json_str(&j, "summary", summary);
	if (op != LG_OP_NONE) {
		lg_json_str(&j, "op", lg_op_name(op));
		lg_json_str(&j, "target", target);
		lg_json_int(&j, "pid", pid);
		lg_json_str(&j, "exe", exe);
	}
	json_recent(s, &j);
	audit(s, &j, sync);
	lg_json_free(&j);
}

/* Acts on the guard's findings; returns the errno for the syscall or 0. */
/*
 * on_store_error = fail: while the shared store does not answer, what
 * would count is refused (the other hosts cannot be asked).
 */
static int store_gate(struct lg_session *s, pid_t pid, const char *exe)
{
	if (!s->store_up || s->store_up(s->store_ctx)) {
		s->store_refusing = false;
		return 0;
	}
	if (!s->store_refusing) {
		s->store_refusing = true;
		lg_session_warn(
			s, "store", "store_unavailable", pid, exe,
			"the shared store does not answer: destructive operations are refused until it does (on_store_error = fail)");
	}
	s->st.denied++;
	return s->cfg->deny_errno;
}

/* The count of warnings of this reason so far (NULL: no slot left). */
static unsigned *warn_count(struct lg_session *s, const char *reason)
{
	for (size_t i = 0; i < sizeof(s->warns) / sizeof(s->warns[0]); i++) {
		if (!s->warns[i].reason) {
			s->warns[i].reason = reason;
			return &s->warns[i].n;
		}
		if (strcmp(s->warns[i].reason, reason) == 0)
			return &s->warns[i].n;
	}
	return NULL;
}

/* "rm[12] <- bash[10] <- python3[9]" from /proc, the tree still alive. */
static void proc_lineage(pid_t pid, char *out, size_t size)
{
	size_t len = 0;
	pid_t self = getpid();

	out[0] = '\0';
	for (int depth = 0; pid > 1 && pid != self && depth < 16 && len < size;
	     depth++) {
		char path[64], comm[32] = "?", state;
		pid_t ppid;
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/comm", pid);
		f = fopen(path, "re");
		if (f) {
			if (fgets(comm, sizeof(comm), f))
				comm[strcspn(comm, "\n")] = '\0';
			fclose(f);
		}
		len += (size_t)snprintf(out + len, size - len, "%s%s[%d]",
					depth ? " <- " : "", comm, pid);
		if (lg_proc_stat(pid, &state, &ppid) < 0)
			break;
		pid = ppid;
	}
}

static int act(struct lg_session *s, const struct lg_findings *out,
	       enum lg_op op, pid_t pid, const char *exe, const char *target)
{
	int err = 0;

	for (size_t i = 0; i < out->n; i++) {
		const struct lg_finding *f = &out->f[i];

		if (f->action == LG_WARN) {
			unsigned *n = warn_count(s, f->reason);

			/* a warning repeated without end is noise: capped */
			if (n && ++*n > MAX_WARN_RECORDS) {
				if (*n == MAX_WARN_RECORDS + 1)
					lg_warn("further %s warnings are not reported in this session (see the session's end record)",
						f->reason);
				s->st.warnings_suppressed++;
				continue;
			}
			lg_warn("warning: %s", f->summary);
			audit_finding(s, f, "warn", op, pid, exe, target,
				      false);
			continue;
		}
		if (s->cfg->observe) {
			if (s->st.would_trip++ < MAX_WOULD_TRIP_RECORDS)
				audit_finding(s, f, "would_trip", op, pid, exe,
					      target, false);
			lg_info("observe: would %s: %s",
				lg_verdict_name(f->action), f->summary);
			continue;
		}
		err = s->cfg->deny_errno;
		if (f->action == LG_DENY) {
			if (op == LG_OP_NONE) { /* model or tool-call path */
				s->model_blocked = true;
				snprintf(s->deny_summary,
					 sizeof(s->deny_summary), "%s",
					 f->summary);
			}
			lg_warn("refused: %s", f->summary);
			audit_finding(s, f, "deny", op, pid, exe, target, true);
			continue;
		}
		if (!s->kill_pending) {
			s->kill_pending = true;
			s->blocked = true;
			if (defer_here)
				s->kill_deferred_ms = lg_mono_ms();
			else
				s->kill_start = true;
			s->trip = *f;
			s->trip_op = op;
			s->trip_pid = pid;
			proc_lineage(pid, s->trip_lineage,
				     sizeof(s->trip_lineage));
			snprintf(s->trip_exe, sizeof(s->trip_exe), "%s",
				 exe ? exe : "");
			snprintf(s->trip_target, sizeof(s->trip_target), "%s",
				 target ? target : "");
			snprintf(s->trip_summary, sizeof(s->trip_summary),
				 "session_killed: %s", f->summary);
		}
	}
	if (err)
		s->st.denied++;
	return err;
}

static bool under(const char *path, const char *dir)
{
	size_t n = dir ? strlen(dir) : 0;

	while (n > 1 && dir[n - 1] == '/')
		n--;
	return n && strncmp(path, dir, n) == 0 &&
	       (path[n] == '/' || path[n] == '\0');
}

static bool protected_path(const struct lg_session *s, const char *path)
{
	return under(path, s->info.state_dir) ||
	       strcmp(path, s->info.audit_path) == 0 ||
	       (s->info.metrics_path &&
		strcmp(path, s->info.metrics_path) == 0);
}

static struct lg_inode_key inode_key(const struct lg_facts *f)
{
	return (struct lg_inode_key){ f->dev, f->ino,
				      f->has_btime ? f->btime_ns : 0 };
}

/* What lgrun saw happen to the inode, into its facts. */
static void lineage_facts(const struct lg_session *s, struct lg_facts *f)
{
	struct lg_inode_key k = inode_key(f);
	unsigned fl;

	if (!f->exists || !f->ino)
		return;
	fl = lg_lineage_get(s->content, &k);
	f->inherited = fl & LG_INODE_INHERITED;
	f->rewritten = fl & LG_INODE_REWRITTEN;
}

/* How long a failed rename to another filesystem explains a removal. */
#define MOVE_MAX_AGE_MS (30ULL * 60 * 1000)

/*
 * The source of a move to another filesystem is removed after the copy: is
 * its copy at the destination, the same type, size and modification time
 * (mv, cp -a and shutil.move keep it)? Then nothing is lost, and the copy
 * carries the pre-existing status on, so deleting it there counts.
 */
static bool moved_copy(struct lg_session *s, const char *path,
		       const struct lg_facts *f, uint64_t now_ms)
{
	char to[PATH_MAX + 1];
	struct statx st;
	int64_t mtime;

	if (lg_lineage_moved_to(s->content, path, now_ms, MOVE_MAX_AGE_MS, to,
				sizeof(to)) != 1)
		return false;
	if (statx(AT_FDCWD, to, AT_SYMLINK_NOFOLLOW,
		  STATX_TYPE | STATX_SIZE | STATX_MTIME | STATX_INO |
			  STATX_BTIME,
		  &st) < 0)
		return false;
	mtime = (int64_t)st.stx_mtime.tv_sec * 1000000000LL +
		st.stx_mtime.tv_nsec;
	if (f->is_dir ?
		    !S_ISDIR(st.stx_mode) :
		    (S_ISDIR(st.stx_mode) || (int64_t)st.stx_size != f->size ||
		     mtime != f->mtime_ns))
		return false;
	if (!f->is_dir && lg_facts_preexisting(f, s->info.start_real_ns)) {
		struct lg_inode_key k = {
			makedev(st.stx_dev_major, st.stx_dev_minor), st.stx_ino,
			(st.stx_mask & STATX_BTIME) ?
				(int64_t)st.stx_btime.tv_sec * 1000000000LL +
					st.stx_btime.tv_nsec :
				0
		};

		lg_lineage_mark(s->content, &k, LG_INODE_INHERITED,
				LG_INODE_REWRITTEN);
	}
	lg_dbg("%s was moved to %s", path, to);
	return true;
}

int lg_session_rename(struct lg_session *s, pid_t pid, const char *src,
		      const char *dst, const struct lg_facts *fs,
		      const struct lg_facts *fd, unsigned flags, bool cross_fs)
{
	HOLD(s);
	struct lg_facts d = *fd;
	char exe[64] = "";

	if (s->blocked)
		return s->cfg->deny_errno;
	s->st.renames++;
	if (((protected_path(s, src) && fs->exists) ||
	     protected_path(s, dst)) &&
	    !our_binary(pid)) {
		/* Moving the record away, or something over it. */
		read_exe(pid, exe, sizeof(exe));
		lg_warn("refused rename %s -> %s by %s[%d]: lgrun's state is protected",
			src, dst, exe, pid);
		remember(s, lg_mono_ms(), pid, LG_OP_RENAME, LG_CLASS_DESTROY,
			 LG_DENY, exe, protected_path(s, src) ? src : dst);
		s->st.denied++;
		return s->cfg->deny_errno;
	}
	if (!fs->exists)
		return 0; /* it fails */
	if (cross_fs) {
		/* EXDEV: mv and the like copy, then remove the source. */
		lg_lineage_move(s->content, src, dst, lg_mono_ms());
		lg_dbg("rename %s -> %s crosses filesystems", src, dst);
		return 0;
	}
	if (fs->is_dir || (flags & RENAME_EXCHANGE))
		return 0;
	struct lg_facts f = *fs;
	struct lg_inode_key k = inode_key(fs);
	bool src_pre, succeeds = false;

	lineage_facts(s, &f);
	lineage_facts(s, &d);
	src_pre = lg_facts_preexisting(&f, s->info.start_real_ns);
	/*
	 * A new file takes the place of pre-existing content (sed -i, perl
	 * -i, a save by rename), there or at a path it was renamed away from
	 * (sed -i.bak): it carries that content's status on.
	 */
	if (d.exists && !d.is_dir && !(flags & RENAME_NOREPLACE))
		succeeds = lg_facts_preexisting(&d, s->info.start_real_ns);
	else if (!d.exists)
		succeeds = lg_lineage_refill(s->content, dst);
	if (succeeds && !src_pre &&
	    lg_lineage_mark(s->content, &k, LG_INODE_INHERITED,
			    LG_INODE_REWRITTEN) == 0)
		lg_dbg("rename %s -> %s: pre-existing content carried on", src,
		       dst);
	/*
	 * The replaced file may live on under another name (perl -i.orig
	 * links the original to its backup first): an earlier version of
	 * dst.
	 */
	if (succeeds && d.nlink > 1) {
		struct lg_inode_key dk = inode_key(&d);

		if (lg_lineage_mark(s->content, &dk, LG_INODE_MOVED_AWAY, 0) ==
		    0)
			lg_lineage_set_origin(s->content, &dk, dst);
	}
	/* Pre-existing content leaves its path: remember where it was. */
	if (src_pre &&
	    lg_lineage_mark(s->content, &k, LG_INODE_MOVED_AWAY, 0) == 0) {
		lg_lineage_set_origin(s->content, &k, src);
		lg_lineage_vacate(s->content, src);
	}
	return 0;
}

static int decide(struct lg_session *s, pid_t pid, enum lg_op op,
		  const char *path, const struct lg_facts *f);

/*
 * An earlier version renamed away from its path (sed -i.bak, perl -i.orig,
 * an editor's backup) whose path holds content again: removing it leaves
 * the successor. Renamed away with nothing at its path (a trash folder):
 * its removal loses the data.
 */
static bool superseded(const struct lg_session *s, const struct lg_facts *f)
{
	struct lg_inode_key k = inode_key(f);
	const char *origin;
	struct stat st;

	if (!(lg_lineage_get(s->content, &k) & LG_INODE_MOVED_AWAY))
		return false;
	origin = lg_lineage_origin(s->content, &k);
	if (!origin || lstat(origin, &st) < 0 || !S_ISREG(st.st_mode) ||
	    st.st_size == 0)
		return false;
	return st.st_ino != f->ino || st.st_dev != f->dev;
}

int lg_session_decide(struct lg_session *s, pid_t pid, enum lg_op op,
		      const char *path, const struct lg_facts *facts)
{
	HOLD(s);
	struct lg_facts f = *facts;
	int err;

	if (s->blocked) /* a trip while the target was read */
		return s->cfg->deny_errno;
	lineage_facts(s, &f);
	if ((op == LG_OP_UNLINK || op == LG_OP_RMDIR) && f.exists &&
	    moved_copy(s, path, &f, lg_mono_ms()))
		f.moved = true;
	if (op == LG_OP_UNLINK && f.exists && f.ino)
		f.superseded = superseded(s, &f);
	err = decide(s, pid, op, path, &f);
	/* From now on the file holds what the session writes into it. */
	if (!err && f.exists && f.ino &&
	    (op == LG_OP_TRUNCATE || op == LG_OP_OPEN_TRUNC) && !f.fd_deleted) {
		struct lg_inode_key k = inode_key(&f);

		lg_lineage_mark(s->content, &k, LG_INODE_REWRITTEN,
				LG_INODE_INHERITED);
	}
	return err;
}

static int decide(struct lg_session *s, pid_t pid, enum lg_op op,
		  const char *path, const struct lg_facts *f)
{
	const struct lg_config *c = s->cfg;
	struct lg_guard_env env = { lg_mono_ms(), restored, s, s->shared,
				    NULL };
	struct lg_event ev = { .kind = LG_EV_DESTRUCTIVE,
			       .source = LG_SRC_SECCOMP,
			       .op = op,
			       .pid = pid,
			       .target = path,
			       .id = { f->dev, f->ino,
				       f->has_btime ? f->btime_ns : f->ctime_ns,
				       f->mtime_ns, pid, env.now_ms } };
	struct lg_findings out;
	enum lg_verdict v;
	char exe[64] = "";
	const char *scoped = NULL; /* exe, when it is the program it names */

	s->st.attempts++;
	s->st.ev_seccomp++;
	if (protected_path(s, path) && f->exists) {
		/* The agent must not erase its own record or lift its block. */
		read_exe(pid, exe, sizeof(exe));
		lg_warn("refused %s %s by %s[%d]: lgrun's state is protected",
			lg_op_name(op), path, exe, pid);
		remember(s, env.now_ms, pid, op, LG_CLASS_DESTROY, LG_DENY, exe,
			 path);
		s->st.denied++;
		return c->deny_errno;
	}
	ev.cls = lg_classify(op, f, path, NULL, c->ignore, c->n_ignore,
			     s->info.start_real_ns);
	/*
	 * The program is read only when a scoped rule could apply (git in
	 * .git) or a removal that would count may be git's (recoverable, or
	 * not to be taken for an overwrite), when something is to be
	 * reported, or with -vv: it costs a readlink on the hot path.
	 */
	if (ev.cls == LG_CLASS_DESTROY &&
	    lg_classify_needs_program(c->ignore, c->n_ignore, op, f, path)) {
		read_exe(pid, exe, sizeof(exe));
		ev.exe = exe;
		scoped = lg_programs_is(s->programs, exe, pid) ? exe : NULL;
		ev.cls = lg_classify(op, f, path, scoped, c->ignore,
				     c->n_ignore, s->info.start_real_ns);
	} else if (lg_log_verbosity >= LG_LOG_DEBUG) {
		read_exe(pid, exe, sizeof(exe));
		ev.exe = exe;
	}
	if (ev.cls == LG_CLASS_DESTROY && s->store_up &&
	    !s->store_up(s->store_ctx))
		return store_gate(s, pid, exe); /* not counted: refused */
	if (ev.cls == LG_CLASS_DESTROY)
		s->st.counted++;
	else if (ev.cls == LG_CLASS_RECOVERABLE)
		s->st.recoverable++;
	else if (ev.cls == LG_CLASS_MOVED)
		s->st.moved++;
	if (lg_classify_lost_by_git(op, ev.cls, path, scoped))
		lost_by_git_add(s, path);
	s->feeding_tid = pid;
	v = lg_guard_feed(s->guard, &ev, &env, &out);
	s->feeding_tid = 0;
	if (!exe[0]) /* the target waits: still there */
		exe_of(s, pid, v != LG_ALLOW || ev.cls == LG_CLASS_DESTROY, exe,
		       sizeof(exe));
	remember(s, env.now_ms, pid, op, ev.cls, v, exe, path);
	lg_dbg("%s %s (%s) by %s[%d]: %s", lg_op_name(op), path,
	       lg_class_name(ev.cls), exe, pid, lg_verdict_name(v));
	if (v == LG_ALLOW)
		return ev.cls == LG_CLASS_DESTROY ? store_gate(s, pid, exe) : 0;
	return act(s, &out, op, pid, exe, path);
}

int lg_session_gate(struct lg_session *s, pid_t pid, const char *exe,
		    const char *tool, const char *target)
{
	HOLD(s);
	struct lg_guard_env env = { lg_mono_ms(), NULL, s, s->shared, NULL };
	struct lg_event ev = { .kind = LG_EV_DESTRUCTIVE,
			       .source = LG_SRC_SHIM,
			       .op = LG_OP_TOOL_DELETE,
			       .cls = LG_CLASS_DESTROY,
			       .pid = pid,
			       .exe = exe,
			       .target = target,
			       .tool = tool };
	struct lg_findings out;
	enum lg_verdict v;

	s->st.attempts++;
	s->st.ev_shim++;
	if (s->blocked)
		return s->cfg->deny_errno;
	if (s->store_up && !s->store_up(s->store_ctx))
		return store_gate(s, pid, exe); /* not counted: refused */
	s->st.counted++;
	v = lg_guard_feed(s->guard, &ev, &env, &out);
	remember(s, env.now_ms, pid, LG_OP_TOOL_DELETE, ev.cls, v, exe, target);
	lg_dbg("tool %s on %s by %s[%d]: %s", tool, target, exe, pid,
	       lg_verdict_name(v));
	return v == LG_ALLOW ?
		       store_gate(s, pid, exe) :
		       act(s, &out, LG_OP_TOOL_DELETE, pid, exe, target);
}

const char *lg_session_flow(const struct lg_session *s)
{
	HOLD(s);
	return s->info.flow ? s->info.flow : "";
}

const char *lg_session_name(const struct lg_session *s)
{
	HOLD(s);
	return s->info.name ? s->info.name : "";
}

int lg_session_call(struct lg_session *s, pid_t pid, const char *exe,
		    const char *flow, const char *from, const char *to,
		    char *why, size_t why_size)
{
	HOLD(s);
	struct lg_guard_env env = { lg_mono_ms(), NULL, s, s->shared, NULL };
	struct lg_event ev = { .kind = LG_EV_CALL,
			       .source = LG_SRC_SHIM,
			       .op = LG_OP_AGENT_CALL,
			       .pid = pid,
			       .exe = exe,
			       .target = to,
			       .flow = flow,
			       .from = from,
			       .to = to };
	struct lg_findings out;
	enum lg_verdict v;
	int err;

	if (why_size)
		why[0] = '\0';
	s->st.ev_shim++;
	if (s->blocked) {
		lg_session_stop_message(s, why, why_size);
		return s->cfg->deny_errno;
	}
	v = lg_guard_feed(s->guard, &ev, &env, &out);
	{
		char arrow[2 * LG_FLOW_NAME_MAX + 16];

		snprintf(arrow, sizeof(arrow), "%s -> %s", from, to);
		remember(s, env.now_ms, pid, LG_OP_AGENT_CALL, LG_CLASS_DESTROY,
			 v, exe, arrow);
	}
	lg_info("agent call %s -> %s (%s[%d]): %s", from, to, exe, pid,
		lg_verdict_name(v));
	if (v == LG_ALLOW)
		return 0;
	err = act(s, &out, LG_OP_AGENT_CALL, pid, exe, to);
	for (size_t i = 0; err && i < out.n; i++)
		if (out.f[i].action >= LG_DENY) {
			snprintf(why, why_size, "%s", out.f[i].summary);
			break;
		}
	return err;
}

void lg_session_work(struct lg_session *s)
{
	HOLD(s);
	struct lg_guard_env env = { lg_mono_ms(), NULL, s, s->shared, NULL };
	struct lg_event ev = { .kind = LG_EV_WORK, .source = LG_SRC_BPF };
	struct lg_findings out;

	lg_guard_feed(s->guard, &ev, &env, &out);
}

void lg_session_return(struct lg_session *s, const char *flow, const char *from,
		       const char *to)
{
	HOLD(s);
	struct lg_guard_env env = { lg_mono_ms(), NULL, s, s->shared, NULL };
	struct lg_event ev = { .kind = LG_EV_RETURN,
			       .source = LG_SRC_SHIM,
			       .flow = flow,
			       .from = from,
			       .to = to };
	struct lg_findings out;

	lg_dbg("agent return %s -> %s", from, to);
	lg_guard_feed(s->guard, &ev, &env, &out);
}

static void op_result(struct lg_session *s, enum lg_source src, pid_t pid,
		      const char *exe, enum lg_op op, const char *path,
		      int result)
{
	struct lg_guard_env env = { lg_mono_ms(), NULL, s, s->shared, NULL };
	struct lg_event ev = { .kind = LG_EV_OP_RESULT,
			       .source = src,
			       .op = op,
			       .pid = pid,
			       .exe = exe,
			       .target = path,
			       .result = result };
	struct lg_findings out;

	if (src == LG_SRC_SHIM)
		s->st.ev_shim++;
	else
		s->st.ev_bpf++;
	if (lg_guard_feed(s->guard, &ev, &env, &out) != LG_ALLOW)
		act(s, &out, op, pid, exe, path);
}

void lg_session_op_result(struct lg_session *s, pid_t pid, const char *exe,
			  enum lg_op op, const char *path, int result)
{
	HOLD(s);
	op_result(s, LG_SRC_SHIM, pid, exe, op, path, result);
}

void lg_session_bpf_result(struct lg_session *s, pid_t pid, const char *exe,
			   enum lg_op op, const char *path, int result)
{
	HOLD(s);
	op_result(s, LG_SRC_BPF, pid, exe, op, path, result);
}

void lg_session_tool_done(struct lg_session *s, pid_t pid, const char *exe,
			  const char *tool, const char *args,
			  const char *digest, const char *args_preview,
			  const char *result_preview, uint64_t stream)
{
	HOLD(s);
	struct lg_guard_env env = { lg_mono_ms(), NULL, s, s->shared, NULL };
	/* pid 0: the call came through the LLM proxy, not a process */
	struct lg_event ev = { .kind = LG_EV_TOOL_DONE,
			       .source = pid ? LG_SRC_SHIM : LG_SRC_PROXY,
			       .pid = pid,
			       .exe = exe,
			       .target = tool,
			       .tool = tool,
			       .args = args,
			       .result_digest = digest,
			       .args_preview = args_preview,
			       .result_preview = result_preview,
			       .stream = stream };
	struct lg_findings out;

	s->st.tool_calls++;
	if (pid)
		s->st.ev_shim++;
	else
		s->st.ev_proxy++;
	lg_dbg("tool %s(%s) -> %s by %s[%d]", tool, args_preview,
	       result_preview, exe, pid);
	if (lg_guard_feed(s->guard, &ev, &env, &out) != LG_ALLOW)
		act(s, &out, LG_OP_NONE, pid, exe, tool);
}

int lg_session_unreadable(struct lg_session *s, pid_t pid, enum lg_op op,
			  int err)
{
	HOLD(s);
	char exe[64];

	s->st.unreadable++;
	s->st.denied++;
	exe_of(s, pid, true, exe, sizeof(exe));
	lg_warn("refused %s by %s[%d]: cannot read its arguments (%s)",
		lg_op_name(op), exe, pid, strerror(err));
	remember(s, lg_mono_ms(), pid, op, LG_CLASS_MISSING, LG_DENY, exe,
		 "(unreadable)");
	return s->cfg->deny_errno;
}

int lg_session_refusal(const struct lg_session *s)
{
	HOLD(s);
	return s->blocked ? s->cfg->deny_errno : 0;
}

void lg_session_output_text(struct lg_session *s, const char *p, size_t n)
{
	HOLD(s);
	struct lg_guard_env env = { lg_mono_ms(), NULL, s, s->shared, NULL };
	struct lg_event ev = { .kind = LG_EV_TEXT,
			       .source = LG_SRC_OUTPUT,
			       .target = "terminal output",
			       .text = p,
			       .text_len = n };
	struct lg_findings out;

	if (s->out_guard &&
	    lg_guard_feed(s->out_guard, &ev, &env, &out) != LG_ALLOW)
		act(s, &out, LG_OP_NONE, 0, NULL, "terminal output");
}

void lg_session_processes(struct lg_session *s, unsigned n)
{
	HOLD(s);
	struct lg_guard_env env = { lg_mono_ms(), NULL, s, s->shared, NULL };
	struct lg_event ev = { .kind = LG_EV_PROCESSES,
			       .source = LG_SRC_TIMER,
			       .target = "process tree",
			       .processes = n };
	struct lg_findings out;

	if (lg_guard_feed(s->guard, &ev, &env, &out) != LG_ALLOW)
		act(s, &out, LG_OP_NONE, 0, NULL, NULL);
}

void lg_session_tick(struct lg_session *s)
{
	HOLD(s);
	struct lg_guard_env env = { lg_mono_ms(), restored, s, s->shared,
				    NULL };
	struct lg_event ev = { .kind = LG_EV_TICK, .source = LG_SRC_TIMER };
	struct lg_findings out;

	if (lg_guard_feed(s->guard, &ev, &env, &out) != LG_ALLOW)
		act(s, &out, LG_OP_NONE, 0, NULL, NULL);
}

uint64_t lg_session_next_deadline(const struct lg_session *s)
{
	HOLD(s);
	return lg_guard_next_deadline(s->guard);
}

int lg_session_record_trip(struct lg_session *s, const char *method,
			   double kill_ms, int survivors, unsigned escaped,
			   int *audit_err)
{
	HOLD(s);
	struct lg_json j = { 0 };
	const struct lg_finding *f = &s->trip;
	int r, marker;

	json_head(s, &j, "trip");
	lg_json_str(&j, "rule", f->rule);
	lg_json_str(&j, "reason", f->reason);
	lg_json_str(&j, "action", lg_verdict_name(f->action));
	lg_json_bool(&j, "observe", false);
	lg_json_str(&j, "summary", s->trip_summary);
	if (s->trip_op != LG_OP_NONE) {
		lg_json_str(&j, "op", lg_op_name(s->trip_op));
		lg_json_str(&j, "target", s->trip_target);
		lg_json_int(&j, "pid", s->trip_pid);
		lg_json_str(&j, "exe", s->trip_exe);
		lg_json_str(&j, "errno", lg_errno_name(s->cfg->deny_errno));
		{
			/* the observer's (main thread) knows exited parents */
			char lin[1024] = "";

			if (s->lineage && s->trip_pid > 0)
				s->lineage(s->lineage_ctx, s->trip_pid, lin,
					   sizeof(lin));
			if (lin[0] || s->trip_lineage[0])
				lg_json_str(&j, "lineage",
					    lin[0] ? lin : s->trip_lineage);
		}
	}
	lg_json_str(&j, "kill_method", method);
	lg_json_num(&j, "kill_ms", kill_ms);
	lg_json_int(&j, "survivors", survivors);
	if (escaped) /* had left the cgroup; killed by pid */
		lg_json_int(&j, "escaped", escaped);
	json_recent(s, &j);
	lg_json_end(&j);
	/* The marker first: even if the log write fails, the block holds. */
	marker = lg_state_mark_killed(s->info.state_dir, s->info.id, j.buf);
	if (marker < 0)
		lg_err("cannot mark session '%s' killed in %s: %s", s->info.id,
		       s->info.state_dir, strerror(-marker));
	r = lg_audit_append(s->info.audit_path, j.buf, true);
	if (r < 0)
		lg_err("cannot write the audit log %s: %s", s->info.audit_path,
		       strerror(-r));
	if (audit_err)
		*audit_err = r < 0 ? r : 0;
	lg_json_free(&j);
	if (s->info.metrics_path) {
		r = lg_metrics_count_trip(s->info.metrics_path, s->info.agent,
					  f->reason);
		if (r < 0)
			lg_warn("cannot update the metrics file %s: %s",
				s->info.metrics_path, strerror(-r));
	}
	return marker < 0 ? marker : 0;
}

void lg_session_shim_stats(struct lg_session *s, uint64_t accepted,
			   uint64_t refused, uint64_t malformed,
			   uint64_t dropped, uint64_t gates, uint64_t tls)
{
	HOLD(s);
	s->shim[0] = accepted;
	s->shim[1] = refused;
	s->shim[2] = malformed;
	s->shim[3] = dropped;
	s->shim[4] = gates;
	s->shim[5] = tls;
}

void lg_session_write_metrics(struct lg_session *s)
{
	HOLD(s);
	struct lg_metric_inc inc[] = {
		{ "lgrun_events_total", "source=\"seccomp\"",
		  s->st.ev_seccomp },
		{ "lgrun_events_total", "source=\"shim\"", s->st.ev_shim },
		{ "lgrun_events_total", "source=\"proxy\"", s->st.ev_proxy },
		{ "lgrun_events_total", "source=\"bpf\"", s->st.ev_bpf },
		{ "lgrun_shim_dropped_events_total", "", s->shim[3] },
		{ "lgrun_shim_refused_connections_total", "", s->shim[1] },
		{ "lgrun_shim_malformed_frames_total", "", s->shim[2] },
		{ "lgrun_gated_calls_total", "", s->shim[4] },
		{ "lgrun_observed_calls_total", "proto=\"http\"",
		  s->st.observed_http },
		{ "lgrun_observed_calls_total", "proto=\"jsonrpc\"",
		  s->st.observed_jsonrpc },
	};
	struct lg_metric_inc flow[1 + LG_FLOW_NRULES];
	char labels[LG_FLOW_NRULES][64];
	struct lg_metric_inc all[sizeof(inc) / sizeof(inc[0]) +
				 sizeof(flow) / sizeof(flow[0])];
	struct lg_flow_stats fs;
	size_t n = 0;
	bool any = false;
	int r;

	/* lgrun_flow_calls_total, lgrun_flow_rejected_calls_total{reason} */
	lg_guard_flow_stats(s->guard, &fs);
	flow[0] = (struct lg_metric_inc){ "lgrun_flow_calls_total", "",
					  fs.calls };
	for (int i = 0; i < LG_FLOW_NRULES; i++) {
		snprintf(labels[i], sizeof(labels[i]), "reason=\"%s\"",
			 lg_flow_rule_reason((enum lg_flow_rule)i));
		flow[1 + i] = (struct lg_metric_inc){
			"lgrun_flow_rejected_calls_total", labels[i],
			fs.rejected[i]
		};
	}
	for (size_t i = 0; i < sizeof(inc) / sizeof(inc[0]); i++)
		all[n++] = inc[i];
	for (size_t i = 0; i < sizeof(flow) / sizeof(flow[0]); i++)
		if (flow[i].n)
			all[n++] = flow[i];
	for (size_t i = 0; i < n; i++)
		any |= all[i].n != 0;
	/* nothing to add: leave the file alone (a quiet session is cheap) */
	if (!s->info.metrics_path || !any)
		return;
	r = lg_metrics_add(s->info.metrics_path, all, n);
	if (r < 0)
		lg_warn("cannot update the metrics file %s: %s",
			s->info.metrics_path, strerror(-r));
}

void lg_session_write_state(struct lg_session *s, const char *state,
			    int exit_status, pid_t pid)
{
	HOLD(s);
	struct lg_json j = { 0 };
	char t[40];
	int r;

	lg_json_begin(&j);
	lg_json_str(&j, "session", s->info.id);
	lg_json_str(&j, "agent", s->info.agent);
	lg_json_str(&j, "state", state);
	lg_json_int(&j, "lgrun_pid", getpid());
	lg_json_int(&j, "pid", pid);
	lg_time_iso(s->info.start_real_ns, t, sizeof(t));
	lg_json_str(&j, "started", t);
	lg_time_iso(lg_real_ns(), t, sizeof(t));
	lg_json_str(&j, "updated", t);
	if (exit_status >= 0)
		lg_json_int(&j, "exit_status", exit_status);
	if (s->kill_pending) {
		lg_json_str(&j, "reason", s->trip.reason);
		lg_json_str(&j, "summary", s->trip_summary);
	}
	lg_json_int(&j, "attempts", (long long)s->st.attempts);
	lg_json_int(&j, "counted", (long long)s->st.counted);
	lg_json_int(&j, "denied", (long long)s->st.denied);
	lg_json_int(&j, "would_trip", (long long)s->st.would_trip);
	lg_json_int(&j, "tool_calls", (long long)s->st.tool_calls);
	lg_json_int(&j, "model_turns", (long long)s->st.turns);
	lg_json_int(&j, "tokens_in", (long long)s->st.tokens_in);
	lg_json_int(&j, "tokens_out", (long long)s->st.tokens_out);
	lg_json_int(&j, "max_tokens_stops", (long long)s->st.max_tokens_stops);
	lg_json_num(&j, "cost_usd", s->st.cost);
	lg_json_int(&j, "shim_connections", (long long)s->shim[0]);
	lg_json_int(&j, "shim_refused", (long long)s->shim[1]);
	lg_json_int(&j, "shim_malformed", (long long)s->shim[2]);
	lg_json_int(&j, "shim_dropped", (long long)s->shim[3]);
	lg_json_int(&j, "gated_calls", (long long)s->shim[4]);
	lg_json_int(&j, "tls_channels", (long long)s->shim[5]);
	if (s->bpf_state[0])
		lg_json_str(&j, "bpf", s->bpf_state);
	r = lg_state_write_session(s->info.state_dir, s->info.id,
				   lg_json_end(&j));
	if (r < 0)
		lg_dbg("cannot write the session record: %s", strerror(-r));
	lg_json_free(&j);
}
