/* SPDX-License-Identifier: MIT */
/* A file descriptor passed over a unix socket (SCM_RIGHTS), one at a time. */
#ifndef LG_FDPASS_H
#define LG_FDPASS_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Sends fd with the n bytes at data (at least one: a stream carries an fd
 * only with data). Async-signal-safe: the launch's child uses it between
 * fork and exec. 0, or -errno (-EMSGSIZE when not all of data went).
 */
int lg_send_fd(int sock, int fd, const void *data, size_t n);

/*
 * One recvmsg (flags: MSG_DONTWAIT, ...; the fd comes close-on-exec) into
 * buf; *fd gets the fd that came with the bytes, else -1. Returns the
 * bytes received, 0 at the end (an fd that came with no bytes is closed),
 * or -errno (EINTR included: the caller decides whether to retry).
 */
ssize_t lg_recv_fd(int sock, void *buf, size_t size, int *fd, int flags);

#endif
