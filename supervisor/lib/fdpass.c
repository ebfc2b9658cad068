// SPDX-License-Identifier: MIT
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fdpass.h"

union cmsg_one {
	struct cmsghdr align;
	char buf[CMSG_SPACE(sizeof(int))];
};

int lg_send_fd(int sock, int fd, const void *data, size_t n)
{
	union cmsg_one u;
	struct iovec iov = { (void *)data, n };
	struct msghdr msg = { .msg_iov = &iov,
			      .msg_iovlen = 1,
			      .msg_control = u.buf,
			      .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	ssize_t r;

	memset(u.buf, 0, sizeof(u.buf));
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	r = sendmsg(sock, &msg, MSG_NOSIGNAL);
	if (r < 0)
		return -errno;
	return (size_t)r == n ? 0 : -EMSGSIZE;
}

ssize_t lg_recv_fd(int sock, void *buf, size_t size, int *fd, int flags)
{
	union cmsg_one u;
	struct iovec iov = { buf, size };
	struct msghdr msg = { .msg_iov = &iov,
			      .msg_iovlen = 1,
			      .msg_control = u.buf,
			      .msg_controllen = sizeof(u.buf) };
	ssize_t n;

	*fd = -1;
	n = recvmsg(sock, &msg, flags | MSG_CMSG_CLOEXEC);
	if (n < 0)
		return -errno;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c;
	     c = CMSG_NXTHDR(&msg, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
		    c->cmsg_len >= CMSG_LEN(sizeof(int)))
			memcpy(fd, CMSG_DATA(c), sizeof(int));
	if (n == 0 && *fd >= 0) {
		close(*fd);
		*fd = -1;
	}
	return n;
}
