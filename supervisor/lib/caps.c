// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "caps.h"
#include "cleanup.h"

bool lg_may_load_bpf(void)
{
	char line[256];
	unsigned long long eff = 0;
	LG_AUTOFCLOSE FILE *f = fopen("/proc/self/status", "re");

	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "CapEff:", 7) == 0)
			eff = strtoull(line + 7, NULL, 16);
	/* CAP_SYS_ADMIN (21), or CAP_BPF (39) with CAP_PERFMON (38) */
	return (eff >> 21 & 1) || ((eff >> 39 & 1) && (eff >> 38 & 1));
}
