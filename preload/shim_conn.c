// SPDX-License-Identifier: MIT
/*
 * What every hook shares: the real functions and the settings (filled at
 * start-up, shim.c), the re-entry guard, and the connection to the
 * supervisor: the hello, the ring, emit and gate. Below the hooks and
 * shim.c, which call it.
 */
#include "shim_int.h"

struct shim_real real;

bool active; /* off in setuid programs and without a socket */
char sock_path[108];
const char *gate_tools = DEFAULT_GATE_TOOLS;
/*
 * Which traffic is an agent's decision (judged by the guard) rather than the
 * routine of a program it runs (observed only): MCP tools/call always, HTTP
 * to the endpoints the config declares as tools, everything with judge_all.
 */
const char *tool_endpoints; /* LGRUN_TOOL_ENDPOINTS */
bool endpoints_peer; /* a pattern names a host or port */
bool judge_all; /* LGRUN_JUDGE_ALL=1 */
uint16_t proxy_port; /* lgrun's LLM proxy, from LGRUN_PROXY_PORT */
atomic_int conn_fd = -1;
ino_t conn_ino;
/* this process's ring (see wire.h), or NULL: events go on the socket */
struct lg_ring *ring;
atomic_flag ring_busy = ATOMIC_FLAG_INIT; /* one writer at a time */
atomic_uint_fast64_t dropped;
atomic_int outstanding; /* calls waiting for their result */
atomic_bool had_failure; /* successes matter only after a failure */
pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
uint32_t gate_seq;
unsigned char fd_kind[FD_TRACK]; /* 0 unknown, 1 socket/pipe, 2 other */
uint32_t gen = 1;
__thread int in_shim __attribute__((tls_model("initial-exec")));

static bool fd_is_ours(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode) &&
	       st.st_ino == conn_ino;
}

static void send_raw(int fd, const void *p, size_t n)
{
	if (syscall(SYS_sendto, fd, p, n, MSG_DONTWAIT | MSG_NOSIGNAL, NULL,
		    0) < 0)
		atomic_fetch_add(&dropped, 1);
}

/*
 * A new ring in a sealed memfd (it cannot shrink under the supervisor),
 * mapped here; its fd travels with the hello. -1: none (socket only).
 */
static int make_ring(struct lg_ring **out)
{
	int fd = (int)syscall(SYS_memfd_create, "lgshim-ring",
			      MFD_CLOEXEC | MFD_ALLOW_SEALING);
	void *m;

	*out = NULL;
	if (fd < 0)
		return -1;
	if (syscall(SYS_fallocate, fd, 0, 0, (long)LG_RING_BYTES) < 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) < 0) {
		syscall(SYS_close, fd);
		return -1;
	}
	m = (void *)syscall(SYS_mmap, NULL, (long)LG_RING_BYTES,
			    PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		syscall(SYS_close, fd);
		return -1;
	}
	*out = m;
	(*out)->magic = LG_RING_MAGIC;
	(*out)->size = LG_RING_DATA;
	__atomic_store_n(&(*out)->sleeping, 1, __ATOMIC_SEQ_CST);
	return fd;
}

/* The hello, with the ring's fd when there is one. */
static int send_hello(int fd, struct lg_wire_buf *w)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { w->b, w->n };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct lg_ring *r = NULL;
	int rfd = make_ring(&r), ret;

	if (rfd >= 0) {
		struct cmsghdr *c;

		mh.msg_control = u.buf;
		mh.msg_controllen = sizeof(u.buf);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &rfd, sizeof(int));
	}
	ret = syscall(SYS_sendmsg, fd, &mh, MSG_NOSIGNAL) < 0 ? -1 : 0;
	if (rfd >= 0)
		syscall(SYS_close, rfd);
	if (ret == 0 && r) {
		struct lg_ring *old;

		while (atomic_flag_test_and_set(&ring_busy))
			; /* a writer of the old ring finishes first */
		old = ring;
		ring = r;
		atomic_flag_clear(&ring_busy);
		if (old)
			syscall(SYS_munmap, old, LG_RING_BYTES);
	} else if (r) {
		syscall(SYS_munmap, r, LG_RING_BYTES);
	}
	return ret;
}

static int connect_supervisor(void)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	struct lg_wire_buf w;
	char exe[256];
	struct stat st;
	ssize_t n;
	int fd, hi;

	fd = (int)syscall(SYS_socket, AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC,
			  0);
	if (fd < 0)
		return -1;
	strcpy(a.sun_path, sock_path);
	if (syscall(SYS_connect, fd, &a, sizeof(a)) < 0) {
		syscall(SYS_close, fd);
		return -1;
	}
	hi = fcntl(fd, F_DUPFD_CLOEXEC, SHIM_FD_MIN);
	if (hi >= 0) {
		syscall(SYS_close, fd);
		fd = hi;
	}
	if (fstat(fd, &st) < 0) {
		syscall(SYS_close, fd);
		return -1;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	{
		/* which image said hello: one exec'd after this did not */
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		lg_wire_hello(&w, (uint32_t)getpid(), (uint32_t)getppid(), exe,
			      (uint64_t)ts.tv_sec * 1000000000ULL +
				      (uint64_t)ts.tv_nsec);
	}
	if (send_hello(fd, &w) < 0) {
		syscall(SYS_close, fd);
		return -1;
	}
	conn_ino = st.st_ino;
	return fd;
}

/* Our connection, (re)made when it is missing or was closed under us. */
int conn(void)
{
	int fd = atomic_load(&conn_fd);

	if (fd >= 0 && fd_is_ours(fd))
		return fd;
	fd = connect_supervisor();
	if (fd >= 0) {
		int old = -1;

		if (!atomic_compare_exchange_strong(&conn_fd, &old, fd)) {
			/* another thread won; keep its connection */
			if (old >= 0 && fd_is_ours(old)) {
				syscall(SYS_close, fd);
				return old;
			}
			atomic_store(&conn_fd, fd);
		}
	}
	return fd;
}

/*
 * Appends a finished frame to the ring: true when it is there (and the
 * supervisor was rung if it sleeps). False: full or busy, send it instead.
 */
static bool ring_put(const struct lg_wire_buf *w)
{
	struct lg_ring *r = ring;
	uint32_t head, tail;

	/* closed: lgrun let go of our connection; conn() makes a new one */
	if (!r || __atomic_load_n(&r->closed, __ATOMIC_ACQUIRE) ||
	    atomic_flag_test_and_set(&ring_busy))
		return false;
	head = __atomic_load_n(&r->head, __ATOMIC_RELAXED);
	tail = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
	if (head - tail > LG_RING_DATA || LG_RING_DATA - (head - tail) < w->n) {
		atomic_flag_clear(&ring_busy);
		return false;
	}
	lg_ring_put(r, head, w->b, (uint32_t)w->n);
	__atomic_store_n(&r->head, head + (uint32_t)w->n, __ATOMIC_SEQ_CST);
	atomic_flag_clear(&ring_busy);
	if (__atomic_load_n(&r->sleeping, __ATOMIC_SEQ_CST) &&
	    __atomic_exchange_n(&r->sleeping, 0, __ATOMIC_SEQ_CST)) {
		struct lg_wire_buf bell;
		int fd = conn();

		lg_wire_start(&bell, LG_W_RING, 0);
		lg_wire_finish(&bell);
		if (fd >= 0)
			send_raw(fd, bell.b, bell.n);
	}
	return true;
}

void emit(struct lg_wire_buf *w)
{
	int fd;
	uint64_t d;

	/* the ring needs no syscall: the socket is checked when rung */
	if (ring && !atomic_load(&dropped)) {
		lg_wire_finish(w);
		if (ring_put(w))
			return;
	}
	fd = conn();
	if (fd < 0)
		return;
	d = atomic_exchange(&dropped, 0);
	if (d) {
		struct lg_wire_buf dw;

		lg_wire_start(&dw, LG_W_DROPS, 0);
		lg_wire_put_u64(&dw, LG_T_COUNT, d);
		lg_wire_finish(&dw);
		send_raw(fd, dw.b, dw.n);
	}
	lg_wire_finish(w);
	send_raw(fd, w->b, w->n);
}

/*
 * Asks the supervisor about a destructive call; 0 = go, else an errno.
 * Fails open only when there is no supervisor to ask (seccomp still
 * guards file operations); a supervisor that does not answer in time refuses.
 */
int gate(struct lg_wire_buf *w)
{
	struct lg_wire_hdr h;
	unsigned char buf[LG_WIRE_MAX];
	uint32_t seq, verdict = EPERM;
	int fd, r = 0;

	pthread_mutex_lock(&gate_lock);
	fd = conn();
	if (fd < 0)
		goto out;
	seq = ++gate_seq;
	memcpy(w->b + offsetof(struct lg_wire_hdr, seq), &seq, sizeof(seq));
	lg_wire_finish(w);
	if (syscall(SYS_sendto, fd, w->b, w->n, MSG_NOSIGNAL, NULL, 0) < 0) {
		r = ECONNRESET;
		goto out;
	}
	for (;;) {
		struct pollfd pfd = { fd, POLLIN, 0 };
		ssize_t n;

		if (poll(&pfd, 1, GATE_TIMEOUT_MS) <= 0) {
			r = ETIMEDOUT;
			break;
		}
		n = syscall(SYS_recvfrom, fd, buf, sizeof(buf), 0, NULL, NULL);
		if (n < (ssize_t)sizeof(h)) {
			r = ECONNRESET;
			break;
		}
		memcpy(&h, buf, sizeof(h));
		if (h.type != LG_W_VERDICT || h.seq != seq)
			continue;
		/* The verdict is one u32 field right after the header. */
		if (n >= (ssize_t)(sizeof(h) + 3 + 4))
			memcpy(&verdict, buf + sizeof(h) + 3, 4);
		r = (int)verdict;
		break;
	}
out:
	pthread_mutex_unlock(&gate_lock);
	return r;
}

bool enter(void)
{
	ensure();
	if (!active || in_shim)
		return false;
	in_shim = 1;
	return true;
}

void leave(void)
{
	in_shim = 0;
}

/* The peer's address ("127.0.0.1", "::1", "unix") and port. */
void peer_of(int fd, char *host, size_t size, unsigned *port)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	*port = 0;
	if (getpeername(fd, (struct sockaddr *)&ss, &sl) == 0) {
		if (ss.ss_family == AF_INET) {
			struct sockaddr_in *a = (struct sockaddr_in *)&ss;

			inet_ntop(AF_INET, &a->sin_addr, host, (socklen_t)size);
			*port = ntohs(a->sin_port);
		} else if (ss.ss_family == AF_INET6) {
			struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;

			inet_ntop(AF_INET6, &a->sin6_addr, host,
				  (socklen_t)size);
			*port = ntohs(a->sin6_port);
		} else if (ss.ss_family == AF_UNIX) {
			snprintf(host, size, "unix");
		}
	}
}
