/* SPDX-License-Identifier: MIT */
/*
 * Who holds the other end of a loopback TCP connection, from the kernel's
 * table of TCP sockets (/proc/net/tcp): one line judged (lg_tcp_line_live,
 * pure), and the table scanned for a peer (lg_tcp_peer). The one scan of
 * it: the proxies' refusals (whose uid) and the egress proxy's challenge
 * (whose socket) both ask here.
 */
#ifndef LG_TCP_H
#define LG_TCP_H

#include <netinet/in.h>
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

/*
 * The live socket whose local end is peer (a client of lgrun's proxies on
 * loopback): its owner's uid and its inode. 0, or -1 when it is not in
 * this network namespace's table (gone already, or another namespace).
 */
int lg_tcp_peer(const struct sockaddr_in *peer, unsigned long *uid,
		unsigned long *inode);

#endif
