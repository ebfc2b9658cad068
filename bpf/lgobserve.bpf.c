// SPDX-License-Identifier: (MIT OR GPL-2.0)
/*
 * The kernel-side observer: what the session's processes do that the shim
 * cannot see (static and Go binaries, a cleared environment). Raw
 * tracepoints only: they need no tracefs and see 32-bit syscalls too.
 * Everything is filtered to the session in the kernel (the session's
 * cgroup, as an ancestor at its level, or a pid set seeded at start when
 * there is no cgroup); only its events reach the ring buffer. Nothing here
 * decides anything: lgrun turns the events into guard events.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "lgobserve.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* Set by lgrun before the programs load. */
const volatile __u64 target_cgid = 0; /* 0: use the pid set */
const volatile __u32 cg_level = 0;
/*
 * Set by lgrun once sys_enter and sys_exit are attached (they wait until a
 * process of the session runs without the shim): from then on sys_enter
 * reports the connects of processes without the shim, and the cgroup
 * connect hooks below leave those to it.
 */
volatile __u32 sys_watch = 0;
/* lgrun attached the cgroup connect hooks (the session has a cgroup). */
volatile __u32 hooks_connect = 0;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024); /* resized by lgrun ([bpf] ring) */
} events SEC(".maps");

/* The session's processes, when there is no cgroup to tell them by. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__uint(map_flags, BPF_F_NO_PREALLOC); /* most sessions never use it */
	__type(key, __u32);
	__type(value, __u8);
} pids SEC(".maps");

/*
 * Processes whose shim said hello (user space writes when it was sent) and
 * when each last exec'd: a process whose hello is newer than its exec
 * reports its own results, so none of its ops or connects are sent here.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, __u64);
} seen SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, __u64);
} execs SEC(".maps");

struct inflight {
	__u32 op;
	__s32 dirfd;
	char path[LGB_PATH_MAX];
};

/* A syscall whose result is wanted, between its entry and its exit. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1024); /* threads inside such a syscall at once */
	__type(key, __u32); /* tid */
	__type(value, struct inflight);
} inflight SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct inflight);
} scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, LGB_C_MAX);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

#define USER32_CS 0x23
#define O_WRONLY_ 01
#define O_RDWR_ 02
#define O_CREAT_ 0100
#define O_TRUNC_ 01000
#define AT_REMOVEDIR_ 0x200

static __always_inline bool in_session(void)
{
	__u32 tgid;

	if (target_cgid)
		return bpf_get_current_ancestor_cgroup_id(cg_level) ==
		       target_cgid;
	tgid = bpf_get_current_pid_tgid() >> 32;
	return bpf_map_lookup_elem(&pids, &tgid) != NULL;
}

static __always_inline bool shim_sees(__u32 tgid)
{
	__u64 *hello = bpf_map_lookup_elem(&seen, &tgid), *exec;

	if (!hello)
		return false;
	exec = bpf_map_lookup_elem(&execs, &tgid);
	return !exec || *hello >= *exec;
}

static __always_inline void count(__u32 k, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&counters, &k);

	if (v)
		*v += n;
}

static __always_inline struct lgb_event *reserve(__u32 type)
{
	struct lgb_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	__u64 id = bpf_get_current_pid_tgid();

	if (!e) {
		count(LGB_C_DROPS, 1);
		return NULL;
	}
	e->type = type;
	e->pid = id >> 32;
	e->tid = (__u32)id;
	e->ppid = 0;
	e->ts_ns = bpf_ktime_get_ns();
	e->ret = 0;
	e->op = 0;
	e->dirfd = LGB_AT_FDCWD;
	e->family = 0;
	e->port = 0;
	__builtin_memset(e->addr, 0, sizeof(e->addr));
	e->arg0[0] = '\0';
	e->path[0] = '\0';
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	return e;
}

/* The syscall's arguments, x86_64 or i386 conventions. */
struct args {
	unsigned long a[4];
};

static __always_inline void get_args(struct pt_regs *regs, bool compat,
				     struct args *x)
{
	if (compat) {
		x->a[0] = BPF_CORE_READ(regs, bx);
		x->a[1] = BPF_CORE_READ(regs, cx);
		x->a[2] = BPF_CORE_READ(regs, dx);
		x->a[3] = BPF_CORE_READ(regs, si);
	} else {
		x->a[0] = BPF_CORE_READ(regs, di);
		x->a[1] = BPF_CORE_READ(regs, si);
		x->a[2] = BPF_CORE_READ(regs, dx);
		x->a[3] = BPF_CORE_READ(regs, r10);
	}
}

/*
 * The syscalls of supervisor/seccomp/syscalls.def, by the kind of each:
 * the op reported for it here, or 0: not reported (an exec has its own
 * tracepoint; openat2's flags are behind a pointer).
 */
#define LGB_KIND_UNLINK LGB_OP_UNLINK
#define LGB_KIND_RMDIR LGB_OP_RMDIR
#define LGB_KIND_TRUNCATE LGB_OP_TRUNCATE
#define LGB_KIND_OPEN LGB_OP_WRITE_OPEN
#define LGB_KIND_CREAT LGB_OP_WRITE_OPEN
#define LGB_KIND_OPEN_HOW 0
#define LGB_KIND_RENAME LGB_OP_RENAME
#define LGB_KIND_EXEC 0
#define LGB_KIND_LINK 0 /* a name more: not the observer's */
#define LGB_KIND_MAKE 0
#define LGB_KIND_CHMOD 0

/* The op of a syscall of this kind, from its flags argument (-1: none). */
static __always_inline __u32 refine(__u32 op, const struct args *x, int flags)
{
	unsigned long f = flags >= 0 && flags < 4 ? x->a[flags] : 0;

	if (op == LGB_OP_UNLINK && (f & AT_REMOVEDIR_))
		return LGB_OP_RMDIR;
	if (op == LGB_OP_WRITE_OPEN && flags >= 0 &&
	    !(f & (O_WRONLY_ | O_RDWR_ | O_CREAT_ | O_TRUNC_)))
		return 0; /* an open for reading */
	return op;
}

#define LGB_ROW(nr_, kind, dirfd, path, flags)                   \
	if (LGB_KIND_##kind != 0 && (nr_) >= 0 && nr == (nr_)) { \
		*dirfd_arg = dirfd;                              \
		*path_arg = path;                                \
		return refine(LGB_KIND_##kind, x, flags);        \
	}

/*
 * Which op a syscall is, where its path is (argument index, -1: none) and
 * its directory fd (-1: AT_FDCWD). 0: not one we report.
 */
static __always_inline __u32 classify(long nr, bool compat,
				      const struct args *x, int *path_arg,
				      int *dirfd_arg)
{
	*dirfd_arg = -1;
	*path_arg = 0;
	if (compat) {
#define LG_SYSCALL(name, sys, nr64, nr32, needs, kind, dirfd, path, flags) \
	LGB_ROW(nr32, kind, dirfd, path, flags)
#include "../supervisor/seccomp/syscalls.def"
#undef LG_SYSCALL
		return 0;
	}
#define LG_SYSCALL(name, sys, nr64, nr32, needs, kind, dirfd, path, flags) \
	LGB_ROW(nr64, kind, dirfd, path, flags)
#include "../supervisor/seccomp/syscalls.def"
#undef LG_SYSCALL
	return 0;
}

/*
 * Could classify (or connect_event) want it? Before any map is read: most
 * syscalls (read, write, poll...) are none of these, and sys_exit runs for
 * every syscall on the machine (the compiler makes one switch of these).
 */
static __always_inline bool wanted(long nr, bool compat)
{
	if (compat) {
#define LG_SYSCALL(name, sys, nr64, nr32, needs, kind, dirfd, path, flags) \
	if (LGB_KIND_##kind != 0 && (nr32) >= 0 && nr == (nr32))           \
		return true;
#include "../supervisor/seccomp/syscalls.def"
#undef LG_SYSCALL
		return nr == 362 || nr == 102; /* connect, socketcall */
	}
#define LG_SYSCALL(name, sys, nr64, nr32, needs, kind, dirfd, path, flags) \
	if (LGB_KIND_##kind != 0 && (nr64) >= 0 && nr == (nr64))           \
		return true;
#include "../supervisor/seccomp/syscalls.def"
#undef LG_SYSCALL
	return nr == 42; /* connect */
}

static __always_inline bool is_write(long nr, bool compat)
{
	if (compat)
		return nr == 4 || nr == 181 || nr == 146 || nr == 334;
	return nr == 1 || nr == 18 || nr == 20 || nr == 296 || nr == 328;
}

/*
 * inet_only: a process whose shim reports its own tool traffic; its
 * connects off the host are still wanted (around the egress proxy?).
 */
static __always_inline void connect_event(unsigned long uaddr, __u32 len,
					  bool inet_only)
{
	struct lgb_event *e;
	__u16 family = 0;

	if (!uaddr || len < 2)
		return;
	bpf_probe_read_user(&family, sizeof(family), (void *)uaddr);
	/* AF_UNIX 1, AF_INET 2, AF_INET6 10; the rest is not traffic */
	if ((family != 1 || inet_only) && family != 2 && family != 10)
		return;
	e = reserve(LGB_CONNECT);
	if (!e)
		return;
	e->family = family;
	if (family == 2) {
		struct sockaddr_in sin = {};

		bpf_probe_read_user(&sin, sizeof(sin), (void *)uaddr);
		e->port = bpf_ntohs(sin.sin_port);
		__builtin_memcpy(e->addr, &sin.sin_addr, 4);
	} else if (family == 10) {
		struct sockaddr_in6 sin6 = {};

		bpf_probe_read_user(&sin6, sizeof(sin6), (void *)uaddr);
		e->port = bpf_ntohs(sin6.sin6_port);
		__builtin_memcpy(e->addr, &sin6.sin6_addr, 16);
	} else {
		bpf_probe_read_user_str(e->path, 108, (void *)(uaddr + 2));
	}
	bpf_ringbuf_submit(e, 0);
}

SEC("raw_tp/sys_enter")
int lg_sys_enter(struct bpf_raw_tracepoint_args *ctx)
{
	struct pt_regs *regs = (struct pt_regs *)ctx->args[0];
	long nr = (long)ctx->args[1];
	struct inflight *in;
	struct args x;
	int path_arg, dirfd_arg;
	bool compat, shim;
	__u32 op, zero = 0, tid;

	if (!in_session())
		return 0;
	count(LGB_C_SYSCALLS, 1);
	compat = BPF_CORE_READ(regs, cs) == USER32_CS;
	if (!wanted(nr, compat))
		return 0;
	shim = shim_sees(bpf_get_current_pid_tgid() >> 32);
	if (shim &&
	    (hooks_connect || !(compat ? nr == 362 || nr == 102 : nr == 42)))
		return 0; /* it reports its own results (its connects: the
			     cgroup hooks, when attached) */
	get_args(regs, compat, &x);
	if (!compat && nr == 42) { /* connect */
		connect_event(x.a[1], (__u32)x.a[2], shim);
		return 0;
	}
	if (compat && nr == 362) {
		connect_event(x.a[1], (__u32)x.a[2], shim);
		return 0;
	}
	if (compat && nr == 102 && x.a[0] == 3) { /* socketcall(SYS_CONNECT) */
		__u32 sa[3] = {};

		bpf_probe_read_user(sa, sizeof(sa), (void *)x.a[1]);
		connect_event(sa[1], sa[2], shim);
		return 0;
	}
	if (shim)
		return 0;
	op = classify(nr, compat, &x, &path_arg, &dirfd_arg);
	if (!op)
		return 0;
	in = bpf_map_lookup_elem(&scratch, &zero);
	if (!in)
		return 0;
	in->op = op;
	in->dirfd = dirfd_arg == 0 ? (__s32)x.a[0] : LGB_AT_FDCWD;
	in->path[0] = '\0';
	if (path_arg >= 0 && path_arg < 4) {
		unsigned long p = path_arg == 1 ? x.a[1] : x.a[0];

		/* a page not resident reads as empty: "unknown" */
		if (bpf_probe_read_user_str(in->path, sizeof(in->path),
					    (void *)p) < 0)
			in->path[0] = '\0';
	} else {
		in->dirfd = (__s32)x.a[0]; /* ftruncate: the fd itself */
	}
	tid = (__u32)bpf_get_current_pid_tgid();
	bpf_map_update_elem(&inflight, &tid, in, BPF_ANY);
	return 0;
}

SEC("raw_tp/sys_exit")
int lg_sys_exit(struct bpf_raw_tracepoint_args *ctx)
{
	struct pt_regs *regs = (struct pt_regs *)ctx->args[0];
	long ret = (long)ctx->args[1];
	struct inflight *in;
	struct lgb_event *e;
	bool write, compat;
	__u32 tid;
	long nr;

	/*
	 * Cheap tests first: most syscalls are neither writes nor waited
	 * for, and only a wanted one has an inflight entry (sys_enter).
	 */
	nr = (long)BPF_CORE_READ(regs, orig_ax);
	compat = BPF_CORE_READ(regs, cs) == USER32_CS;
	write = ret > 0 && is_write(nr, compat);
	if (!write && !wanted(nr, compat))
		return 0;
	tid = (__u32)bpf_get_current_pid_tgid();
	in = write ? NULL : bpf_map_lookup_elem(&inflight, &tid);
	if (!write && !in)
		return 0;
	if (!in_session())
		return 0;
	if (write) {
		count(LGB_C_BYTES_WRITTEN, (__u64)ret);
		return 0;
	}
	e = reserve(LGB_OP);
	if (e) {
		e->op = in->op;
		e->dirfd = in->dirfd;
		e->ret = ret < 0 ? (__s32)ret : 0;
		__builtin_memcpy(e->path, in->path, sizeof(e->path));
		bpf_ringbuf_submit(e, 0);
	}
	bpf_map_delete_elem(&inflight, &tid);
	return 0;
}

SEC("raw_tp/sched_process_fork")
int lg_fork(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *parent = (struct task_struct *)ctx->args[0];
	struct task_struct *child = (struct task_struct *)ctx->args[1];
	struct lgb_event *e;
	__u32 pid, tgid;
	__u8 one = 1;

	if (!in_session())
		return 0;
	pid = BPF_CORE_READ(child, pid);
	tgid = BPF_CORE_READ(child, tgid);
	if (pid != tgid)
		return 0; /* a thread */
	if (!target_cgid)
		bpf_map_update_elem(&pids, &tgid, &one, BPF_ANY);
	e = reserve(LGB_FORK);
	if (!e)
		return 0;
	e->pid = tgid;
	e->tid = pid;
	e->ppid = BPF_CORE_READ(parent, tgid);
	bpf_ringbuf_submit(e, 0);
	return 0;
}

/*
 * What the new image's auxiliary vector says (it is written before this
 * tracepoint): no interpreter (AT_BASE 0) is a static binary, AT_SECURE a
 * setuid, setgid or file-capability exec, where the loader ignores
 * LD_PRELOAD. Either way no shim will say hello from it.
 */
static __always_inline __u32 exec_flags(struct task_struct *task,
					struct linux_binprm *bprm)
{
	struct mm_struct *mm = BPF_CORE_READ(task, mm);
	__u32 flags = 0;
	char cls = 0;

	if (!mm || !bpf_core_field_exists(mm->saved_auxv))
		return 0;
	/*
	 * A 32-bit image's vector is made of 32-bit words: not read here
	 * (its exec is checked for a hello like any other).
	 */
	bpf_probe_read_kernel(&cls, 1, &bprm->buf[4]); /* EI_CLASS */
	if (cls != 2) /* ELFCLASS64 */
		return 0;
	for (int i = 0; i < 40; i++) {
		unsigned long pair[2];

		if (bpf_probe_read_kernel(pair, sizeof(pair),
					  &mm->saved_auxv[2 * i]) < 0)
			break;
		if (pair[0] == 0) /* AT_NULL */
			break;
		if (pair[0] == 7 && !pair[1]) /* AT_BASE */
			flags |= LGB_EXEC_STATIC;
		if (pair[0] == 23 && pair[1]) /* AT_SECURE */
			flags |= LGB_EXEC_SECURE;
	}
	return flags;
}

SEC("raw_tp/sched_process_exec")
int lg_exec(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *task = (struct task_struct *)ctx->args[0];
	struct linux_binprm *bprm = (struct linux_binprm *)ctx->args[2];
	struct lgb_event *e;
	unsigned long arg;

	__u64 now = bpf_ktime_get_ns();
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	if (!in_session())
		return 0;
	bpf_map_update_elem(&execs, &tgid, &now, BPF_ANY);
	e = reserve(LGB_EXEC);
	if (!e)
		return 0;
	e->op = exec_flags(task, bprm);
	e->ppid = BPF_CORE_READ(task, real_parent, tgid);
	bpf_probe_read_kernel_str(e->path, sizeof(e->path),
				  BPF_CORE_READ(bprm, filename));
	arg = BPF_CORE_READ(task, mm, arg_start);
	if (bpf_probe_read_user_str(e->arg0, sizeof(e->arg0), (void *)arg) < 0)
		e->arg0[0] = '\0';
	bpf_ringbuf_submit(e, 0);
	return 0;
}

SEC("raw_tp/sched_process_exit")
int lg_exit(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *task = (struct task_struct *)ctx->args[0];
	struct lgb_event *e;
	__u32 pid, tgid;
	int code;

	if (!in_session())
		return 0;
	/*
	 * Each thread's own write accounting, once, at its end: with what
	 * /proc/PID/io shows for the live ones, what the session wrote.
	 */
	if (bpf_core_field_exists(task->ioac))
		count(LGB_C_EXITED_WCHAR, BPF_CORE_READ(task, ioac.wchar));
	pid = BPF_CORE_READ(task, pid);
	tgid = BPF_CORE_READ(task, tgid);
	if (pid != tgid)
		return 0;
	code = BPF_CORE_READ(task, exit_code);
	if (!target_cgid)
		bpf_map_delete_elem(&pids, &tgid);
	bpf_map_delete_elem(&seen, &tgid);
	bpf_map_delete_elem(&execs, &tgid);
	e = reserve(LGB_EXIT);
	if (!e)
		return 0;
	e->ret = code & 0x7f ? 128 + (code & 0x7f) : (code >> 8) & 0xff;
	bpf_ringbuf_submit(e, 0);
	return 0;
}

/*
 * The session cgroup's connect hooks: an inet connect by any process of
 * the session, without the syscall-tracing path every syscall on the
 * machine takes while sys_enter is attached. Those of processes without
 * the shim are left to sys_enter once it is (it sees AF_UNIX too). Always
 * allowed: the observer decides nothing.
 */
static __always_inline bool hook_wants(void)
{
	return !sys_watch || shim_sees(bpf_get_current_pid_tgid() >> 32);
}

SEC("cgroup/connect4")
int lg_connect4(struct bpf_sock_addr *ctx)
{
	struct lgb_event *e;
	__u32 ip;

	if (!hook_wants())
		return 1;
	e = reserve(LGB_CONNECT);
	if (!e)
		return 1;
	e->family = 2;
	e->port = bpf_ntohs((__u16)ctx->user_port);
	ip = ctx->user_ip4;
	__builtin_memcpy(e->addr, &ip, 4);
	bpf_ringbuf_submit(e, 0);
	return 1;
}

SEC("cgroup/connect6")
int lg_connect6(struct bpf_sock_addr *ctx)
{
	struct lgb_event *e;
	__u32 w;

	if (!hook_wants())
		return 1;
	e = reserve(LGB_CONNECT);
	if (!e)
		return 1;
	e->family = 10;
	e->port = bpf_ntohs((__u16)ctx->user_port);
	w = ctx->user_ip6[0];
	__builtin_memcpy(e->addr, &w, 4);
	w = ctx->user_ip6[1];
	__builtin_memcpy(e->addr + 4, &w, 4);
	w = ctx->user_ip6[2];
	__builtin_memcpy(e->addr + 8, &w, 4);
	w = ctx->user_ip6[3];
	__builtin_memcpy(e->addr + 12, &w, 4);
	bpf_ringbuf_submit(e, 0);
	return 1;
}
