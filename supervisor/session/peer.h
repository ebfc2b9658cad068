/* SPDX-License-Identifier: MIT */
/*
 * Who holds the other end of a loopback TCP connection, from the kernel's
 * table of TCP sockets (/proc/net/tcp). Pure: one line at a time.
 */
#ifndef LG_PEER_H
#define LG_PEER_H

/*
 * The uid that owns the socket of one line of /proc/net/tcp, when its local
 * address is want ("0100007F:9EF8": the address and port in the table's
 * hexadecimal) and it is a live socket: not listening, and held by a
 * process (an inode). A socket in TIME_WAIT, or orphaned, is held by no one:
 * the table says uid 0 for it, which is not its owner. -1 otherwise.
 */
long lg_tcp_line_owner(const char *line, const char *want);

#endif
