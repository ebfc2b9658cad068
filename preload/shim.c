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
#include "shim_int.h"

/* start-up, once: shim_init by the constructor, else by the first hook */
pthread_once_t once = PTHREAD_ONCE_INIT;
atomic_bool inited; /* a plain load on the hot path, not pthread_once */

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

void shim_init(void)
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

__attribute__((constructor)) static void shim_ctor(void)
{
	ensure();
}

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
