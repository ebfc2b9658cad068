// SPDX-License-Identifier: MIT
/*
 * Provenance's state (prov.h): its life. What its files remember is each
 * one's part of struct lg_prov (prov_int.h), freed here through them.
 */
#include "prov_int.h"

struct lg_prov *lg_prov_new(int64_t start_real_ns)
{
	struct lg_prov *p = calloc(1, sizeof(*p));

	if (p)
		p->start_real_ns = start_real_ns;
	return p;
}

void lg_prov_free(struct lg_prov *p)
{
	if (!p)
		return;
	prov_archives_free(p);
	prov_regen_free(p);
	free(p);
}
