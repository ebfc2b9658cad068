/* SPDX-License-Identifier: MIT */
/*
 * The one header the eBPF observer (lgobserve.bpf.c) and lgrun
 * (supervisor/observer/bpfobs.c) share: the events the kernel side sends through
 * its ring buffer and the counters it keeps.
 */
#ifndef LG_OBSERVE_H
#define LG_OBSERVE_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define LGB_PATH_MAX 256
#define LGB_ARG0_MAX 64
#define LGB_COMM_MAX 16

enum lgb_type {
	LGB_FORK = 1, /* pid: the new process, ppid: its parent */
	LGB_EXEC = 2, /* pid; path: the file executed, arg0: argv[0]; op:
		       * LGB_EXEC_* flags from its auxiliary vector */
	LGB_EXIT = 3, /* pid; ret: exit status (or 128 + signal) */
	LGB_CONNECT = 4, /* pid; family, port, addr (or path for AF_UNIX) */
	LGB_OP = 5, /* pid; op, nr, dirfd, ret (0 or -errno), path */
};

/* What a syscall whose result is reported does (LGB_OP). */
enum lgb_op {
	LGB_OP_UNLINK = 1,
	LGB_OP_RMDIR = 2,
	LGB_OP_TRUNCATE = 3, /* truncate, ftruncate (path empty: by fd) */
	LGB_OP_WRITE_OPEN = 4, /* open/openat/creat for writing */
	LGB_OP_RENAME = 5,
};

/* LGB_EXEC's op: what says, at its exec, that no shim will load in it. */
#define LGB_EXEC_STATIC 1 /* no ELF interpreter (AT_BASE 0): static */
#define LGB_EXEC_SECURE 2 /* AT_SECURE: setuid, setgid or capabilities */

#define LGB_AT_FDCWD (-100)

struct lgb_event {
	__u32 type;
	__u32 pid; /* tgid */
	__u32 ppid;
	__u32 tid;
	__u64 ts_ns; /* CLOCK_MONOTONIC */
	__s32 ret;
	__u32 op;
	__s32 dirfd; /* LGB_OP: the *at directory fd, else LGB_AT_FDCWD */
	__u16 family;
	__u16 port; /* host order */
	__u8 addr[16];
	char comm[LGB_COMM_MAX];
	char arg0[LGB_ARG0_MAX];
	char path[LGB_PATH_MAX];
};

/* Per-CPU counters, summed by user space. */
enum lgb_counter {
	LGB_C_DROPS, /* events the full ring buffer could not take */
	LGB_C_SYSCALLS, /* syscalls made by the session */
	LGB_C_BYTES_WRITTEN, /* by write, pwrite, writev and friends */
	/*
	 * The write accounting (wchar, as /proc/PID/io shows) of the
	 * session's threads that have exited, each counted at its exit.
	 */
	LGB_C_EXITED_WCHAR,
	LGB_C_MAX
};

#endif
