/* SPDX-License-Identifier: MIT */
/*
 * lgctl's verbs, one file each, and what they share (common.c, below them
 * all). main.c holds the table of verbs (lgctl_commands: name, function,
 * usage), the dispatch, and the usage built from the table.
 */
#ifndef LG_LGCTL_H
#define LG_LGCTL_H

#include <stdbool.h>

#include "quarantine/index.h"

struct lg_config;

/*
 * One verb: lgctl [OPTIONS] NAME ARGS... runs run(dir, cfg, argc, argv)
 * with argv[0] the verb (dir: the state dir; cfg: lgctl's config, loaded).
 * It answers lgctl's exit status, or LGCTL_USAGE: its arguments are not
 * its own (the usage on stderr, exit 2).
 */
struct lgctl_command {
	const char *name;
	int (*run)(const char *dir, const struct lg_config *cfg, int argc,
		   char **argv);
	const char *args; /* its arguments, after its name in the usage */
	/*
	 * What it does, for the usage (a '\n' goes on to another line of
	 * its own: the usage indents it)
	 */
	const char *help;
	bool dir_optional; /* runs when the state dir is not found (dir "") */
};

enum { LGCTL_USAGE = -1 };

/* s made safe for the terminal (one of 4 rotating buffers). */
const char *lgq_show(const char *s);

/* Who runs lgctl, for the audit's "by": sudo's user, else the real uid's
 * name, else "uid N" (never empty; the environment's USER is not trusted
 * over the uid: a root shell often has none). */
const char *lgctl_operator(void);

/* The verbs, in the order of lgctl's usage. */
int lgctl_status(const char *dir, const struct lg_config *cfg, int argc,
		 char **argv);
int lgctl_reset(const char *dir, const struct lg_config *cfg, int argc,
		char **argv);
int lgctl_stop(const char *dir, const struct lg_config *cfg, int argc,
	       char **argv);
int lgctl_replay(const char *dir, const struct lg_config *cfg, int argc,
		 char **argv);
int lgctl_report(const char *dir, const struct lg_config *cfg, int argc,
		 char **argv);
int lgctl_top(const char *dir, const struct lg_config *cfg, int argc,
	      char **argv);
int lgctl_suggest(const char *dir, const struct lg_config *cfg, int argc,
		  char **argv);
/* lgctl restore and lgctl rewind (issue 40): the undo's (undo/undo.h) */
int lgctl_restore(const char *dir, const struct lg_config *cfg, int argc,
		  char **argv);
int lgctl_rewind(const char *dir, const struct lg_config *cfg, int argc,
		 char **argv);
int lgctl_quarantine(const char *dir, const struct lg_config *cfg, int argc,
		     char **argv);
int lgctl_doctor(const char *dir, const struct lg_config *cfg, int argc,
		 char **argv);

#endif
