// SPDX-License-Identifier: MIT
#include <errno.h>
#include <string.h>
#include <sys/uio.h>

#include "procmem.h"

int lg_proc_string(pid_t pid, uint64_t addr, char *buf, size_t size)
{
	size_t got = 0;

	if (!addr)
		return -EFAULT;
	while (got < size) {
		uint64_t a = addr + got;
		size_t chunk = 4096 - (a & 4095);
		struct iovec local, remote;
		ssize_t r;
		char *nul;

		if (chunk > size - got)
			chunk = size - got;
		local = (struct iovec){ buf + got, chunk };
		remote = (struct iovec){ (void *)(uintptr_t)a, chunk };
		r = process_vm_readv(pid, &local, 1, &remote, 1, 0);
		if (r <= 0)
			return r < 0 ? -errno : -EFAULT;
		nul = memchr(buf + got, '\0', (size_t)r);
		if (nul)
			return (int)(nul - buf);
		got += (size_t)r;
	}
	return -ENAMETOOLONG;
}

int lg_proc_read(pid_t pid, uint64_t addr, void *buf, size_t size)
{
	struct iovec local = { buf, size };
	struct iovec remote = { (void *)(uintptr_t)addr, size };
	ssize_t r = process_vm_readv(pid, &local, 1, &remote, 1, 0);

	if (r < 0)
		return -errno;
	return (size_t)r == size ? 0 : -EFAULT;
}
