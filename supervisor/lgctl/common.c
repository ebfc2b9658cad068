// SPDX-License-Identifier: MIT
/*
 * What lgctl's commands share (lgctl.h): text made safe for the terminal,
 * and who the operator is. Below every command and main.c.
 */
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lgctl.h"
#include "lib/termtext.h"

const char *lgq_show(const char *s)
{
	static char buf[4][PATH_MAX * 2];
	static int k;

	k = (k + 1) % 4;
	lg_term_escape(buf[k], sizeof(buf[k]), s, strlen(s));
	return buf[k];
}

const char *lgctl_operator(void)
{
	static char who[64];
	const char *sudo = getenv("SUDO_USER");
	struct passwd *pw;

	if (sudo && *sudo)
		return sudo;
	pw = getpwuid(getuid());
	if (pw && pw->pw_name && *pw->pw_name)
		return pw->pw_name;
	snprintf(who, sizeof(who), "uid %u", (unsigned)getuid());
	return who;
}
