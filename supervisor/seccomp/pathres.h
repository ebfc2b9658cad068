/* SPDX-License-Identifier: MIT */
/*
 * Pure path helpers for the notify loop: a path argument as the target saw
 * it, plus the directory it is relative to, becomes one absolute path.
 */
#ifndef LG_PATHRES_H
#define LG_PATHRES_H

#include <stddef.h>

/*
 * Joins base (absolute) and path, then removes "", "." and ".." components
 * lexically. The final component is kept as is (unlink does not follow it).
 * Returns the length, or -ENAMETOOLONG / -EINVAL.
 */
int lg_path_resolve(const char *base, const char *path, char *out, size_t size);

/* Drops the " (deleted)" suffix the kernel adds to fd links; 1 if it did. */
int lg_path_strip_deleted(char *path);

/* Last component of path (no allocation). */
const char *lg_path_basename(const char *path);

#endif
