// SPDX-License-Identifier: MIT
/*
 * liblgshim.so: loaded into every agent process with LD_PRELOAD. It reports
 * the results of file operations and the tool calls it recognises on
 * sockets and pipes to the supervisor, and holds back a destructive tool
 * call until the supervisor says it may go. It never changes what the
 * program sees, except for a refused call.
 *
 * Rules kept everywhere: real functions resolved once; errno saved and
 * restored; a thread-local guard against re-entry; no allocation and no
 * lock on the reporting path (one send() per event, dropped and counted
 * when the socket is full); only the gate blocks, and only for a bounded time.
 */
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <poll.h>
#include <time.h>
#include <unistd.h>

#include "recog.h"
#include "volatile.h"
#include "wire.h"

#define LG_EXPORT __attribute__((visibility("default")))
#define SHIM_FD_MIN 900 /* keep our socket out of the program's way */
#define GATE_TIMEOUT_MS 5000 /* a gate never waits longer than this */
#define FD_TRACK 4096 /* per-fd state for fds below this */
#define DEFAULT_GATE_TOOLS "delete_*,drop_*,truncate_*,remove_*"

/* The ops reported, as enum lg_op of supervisor/event.h. */
enum {
	OP_UNLINK = 1,
	OP_RMDIR = 2,
	OP_TRUNCATE = 3,
	OP_TOOL_DELETE = 6,
	OP_WRITE = 7,
	OP_RENAME = 8
};

static struct {
	int (*unlink)(const char *);
	int (*unlinkat)(int, const char *, int);
	int (*rmdir)(const char *);
	int (*remove)(const char *);
	int (*rename)(const char *, const char *);
	int (*renameat)(int, const char *, int, const char *);
	int (*renameat2)(int, const char *, int, const char *, unsigned);
	int (*truncate)(const char *, off_t);
	int (*ftruncate)(int, off_t);
	int (*open)(const char *, int, ...);
	int (*openat)(int, const char *, int, ...);
	int (*creat)(const char *, mode_t);
	FILE *(*fopen)(const char *, const char *);
	int (*close)(int);
	int (*close_range)(unsigned, unsigned, int);
	int (*dup2)(int, int);
	int (*dup3)(int, int, int);
	ssize_t (*write)(int, const void *, size_t);
	ssize_t (*writev)(int, const struct iovec *, int);
	ssize_t (*send)(int, const void *, size_t, int);
	ssize_t (*sendto)(int, const void *, size_t, int,
			  const struct sockaddr *, socklen_t);
	ssize_t (*sendmsg)(int, const struct msghdr *, int);
	ssize_t (*read)(int, void *, size_t);
	ssize_t (*recv)(int, void *, size_t, int);
	ssize_t (*recvfrom)(int, void *, size_t, int, struct sockaddr *,
			    socklen_t *);
	ssize_t (*readv)(int, const struct iovec *, int);
	ssize_t (*recvmsg)(int, struct msghdr *, int);
	int (*__open_2)(const char *, int);
	int (*__openat_2)(int, const char *, int);
} real;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static bool active; /* off in setuid programs and without a socket */
static char sock_path[108];
static const char *gate_tools = DEFAULT_GATE_TOOLS;
/*
 * Which traffic is an agent's decision (judged by the guard) rather than the
 * routine of a program it runs (observed only): MCP tools/call always, HTTP
 * to the endpoints the config declares as tools, everything with judge_all.
 */
static const char *tool_endpoints; /* LGRUN_TOOL_ENDPOINTS */
static bool endpoints_peer; /* a pattern names a host or port */
static bool judge_all; /* LGRUN_JUDGE_ALL=1 */
/* The ids of the last MCP tools/call requests: their results are masked. */
#define CALL_IDS 16
static uint64_t call_ids[CALL_IDS];
static atomic_uint call_id_next;
static uint16_t proxy_port; /* lgrun's LLM proxy, from LGRUN_PROXY_PORT */
static atomic_int conn_fd = -1;
static ino_t conn_ino;
/* this process's ring (see wire.h), or NULL: events go on the socket */
static struct lg_ring *ring;
static atomic_flag ring_busy = ATOMIC_FLAG_INIT; /* one writer at a time */
static atomic_uint_fast64_t dropped;
static atomic_int outstanding; /* calls waiting for their result */
static atomic_bool had_failure; /* successes matter only after a failure */
static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t gate_seq;
static unsigned char fd_kind[FD_TRACK]; /* 0 unknown, 1 socket/pipe, 2 other */
static unsigned char tls_seen[FD_TRACK]; /* TLS reported on this fd */
static uint32_t http_sent[FD_TRACK], http_seen[FD_TRACK]; /* FIFO pairing */
/*
 * An HTTP request waiting for its response, per connection: the call and
 * its result go to the supervisor as one frame, one wake-up per call.
 */
#define HTTP_TRACK 1024
static struct {
	uint32_t used; /* == gen: in use (a fork makes every entry stale) */
	uint64_t args;
	bool decision; /* a declared tool endpoint's call */
	bool mcp; /* an MCP tools/call in the body: its result is JSON-RPC */
	char tool[96];
	char pv[64];
} http_req[HTTP_TRACK];
/* A response whose headers came without its body: the next read has it. */
static struct {
	uint32_t k;
	uint16_t status;
	uint32_t waiting; /* == gen */
} http_body[FD_TRACK];
static uint32_t gen = 1;
static __thread int in_shim __attribute__((tls_model("initial-exec")));
static atomic_bool inited; /* a plain load on the hot path, not pthread_once */

static void *resolve(const char *name, void *self)
{
	void *f = dlsym(RTLD_NEXT, name);

	/* Resolving to ourselves would recurse forever: refuse loudly. */
	if (f && f == self) {
		static const char m[] = "lgshim: a symbol resolves to itself\n";

		syscall(SYS_write, 2, m, sizeof(m) - 1);
		abort();
	}
	return f;
}

static int conn(void);
LG_EXPORT int __open_2(const char *p, int flags);
LG_EXPORT int __openat_2(int d, const char *p, int flags);
LG_EXPORT int __open64_2(const char *p, int flags);
LG_EXPORT int __openat64_2(int d, const char *p, int flags);

static void after_fork_child(void)
{
	int fd = atomic_exchange(&conn_fd, -1);

	/* The parent's connection is not ours: say hello on our own. */
	if (fd >= 0 && real.close)
		real.close(fd);
	/* nor its ring: ours comes with our hello */
	if (ring)
		syscall(SYS_munmap, ring, LG_RING_BYTES);
	ring = NULL;
	atomic_flag_clear(&ring_busy);
	pthread_mutex_init(&gate_lock, NULL);
	atomic_store(&outstanding, 0);
	/* The parent's pending calls are not ours; no page touched. */
	gen++;
	if (active)
		conn(); /* say hello now: the supervisor knows every process */
}

static void init(void)
{
	const char *p = getenv(LG_WIRE_ENV_SOCK);
	const char *g = getenv("LGRUN_GATE_TOOLS");

#define R(name) real.name = resolve(#name, (void *)name)
	R(unlink);
	R(unlinkat);
	R(rmdir);
	R(remove);
	R(rename);
	R(renameat);
	R(renameat2);
	R(truncate);
	R(ftruncate);
	R(open);
	R(openat);
	R(creat);
	R(fopen);
	R(close);
	R(close_range);
	R(dup2);
	R(dup3);
	R(write);
	R(writev);
	R(send);
	R(sendto);
	R(sendmsg);
	R(read);
	R(recv);
	R(recvfrom);
	R(readv);
	R(recvmsg);
	R(__open_2);
	R(__openat_2);
#undef R
	if (g && *g)
		gate_tools = g;
	tool_endpoints = getenv("LGRUN_TOOL_ENDPOINTS");
	if (tool_endpoints && !*tool_endpoints)
		tool_endpoints = NULL;
	endpoints_peer = lg_recog_endpoints_need_peer(tool_endpoints);
	judge_all = getenv("LGRUN_JUDGE_ALL") &&
		    strcmp(getenv("LGRUN_JUDGE_ALL"), "1") == 0;
	if (getenv("LGRUN_PROXY_PORT"))
		proxy_port = (uint16_t)atoi(getenv("LGRUN_PROXY_PORT"));
	/* Never act in a setuid/setgid program, nor without a supervisor. */
	if (getauxval(AT_SECURE) || !p || !*p || strlen(p) >= sizeof(sock_path))
		return;
	strcpy(sock_path, p);
	pthread_atfork(NULL, NULL, after_fork_child);
	active = true;
	conn(); /* hello at start, not at the first event */
}

static inline void ensure(void)
{
	if (__builtin_expect(
		    !atomic_load_explicit(&inited, memory_order_acquire), 0)) {
		pthread_once(&once, init);
		atomic_store_explicit(&inited, true, memory_order_release);
	}
}

__attribute__((constructor)) static void shim_ctor(void)
{
	ensure();
}

static void emit(struct lg_wire_buf *w);

/* Drops counted since the last event would otherwise never be told. */
__attribute__((destructor)) static void shim_dtor(void)
{
	struct lg_wire_buf w;

	if (!active || !atomic_load(&dropped) || atomic_load(&conn_fd) < 0)
		return;
	lg_wire_start(&w, LG_W_DROPS, 0);
	lg_wire_put_u64(&w, LG_T_COUNT, atomic_exchange(&dropped, 0));
	emit(&w);
}

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
	lg_wire_start(&w, LG_W_HELLO, 0);
	lg_wire_put_u32(&w, LG_T_PID, (uint32_t)getpid());
	lg_wire_put_u32(&w, LG_T_PPID, (uint32_t)getppid());
	lg_wire_put_str(&w, LG_T_EXE, exe);
	{
		/* which image said hello: one exec'd after this did not */
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		lg_wire_put_u64(&w, LG_T_TIME,
				(uint64_t)ts.tv_sec * 1000000000ULL +
					(uint64_t)ts.tv_nsec);
	}
	lg_wire_finish(&w);
	if (send_hello(fd, &w) < 0) {
		syscall(SYS_close, fd);
		return -1;
	}
	conn_ino = st.st_ino;
	return fd;
}

/* Our connection, (re)made when it is missing or was closed under us. */
static int conn(void)
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

static void emit(struct lg_wire_buf *w)
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
static int gate(struct lg_wire_buf *w)
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

static bool enter(void)
{
	ensure();
	if (!active || in_shim)
		return false;
	in_shim = 1;
	return true;
}

static void leave(void)
{
	in_shim = 0;
}

/* --- file operations: results only --------------------------------- */

/*
 * Failures that say something about the agent's work: not devices and
 * pseudo-files (a shell probing /dev/tty), not lock contention (EEXIST from
 * O_EXCL), not would-block or interrupted calls.
 */
static bool telling(const char *path, int err)
{
	if (!strncmp(path, "/dev/", 5) || !strncmp(path, "/proc/", 6) ||
	    !strncmp(path, "/sys/", 5))
		return false;
	switch (err) {
	case EEXIST:
	case EAGAIN:
	case EINTR:
	case ENXIO:
	case ENODEV:
	case ETXTBSY:
		return false;
	default:
		return true;
	}
}

static void report_op(int op, int dirfd, const char *path, int ret, int err)
{
	char abs[4096];
	struct lg_wire_buf w;

	if (!path || (ret != 0 && !telling(path, err)))
		return;
	if (ret == 0 && !atomic_load(&had_failure))
		return; /* a success only matters to a path that failed */
	if (ret != 0)
		atomic_store(&had_failure, true);
	if (path[0] != '/') {
		char base[4096];
		ssize_t n;

		if (dirfd == AT_FDCWD) {
			if (!getcwd(base, sizeof(base)))
				return;
		} else {
			char l[64];

			snprintf(l, sizeof(l), "/proc/self/fd/%d", dirfd);
			n = readlink(l, base, sizeof(base) - 1);
			if (n <= 0)
				return;
			base[n] = '\0';
		}
		if (snprintf(abs, sizeof(abs), "%s/%s", base, path) >=
		    (int)sizeof(abs))
			return;
		path = abs;
	}
	lg_wire_start(&w, LG_W_OP_RESULT, 0);
	lg_wire_put_u32(&w, LG_T_OP, (uint32_t)op);
	lg_wire_put_str(&w, LG_T_PATH, path);
	lg_wire_put_u32(&w, LG_T_RESULT, ret == 0 ? 0u : (uint32_t)err);
	emit(&w);
}

#define FILE_HOOK(ret_t, name, params, call, op, dirfd, path)           \
	LG_EXPORT ret_t name params                                     \
	{                                                               \
		ret_t r;                                                \
		int e;                                                  \
		bool on = enter();                                      \
                                                                        \
		if (!real.name) {                                       \
			if (on)                                         \
				leave();                                \
			errno = ENOSYS;                                 \
			return -1;                                      \
		}                                                       \
		r = real.call;                                          \
		e = errno;                                              \
		if (on) {                                               \
			report_op(op, dirfd, path, r == 0 ? 0 : -1, e); \
			leave();                                        \
		}                                                       \
		errno = e;                                              \
		return r;                                               \
	}

FILE_HOOK(int, unlink, (const char *p), unlink(p), OP_UNLINK, AT_FDCWD, p)
FILE_HOOK(int, rmdir, (const char *p), rmdir(p), OP_RMDIR, AT_FDCWD, p)
FILE_HOOK(int, remove, (const char *p), remove(p), OP_UNLINK, AT_FDCWD, p)
FILE_HOOK(int, unlinkat, (int d, const char *p, int f), unlinkat(d, p, f),
	  (f & AT_REMOVEDIR) ? OP_RMDIR : OP_UNLINK, d, p)
FILE_HOOK(int, rename, (const char *a, const char *b), rename(a, b), OP_RENAME,
	  AT_FDCWD, a)
FILE_HOOK(int, renameat, (int da, const char *a, int db, const char *b),
	  renameat(da, a, db, b), OP_RENAME, da, a)
FILE_HOOK(int, renameat2,
	  (int da, const char *a, int db, const char *b, unsigned f),
	  renameat2(da, a, db, b, f), OP_RENAME, da, a)
FILE_HOOK(int, truncate, (const char *p, off_t l), truncate(p, l), OP_TRUNCATE,
	  AT_FDCWD, p)

LG_EXPORT int truncate64(const char *p, off_t l)
	__attribute__((alias("truncate")));

static bool writes(int flags)
{
	return (flags & O_ACCMODE) != O_RDONLY || (flags & (O_CREAT | O_TRUNC));
}

static void report_open(int dirfd, const char *path, int flags, int r, int e)
{
	if (writes(flags))
		report_op(OP_WRITE, dirfd, path, r >= 0 ? 0 : -1, e);
}

#define OPEN_MODE(flags, mode)                         \
	do {                                           \
		if ((flags) & (O_CREAT | O_TMPFILE)) { \
			va_list ap;                    \
			va_start(ap, flags);           \
			mode = va_arg(ap, int);        \
			va_end(ap);                    \
		}                                      \
	} while (0)

/* After any open: report it, forget what the fd number was, errno kept. */
static int after_open(bool on, int d, const char *p, int flags, int r)
{
	int e = errno;

	if (on) {
		report_open(d, p, flags, r, e);
		leave();
	}
	if (r >= 0 && r < FD_TRACK)
		fd_kind[r] = 0;
	errno = e;
	return r;
}

LG_EXPORT int open(const char *p, int flags, ...)
{
	bool on = enter();
	int mode = 0, r;

	OPEN_MODE(flags, mode);
	r = real.open ? real.open(p, flags, mode) : (errno = ENOSYS, -1);
	return after_open(on, AT_FDCWD, p, flags, r);
}

LG_EXPORT int open64(const char *p, int flags, ...)
	__attribute__((alias("open")));

LG_EXPORT int openat(int d, const char *p, int flags, ...)
{
	bool on = enter();
	int mode = 0, r;

	OPEN_MODE(flags, mode);
	r = real.openat ? real.openat(d, p, flags, mode) : (errno = ENOSYS, -1);
	return after_open(on, d, p, flags, r);
}

LG_EXPORT int openat64(int d, const char *p, int flags, ...)
	__attribute__((alias("openat")));

LG_EXPORT int creat(const char *p, mode_t m)
{
	bool on = enter();
	int r, e;

	r = real.creat ? real.creat(p, m) : (errno = ENOSYS, -1);
	e = errno;
	if (on) {
		report_open(AT_FDCWD, p, O_WRONLY | O_CREAT | O_TRUNC, r, e);
		leave();
	}
	errno = e;
	return r;
}

LG_EXPORT int creat64(const char *p, mode_t m) __attribute__((alias("creat")));

LG_EXPORT FILE *fopen(const char *p, const char *mode)
{
	bool on = enter();
	FILE *f;
	int e;

	f = real.fopen ? real.fopen(p, mode) : (errno = ENOSYS, NULL);
	e = errno;
	if (on) {
		if (mode && (strchr(mode, 'w') || strchr(mode, 'a') ||
			     strchr(mode, '+')))
			report_op(OP_WRITE, AT_FDCWD, p, f ? 0 : -1, e);
		leave();
	}
	errno = e;
	return f;
}

LG_EXPORT FILE *fopen64(const char *p, const char *mode)
	__attribute__((alias("fopen")));

LG_EXPORT int ftruncate(int fd, off_t len)
{
	int r, e;

	ensure();
	r = real.ftruncate ? real.ftruncate(fd, len) : (errno = ENOSYS, -1);
	e = errno;
	if (r != 0 && active && !in_shim) {
		char l[64], path[4096];
		ssize_t n;

		in_shim = 1;
		snprintf(l, sizeof(l), "/proc/self/fd/%d", fd);
		n = readlink(l, path, sizeof(path) - 1);
		if (n > 0) {
			path[n] = '\0';
			report_op(OP_TRUNCATE, AT_FDCWD, path, -1, e);
		}
		in_shim = 0;
	}
	errno = e;
	return r;
}

LG_EXPORT int ftruncate64(int fd, off_t len)
	__attribute__((alias("ftruncate")));

/* --- descriptors: keep our socket ours --------------------------------- */

static void forget_fd(int fd)
{
	if (fd >= 0 && fd < FD_TRACK) {
		fd_kind[fd] = 0;
		http_sent[fd] = http_seen[fd] = 0;
		http_body[fd].waiting = 0;
		tls_seen[fd] = 0;
	}
	if (fd >= 0 && fd < HTTP_TRACK)
		http_req[fd].used = 0;
}

LG_EXPORT int close(int fd)
{
	int e, r;

	ensure();
	/* Closing our socket (close_fds loops) just means reconnecting later. */
	if (fd >= 0 && fd == atomic_load(&conn_fd))
		atomic_store(&conn_fd, -1);
	forget_fd(fd);
	r = real.close ? real.close(fd) : (int)syscall(SYS_close, fd);
	e = errno;
	errno = e;
	return r;
}

LG_EXPORT int close_range(unsigned lo, unsigned hi, int flags)
{
	int c = atomic_load(&conn_fd);

	ensure();
	if (c >= 0 && (unsigned)c >= lo && (unsigned)c <= hi &&
	    !(flags & CLOSE_RANGE_CLOEXEC))
		atomic_store(&conn_fd, -1);
	for (unsigned fd = lo; fd <= hi && fd < FD_TRACK; fd++)
		forget_fd((int)fd);
	if (real.close_range)
		return real.close_range(lo, hi, flags);
	return (int)syscall(SYS_close_range, lo, hi, flags);
}

LG_EXPORT int dup2(int a, int b)
{
	ensure();
	if (b == atomic_load(&conn_fd))
		atomic_store(&conn_fd, -1);
	forget_fd(b);
	return real.dup2 ? real.dup2(a, b) : (int)syscall(SYS_dup2, a, b);
}

LG_EXPORT int dup3(int a, int b, int f)
{
	ensure();
	if (b == atomic_load(&conn_fd))
		atomic_store(&conn_fd, -1);
	forget_fd(b);
	return real.dup3 ? real.dup3(a, b, f) : (int)syscall(SYS_dup3, a, b, f);
}

/* --- tool traffic -------------------------------------------------------- */

/* Sockets and pipes carry tool traffic; files and ttys never do. */
static bool channel(int fd)
{
	struct stat st;
	unsigned char k;

	if (fd < 0)
		return false;
	if (fd < FD_TRACK && (k = fd_kind[fd]))
		return k == 1;
	if (fstat(fd, &st) < 0)
		return false;
	k = (S_ISSOCK(st.st_mode) || S_ISFIFO(st.st_mode)) ? 1 : 2;
	/*
	 * The agent's model traffic to lgrun's own LLM proxy is seen there,
	 * in full: reporting it here too would count every turn twice.
	 */
	if (k == 1 && proxy_port && S_ISSOCK(st.st_mode)) {
		struct sockaddr_in a;
		socklen_t al = sizeof(a);

		if (getpeername(fd, (struct sockaddr *)&a, &al) == 0 &&
		    a.sin_family == AF_INET &&
		    ntohs(a.sin_port) == proxy_port &&
		    ntohl(a.sin_addr.s_addr) == INADDR_LOOPBACK)
			k = 2;
	}
	if (fd < FD_TRACK)
		fd_kind[fd] = k;
	return k == 1;
}

static void put_span(struct lg_wire_buf *w, uint8_t tag, struct lg_span s,
		     size_t max)
{
	lg_wire_put(w, tag, s.p, s.n < max ? s.n : max);
}

/* A2A (agent-to-agent) JSON-RPC methods that hand work to another agent. */
static bool a2a_method(struct lg_span m)
{
	static const char *const names[] = { "message/send", "message/stream",
					     "tasks/send",
					     "tasks/sendSubscribe" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (m.n == strlen(names[i]) && memcmp(m.p, names[i], m.n) == 0)
			return true;
	return false;
}

/* Copies at most max bytes of s into dst (size > max), NUL-terminated. */
static size_t span_copy(char *dst, size_t size, struct lg_span s, size_t max)
{
	size_t n = s.n < max ? s.n : max;

	if (n >= size)
		n = size - 1;
	memcpy(dst, s.p, n);
	dst[n] = '\0';
	return n;
}

/*
 * A cheap look before parsing: every HTTP body passes here, and only
 * A2A's JSON-RPC methods contain these (bounded like the recogniser).
 */
static bool maybe_body_call(const char *p, size_t n)
{
	/*
	 * message/send, message/stream, tasks/send, tasks/sendSubscribe; and
	 * MCP's tools/call
	 */
	const char *e;

	if (n > 4096)
		n = 4096;
	e = p + n;
	/* memchr is vectorised; memmem of a 2-byte needle is not */
	while (p < e && (p = memchr(p, '/', (size_t)(e - p)))) {
		if (++p < e && (*p == 's' || *p == 'c'))
			return true;
	}
	return false;
}

/* The peer's address ("127.0.0.1", "::1", "unix") and port. */
static void peer_of(int fd, char *host, size_t size, unsigned *port)
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

/* "127.0.0.1:9000/agent": the peer of fd and the request's path. */
static void a2a_endpoint(int fd, const char *path, size_t path_n, char *out,
			 size_t size)
{
	char host[INET6_ADDRSTRLEN] = "?";
	unsigned port;

	peer_of(fd, host, sizeof(host), &port);
	snprintf(out, size, "%s:%u%.*s", host, port,
		 (int)(path_n < 200 ? path_n : 200), path);
}

/* An A2A call waits for the supervisor: it is a call of the flow. */
static int a2a_gate(uint64_t chan, struct lg_span method, const char *endpoint)
{
	struct lg_wire_buf w;
	char tool[64];

	snprintf(tool, sizeof(tool), "a2a %.*s", (int)method.n, method.p);
	lg_wire_start(&w, LG_W_GATE, 0);
	lg_wire_put_u32(&w, LG_T_PROTO, LG_P_HTTP);
	lg_wire_put_u64(&w, LG_T_CHAN, chan);
	lg_wire_put_str(&w, LG_T_TOOL, tool);
	lg_wire_put_str(&w, LG_T_CALL_TO, endpoint);
	return gate(&w);
}

/*
 * MCP over HTTP (the streamable HTTP transport): a tools/call in a request
 * body is an agent's tool call like one on a pipe, and waits the same way.
 * Its result is the JSON-RPC response in the HTTP response's body.
 */
static int mcp_http_gate(int fd, uint32_t k, const struct lg_jrpc *jr)
{
	struct lg_wire_buf w;

	if (fd >= 0 && fd < HTTP_TRACK && http_req[fd].used == gen)
		http_req[fd].mcp = true;
	lg_wire_start(&w, LG_W_GATE, 0);
	lg_wire_put_u32(&w, LG_T_PROTO, LG_P_JSONRPC);
	if (lg_recog_name_in(jr->name.p, jr->name.n, gate_tools))
		lg_wire_put_u32(&w, LG_T_OP, OP_TOOL_DELETE);
	lg_wire_put_u32(&w, LG_T_DECISION, 1);
	lg_wire_put_u64(&w, LG_T_CHAN, ((uint64_t)fd << 32) | k);
	put_span(&w, LG_T_TOOL, jr->name, 128);
	put_span(&w, LG_T_ARGS, jr->args, LG_WIRE_MAX / 2);
	return gate(&w);
}

/*
 * A JSON-RPC request in the body of HTTP request k on fd (path: its
 * target): an A2A call or an MCP tools/call waits for the supervisor.
 * True, and *refuse set, when it was one.
 */
static bool body_call(int fd, uint32_t k, const char *p, size_t n,
		      const char *path, size_t path_n, int *refuse)
{
	struct lg_jrpc jr;
	char ep[300];

	if (!maybe_body_call(p, n) || !lg_recog_jsonrpc(p, n, &jr) ||
	    !jr.request)
		return false;
	if (a2a_method(jr.method)) {
		a2a_endpoint(fd, path, path_n, ep, sizeof(ep));
		*refuse = a2a_gate(((uint64_t)fd << 32) | k, jr.method, ep);
		return true;
	}
	if (!jr.name.n)
		return false;
	*refuse = mcp_http_gate(fd, k, &jr);
	return true;
}

/*
 * The body of an HTTP request whose headers went first (a write of its
 * own, or writev's second part) that is an A2A call or an MCP tools/call.
 */
static bool later_body(int fd, const char *p, size_t n, int *refuse)
{
	const char *path;

	if (fd < 0 || fd >= HTTP_TRACK || http_req[fd].used != gen ||
	    !http_sent[fd])
		return false;
	path = strchr(http_req[fd].tool, ' ');
	path = path ? path + 1 : "";
	return body_call(fd, http_sent[fd] - 1, p, n, path, strlen(path),
			 refuse);
}

/* Is this HTTP request a call of a declared tool endpoint? */
static bool declared(int fd, const struct lg_http_req *hq)
{
	char host[INET6_ADDRSTRLEN] = "";
	unsigned port = 0;

	if (judge_all)
		return true;
	if (!tool_endpoints)
		return false;
	if (endpoints_peer)
		peer_of(fd, host, sizeof(host), &port);
	return lg_recog_endpoint_in(tool_endpoints, hq->host, host, port,
				    hq->target);
}

/*
 * An outgoing message. Returns 0 to let it go, or the errno the program
 * should see (the supervisor refused it).
 */
static int outgoing(int fd, const char *p, size_t n)
{
	struct lg_http_req hq;
	struct lg_jrpc jr;
	struct lg_wire_buf w;
	char tool[160];
	int r;

	if (!channel(fd))
		return 0;
	if (lg_recog_tls(p, n)) {
		/* Opaque, but never "nothing": once per connection. */
		if (fd < FD_TRACK && !tls_seen[fd]) {
			tls_seen[fd] = 1;
			lg_wire_start(&w, LG_W_TOOL_CALL, 0);
			lg_wire_put_u32(&w, LG_T_PROTO, LG_P_TLS);
			lg_wire_put_str(&w, LG_T_TOOL, "tls");
			emit(&w);
		}
		return 0;
	}
	if (lg_recog_http_request(p, n, &hq)) {
		/* an HTTP DELETE is a tool delete on a declared endpoint only */
		bool decision = declared(fd, &hq);
		bool del = decision && hq.method.n == 6 &&
			   memcmp(hq.method.p, "DELETE", 6) == 0;
		uint32_t k = fd < FD_TRACK ? http_sent[fd]++ : 0;
		uint64_t args = lg_wire_hash(0, hq.body.p, hq.body.n);

		{ /* "METHOD /target" without printf: every call passes here */
			size_t m = span_copy(tool, sizeof(tool), hq.method, 16);

			tool[m++] = ' ';
			span_copy(tool + m, sizeof(tool) - m, hq.target, 80);
		}
		atomic_fetch_add(&outstanding, 1);
		if (fd < HTTP_TRACK) {
			http_req[fd].used = gen;
			http_req[fd].args = args;
			http_req[fd].decision = decision;
			http_req[fd].mcp = false;
			memcpy(http_req[fd].tool, tool,
			       sizeof(http_req[fd].tool) < sizeof(tool) ?
				       sizeof(http_req[fd].tool) :
				       sizeof(tool));
			http_req[fd].tool[sizeof(http_req[fd].tool) - 1] = '\0';
			span_copy(http_req[fd].pv, sizeof(http_req[fd].pv),
				  hq.body, 63);
		}
		if (!del && body_call(fd, k, hq.body.p, hq.body.n, hq.target.p,
				      hq.target.n, &r))
			return r;
		if (!del && fd < HTTP_TRACK)
			return 0; /* reported with its response */
		lg_wire_start(&w, del ? LG_W_GATE : LG_W_TOOL_CALL, 0);
		lg_wire_put_u32(&w, LG_T_PROTO, LG_P_HTTP);
		if (del)
			lg_wire_put_u32(&w, LG_T_OP, OP_TOOL_DELETE);
		if (decision)
			lg_wire_put_u32(&w, LG_T_DECISION, 1);
		lg_wire_put_u64(&w, LG_T_CHAN, ((uint64_t)fd << 32) | k);
		lg_wire_put_str(&w, LG_T_TOOL, tool);
		put_span(&w, LG_T_TARGET, hq.target, 1024);
		put_span(&w, LG_T_ARGS, hq.body, 4096);
		lg_wire_put_u64(&w, LG_T_ARGS_DIGEST, args);
		if (del)
			return gate(&w);
		emit(&w);
		return 0;
	}
	if (later_body(fd, p, n, &r))
		return r;
	if (lg_recog_jsonrpc(p, n, &jr) && jr.request) {
		bool call = jr.name.n > 0;
		bool destructive =
			call &&
			lg_recog_name_in(jr.name.p, jr.name.n, gate_tools);

		if (!call && jr.id.n == 0)
			return 0; /* a notification: nothing comes back */
		/*
		 * Every tools/call waits for the supervisor: it has then seen
		 * the results before it, so a call after a tripping result
		 * never leaves. Only destructive ones count as deletes.
		 */
		lg_wire_start(&w, call ? LG_W_GATE : LG_W_TOOL_CALL, 0);
		lg_wire_put_u32(&w, LG_T_PROTO, LG_P_JSONRPC);
		if (destructive)
			lg_wire_put_u32(&w, LG_T_OP, OP_TOOL_DELETE);
		/* other methods (LSP, health checks) are a program's routine */
		if (call || judge_all) {
			lg_wire_put_u32(&w, LG_T_DECISION, 1);
			call_ids[atomic_fetch_add(&call_id_next, 1) % CALL_IDS] =
				lg_wire_hash(0, jr.id.p, jr.id.n);
		}
		lg_wire_put_u64(&w, LG_T_CHAN,
				lg_wire_hash(0, jr.id.p, jr.id.n));
		if (call)
			put_span(&w, LG_T_TOOL, jr.name, 128);
		else
			put_span(&w, LG_T_TOOL, jr.method, 128);
		put_span(&w, LG_T_ARGS, jr.args, LG_WIRE_MAX / 2);
		atomic_fetch_add(&outstanding, 1);
		if (call)
			return gate(&w);
		emit(&w);
		return 0;
	}
	return 0;
}

/*
 * A result's digest for the repeat detector. An agent's tool call gets its
 * volatile parts (pids, clocks, temp names) masked first, hashed in blocks
 * of a fixed size so that only the masked text decides the digest.
 */
struct vhash {
	uint64_t h;
	size_t n;
	char b[256];
};

static void vhash_add(void *ctx, const char *s, size_t k)
{
	struct vhash *v = ctx;

	while (k) {
		size_t m = sizeof(v->b) - v->n < k ? sizeof(v->b) - v->n : k;

		memcpy(v->b + v->n, s, m);
		v->n += m;
		s += m;
		k -= m;
		if (v->n == sizeof(v->b)) {
			v->h = lg_wire_hash(v->h, v->b, v->n);
			v->n = 0;
		}
	}
}

static uint64_t result_digest(uint64_t seed, struct lg_span body, bool decision)
{
	struct vhash v = { seed, 0, { 0 } };

	if (!decision)
		return lg_wire_hash(seed, body.p, body.n);
	lg_volatile_scan(body.p, body.n, vhash_add, &v);
	return lg_wire_hash(v.h, v.b, v.n);
}

static bool is_call_id(uint64_t id)
{
	for (unsigned i = 0; i < CALL_IDS; i++)
		if (call_ids[i] == id)
			return true;
	return false;
}

/*
 * The JSON-RPC response in an HTTP body: plain JSON, or an SSE event
 * ("event: message", "data: {...}"), maybe behind a chunk-size line.
 */
static bool body_jsonrpc(struct lg_span body, struct lg_jrpc *jr)
{
	const char *p = body.p, *e = body.p + body.n, *d;
	size_t i;

	for (i = 0; i < 10 && p + i < e && isxdigit((unsigned char)p[i]); i++)
		;
	if (i && p + i + 1 < e && p[i] == '\r' && p[i + 1] == '\n')
		p += i + 2; /* a chunk's size */
	if (p < e && *p != '{' &&
	    (d = memmem(p, (size_t)(e - p), "data:", 5)) != NULL)
		p = d + 5;
	while (p < e && *p == ' ')
		p++;
	return lg_recog_jsonrpc(p, (size_t)(e - p), jr) && !jr->request;
}

/* The result of an MCP tools/call over HTTP, paired by its channel. */
static void mcp_http_result(int fd, uint32_t k, unsigned status,
			    struct lg_span body)
{
	struct lg_wire_buf w;
	struct lg_jrpc jr;
	bool ok = body_jsonrpc(body, &jr);
	struct lg_span res = ok ? jr.result : body;

	lg_wire_start(&w, LG_W_TOOL_RESULT, 0);
	lg_wire_put_u32(&w, LG_T_PROTO, LG_P_JSONRPC);
	lg_wire_put_u64(&w, LG_T_CHAN, ((uint64_t)fd << 32) | k);
	lg_wire_put_u32(&w, LG_T_STATUS, ok ? (jr.error ? 1 : 0) : status);
	lg_wire_put_u64(&w, LG_T_DIGEST, result_digest(0, res, true));
	put_span(&w, LG_T_PREVIEW, res, 160);
	http_req[fd].used = 0;
	atomic_fetch_sub(&outstanding, 1);
	emit(&w);
}

static void http_result(int fd, uint32_t k, unsigned status,
			struct lg_span body)
{
	struct lg_wire_buf w;
	uint64_t h = lg_wire_hash(0, &status, sizeof(status));

	if (fd >= 0 && fd < HTTP_TRACK && http_req[fd].used == gen &&
	    http_req[fd].mcp) {
		mcp_http_result(fd, k, status, body);
		return;
	}
	lg_wire_start(&w, LG_W_TOOL_RESULT, 0);
	lg_wire_put_u32(&w, LG_T_PROTO, LG_P_HTTP);
	lg_wire_put_u64(&w, LG_T_CHAN, ((uint64_t)fd << 32) | k);
	lg_wire_put_u32(&w, LG_T_STATUS, status);
	/* The status is part of the result: 200 "x" is not 500 "x". */
	lg_wire_put_u64(&w, LG_T_DIGEST,
			result_digest(h, body,
				      fd >= 0 && fd < HTTP_TRACK &&
					      http_req[fd].used == gen &&
					      http_req[fd].decision));
	put_span(&w, LG_T_PREVIEW, body, 160);
	/* The call itself travels with its result (one frame, one wake-up). */
	if (fd >= 0 && fd < HTTP_TRACK && http_req[fd].used == gen) {
		http_req[fd].used = 0;
		lg_wire_put_str(&w, LG_T_TOOL, http_req[fd].tool);
		lg_wire_put_str(&w, LG_T_ARGS, http_req[fd].pv);
		lg_wire_put_u64(&w, LG_T_ARGS_DIGEST, http_req[fd].args);
		if (http_req[fd].decision)
			lg_wire_put_u32(&w, LG_T_DECISION, 1);
	}
	atomic_fetch_sub(&outstanding, 1);
	emit(&w);
}

static void incoming(int fd, const char *p, ssize_t got)
{
	struct lg_http_resp hr;
	struct lg_jrpc jr;
	struct lg_wire_buf w;
	size_t n;

	if (got <= 0 || atomic_load(&outstanding) <= 0)
		return;
	n = (size_t)got;
	if (fd >= 0 && fd < FD_TRACK && http_body[fd].waiting == gen) {
		struct lg_span body = { p, n };

		http_body[fd].waiting = 0;
		http_result(fd, http_body[fd].k, http_body[fd].status, body);
		return;
	}
	if (!lg_recog_maybe(p, n) || !channel(fd))
		return;
	if (lg_recog_http_response(p, n, &hr)) {
		uint32_t k = fd < FD_TRACK ? http_seen[fd]++ : 0;

		/* Headers alone (buffered readers): the body comes next. */
		if (hr.body.n == 0 && fd < FD_TRACK && hr.status != 204 &&
		    hr.status != 304) {
			http_body[fd].k = k;
			http_body[fd].status = (uint16_t)hr.status;
			http_body[fd].waiting = gen;
			return;
		}
		http_result(fd, k, hr.status, hr.body);
		return;
	}
	if (lg_recog_jsonrpc(p, n, &jr) && !jr.request && jr.id.n) {
		lg_wire_start(&w, LG_W_TOOL_RESULT, 0);
		lg_wire_put_u32(&w, LG_T_PROTO, LG_P_JSONRPC);
		lg_wire_put_u64(&w, LG_T_CHAN,
				lg_wire_hash(0, jr.id.p, jr.id.n));
		lg_wire_put_u32(&w, LG_T_STATUS, jr.error ? 1 : 0);
		lg_wire_put_u64(&w, LG_T_DIGEST,
				result_digest(0, jr.result,
					      is_call_id(lg_wire_hash(
						      0, jr.id.p, jr.id.n))));
		put_span(&w, LG_T_PREVIEW, jr.result, 160);
		atomic_fetch_sub(&outstanding, 1);
		emit(&w);
	}
}

/* The hooks: check, then do the real thing, errno untouched. */
/*
 * The hooks: a first-byte test decides before anything else (most writes
 * are not tool traffic), then the real call, whose errno is left as is.
 */
#define OUT_HOOK(name, params, buf, len, call)                         \
	LG_EXPORT ssize_t name params                                  \
	{                                                              \
		if (len >= 4 && lg_recog_maybe(buf, len) && enter()) { \
			int refuse = outgoing(fd, buf, len);           \
			leave();                                       \
			if (refuse) {                                  \
				errno = ECONNRESET;                    \
				return -1;                             \
			}                                              \
		}                                                      \
		return real.call;                                      \
	}

OUT_HOOK(write, (int fd, const void *b, size_t n), (const char *)b, n,
	 write(fd, b, n))
OUT_HOOK(send, (int fd, const void *b, size_t n, int f), (const char *)b, n,
	 send(fd, b, n, f))
OUT_HOOK(sendto,
	 (int fd, const void *b, size_t n, int f, const struct sockaddr *a,
	  socklen_t al),
	 (const char *)b, n, sendto(fd, b, n, f, a, al))

/* HTTP headers in the first part, the body in the second (Node). */
static int outgoing_iov(int fd, const struct iovec *iov, int cnt)
{
	int refuse = outgoing(fd, iov[0].iov_base, iov[0].iov_len);

	if (!refuse && cnt > 1 && iov[1].iov_len >= 4 &&
	    lg_recog_maybe(iov[1].iov_base, iov[1].iov_len))
		later_body(fd, iov[1].iov_base, iov[1].iov_len, &refuse);
	return refuse;
}

LG_EXPORT ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
	if (cnt > 0 && iov[0].iov_len >= 4 &&
	    lg_recog_maybe(iov[0].iov_base, iov[0].iov_len) && enter()) {
		int refuse = outgoing_iov(fd, iov, cnt);

		leave();
		if (refuse) {
			errno = ECONNRESET;
			return -1;
		}
	}
	return real.writev(fd, iov, cnt);
}

LG_EXPORT ssize_t sendmsg(int fd, const struct msghdr *m, int f)
{
	if (m && m->msg_iovlen > 0 && m->msg_iov[0].iov_len >= 4 &&
	    lg_recog_maybe(m->msg_iov[0].iov_base, m->msg_iov[0].iov_len) &&
	    enter()) {
		int refuse = outgoing_iov(fd, m->msg_iov, (int)m->msg_iovlen);

		leave();
		if (refuse) {
			errno = ECONNRESET;
			return -1;
		}
	}
	return real.sendmsg(fd, m, f);
}

#define IN_HOOK(name, params, call)                                            \
	LG_EXPORT ssize_t name params                                          \
	{                                                                      \
		ssize_t r;                                                     \
                                                                               \
		ensure();                                                      \
		r = real.call;                                                 \
		/* Only while a call waits for its result: rare. */            \
		if (r > 0 &&                                                   \
		    atomic_load_explicit(&outstanding, memory_order_relaxed) > \
			    0 &&                                               \
		    enter()) {                                                 \
			int e = errno;                                         \
                                                                               \
			incoming(fd, (const char *)b, r);                      \
			leave();                                               \
			errno = e;                                             \
		}                                                              \
		return r;                                                      \
	}

IN_HOOK(read, (int fd, void *b, size_t n), read(fd, b, n))
IN_HOOK(recv, (int fd, void *b, size_t n, int f), recv(fd, b, n, f))
IN_HOOK(recvfrom,
	(int fd, void *b, size_t n, int f, struct sockaddr *a, socklen_t *al),
	recvfrom(fd, b, n, f, a, al))

/* Vectored reads: the first buffer holds the start of the message. */
static void incoming_iov(int fd, const struct iovec *iov, int cnt, ssize_t r)
{
	if (r > 0 && cnt > 0 &&
	    atomic_load_explicit(&outstanding, memory_order_relaxed) > 0 &&
	    enter()) {
		int e = errno;
		size_t n = (size_t)r < iov[0].iov_len ? (size_t)r :
							iov[0].iov_len;

		incoming(fd, iov[0].iov_base, (ssize_t)n);
		leave();
		errno = e;
	}
}

LG_EXPORT ssize_t readv(int fd, const struct iovec *iov, int cnt)
{
	ssize_t r;

	ensure();
	r = real.readv(fd, iov, cnt);
	incoming_iov(fd, iov, cnt, r);
	return r;
}

LG_EXPORT ssize_t recvmsg(int fd, struct msghdr *m, int f)
{
	ssize_t r;

	ensure();
	r = real.recvmsg(fd, m, f);
	if (m)
		incoming_iov(fd, m->msg_iov, (int)m->msg_iovlen, r);
	return r;
}

/* _FORTIFY_SOURCE builds call these for opens without a mode. */
LG_EXPORT int __open_2(const char *p, int flags)
{
	bool on = enter();
	int r;

	r = real.__open_2 ? real.__open_2(p, flags) : (errno = ENOSYS, -1);
	return after_open(on, AT_FDCWD, p, flags, r);
}

LG_EXPORT int __open64_2(const char *p, int flags)
	__attribute__((alias("__open_2")));

LG_EXPORT int __openat_2(int d, const char *p, int flags)
{
	bool on = enter();
	int r;

	r = real.__openat_2 ? real.__openat_2(d, p, flags) :
			      (errno = ENOSYS, -1);
	return after_open(on, d, p, flags, r);
}

LG_EXPORT int __openat64_2(int d, const char *p, int flags)
	__attribute__((alias("__openat_2")));
