// SPDX-License-Identifier: MIT
/*
 * Unit tests for lib/tcp.c: who holds a loopback connection's other
 * end, from /proc/net/tcp's lines.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "lib/tcp.h"

/* 127.0.0.1:40704 as the table writes it */
#define PEER "0100007F:9F00"

/* the owner's uid of a live socket of PEER's, else -1 */
static long owner(const char *line)
{
	unsigned long uid = 7, ino = 7;

	return lg_tcp_line_live(line, PEER, &uid, &ino) ? (long)uid : -1;
}

static void test_live_socket_names_its_owner(void **state)
{
	unsigned long uid, ino;

	(void)state;
	/* its inode too: the egress proxy asks whether the tree holds it */
	assert_true(lg_tcp_line_live(
		"   7: 0100007F:9F00 0100007F:8F2B 01 00000000:00000000 00:00000000 00000000 1000        0 81234 1 0000000000000000 20 4 30 10 -1",
		PEER, &uid, &ino));
	assert_int_equal(uid, 1000);
	assert_int_equal(ino, 81234);
	assert_int_equal(
		owner("   7: 0100007F:9F00 0100007F:8F2B 01 00000000:00000000 00:00000000 00000000 65534        0 81234 1 0000000000000000 20 4 30 10 -1"),
		65534);
}

/*
 * An earlier connection from the same port, closed, waits in TIME_WAIT:
 * the table says uid 0 and inode 0 for it. It is no one's: taking it for
 * the peer named root as the user of another user's connection (a flaky
 * t_proxy_outsiders, which found "uid":0 for nobody's request).
 */
static void test_time_wait_is_no_ones(void **state)
{
	(void)state;
	assert_int_equal(
		owner("   3: 0100007F:9F00 0100007F:84A1 06 00000000:00000000 03:00000F9F 00000000     0        0 0 3 0000000000000000"),
		-1);
	/* an orphaned socket (FIN_WAIT2 after its close): no inode */
	assert_int_equal(
		owner("   4: 0100007F:9F00 0100007F:84A1 05 00000000:00000000 00:00000000 00000000     0        0 0 2 0000000000000000 20 4 30 10 -1"),
		-1);
}

static void test_others_and_listeners(void **state)
{
	(void)state;
	/* another port */
	assert_int_equal(
		owner("   7: 0100007F:9F01 0100007F:8F2B 01 00000000:00000000 00:00000000 00000000 65534        0 81234 1 0000000000000000 20 4 30 10 -1"),
		-1);
	/* a listening socket on that address */
	assert_int_equal(
		owner("   0: 0100007F:9F00 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1049 1 0000000000000000 100 0 0 10 0"),
		-1);
	/* the table's head, and a short line */
	assert_int_equal(
		owner("  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode"),
		-1);
	assert_int_equal(owner("   7: 0100007F:9F00"), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_live_socket_names_its_owner),
		cmocka_unit_test(test_time_wait_is_no_ones),
		cmocka_unit_test(test_others_and_listeners),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
