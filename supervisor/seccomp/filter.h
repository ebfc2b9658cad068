/* SPDX-License-Identifier: MIT */
/*
 * The seccomp filter: which syscalls leave the kernel for the supervisor,
 * which fail outright, and how the notify loop maps a (arch, nr) back to
 * what the syscall does (syscalls.def, one table for all).
 */
#ifndef LG_FILTER_H
#define LG_FILTER_H

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdint.h>

/* Linux 6.6's synchronous wake-up, for headers older than it */
#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif

/* Each syscall of syscalls.def (LG_SYS_OTHER: none of them). */
enum lg_sys {
	LG_SYS_OTHER,
#define LG_SYSCALL(name, sys, ...) LG_SYS_##sys,
#include "syscalls.def"
#undef LG_SYSCALL
};

/* What a syscall does (syscalls.def says what each kind is). */
enum lg_sys_kind {
	LG_KIND_UNLINK,
	LG_KIND_RMDIR,
	LG_KIND_TRUNCATE,
	LG_KIND_OPEN,
	LG_KIND_CREAT,
	LG_KIND_OPEN_HOW,
	LG_KIND_RENAME,
	LG_KIND_LINK, /* laid out as a rename; flags are linkat's AT_* */
	LG_KIND_MAKE, /* a name made: mkdir, symlink (the undo's record) */
	LG_KIND_CHMOD, /* a mode changed (the undo's record) */
	LG_KIND_EXEC,
};

/* A line of syscalls.def. */
struct lg_syscall {
	const char *name;
	enum lg_sys sys;
	enum lg_sys_kind kind;
	unsigned needs; /* the LG_SC_* bits that send it */
	int nr[2]; /* x86_64, i386; -1: none */
	int dirfd, path, flags; /* the arguments that hold them; -1: none */
};

/* The line of sys; NULL for LG_SYS_OTHER. */
const struct lg_syscall *lg_syscall_of(enum lg_sys sys);

/* A compiled filter, ready for seccomp(2) in the child. */
struct lg_bpf {
	struct sock_fprog prog;
};

/*
 * Compiles the filter for the LG_SC_* mask with libseccomp, in the parent:
 * the child then needs one seccomp(2) call, no allocation, no library.
 */
int lg_filter_build(unsigned syscalls, struct lg_bpf *out);
void lg_filter_free(struct lg_bpf *bpf);

/* In the child: installs the filter; returns the listener fd or -errno. */
int lg_filter_load(const struct lg_bpf *bpf);

/* What (arch, nr) of a notification is. */
enum lg_sys lg_filter_classify(uint32_t arch, int nr);

/* True when pointers of this arch are 32 bits wide. */
int lg_filter_arch_is_32(uint32_t arch);

#endif
