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
#include <stdint.h>

bool lg_glob_match_path(const char *pattern, const char *path);

/*
 * The longest run of plain characters every path matching pattern must
 * contain, for a strstr() prefilter; "" when there is none worth having.
 */
void lg_glob_literal(const char *pattern, char *out, size_t size);

/*
 * A cheaper prefilter still: the bytes every path matching pattern must
 * contain (its plain characters but '/'), as a 64-bit set in which each
 * byte has one bit (letters, digits and . - _ ~ # a bit each, an upper
 * case letter its lower case one's, the other bytes share the rest). A
 * path whose lg_glob_path_bytes() lacks a bit of it cannot match.
 */
uint64_t lg_glob_bytes(const char *pattern);
uint64_t lg_glob_path_bytes(const char *path);

#endif
