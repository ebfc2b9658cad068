/* SPDX-License-Identifier: MIT */
/*
 * Which programs a program-scoped rule means. A rule names a program by
 * its basename ("git"); a process counts as that program only when its
 * executable is the one installed under that name when the session
 * started: a file found on PATH then, or a file with the same bytes (and
 * size, last write and owner) that was already there, such as git's own
 * copy in its exec-path; or, when the name on PATH is an npm launcher
 * (Codex's codex.js), the binary of that name inside the node_modules tree
 * it lives in, there before the session (Codex's native binary); or, run
 * by its path (npx, node_modules/.bin), that binary in a node_modules tree
 * with a .bin/NAME, both there before the session; when it is rustup's
 * proxy (cargo -> rustup), the binary of that name in one of
 * RUSTUP_HOME's toolchains, there before the session. A binary
 * that merely calls itself "git", or one made to look like it (touch -r),
 * does not get git's rules.
 */
#ifndef LG_PROGRAMS_H
#define LG_PROGRAMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct lg_programs;

/*
 * Looks up each name on path_env (a PATH value) now. start_ns: the
 * session's start (CLOCK_REALTIME), for "already there". NULL on no memory.
 */
struct lg_programs *lg_programs_new(const char *const *names, size_t n,
				    const char *path_env, int64_t start_ns);
void lg_programs_free(struct lg_programs *p);
/*
 * name looked up at its first question rather than at the start (the
 * build tools of guard/clean.def: a start-up pays for none of them), on
 * the start's PATH, finding only files born before the session. 0, or
 * -ENOSPC, -ENOMEM (then never that program).
 */
int lg_programs_later(struct lg_programs *p, const char *name);

/* Is pid's executable the program name, as installed at the start? */
bool lg_programs_is(const struct lg_programs *p, const char *name, pid_t pid);

#endif
