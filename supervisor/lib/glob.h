/* SPDX-License-Identifier: MIT */
/*
 * Path globs for ignore rules:
 *  - "name" (no '/') matches the last component, the target's own name:
 *    "*.o", "*~";
 *  - "name/" matches any directory on the way, so it covers everything
 *    below it: "node_modules/", "build/";
 *  - a pattern with '/' inside matches from the root when it starts with
 *    '/', else from any directory, and covers everything below what it
 *    matches: "/tmp/scratch", ".git/objects";
 *  - "**" crosses '/', '*' and '?' do not; "[a-z]", "[!x]" are classes.
 */
#ifndef LG_GLOB_H
#define LG_GLOB_H

#include <stdbool.h>
#include <stddef.h>

bool lg_glob_match_path(const char *pattern, const char *path);

/*
 * The longest run of plain characters every path matching pattern must
 * contain, for a strstr() prefilter; "" when there is none worth having.
 */
void lg_glob_literal(const char *pattern, char *out, size_t size);

#endif
