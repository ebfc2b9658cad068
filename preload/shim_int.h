/* SPDX-License-Identifier: MIT */
/*
 * Inside liblgshim.so: shim.c (start-up: the real functions resolved, the
 * settings read, fork), shim_conn.c (the state the hooks share, the
 * connection, the ring, the gate), shim_files.c (file operations: their
 * results) and shim_traffic.c and shim_results.c (tool traffic on sockets
 * and pipes, and the descriptors it tracks) share these. Calls go one way:
 * shim.c -> the hooks -> shim_conn.c; a hook that runs before the
 * constructor starts the shim itself (ensure()). Everything here is hidden:
 * only the hooks are exported (LG_EXPORT).
 */
#ifndef LG_SHIM_INT_H
#define LG_SHIM_INT_H
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
	OP_RENAME = 8,
	OP_REMOTE_DELETE = LG_WIRE_OP_REMOTE_DELETE
};

struct shim_real {
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
};

extern struct shim_real real;
LG_EXPORT int __open_2(const char *p, int flags);
LG_EXPORT int __openat_2(int d, const char *p, int flags);

extern pthread_once_t once;
extern bool active;
extern const char *tool_endpoints;
extern bool endpoints_peer;
extern bool judge_all;
extern uint16_t proxy_port;
extern atomic_flag ring_busy;
extern atomic_int outstanding;
extern atomic_bool had_failure;
extern unsigned char fd_kind[FD_TRACK];
extern atomic_bool inited;
extern char sock_path[108];
extern const char *gate_tools;
extern atomic_int conn_fd;
extern ino_t conn_ino;
extern struct lg_ring *ring;
extern atomic_uint_fast64_t dropped;
extern pthread_mutex_t gate_lock;
extern uint32_t gate_seq;
extern uint32_t gen;
extern __thread int in_shim __attribute__((tls_model("initial-exec")));

void shim_init(void);

/* Resolved and connected once; a plain load on the hot path. */
static inline void ensure(void)
{
	if (__builtin_expect(
		    !atomic_load_explicit(&inited, memory_order_acquire), 0)) {
		pthread_once(&once, shim_init);
		atomic_store_explicit(&inited, true, memory_order_release);
	}
}

/* The re-entry guard: false when the shim is off or already inside. */
bool enter(void);
void leave(void);
/* An event: into the ring, else on the socket (dropped and counted). */
void emit(struct lg_wire_buf *w);
/* A held call: its verdict (0 to go, else the errno), bounded in time. */
int gate(struct lg_wire_buf *w);
int conn(void);

/* The peer's address ("127.0.0.1", "::1", "unix") and port of fd (shim_conn.c). */
void peer_of(int fd, char *host, size_t size, unsigned *port);

#endif
