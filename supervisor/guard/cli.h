/* SPDX-License-Identifier: MIT */
/*
 * What a command line destroys off this host (issue 38): the destructive
 * verbs of the common CLIs (guard/cli.def, and [remote] commands), matched
 * against an exec's arguments. Pure: the notify step reads the arguments,
 * this decides.
 */
#ifndef LG_CLI_H
#define LG_CLI_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/error.h"

#define LG_CLI_TARGETS 4
#define LG_CLI_TARGET_MAX 256

struct lg_cli_table;

/*
 * The shipped table, then extra's lines ("PROGRAM PATTERN -> TARGET",
 * separated by ';' or newlines; NULL or "": none). NULL with err set when
 * a line of extra cannot be read.
 */
struct lg_cli_table *lg_cli_table_new(const char *extra, struct lg_error *err);
void lg_cli_table_free(struct lg_cli_table *t);

/* Does the table have a line for this program (a basename)? */
bool lg_cli_known(const struct lg_cli_table *t, const char *program);

struct lg_cli_match {
	char verb[64]; /* "kubectl delete", "psql DROP TABLE" */
	/*
	 * What it destroys or makes: "kubectl: pod web-1" (the same for a
	 * create and a delete of one object), an URL, an SQL object
	 * ("psql://HOST:PORT/DB/TABLE").
	 */
	unsigned n; /* targets */
	char targets[LG_CLI_TARGETS][LG_CLI_TARGET_MAX];
	/*
	 * Each target's kind: false destroys it, true makes it (kubectl
	 * apply, docker run --name, a CREATE of an SQL client's statements):
	 * the session's own from then on.
	 */
	bool made[LG_CLI_TARGETS];
	/*
	 * The shim can read this command's wire where it runs (curl of an
	 * http:// URL, psql): its answers tell what it destroyed, better
	 * than its command line does.
	 */
	bool wire;
};

/*
 * The command program (the basename of what is executed) with its
 * arguments argv[1..argc) in directory cwd: 1 when it destroys or makes
 * something off this host, out filled; 0 when not.
 */
int lg_cli_classify(const struct lg_cli_table *t, const char *program, int argc,
		    const char *const *argv, const char *cwd,
		    struct lg_cli_match *out);

#endif
