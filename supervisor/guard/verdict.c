// SPDX-License-Identifier: MIT
/* The verdicts by name: the guard's, the config's and lgctl's. */
#include <string.h>

#include "guard.h"

static const char *const verdict_names[] = {
	[LG_ALLOW] = "allow",
	[LG_WARN] = "warn",
	[LG_DENY] = "deny",
	[LG_KILL] = "kill",
};

const char *lg_verdict_name(enum lg_verdict v)
{
	if ((unsigned)v < sizeof(verdict_names) / sizeof(verdict_names[0]))
		return verdict_names[v];
	return "?";
}

int lg_verdict_parse(const char *s, enum lg_verdict *out)
{
	for (unsigned i = 0;
	     i < sizeof(verdict_names) / sizeof(verdict_names[0]); i++) {
		if (strcmp(s, verdict_names[i]) == 0) {
			*out = (enum lg_verdict)i;
			return 0;
		}
	}
	return -1;
}
