// SPDX-License-Identifier: MIT
/*
 * Another process's memory, read one of two ways, chosen once at start by
 * lg_procmem_probe on the launched child:
 * - process_vm_readv: one syscall, no file;
 * - /proc/PID/mem: an open, a pread and a close. Docker's default seccomp
 *   profile refuses process_vm_readv (and pidfd_getfd) to a container
 *   without CAP_SYS_PTRACE, but not these: the kernel asks of both the
 *   same ptrace-read access (same uid, dumpable), which lgrun has over
 *   its own tree.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "procmem.h"

static enum lg_procmem_way way = LG_PROCMEM_VM;
/* /proc, opened once: openat(proc, "PID/mem") skips one lookup */
static int proc_dir = -1;

static const char *const way_names[] = {
	[LG_PROCMEM_VM] = "process_vm_readv",
	[LG_PROCMEM_FILE] = "/proc/PID/mem",
	[LG_PROCMEM_NONE] = "no way",
};

const char *lg_procmem_way_name(enum lg_procmem_way w)
{
	return w <= LG_PROCMEM_NONE ? way_names[w] : "?";
}

static int mem_open(pid_t pid)
{
	char name[32];
	int fd;

	snprintf(name, sizeof(name), "%d/mem", (int)pid);
	fd = proc_dir >= 0 ? openat(proc_dir, name, O_RDONLY | O_CLOEXEC) : -1;
	if (fd < 0 && proc_dir < 0) {
		char path[40];

		snprintf(path, sizeof(path), "/proc/%s", name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
	}
	return fd < 0 ? -errno : fd;
}

/* Up to size bytes at addr: how many, or -errno. */
static ssize_t read_some(pid_t pid, int memfd, uint64_t addr, void *buf,
			 size_t size)
{
	ssize_t r;

	if (memfd >= 0) {
		/* /proc/PID/mem takes the address as the offset */
		if (addr > (uint64_t)INT64_MAX)
			return -EFAULT;
		r = pread(memfd, buf, size, (off_t)addr);
		/* an unmapped page: EIO, as process_vm_readv's EFAULT */
		return r < 0 ? (errno == EIO ? -EFAULT : -errno) : r;
	}
	{
		struct iovec local = { buf, size };
		struct iovec remote = { (void *)(uintptr_t)addr, size };

		r = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	}
	return r < 0 ? -errno : r;
}

int lg_proc_string(pid_t pid, uint64_t addr, char *buf, size_t size)
{
	size_t got = 0;
	int memfd = -1, ret = -ENAMETOOLONG;

	if (!addr)
		return -EFAULT;
	if (way == LG_PROCMEM_FILE && (memfd = mem_open(pid)) < 0)
		return memfd;
	while (got < size) {
		uint64_t a = addr + got;
		size_t chunk = 4096 - (a & 4095);
		ssize_t r;
		char *nul;

		if (chunk > size - got)
			chunk = size - got;
		r = read_some(pid, memfd, a, buf + got, chunk);
		if (r <= 0) {
			ret = r < 0 ? (int)r : -EFAULT;
			break;
		}
		nul = memchr(buf + got, '\0', (size_t)r);
		if (nul) {
			ret = (int)(nul - buf);
			break;
		}
		got += (size_t)r;
	}
	if (memfd >= 0)
		close(memfd);
	return ret;
}

int lg_proc_read(pid_t pid, uint64_t addr, void *buf, size_t size)
{
	int memfd = -1;
	ssize_t r;

	if (way == LG_PROCMEM_FILE && (memfd = mem_open(pid)) < 0)
		return memfd;
	r = read_some(pid, memfd, addr, buf, size);
	if (memfd >= 0)
		close(memfd);
	if (r < 0)
		return (int)r;
	return (size_t)r == size ? 0 : -EFAULT;
}

/* Whether way w reads the bytes at addr in pid as they are here. */
static int try_way(enum lg_procmem_way w, pid_t pid, const void *addr,
		   size_t size)
{
	char got[64];
	int memfd = -1;
	ssize_t r;

	if (size > sizeof(got))
		size = sizeof(got);
	if (w == LG_PROCMEM_FILE && (memfd = mem_open(pid)) < 0)
		return memfd;
	r = read_some(pid, memfd, (uint64_t)(uintptr_t)addr, got, size);
	if (memfd >= 0)
		close(memfd);
	if (r < 0)
		return (int)r;
	return (size_t)r == size && memcmp(got, addr, size) == 0 ? 0 : -EIO;
}

enum lg_procmem_way lg_procmem_probe(pid_t pid, const void *addr, size_t size,
				     struct lg_procmem_probe *why)
{
	const char *force = getenv("LGRUN_ARGS_VIA");

	if (proc_dir < 0)
		proc_dir = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
	memset(why, 0, sizeof(*why));
	why->vm_err = force && strcmp(force, "proc") == 0 ?
			      -ENOTSUP :
			      try_way(LG_PROCMEM_VM, pid, addr, size);
	if (why->vm_err == 0)
		return way = LG_PROCMEM_VM;
	why->file_err = try_way(LG_PROCMEM_FILE, pid, addr, size);
	if (why->file_err == 0)
		return way = LG_PROCMEM_FILE;
	return way = LG_PROCMEM_NONE;
}

const char *lg_procmem_hint(const struct lg_procmem_probe *p)
{
	char v[8] = "";
	FILE *f;

	if (p->file_err == -ENOENT)
		return "/proc is not mounted here: mount it (mount -t proc proc /proc)";
	f = fopen("/proc/sys/kernel/yama/ptrace_scope", "re");
	if (f) {
		if (!fgets(v, sizeof(v), f))
			v[0] = '\0';
		fclose(f);
	}
	if (v[0] == '3')
		return "kernel.yama.ptrace_scope is 3: no process may read another's memory, and the setting cannot be lowered until a reboot: boot with it at 1 or less";
	if (v[0] == '2')
		return "kernel.yama.ptrace_scope is 2: only CAP_SYS_PTRACE may read another process's memory: run lgrun as root, or with that capability (docker run --cap-add SYS_PTRACE), or set the sysctl to 1";
	return "this host's seccomp profile or security module refuses them: in a container, add --cap-add SYS_PTRACE; lgctl doctor says what else is missing";
}
