// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <string.h>

#include "peer.h"

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
