// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "config/config.h"
#include "filter.h"
#include "lib/cleanup.h"
#include "lib/log.h"

/* opens leave the kernel to be counted (open_trunc) or kept first */
#define LG_SC_OPENS (LG_SC_OPEN_TRUNC | LG_SC_KEEP_WRITES)

static const struct lg_syscall map[] = {
#define LG_SYSCALL(name_, sys_, nr64, nr32, needs_, kind_, dirfd_, path_, \
		   flags_)                                                \
	{ .name = name_,                                                  \
	  .sys = LG_SYS_##sys_,                                           \
	  .kind = LG_KIND_##kind_,                                        \
	  .needs = needs_,                                                \
	  .nr = { nr64, nr32 },                                           \
	  .dirfd = dirfd_,                                                \
	  .path = path_,                                                  \
	  .flags = flags_ },
#include "syscalls.def"
#undef LG_SYSCALL
};
#define NMAP (sizeof(map) / sizeof(map[0]))

const struct lg_syscall *lg_syscall_of(enum lg_sys sys)
{
	return sys > LG_SYS_OTHER && (size_t)sys <= NMAP ? &map[sys - 1] : NULL;
}

int lg_filter_arch_is_32(uint32_t arch)
{
	return arch == AUDIT_ARCH_I386;
}

enum lg_sys lg_filter_classify(uint32_t arch, int nr)
{
	int a;

	if (arch == AUDIT_ARCH_X86_64)
		a = 0;
	else if (arch == AUDIT_ARCH_I386)
		a = 1;
	else
		return LG_SYS_OTHER;
	for (size_t i = 0; i < NMAP; i++)
		if (nr >= 0 && map[i].nr[a] == nr)
			return map[i].sys;
	return LG_SYS_OTHER;
}

/*
 * Adds rule for every arch in the filter that has the syscall; libseccomp
 * refuses a name an arch lacks (truncate64 on x86_64), which is fine.
 */
static int add(scmp_filter_ctx ctx, uint32_t action, const char *name,
	       unsigned nargs, const struct scmp_arg_cmp *cmp)
{
	int nr = seccomp_syscall_resolve_name(name);
	int r;

	if (nr == __NR_SCMP_ERROR)
		return 0;
	r = seccomp_rule_add_array(ctx, action, nr, nargs, cmp);
	if (r == -EDOM || r == -EINVAL)
		return 0;
	return r;
}

/*
 * Plain opens never leave the kernel: the flags are a value, matched in
 * the filter. O_TRUNC always; with keep_writes also an open for writing
 * that is not an append (which cannot lose a byte) or an O_PATH (no I/O).
 * O_EXCL without O_CREAT opens an existing file all the same; an O_EXCL
 * create makes a name the undo records (issue 39): both leave the kernel.
 */
static int add_open(scmp_filter_ctx ctx, const char *name, unsigned arg,
		    bool writes)
{
	const uint64_t mask = O_ACCMODE | O_APPEND | O_EXCL | O_PATH | O_TRUNC;
	const uint64_t acc[2] = { O_WRONLY, O_RDWR };
	struct scmp_arg_cmp cmp = { arg, SCMP_CMP_MASKED_EQ, O_TRUNC, O_TRUNC };
	int r = add(ctx, SCMP_ACT_NOTIFY, name, 1, &cmp);

	for (int i = 0; writes && r >= 0 && i < 2; i++) {
		cmp = (struct scmp_arg_cmp){ arg, SCMP_CMP_MASKED_EQ, mask,
					     acc[i] };
		r = add(ctx, SCMP_ACT_NOTIFY, name, 1, &cmp);
		cmp = (struct scmp_arg_cmp){ arg, SCMP_CMP_MASKED_EQ,
					     mask | O_CREAT, acc[i] | O_EXCL };
		if (r >= 0)
			r = add(ctx, SCMP_ACT_NOTIFY, name, 1, &cmp);
		/* an append grows a file: the undo records the size it had */
		cmp = (struct scmp_arg_cmp){ arg, SCMP_CMP_MASKED_EQ, mask,
					     acc[i] | O_APPEND };
		if (r >= 0)
			r = add(ctx, SCMP_ACT_NOTIFY, name, 1, &cmp);
		/* an O_EXCL create makes a name: the undo records it */
		cmp = (struct scmp_arg_cmp){ arg, SCMP_CMP_MASKED_EQ,
					     mask | O_CREAT,
					     acc[i] | O_EXCL | O_CREAT };
		if (r >= 0)
			r = add(ctx, SCMP_ACT_NOTIFY, name, 1, &cmp);
	}
	return r;
}

/* libseccomp 2.5 exports only to an fd: go through a memfd. */
static int export_bpf(scmp_filter_ctx ctx, struct lg_bpf *out)
{
	LG_AUTOFREE struct sock_filter *insns = NULL;
	LG_AUTOCLOSE int fd = memfd_create("lgrun-filter", MFD_CLOEXEC);
	off_t size;
	int r;

	if (fd < 0)
		return -errno;
	r = seccomp_export_bpf(ctx, fd);
	if (r < 0)
		return r;
	size = lseek(fd, 0, SEEK_END);
	if (size <= 0 || size % (off_t)sizeof(*insns) ||
	    size / (off_t)sizeof(*insns) > BPF_MAXINSNS)
		return -EINVAL;
	insns = malloc((size_t)size);
	if (!insns)
		return -ENOMEM;
	if (pread(fd, insns, (size_t)size, 0) != size)
		return -EIO;
	out->prog.len = (unsigned short)(size / (off_t)sizeof(*insns));
	out->prog.filter = lg_steal_ptr(&insns);
	return 0;
}

void lg_filter_free(struct lg_bpf *bpf)
{
	free(bpf->prog.filter);
	bpf->prog.filter = NULL;
	bpf->prog.len = 0;
}

int lg_filter_load(const struct lg_bpf *bpf)
{
	long fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
			  SECCOMP_FILTER_FLAG_NEW_LISTENER, &bpf->prog);

	return fd < 0 ? -errno : (int)fd;
}

LG_DEFINE_CLEANUP(scmp_releasep, scmp_filter_ctx, seccomp_release)

/* The filter's rules for syscalls (LG_SC_*) into ctx: 0, or < 0. */
static int add_rules(scmp_filter_ctx ctx, unsigned syscalls)
{
	/* io_uring ops bypass seccomp; an errno lets libuv fall back. */
	static const char *const uring[] = { "io_uring_setup", "io_uring_enter",
					     "io_uring_register" };
	int r;

	/*
	 * i386 programs are supervised like native ones; any other ABI
	 * (x32) is killed: it could do what the native rules deny.
	 */
	r = seccomp_arch_add(ctx, SCMP_ARCH_X86);
	if (r < 0 && r != -EEXIST)
		return r;
	r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH,
			     SCMP_ACT_KILL_PROCESS);
	if (r < 0)
		return r;

	for (size_t i = 0; i < NMAP; i++) {
		if (!(syscalls & map[i].needs))
			continue;
		if (map[i].kind == LG_KIND_OPEN)
			r = add_open(ctx, map[i].name, (unsigned)map[i].flags,
				     syscalls & LG_SC_KEEP_WRITES);
		else
			r = add(ctx, SCMP_ACT_NOTIFY, map[i].name, 0, NULL);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < 3; i++) {
		r = add(ctx, SCMP_ACT_ERRNO(ENOSYS), uring[i], 0, NULL);
		if (r < 0)
			return r;
	}
	return 0;
}

int lg_filter_build(unsigned syscalls, struct lg_bpf *out)
{
	LG_AUTO(scmp_releasep)
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	int r;

	if (!ctx)
		return -ENOMEM;
	r = add_rules(ctx, syscalls);
	if (r >= 0)
		r = export_bpf(ctx, out);
	if (r < 0) {
		lg_err("cannot build the seccomp filter: %s", strerror(-r));
		return r;
	}
	return 0;
}
