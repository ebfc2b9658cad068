// SPDX-License-Identifier: MIT
/*
 * Unit tests for filter.c and syscalls.def: the numbers the table gives
 * (which the eBPF observer uses as they are) are libseccomp's, every line
 * classifies back to itself on both arches, and the filter builds.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <linux/audit.h>
#include <seccomp.h>
#include <cmocka.h>

#include "config/config.h"
#include "seccomp/filter.h"

static const uint32_t scmp_arch[2] = { SCMP_ARCH_X86_64, SCMP_ARCH_X86 };
static const uint32_t audit_arch[2] = { AUDIT_ARCH_X86_64, AUDIT_ARCH_I386 };

static void test_numbers(void **state)
{
	(void)state;
	for (int s = LG_SYS_OTHER + 1; lg_syscall_of((enum lg_sys)s); s++) {
		const struct lg_syscall *sc = lg_syscall_of((enum lg_sys)s);

		assert_int_equal(sc->sys, s);
		for (int a = 0; a < 2; a++) {
			int nr = seccomp_syscall_resolve_name_arch(scmp_arch[a],
								   sc->name);

			assert_int_equal(sc->nr[a], nr < 0 ? -1 : nr);
			if (sc->nr[a] >= 0)
				assert_int_equal(
					lg_filter_classify(audit_arch[a],
							   sc->nr[a]),
					s);
		}
	}
	assert_null(lg_syscall_of(LG_SYS_OTHER));
	assert_int_equal(lg_filter_classify(AUDIT_ARCH_X86_64, 0),
			 LG_SYS_OTHER);
	assert_int_equal(lg_filter_classify(AUDIT_ARCH_X86_64, -1),
			 LG_SYS_OTHER);
	/* x32 is not judged here: the filter kills it */
	assert_int_equal(lg_filter_classify(AUDIT_ARCH_X86_64, 0x40000000 | 87),
			 LG_SYS_OTHER);
}

static void test_build(void **state)
{
	struct lg_bpf bpf = { 0 };

	(void)state;
	assert_int_equal(lg_filter_build(LG_SC_DEFAULT | LG_SC_OPEN_TRUNC |
						 LG_SC_KEEP_WRITES | LG_SC_EXEC,
					 &bpf),
			 0);
	assert_true(bpf.prog.len > 0);
	lg_filter_free(&bpf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_build),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
