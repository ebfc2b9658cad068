// SPDX-License-Identifier: MIT
#include "control_int.h"
#include <signal.h>

#include "tree/cgroup.h"
#include "lib/fdpass.h"

struct lg_control *lg_control_new(const char *path, const struct lg_sink *sink,
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
	c->sink = *sink;
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
	for (int i = 0; i < c->conns_end; i++) {
		if (c->conns[i]) {
			if (c->conns[i]->ring)
				munmap(c->conns[i]->ring, LG_RING_BYTES);
			close(c->conns[i]->fd);
			free(c->conns[i]->calls);
			/* not counted down: c goes */
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
	for (int i = 0; fn && i < c->conns_end; i++)
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

/* The listener, not watched a while (listen_paused_ms). */
static void listen_pause(struct lg_control *c, int epfd)
{
	struct epoll_event ev = { .events = 0, .data.fd = c->lfd };

	if (c->listen_paused_ms)
		return;
	epoll_ctl(epfd, EPOLL_CTL_MOD, c->lfd, &ev);
	c->listen_paused_ms = lg_mono_ms();
	if (!c->paused_said) {
		c->paused_said = true;
		lg_warn("control: out of file descriptors, and none to refuse a shim connection with: connections wait until one is free");
	}
}

static void listen_again(struct lg_control *c, int epfd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = c->lfd };

	if (!c->listen_paused_ms)
		return;
	c->listen_paused_ms = 0;
	epoll_ctl(epfd, EPOLL_CTL_MOD, c->lfd, &ev);
}

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
	listen_again(c, epfd); /* a descriptor is free again */
	if (fd < MAX_CONNS && c->conns[fd] && c->conns[fd]->refused)
		c->lingering--;
	if (fd < MAX_CONNS) {
		if (c->conns[fd] && c->conns[fd]->calls) {
			free(c->conns[fd]->calls);
			c->mem_used -= MAX_PENDING * sizeof(struct pending);
		}
		free(c->conns[fd]);
		c->conns[fd] = NULL;
	}
}

/* pid has exited (reaped, or a zombie). */
static bool ended(pid_t pid)
{
	char state = 0;
	pid_t ppid;

	if (kill(pid, 0) < 0)
		return errno == ESRCH;
	return lg_proc_stat(pid, &state, &ppid) < 0 || state == 'Z' ||
	       state == 'X';
}

void lg_control_accept(struct lg_control *c, int epfd)
{
	for (;;) {
		int fd = accept4(c->lfd, NULL, NULL,
				 SOCK_CLOEXEC | SOCK_NONBLOCK);
		struct epoll_event ev = { .events = EPOLLIN };
		struct ucred cred;
		socklen_t len = sizeof(cred);

		if (fd < 0 && (errno == EMFILE || errno == ENFILE)) {
			/*
			 * Out of descriptors: the peer would wait in the
			 * backlog and wake us forever. Take it with the
			 * reserve's slot and let it go. The reserve lost to
			 * another thread (the observer's loader takes fds as
			 * it goes): taken again if a slot is free now.
			 */
			if (c->reserve_fd < 0)
				c->reserve_fd =
					open("/dev/null", O_RDONLY | O_CLOEXEC);
			if (c->reserve_fd < 0) {
				listen_pause(c, epfd);
				return;
			}
			close(c->reserve_fd);
			c->reserve_fd = -1;
			fd = accept4(c->lfd, NULL, NULL, SOCK_CLOEXEC);
			/*
			 * accept4 fails with EMFILE before it looks at the
			 * backlog: with nothing waiting, this one found
			 * nothing (EAGAIN), and there is nothing to refuse.
			 */
			if (fd < 0) {
				c->reserve_fd =
					open("/dev/null", O_RDONLY | O_CLOEXEC);
				return;
			}
			/*
			 * Refused: the peer reads its end. Its slot is the
			 * reserve now, never free for another thread to take.
			 */
			shutdown(fd, SHUT_RDWR);
			c->reserve_fd = fd;
			/* said once: a burst would print a line per process */
			if (!c->st.refused++)
				lg_warn("control: out of file descriptors, a shim connection was refused (further ones are counted only: shim_refused in the session's record)");
			continue;
		}
		if (fd < 0)
			return;
		/*
		 * A process of the session, or one that has ended before its
		 * connection was taken (ls, head: a few ms, more on a busy
		 * machine): where it was cannot be read any more, but only a
		 * process given this session's socket connects here, and
		 * what it sent (its hello, its results) is still to be read.
		 */
		if (fd >= MAX_CONNS ||
		    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 ||
		    (cred.uid != getuid() && cred.uid != geteuid() &&
		     geteuid() != 0) ||
		    !(in_session(c, cred.pid) || ended(cred.pid))) {
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
		if (fd >= c->conns_end)
			c->conns_end = fd + 1;
		c->conns[fd]->fd = fd;
		c->conns[fd]->pid = cred.pid;
		ev.data.fd = fd;
		epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
		c->st.accepted++;
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
		ctl_on_frame(c, epfd, k, &m);
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
	uint64_t d = c && c->rings_awake ? c->rings_next_ms : 0;

	if (c && c->listen_paused_ms &&
	    (!d || c->listen_paused_ms + LISTEN_PAUSE_MS < d))
		d = c->listen_paused_ms + LISTEN_PAUSE_MS;
	return d;
}

void lg_control_tick(struct lg_control *c, int epfd)
{
	unsigned got = 0;

	if (c && c->listen_paused_ms &&
	    lg_mono_ms() >= c->listen_paused_ms + LISTEN_PAUSE_MS)
		listen_again(c, epfd);
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
		return ctl_on_pidfd(c, epfd, fd);
	/* what waits in its ring came before anything on its socket */
	if (k->ring && drain(c, epfd, k))
		rings_wake(c);
	if (!c->conns[fd])
		return true; /* a malformed ring dropped it */
	for (;;) {
		int r, rfd;
		ssize_t n =
			lg_recv_fd(fd, buf, sizeof(buf), &rfd, MSG_DONTWAIT);

		if (n == -EAGAIN || n == -EINTR)
			return true;
		if (n <= 0) {
			drop_conn(c, epfd, fd);
			return true;
		}
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
		/*
		 * What the process put in its ring before this frame comes
		 * first, again for every frame: the call's gate answered in
		 * this loop lets the agent read its result (into the ring) and
		 * send its next gate, and that gate must be judged after that
		 * result (a third identical one trips); judged before, a
		 * fourth call went out under load (corpus mcp-repeat).
		 */
		if (k->ring && m.type != LG_W_HELLO) {
			if (drain(c, epfd, k))
				rings_wake(c);
			if (!c->conns[fd])
				return true;
		}
		ctl_on_frame(c, epfd, k, &m);
	}
}

void lg_control_set_memory_cap(struct lg_control *c, uint64_t bytes)
{
	c->mem_cap = bytes;
}
