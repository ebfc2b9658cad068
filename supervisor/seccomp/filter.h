/* SPDX-License-Identifier: MIT */
/*
 * The seccomp filter: which syscalls leave the kernel for the supervisor,
 * which fail outright, and how the notify loop maps a (arch, nr) back to
 * what the syscall does.
 */
#ifndef LG_FILTER_H
#define LG_FILTER_H

#include <linux/filter.h>
#include <stdint.h>

enum lg_sys {
	LG_SYS_OTHER,
	LG_SYS_UNLINK, /* path */
	LG_SYS_UNLINKAT, /* dirfd, path, flags */
	LG_SYS_RMDIR, /* path */
	LG_SYS_TRUNCATE, /* path, length */
	LG_SYS_TRUNCATE64, /* i386: path, length lo, length hi */
	LG_SYS_FTRUNCATE, /* fd, length */
	LG_SYS_FTRUNCATE64, /* i386: fd, length lo, length hi */
	LG_SYS_OPEN, /* path, flags */
	LG_SYS_OPENAT, /* dirfd, path, flags */
	LG_SYS_CREAT, /* path */
	LG_SYS_OPENAT2, /* dirfd, path, struct open_how * */
	LG_SYS_RENAME, /* old, new */
	LG_SYS_RENAMEAT, /* olddirfd, old, newdirfd, new */
	LG_SYS_RENAMEAT2, /* olddirfd, old, newdirfd, new, flags */
	LG_SYS_EXECVE, /* path, argv, envp */
	LG_SYS_EXECVEAT, /* dirfd, path, argv, envp, flags */
};

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
