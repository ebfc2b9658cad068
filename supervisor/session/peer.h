/* SPDX-License-Identifier: MIT */
/*
 * Who holds the other end of a loopback TCP connection, from the kernel's
 * table of TCP sockets (/proc/net/tcp). Pure: one line at a time.
 */
#ifndef LG_PEER_H
#define LG_PEER_H

#include <stdbool.h>

/*
 * True when one line of /proc/net/tcp is a live socket whose local address
 * is want ("0100007F:9EF8": the address and port in the table's
 * hexadecimal): not listening, and held by a process (an inode). Then its
 * owner's uid and its inode. A socket in TIME_WAIT, or orphaned, is held
 * by no one: the table says uid 0 and inode 0 for it, which name no owner
 * (an earlier connection from the same port leaves one behind).
 */
bool lg_tcp_line_live(const char *line, const char *want, unsigned long *uid,
		      unsigned long *inode);

#endif
