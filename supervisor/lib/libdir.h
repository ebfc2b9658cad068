/* SPDX-License-Identifier: MIT */
/*
 * lgrun's libraries found next to the running binary: lgrun's shim, the
 * LLM proxy's, the observer's and the TLS library, and lgctl doctor's
 * look at them.
 */
#ifndef LG_LIBDIR_H
#define LG_LIBDIR_H

#include <stdbool.h>
#include <stddef.h>

/*
 * name in <bindir>/../lib/lgrun (a distribution's package), else
 * <bindir>/../lib (make install), into out: true when readable there.
 */
bool lg_libdir_file(const char *name, char *out, size_t size);

#endif
