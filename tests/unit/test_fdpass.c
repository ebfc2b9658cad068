// SPDX-License-Identifier: MIT
/*
 * Unit tests for fdpass.c: an fd sent with its bytes arrives as the same
 * file, close-on-exec; bytes without an fd say so; an fd with no bytes
 * (a zero-length datagram) is not left open.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "lib/fdpass.h"

static void same_file(int a, int b)
{
	struct stat sa, sb;

	assert_int_equal(fstat(a, &sa), 0);
	assert_int_equal(fstat(b, &sb), 0);
	assert_true(sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino);
}

static void test_stream(void **state)
{
	int sv[2], fd, p[2];
	char tag = 0;

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(pipe(p), 0);
	assert_int_equal(lg_send_fd(sv[0], p[1], "F", 1), 0);
	assert_int_equal(lg_recv_fd(sv[1], &tag, 1, &fd, 0), 1);
	assert_int_equal(tag, 'F');
	assert_true(fd >= 0);
	same_file(fd, p[1]);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	close(fd);
	/* bytes alone: no fd */
	assert_int_equal(write(sv[0], "E", 1), 1);
	assert_int_equal(lg_recv_fd(sv[1], &tag, 1, &fd, 0), 1);
	assert_int_equal(tag, 'E');
	assert_int_equal(fd, -1);
	/* nothing waiting */
	assert_int_equal(lg_recv_fd(sv[1], &tag, 1, &fd, MSG_DONTWAIT),
			 -EAGAIN);
	assert_int_equal(fd, -1);
	/* the end */
	close(sv[0]);
	assert_int_equal(lg_recv_fd(sv[1], &tag, 1, &fd, 0), 0);
	assert_int_equal(fd, -1);
	close(sv[1]);
	close(p[0]);
	close(p[1]);
}

static void test_seqpacket_empty(void **state)
{
	int sv[2], fd = -2, p[2], before;
	char buf[8];

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	assert_int_equal(pipe(p), 0);
	before = dup(0);
	close(before); /* the lowest free fd now */
	assert_int_equal(lg_send_fd(sv[0], p[0], "", 0), 0);
	assert_int_equal(lg_recv_fd(sv[1], buf, sizeof(buf), &fd, 0), 0);
	assert_int_equal(fd, -1);
	/* it was closed: the lowest free fd is free again */
	fd = dup(0);
	assert_int_equal(fd, before);
	close(fd);
	close(sv[0]);
	close(sv[1]);
	close(p[0]);
	close(p[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stream),
		cmocka_unit_test(test_seqpacket_empty),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
