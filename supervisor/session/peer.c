// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <string.h>

#include "peer.h"

long lg_tcp_line_owner(const char *line, const char *want)
{
	char local[64], remote[64], st[8];
	unsigned long uid, inode;

	if (sscanf(line, " %*s %63s %63s %7s %*s %*s %*s %lu %*s %lu", local,
		   remote, st, &uid, &inode) != 5 ||
	    strcmp(local, want) != 0)
		return -1;
	/* 0A: listening; 06: TIME_WAIT; inode 0: no process holds it */
	if (strcmp(st, "0A") == 0 || strcmp(st, "06") == 0 || inode == 0)
		return -1;
	return (long)uid;
}
