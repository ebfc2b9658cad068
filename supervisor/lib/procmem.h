/* SPDX-License-Identifier: MIT */
/*
 * Another process's memory read: a NUL-terminated string at an address
 * of its (lg_proc_string), a page at a time, so a string ending just
 * before an unmapped page is still read; a struct (lg_proc_read). The way
 * they read is chosen once, by lg_procmem_probe on the launched tree:
 * process_vm_readv where the host's seccomp profile allows it, else
 * /proc/PID/mem (a default Docker container).
 */
#ifndef LG_PROCMEM_H
#define LG_PROCMEM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum lg_procmem_way {
	LG_PROCMEM_VM, /* process_vm_readv, the default */
	LG_PROCMEM_FILE, /* /proc/PID/mem */
	LG_PROCMEM_NONE, /* neither: arguments cannot be read */
};

/* What each way answered the probe: 0, or -errno (-ENOTSUP: not tried). */
struct lg_procmem_probe {
	int vm_err, file_err;
};

/*
 * Chooses the way: reads size bytes (64 at most) at addr in pid, which
 * must hold the same bytes as this process at addr (a child forked and
 * not yet exec'd). LGRUN_ARGS_VIA=proc skips process_vm_readv (tests and
 * make bench measure the fallback with it). Returns the way, also kept.
 */
enum lg_procmem_way lg_procmem_probe(pid_t pid, const void *addr, size_t size,
				     struct lg_procmem_probe *why);
const char *lg_procmem_way_name(enum lg_procmem_way w);
/*
 * After a probe found no way: why the host refuses both, and the one
 * change that fixes it (no /proc, Yama's ptrace_scope, a seccomp profile).
 */
const char *lg_procmem_hint(const struct lg_procmem_probe *p);

/*
 * The string at addr in pid's memory into buf (size bytes at most, its
 * NUL included): its length, or -errno (EFAULT: a NULL address or an
 * unreadable page, ENAMETOOLONG: no NUL within size).
 */
int lg_proc_string(pid_t pid, uint64_t addr, char *buf, size_t size);
/* size bytes at addr in pid's memory into buf, all of them: 0 or -errno. */
int lg_proc_read(pid_t pid, uint64_t addr, void *buf, size_t size);

#endif
