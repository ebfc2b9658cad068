/* SPDX-License-Identifier: MIT */
/*
 * lgctl's commands that live in files of their own, and what they share
 * (common.c, below them all).
 */
#ifndef LG_LGCTL_H
#define LG_LGCTL_H

#include "quarantine/index.h"

/* s made safe for the terminal (one of 4 rotating buffers). */
const char *lgq_show(const char *s);

/* Who runs lgctl, for the audit's "by": sudo's user, else the real uid's
 * name, else "uid N" (never empty; the environment's USER is not trusted
 * over the uid: a root shell often has none). */
const char *lgctl_operator(void);

/* lgctl replay SESSION [OPTIONS]; argv[0] is "replay". */
int lgctl_replay(const char *dir, int argc, char **argv);

/* lgctl report SESSION [-o FILE]; argv[0] is "report". */
int lgctl_report(const char *dir, int argc, char **argv);

/* lgctl top [OPTIONS]; argv[0] is "top". */
int lgctl_top(const char *dir, int argc, char **argv);

/* lgctl suggest SESSION... [OPTIONS]; argv[0] is "suggest". */
int lgctl_suggest(const char *dir, int argc, char **argv);

/* lgctl restore SESSION [OPTIONS] [PATH...]; argv[0] is "restore". */
int lgctl_restore(const char *dir, int argc, char **argv);
/* lgctl rewind SESSION --turn K [OPTIONS] [PATH...] (issue 40). */
int lgctl_rewind(const char *dir, int argc, char **argv);

/* lgctl doctor [--no-canary] [--quiet]; argv[0] is "doctor". */
int lgctl_doctor(const char *dir, int argc, char **argv);

struct lg_config;
/* lgctl quarantine list|gc ...; argv[0] is "quarantine". */
int lgctl_quarantine(const char *dir, const struct lg_config *cfg, int argc,
		     char **argv);

#endif
