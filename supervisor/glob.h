/* SPDX-License-Identifier: MIT */
/*
 * Path globs for ignore rules, gitignore-like:
 *  - a pattern without '/' matches any one component ("node_modules", "*.o"),
 *    so everything under a matching directory is covered;
 *  - a pattern with '/' matches from the root when it starts with '/', else
 *    from any component ("**" crosses '/', '*' and '?' do not);
 *  - a pattern that matches a directory covers everything below it;
 *  - a trailing '/' ("build/") matches directories only: what is below
 *    them, never a file of that name.
 */
#ifndef LG_GLOB_H
#define LG_GLOB_H

#include <stdbool.h>

bool lg_glob_match_path(const char *pattern, const char *path);

#endif
