/* SPDX-License-Identifier: MIT */
/*
 * Another process's memory read: a NUL-terminated string at an address
 * of its (lg_proc_string), a page at a time, so a string ending just
 * before an unmapped page is still read; a struct (lg_proc_read).
 */
#ifndef LG_PROCMEM_H
#define LG_PROCMEM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * The string at addr in pid's memory into buf (size bytes at most, its
 * NUL included): its length, or -errno (EFAULT: a NULL address or an
 * unreadable page, ENAMETOOLONG: no NUL within size).
 */
int lg_proc_string(pid_t pid, uint64_t addr, char *buf, size_t size);
/* size bytes at addr in pid's memory into buf, all of them: 0 or -errno. */
int lg_proc_read(pid_t pid, uint64_t addr, void *buf, size_t size);

#endif
