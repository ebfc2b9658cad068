/* SPDX-License-Identifier: MIT */
/*
 * The seccomp filter: which syscalls leave the kernel for the supervisor,
 * which fail outright, and how the notify loop maps a (arch, nr) back to
 * what the syscall does.
 */
#ifndef LG_FILTER_H
#define LG_FILTER_H

#include <seccomp.h>
#include <stdint.h>

enum lg_sys {
	LG_SYS_OTHER,
	LG_SYS_UNLINK,	  /* path */
	LG_SYS_UNLINKAT,  /* dirfd, path, flags */
	LG_SYS_RMDIR,	  /* path */
	LG_SYS_TRUNCATE,  /* path, length */
	LG_SYS_TRUNCATE64, /* i386: path, length lo, length hi */
	LG_SYS_FTRUNCATE, /* fd, length */
	LG_SYS_FTRUNCATE64, /* i386: fd, length lo, length hi */
	LG_SYS_OPEN,	  /* path, flags */
	LG_SYS_OPENAT,	  /* dirfd, path, flags */
	LG_SYS_CREAT,	  /* path */
	LG_SYS_OPENAT2,	  /* dirfd, path, struct open_how * */
};

/* Builds the filter for the LG_SC_* mask; the caller loads it in the child. */
int lg_filter_build(unsigned syscalls, scmp_filter_ctx *out);

/* What (arch, nr) of a notification is. */
enum lg_sys lg_filter_classify(uint32_t arch, int nr);

/* True when pointers of this arch are 32 bits wide. */
int lg_filter_arch_is_32(uint32_t arch);

#endif
