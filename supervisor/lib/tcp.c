// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <string.h>

#include "cleanup.h"
#include "tcp.h"

bool lg_tcp_line_live(const char *line, const char *want, unsigned long *uid,
		      unsigned long *inode)
{
	char local[64], remote[64], st[8];

	if (sscanf(line, " %*s %63s %63s %7s %*s %*s %*s %lu %*s %lu", local,
		   remote, st, uid, inode) != 5 ||
	    strcmp(local, want) != 0)
		return false;
	/* 0A: listening; 06: TIME_WAIT; inode 0: no process holds it */
	return strcmp(st, "0A") != 0 && strcmp(st, "06") != 0 && *inode != 0;
}

int lg_tcp_peer(const struct sockaddr_in *peer, unsigned long *uid,
		unsigned long *inode)
{
	LG_AUTOFCLOSE FILE *f = fopen("/proc/net/tcp", "re");
	char line[512], want[16];

	if (!f)
		return -1;
	snprintf(want, sizeof(want), "%08X:%04X", peer->sin_addr.s_addr,
		 ntohs(peer->sin_port));
	while (fgets(line, sizeof(line), f))
		/*
		 * a live socket: an earlier one from that port in TIME_WAIT
		 * says uid 0 and inode 0, and would hide the real client
		 */
		if (lg_tcp_line_live(line, want, uid, inode))
			return 0;
	return -1;
}
