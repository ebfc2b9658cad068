// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "canon.h"
#include "cgroup.h"
#include "control.h"
#include "log.h"
#include "pathres.h"
#include "session.h"
#include "text.h"
#include "wiredec.h"

#define MAX_CONNS 65536 /* by descriptor number; lgrun raises its fd limit */
#define MAX_PENDING 64 /* calls awaiting their result, per connection */
#define ARGS_KEEP 2048
#define MAX_NESTED 256 /* nested sessions alive at once */
#define MAX_A2A 8 /* A2A calls awaiting their response, per connection */
#define NAME 64 /* LG_FLOW_NAME_MAX */

struct pending {
	bool used;
	uint64_t chan;
	uint32_t proto;
	bool decision; /* an agent's call, else a program's routine */
	char tool[160];
	char args[ARGS_KEEP];
};

struct a2a {
	bool used;
	uint64_t chan;
	char from[NAME], to[NAME + 8];
};

struct conn {
	int fd;
	pid_t pid;
	struct lg_ring *ring; /* mapped from the shim's memfd, or NULL */
	bool hello;
	bool refused; /* a nested lgrun that was refused: it is saying why */
	uint64_t hello_ns; /* when its hello was sent (CLOCK_MONOTONIC) */
	char exe[64];
	struct pending calls[MAX_PENDING];
	unsigned next; /* round-robin slot when full */
	struct a2a a2a[MAX_A2A];
};

/*
 * A nested session: an lgrun that registered and exec'd its command (the
 * same pid). Its end, seen through a pidfd, is the return to its caller.
 */
struct nested {
	bool used;
	pid_t pid;
	int pidfd;
	uint64_t seq; /* registration order */
	char name[NAME], caller[NAME];
};

struct lg_control {
	int lfd;
	char path[108];
	struct lg_session *s;
	const struct lg_cgroup *cg;
	const char *target_keys, *url_targets;
	int reserve_fd; /* given up to refuse a peer when out of descriptors */
	char cg_rel[PATH_MAX]; /* our leaf, as /proc/PID/cgroup shows it */
	struct conn *conns[MAX_CONNS];
	struct nested nested[MAX_NESTED];
	uint64_t nested_seq;
	unsigned lingering; /* refused nested lgruns still connected */
	void (*on_hello)(void *ctx, pid_t pid, uint64_t sent_ns);
	void (*on_call)(void *ctx);
	void *on_call_ctx;
	/* rings: drained on a 1 ms tick while events flow, else rung */
	int *ring_fds; /* connections that have one */
	size_t nrings, rings_cap;
	bool rings_awake;
	unsigned rings_idle;
	uint64_t rings_next_ms;
	void *on_hello_ctx;
	struct lg_control_stats st;
};

struct lg_control *lg_control_new(const char *path, struct lg_session *s,
				  const struct lg_cgroup *cg,
				  const char *target_keys,
				  const char *url_targets)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	struct lg_control *c;

	if (strlen(path) >= sizeof(a.sun_path))
		return NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->s = s;
	c->target_keys = target_keys;
	c->url_targets = url_targets;
	c->cg = cg;
	snprintf(c->path, sizeof(c->path), "%s", path);
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	if (cg && cg->ok) {
		const char *rel = strstr(cg->path, "/lgrun-");

		snprintf(c->cg_rel, sizeof(c->cg_rel), "%s", rel ? rel : "");
	}
	c->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	unlink(path);
	c->lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK,
			0);
	if (c->lfd < 0 || bind(c->lfd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    listen(c->lfd, 128) < 0) {
		lg_warn("cannot open the control socket %s: %s", path,
			strerror(errno));
		if (c->lfd >= 0)
			close(c->lfd);
		if (c->reserve_fd >= 0)
			close(c->reserve_fd);
		free(c);
		return NULL;
	}
	return c;
}

void lg_control_free(struct lg_control *c)
{
	if (!c)
		return;
	for (int i = 0; i < MAX_CONNS; i++) {
		if (c->conns[i]) {
			if (c->conns[i]->ring)
				munmap(c->conns[i]->ring, LG_RING_BYTES);
			close(c->conns[i]->fd);
			free(c->conns[i]);
		}
	}
	free(c->ring_fds);
	for (int i = 0; i < MAX_NESTED; i++)
		if (c->nested[i].used)
			close(c->nested[i].pidfd);
	close(c->lfd);
	if (c->reserve_fd >= 0)
		close(c->reserve_fd);
	unlink(c->path);
	free(c);
}

int lg_control_listen_fd(const struct lg_control *c)
{
	return c->lfd;
}

const char *lg_control_path(const struct lg_control *c)
{
	return c->path;
}

void lg_control_stats(const struct lg_control *c, struct lg_control_stats *st)
{
	*st = c->st;
}

/* Is pid a process of this session? Its cgroup, else its ancestry. */
static bool in_session(struct lg_control *c, pid_t pid)
{
	char p[64], line[PATH_MAX + 8];
	pid_t self = getpid();
	FILE *f;

	if (c->cg_rel[0]) {
		bool ok = false;

		snprintf(p, sizeof(p), "/proc/%d/cgroup", pid);
		f = fopen(p, "re");
		if (!f)
			return false;
		while (fgets(line, sizeof(line), f)) {
			size_t n = strlen(c->cg_rel);
			const char *rel;

			if (strncmp(line, "0::", 3) != 0)
				continue;
			/* the leaf itself or a cgroup the agent made under it */
			rel = strstr(line + 3, c->cg_rel);
			ok = rel && (rel[n] == '\n' || rel[n] == '/' ||
				     rel[n] == '\0');
		}
		fclose(f);
		return ok;
	}
	for (int depth = 0; depth < 4096 && pid > 1; depth++) {
		pid_t ppid;
		char state;

		if (lg_proc_stat(pid, &state, &ppid) < 0)
			return false;
		if (ppid == self)
			return true;
		pid = ppid;
	}
	return false;
}

void lg_control_on_hello(struct lg_control *c,
			 void (*fn)(void *ctx, pid_t pid, uint64_t sent_ns),
			 void *ctx)
{
	c->on_hello = fn;
	c->on_hello_ctx = ctx;
	/* the processes connected so far said hello before anyone listened */
	for (int i = 0; fn && i < MAX_CONNS; i++)
		if (c->conns[i] && c->conns[i]->hello)
			fn(ctx, c->conns[i]->pid, c->conns[i]->hello_ns);
}

void lg_control_on_call(struct lg_control *c, void (*fn)(void *ctx), void *ctx)
{
	c->on_call = fn;
	c->on_call_ctx = ctx;
}

bool lg_control_lingering(const struct lg_control *c)
{
	return c->lingering > 0;
}

static unsigned drain(struct lg_control *c, int epfd, struct conn *k);
static void ring_list_del(struct lg_control *c, int fd);

static void drop_conn(struct lg_control *c, int epfd, int fd)
{
	if (fd < MAX_CONNS && c->conns[fd] && c->conns[fd]->ring) {
		/* what it wrote before it went is still to be read */
		drain(c, epfd, c->conns[fd]);
		if (!c->conns[fd])
			return; /* a broken ring dropped it already */
		if (c->conns[fd]->ring) {
			/* a process still alive makes a new one to write to */
			__atomic_store_n(&c->conns[fd]->ring->closed, 1,
					 __ATOMIC_SEQ_CST);
			munmap(c->conns[fd]->ring, LG_RING_BYTES);
			ring_list_del(c, fd);
		}
		c->conns[fd]->ring = NULL;
	}
	epoll_ctl(epfd, EPOLL_CTL_DEL, fd, NULL);
	close(fd);
	if (fd < MAX_CONNS && c->conns[fd] && c->conns[fd]->refused)
		c->lingering--;
	if (fd < MAX_CONNS) {
		free(c->conns[fd]);
		c->conns[fd] = NULL;
	}
}

void lg_control_accept(struct lg_control *c, int epfd)
{
	for (;;) {
		int fd = accept4(c->lfd, NULL, NULL,
				 SOCK_CLOEXEC | SOCK_NONBLOCK);
		struct epoll_event ev = { .events = EPOLLIN };
		struct ucred cred;
		socklen_t len = sizeof(cred);

		if (fd < 0 && (errno == EMFILE || errno == ENFILE) &&
		    c->reserve_fd >= 0) {
			/*
			 * Out of descriptors: the peer would wait in the
			 * backlog and wake us forever. Take it and let it go.
			 */
			close(c->reserve_fd);
			fd = accept4(c->lfd, NULL, NULL, SOCK_CLOEXEC);
			if (fd >= 0)
				close(fd);
			c->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
			c->st.refused++;
			lg_warn("control: out of file descriptors, a shim connection was refused");
			continue;
		}
		if (fd < 0)
			return;
		if (fd >= MAX_CONNS ||
		    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 ||
		    (cred.uid != getuid() && cred.uid != geteuid() &&
		     geteuid() != 0) ||
		    !in_session(c, cred.pid)) {
			c->st.refused++;
			lg_dbg("control: refused a connection (pid %d)",
			       fd >= 0 ? (int)cred.pid : -1);
			close(fd);
			continue;
		}
		c->conns[fd] = calloc(1, sizeof(struct conn));
		if (!c->conns[fd]) {
			close(fd);
			continue;
		}
		c->conns[fd]->fd = fd;
		c->conns[fd]->pid = cred.pid;
		ev.data.fd = fd;
		epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
		c->st.accepted++;
	}
}

static struct pending *find_call(struct conn *k, uint64_t chan, bool take)
{
	for (unsigned i = 0; i < MAX_PENDING; i++) {
		if (k->calls[i].used && k->calls[i].chan == chan) {
			if (take)
				k->calls[i].used = false;
			return &k->calls[i];
		}
	}
	return NULL;
}

static void remember_call(struct conn *k, const struct lg_wire_msg *m)
{
	struct pending *p = NULL;

	for (unsigned i = 0; i < MAX_PENDING && !p; i++)
		if (!k->calls[i].used)
			p = &k->calls[i];
	if (!p) { /* full: the oldest-placed slot goes */
		p = &k->calls[k->next++ % MAX_PENDING];
	}
	p->used = true;
	p->chan = m->chan;
	p->proto = m->proto;
	p->decision = m->decision == 1;
	snprintf(p->tool, sizeof(p->tool), "%s", m->tool);
	snprintf(p->args, sizeof(p->args), "%.*s",
		 (int)(m->args_len < ARGS_KEEP - 1 ? m->args_len :
						     ARGS_KEEP - 1),
		 m->args ? (const char *)m->args : "");
}

/* The answer to a gate or a registration; why: the reason of a refusal. */
static void send_verdict(int fd, uint32_t seq, uint32_t verdict,
			 const char *why)
{
	struct lg_wire_buf w;

	lg_wire_start(&w, LG_W_VERDICT, seq);
	lg_wire_put_u32(&w, LG_T_VERDICT, verdict);
	if (why && *why)
		lg_wire_put_str(&w, LG_T_PREVIEW, why);
	lg_wire_finish(&w);
	if (send(fd, w.b, w.n, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		lg_dbg("control: cannot answer: %s", strerror(errno));
}

/*
 * The target of a destructive call: the first configured key its JSON
 * arguments hold ("asset_id=fact_sales"), else the URL path (HTTP), else
 * the tool's name.
 */
static const char *gate_target(struct lg_control *c,
			       const struct lg_wire_msg *m, char *buf,
			       size_t size)
{
	if (m->args_len && lg_canon_target((const char *)m->args, m->args_len,
					   c->target_keys, buf, size) > 0)
		return buf;
	if (m->proto == LG_P_HTTP && c->url_targets &&
	    lg_url_target(m->target, c->url_targets, buf, size) > 0)
		return buf;
	return m->target[0] ? m->target : m->tool;
}

/* The newest live nested session of pid, or NULL. */
static struct nested *nested_of(struct lg_control *c, pid_t pid)
{
	struct nested *best = NULL;

	for (int i = 0; i < MAX_NESTED; i++)
		if (c->nested[i].used && c->nested[i].pid == pid &&
		    (!best || c->nested[i].seq > best->seq))
			best = &c->nested[i];
	return best;
}

/*
 * The session pid runs in: the nearest nested session among pid and its
 * ancestors, else the top session. Decided here from the process tree,
 * not from anything the agent says.
 */
static const char *caller_of(struct lg_control *c, pid_t pid)
{
	pid_t self = getpid();

	for (int depth = 0; depth < 4096 && pid > 1 && pid != self; depth++) {
		struct nested *n = nested_of(c, pid);
		pid_t ppid;
		char state;

		if (n)
			return n->name;
		if (lg_proc_stat(pid, &state, &ppid) < 0)
			break;
		pid = ppid;
	}
	return lg_session_name(c->s);
}

/* The flow id a frame carries, if it is this session's; else "". */
static const char *our_flow(struct lg_control *c, const struct lg_wire_msg *m,
			    pid_t pid)
{
	if (*m->flow && strcmp(m->flow, lg_session_flow(c->s)) != 0) {
		lg_warn("pid %d gave a correlation id that is not this session's flow: treated as none",
			pid);
		return "";
	}
	return m->flow;
}

/* A nested lgrun asks to start as a child session. */
static void on_enter(struct lg_control *c, int epfd, struct conn *k,
		     const struct lg_wire_msg *m)
{
	char why[LG_SUMMARY_MAX + 64], caller[NAME];
	struct nested *n = NULL;
	int err, pidfd;

	snprintf(caller, sizeof(caller), "%s", caller_of(c, k->pid));
	c->st.enters++;
	if (c->on_call)
		c->on_call(c->on_call_ctx);
	/* a refusal's kill waits until the nested lgrun has said why */
	lg_session_defer_kill(c->s, true);
	err = lg_session_call(c->s, k->pid, k->exe[0] ? k->exe : "lgrun",
			      our_flow(c, m, k->pid), caller, m->name, why,
			      sizeof(why));
	lg_session_defer_kill(c->s, false);
	if (err) {
		c->st.enter_refused++;
		k->refused = true;
		c->lingering++;
		send_verdict(k->fd, m->seq, (uint32_t)err, why);
		return;
	}
	for (int i = 0; i < MAX_NESTED && !n; i++)
		if (!c->nested[i].used)
			n = &c->nested[i];
	pidfd = (int)syscall(SYS_pidfd_open, k->pid, 0);
	if (!n || pidfd < 0) {
		/* allowed, but its return cannot be seen: say so once */
		lg_warn("cannot follow nested session '%s' (pid %d): %s",
			m->name, k->pid,
			n ? strerror(errno) : "too many at once");
		if (pidfd >= 0)
			close(pidfd);
	} else {
		struct epoll_event ev = { .events = EPOLLIN };

		n->used = true;
		n->pid = k->pid;
		n->pidfd = pidfd;
		n->seq = ++c->nested_seq;
		snprintf(n->name, sizeof(n->name), "%s", m->name);
		snprintf(n->caller, sizeof(n->caller), "%s", caller);
		ev.data.fd = pidfd;
		epoll_ctl(epfd, EPOLL_CTL_ADD, pidfd, &ev);
	}
	send_verdict(k->fd, m->seq, 0, NULL);
}

/* A nested session's process ended: it and any it exec'd into return. */
static bool on_pidfd(struct lg_control *c, int epfd, int fd)
{
	struct nested *n = NULL, *last;
	pid_t pid;

	for (int i = 0; i < MAX_NESTED && !n; i++)
		if (c->nested[i].used && c->nested[i].pidfd == fd)
			n = &c->nested[i];
	if (!n)
		return false;
	pid = n->pid;
	while ((last = nested_of(c, pid))) {
		lg_session_return(c->s, lg_session_flow(c->s), last->name,
				  last->caller);
		epoll_ctl(epfd, EPOLL_CTL_DEL, last->pidfd, NULL);
		close(last->pidfd);
		last->used = false;
	}
	return true;
}

/* An A2A request held by the shim: a call to the endpoint. */
static int on_a2a(struct lg_control *c, struct conn *k,
		  const struct lg_wire_msg *m)
{
	char why[LG_SUMMARY_MAX + 64], to[NAME + 8];
	struct a2a *a = NULL;
	const char *from = caller_of(c, k->pid);
	int err;

	snprintf(to, sizeof(to), "a2a:%s", m->call_to);
	c->st.a2a_calls++;
	if (c->on_call)
		c->on_call(c->on_call_ctx);
	err = lg_session_call(c->s, k->pid, k->exe[0] ? k->exe : "?",
			      lg_session_flow(c->s), from, to, why,
			      sizeof(why));
	if (err) {
		lg_warn("%s", why[0] ? why : "an A2A call was refused");
		return err;
	}
	for (int i = 0; i < MAX_A2A && !a; i++)
		if (!k->a2a[i].used)
			a = &k->a2a[i];
	if (!a)
		a = &k->a2a[m->chan % MAX_A2A];
	a->used = true;
	a->chan = m->chan;
	snprintf(a->from, sizeof(a->from), "%s", from);
	snprintf(a->to, sizeof(a->to), "%s", to);
	return 0;
}

/* The response to an A2A call: the return. */
static bool a2a_done(struct lg_control *c, struct conn *k, uint64_t chan)
{
	for (int i = 0; i < MAX_A2A; i++) {
		struct a2a *a = &k->a2a[i];

		if (a->used && a->chan == chan) {
			lg_session_return(c->s, lg_session_flow(c->s), a->to,
					  a->from);
			a->used = false;
			return true;
		}
	}
	return false;
}

static void on_frame(struct lg_control *c, int epfd, struct conn *k,
		     const struct lg_wire_msg *m)
{
	const char *exe = k->exe[0] ? k->exe : "?";

	switch (m->type) {
	case LG_W_HELLO:
		snprintf(k->exe, sizeof(k->exe), "%s",
			 lg_path_basename(m->exe));
		k->hello = true;
		k->hello_ns = m->time_ns;
		if (c->on_hello)
			c->on_hello(c->on_hello_ctx, k->pid, m->time_ns);
		break;
	case LG_W_OP_RESULT:
		c->st.op_results++;
		lg_session_op_result(c->s, k->pid, exe, (enum lg_op)m->op,
				     m->path, (int)m->result);
		break;
	case LG_W_TOOL_CALL:
		if (m->proto == LG_P_TLS) { /* opaque: counted, not paired */
			c->st.tls++;
			break;
		}
		c->st.tool_calls++;
		remember_call(k, m);
		break;
	case LG_W_GATE: {
		char target[512];
		int err;

		c->st.gates++;
		if (*m->call_to) {
			send_verdict(k->fd, m->seq, (uint32_t)on_a2a(c, k, m),
				     NULL);
			break;
		}
		/* HTTP results carry their call; JSON-RPC ones are paired. */
		if (m->proto != LG_P_HTTP)
			remember_call(k, m);
		if (LG_WIRE_HAS(m, LG_T_OP) && m->op == LG_OP_TOOL_DELETE)
			err = lg_session_gate(c->s, k->pid, exe, m->tool,
					      gate_target(c, m, target,
							  sizeof(target)));
		else /* any call waits, so none leaves a blocked session */
			err = lg_session_refusal(c->s);
		send_verdict(k->fd, m->seq, (uint32_t)err, NULL);
		break;
	}
	case LG_W_TOOL_RESULT: {
		char digest[LG_DIGEST_HEX], canon[ARGS_KEEP + 256];
		char args_pv[160], result_pv[160];
		const char *tool, *args, *raw;
		struct pending *p = NULL;
		bool decision;

		if (a2a_done(c, k, m->chan))
			break; /* a return, not a tool's work */
		if (LG_WIRE_HAS(m, LG_T_TOOL)) {
			/* A whole call in one frame: args by digest (HTTP). */
			tool = m->tool;
			decision = m->decision == 1;
			lg_digest_hex(m->args_digest, canon);
			args = canon;
			raw = m->args ? (const char *)m->args : "";
			snprintf(result_pv, sizeof(result_pv), "%.*s",
				 (int)(m->args_len < 100 ? m->args_len : 100),
				 raw);
			lg_preview(result_pv, args_pv, sizeof(args_pv), 80);
		} else {
			p = find_call(k, m->chan, true);
			if (!p)
				break;
			tool = p->tool;
			decision = p->decision;
			/* Same arguments however the agent spelled them. */
			args = lg_canon_call(tool, p->args, strlen(p->args),
					     lg_session_ignore_keys(c->s),
					     canon, sizeof(canon)) >= 0 ?
				       canon :
				       p->args;
			lg_preview(args, args_pv, sizeof(args_pv), 80);
		}
		lg_digest_hex(m->digest, digest);
		lg_preview(m->preview, result_pv, sizeof(result_pv), 80);
		if (decision) /* a process is one stream of calls */
			lg_session_tool_done(c->s, k->pid, exe, tool, args,
					     digest, args_pv, result_pv,
					     (uint64_t)k->pid);
		else
			lg_session_observed(c->s, k->pid, exe, m->proto, tool,
					    args_pv, result_pv);
		break;
	}
	case LG_W_DROPS:
		c->st.dropped += m->count;
		break;
	case LG_W_ENTER:
		on_enter(c, epfd, k, m);
		break;
	default:
		break;
	}
}

static void ring_list_add(struct lg_control *c, int fd)
{
	if (c->nrings == c->rings_cap) {
		size_t cap = c->rings_cap ? 2 * c->rings_cap : 64;
		int *p = realloc(c->ring_fds, cap * sizeof(*p));

		if (!p)
			return;
		c->ring_fds = p;
		c->rings_cap = cap;
	}
	c->ring_fds[c->nrings++] = fd;
}

static void ring_list_del(struct lg_control *c, int fd)
{
	for (size_t i = 0; i < c->nrings; i++)
		if (c->ring_fds[i] == fd) {
			c->ring_fds[i] = c->ring_fds[--c->nrings];
			return;
		}
}

/*
 * The shim's ring, if it is what the protocol says: a memfd of exactly
 * LG_RING_BYTES that cannot shrink (or a read past its end would kill
 * lgrun with SIGBUS). NULL otherwise: the process then uses its socket.
 */
static struct lg_ring *map_ring(int fd)
{
	struct stat st;
	int seals = fcntl(fd, F_GET_SEALS);
	struct lg_ring *r;

	if (fstat(fd, &st) < 0 || st.st_size != (off_t)LG_RING_BYTES ||
	    seals < 0 || !(seals & F_SEAL_SHRINK))
		return NULL;
	r = mmap(NULL, LG_RING_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 0);
	if (r == MAP_FAILED)
		return NULL;
	if (r->magic != LG_RING_MAGIC || r->size != LG_RING_DATA) {
		munmap(r, LG_RING_BYTES);
		return NULL;
	}
	return r;
}

/*
 * Reads what k's ring holds. Every frame is copied out and validated like
 * a socket's; a ring that breaks the protocol is dropped with its
 * connection. Returns the frames read.
 */
static unsigned drain(struct lg_control *c, int epfd, struct conn *k)
{
	static char scratch[LG_WIRE_MAX];
	unsigned char buf[LG_WIRE_MAX];
	struct lg_ring *r = k->ring;
	unsigned frames = 0;

	while (r) {
		uint32_t head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
		uint32_t tail = __atomic_load_n(&r->tail, __ATOMIC_RELAXED);
		uint32_t avail = head - tail, n;
		struct lg_wire_hdr h;
		struct lg_wire_msg m;

		if (!avail)
			break;
		if (avail > LG_RING_DATA || avail < LG_WIRE_HDR_SIZE)
			goto bad;
		lg_ring_get(r, tail, &h, sizeof(h));
		n = (uint32_t)LG_WIRE_HDR_SIZE + h.len;
		if (h.len > LG_WIRE_MAX || n > LG_WIRE_MAX || n > avail)
			goto bad;
		lg_ring_get(r, tail, buf, n);
		__atomic_store_n(&r->tail, tail + n, __ATOMIC_RELEASE);
		c->st.frames++;
		frames++;
		/* events only: what needs an answer comes on the socket */
		if (lg_wire_decode(buf, n, &m, scratch, sizeof(scratch)) < 0 ||
		    m.type == LG_W_HELLO || m.type == LG_W_GATE ||
		    m.type == LG_W_ENTER || m.type == LG_W_RING)
			goto bad;
		on_frame(c, epfd, k, &m);
	}
	return frames;
bad:
	c->st.malformed++;
	lg_dbg("control: pid %d broke its ring: dropped", k->pid);
	__atomic_store_n(&k->ring->closed, 1, __ATOMIC_SEQ_CST);
	munmap(k->ring, LG_RING_BYTES);
	k->ring = NULL;
	ring_list_del(c, k->fd);
	drop_conn(c, epfd, k->fd);
	return frames;
}

/* Events flow: drain every ring on a 1 ms tick, no doorbells meanwhile. */
static void set_sleeping(struct lg_control *c, uint32_t v)
{
	for (size_t i = 0; i < c->nrings; i++) {
		struct conn *k = c->conns[c->ring_fds[i]];

		if (k && k->ring)
			__atomic_store_n(&k->ring->sleeping, v,
					 __ATOMIC_SEQ_CST);
	}
}

static void rings_wake(struct lg_control *c)
{
	c->rings_idle = 0;
	if (c->rings_awake)
		return;
	c->rings_awake = true;
	c->rings_next_ms = lg_mono_ms() + 1;
	set_sleeping(c, 0);
}

/* Drains every ring; returns the frames read. */
static unsigned drain_all(struct lg_control *c, int epfd)
{
	unsigned got = 0;

	/* backwards: a dropped connection moves the last one into its slot */
	for (size_t i = c->nrings; i-- > 0;) {
		if (i >= c->nrings)
			continue;
		struct conn *k = c->conns[c->ring_fds[i]];

		if (k && k->ring)
			got += drain(c, epfd, k);
	}
	return got;
}

uint64_t lg_control_next_deadline(const struct lg_control *c)
{
	return c && c->rings_awake ? c->rings_next_ms : 0;
}

void lg_control_tick(struct lg_control *c, int epfd)
{
	unsigned got = 0;

	if (!c || !c->rings_awake || lg_mono_ms() < c->rings_next_ms)
		return;
	got = drain_all(c, epfd);
	if (got) {
		c->rings_idle = 0;
	} else if (++c->rings_idle >= 3) {
		/*
		 * Quiet: producers ring from now on. A frame written before
		 * they could see the flag is caught by draining once more.
		 */
		set_sleeping(c, 1);
		got = drain_all(c, epfd);
		if (!got) {
			c->rings_awake = false;
			return;
		}
		c->rings_awake = false;
		rings_wake(c);
		return;
	}
	c->rings_next_ms = lg_mono_ms() + 1;
}

bool lg_control_handle(struct lg_control *c, int epfd, int fd)
{
	static char scratch[LG_WIRE_MAX];
	unsigned char buf[LG_WIRE_MAX + 1];
	struct lg_wire_msg m;
	struct conn *k;

	if (fd == c->lfd) {
		lg_control_accept(c, epfd);
		return true;
	}
	if (fd < 0 || fd >= MAX_CONNS)
		return false;
	if (!(k = c->conns[fd]))
		return on_pidfd(c, epfd, fd);
	/* what waits in its ring came before anything on its socket */
	if (k->ring && drain(c, epfd, k))
		rings_wake(c);
	if (!c->conns[fd])
		return true; /* a malformed ring dropped it */
	for (;;) {
		union {
			char b[CMSG_SPACE(sizeof(int))];
			struct cmsghdr align;
		} u;
		struct iovec iov = { buf, sizeof(buf) };
		struct msghdr mh = { .msg_iov = &iov,
				     .msg_iovlen = 1,
				     .msg_control = u.b,
				     .msg_controllen = sizeof(u.b) };
		ssize_t n = recvmsg(fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		int r, rfd = -1;

		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return true;
		if (n <= 0) {
			drop_conn(c, epfd, fd);
			return true;
		}
		for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm;
		     cm = CMSG_NXTHDR(&mh, cm))
			if (cm->cmsg_level == SOL_SOCKET &&
			    cm->cmsg_type == SCM_RIGHTS &&
			    cm->cmsg_len >= CMSG_LEN(sizeof(int)))
				memcpy(&rfd, CMSG_DATA(cm), sizeof(int));
		c->st.frames++;
		r = lg_wire_decode(buf, (size_t)n, &m, scratch,
				   sizeof(scratch));
		/* The first frame must be the hello, and from the peer itself. */
		if (r == 0 && !k->hello &&
		    (m.type != LG_W_HELLO || (pid_t)m.pid != k->pid))
			r = -EPROTO;
		if (rfd >= 0) { /* only a first hello may bring its ring */
			if (r == 0 && m.type == LG_W_HELLO && !k->hello &&
			    !k->ring) {
				k->ring = map_ring(rfd);
				if (k->ring)
					ring_list_add(c, fd);
			}
			close(rfd);
		}
		if (r == 0 && m.type == LG_W_RING) {
			if (k->ring && drain(c, epfd, k))
				rings_wake(c);
			if (!c->conns[fd])
				return true;
			continue;
		}
		if (r < 0) {
			c->st.malformed++;
			lg_dbg("control: dropped a malformed frame from pid %d: %s",
			       k->pid, strerror(-r));
			drop_conn(c, epfd, fd);
			return true;
		}
		on_frame(c, epfd, k, &m);
	}
}
