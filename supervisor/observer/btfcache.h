/* SPDX-License-Identifier: MIT */
/*
 * The kernel's BTF minimized for lgrun's programs, kept per boot in a
 * folder of the state dir (liblgbpf.so; see btfcache.c).
 */
#ifndef LG_BTFCACHE_H
#define LG_BTFCACHE_H

#include <stdbool.h>
#include <stddef.h>

/*
 * The copy's path in dir for the programs whose digest is progs (hex,
 * LGB_PROGS_DIGEST): 0 or -errno.
 */
int lgb_btf_path(const char *dir, const char *progs, char *out, size_t size);
/* It exists and is lgrun's own to read (see btfcache.c). */
bool lgb_btf_usable(const char *dir, const char *path);
/*
 * Makes it with bpftool (gen min_core_btf): 1 made, 0 another maker is at
 * it, -errno (-ENOENT: no bpftool). Earlier boots' copies are removed.
 */
int lgb_btf_make(const char *dir, const char *path, const void *obj,
		 size_t objsz);

#endif
