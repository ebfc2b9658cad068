// SPDX-License-Identifier: MIT
/*
 * lgctl restore and lgctl rewind: the command line of the undo engine
 * (undo/undo.h). Their options read into an lg_undo_ask, the undo run, each
 * line it says printed safe for the terminal (what it did on standard
 * output, why it refuses on standard error), its tally summed up and
 * made the exit status.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/config.h"
#include "lgctl.h"
#include "lib/cleanup.h"
#include "lib/clock.h"
#include "lib/termtext.h"
#include "store/state.h"
#include "undo/undo.h"

/* parse_options and parse_args go on (any other answer: the exit status) */
enum { GO_ON = -1 };

static void restore_usage(FILE *f)
{
	fprintf(f,
		"Usage: lgctl restore SESSION [--dry-run] [--since DUR] [--to DIR] [--newest] [--force] [--run N] [--keep-new] [--trust-unsigned] [PATH...]\n"
		"Puts back what the session changed of pre-existing data (its quarantine), in\n"
		"place: only PATHs (and what is under them) when given, only what was kept in\n"
		"the last DUR with --since, under DIR instead with --to.\n"
		"Where the path holds the session's own version (the file it truncated or\n"
		"rewrote, a file it made) and nothing changed it since, that version is set\n"
		"aside into the quarantine (named; restorable like any entry) and the\n"
		"original put back. Anything changed after the session is a conflict and is\n"
		"never overwritten.\n"
		"Of several versions of one path, the oldest (as it was before the session)\n"
		"is put back; with --newest, the last one (as it was just before its last\n"
		"change, or a version restore set aside). The others stay and are named.\n"
		"A kept file that changed since it was kept is reported and restored only\n"
		"with --force. As root, restore acts as the owner of the session's index.\n"
		"What the session made (files, folders, symlinks, new names) is set aside\n"
		"into the quarantine (an empty folder removed); --keep-new leaves it.\n"
		"Only the index lines lgrun sealed at the run's end are believed; an index\n"
		"with nothing sealed (an older lgrun's) only with --trust-unsigned.\n"
		"A session id run more than once (--session NAME) has runs: restore undoes\n"
		"the last run that kept anything; --run N another (1: the first).\n");
}

static void rewind_usage(FILE *f)
{
	fprintf(f,
		"Usage: lgctl rewind SESSION --turn K [--dry-run] [--keep-new] [--force] [--run N] [--trust-unsigned] [PATH...]\n"
		"Puts the tree back as it was when the agent's turn K began: everything turns\n"
		"K and later did is undone, shell commands included. Removed and overwritten\n"
		"files come back, renamed ones go back to their names, appends are cut back,\n"
		"modes set back; what was made since is set aside into the quarantine, never\n"
		"destroyed (restorable with lgctl restore --newest or --to). A turn is one\n"
		"response of the model that carried tool calls (lgctl report numbers them);\n"
		"--turn 1 is the whole session (lgctl restore). Anything changed after the\n"
		"session is a conflict and is never overwritten. A stopped, blocked session\n"
		"is rewound as it is (no reset needed). A session with no model seen has no\n"
		"turns: lgctl restore --since DUR undoes by time there.\n");
}

/* What the command line holds: the ask, and the strings it points to. */
struct verb {
	struct lg_undo_ask ask;
	char *to; /* --to DIR as given (ask.to once checked) */
	char **paths; /* PATH...: made absolute and folded */
	size_t npaths;
};

static void verb_free(struct verb *cl)
{
	for (size_t i = 0; cl->paths && i < cl->npaths; i++)
		free(cl->paths[i]);
	free(cl->paths);
	free(cl->to);
}

#define LG_VERB_AUTO LG_AUTO(verb_free)

static int parse_options(struct verb *cl, int argc, char **argv)
{
	static const struct option lo[] = {
		{ "dry-run", no_argument, NULL, 'n' },
		{ "since", required_argument, NULL, 's' },
		{ "to", required_argument, NULL, 't' },
		{ "newest", no_argument, NULL, 'N' },
		{ "force", no_argument, NULL, 'f' },
		{ "run", required_argument, NULL, 'r' },
		{ "keep-new", no_argument, NULL, 'k' },
		{ "trust-unsigned", no_argument, NULL, 'U' },
		{ "turn", required_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct lg_undo_ask *r = &cl->ask;
	void (*usage)(FILE *) = r->rewind ? rewind_usage : restore_usage;
	int c;

	optind = 0; /* getopt starts again (lgctl's own options were read) */
	while ((c = getopt_long(argc, argv, "ns:t:Nfr:kUh", lo, NULL)) != -1) {
		unsigned long ms;

		if (r->rewind && (c == 's' || c == 't' || c == 'N')) {
			fprintf(stderr,
				"lgctl rewind: --since, --to and --newest are lgctl restore's: rewind puts the tree back in place as it was when turn K began\n");
			return 2;
		}
		if (!r->rewind && c == 'T') {
			fprintf(stderr,
				"lgctl restore: --turn is lgctl rewind's (lgctl rewind SESSION --turn K)\n");
			return 2;
		}
		switch (c) {
		case 'T': {
			char *end;
			unsigned long long v = strtoull(optarg, &end, 10);

			if (!*optarg || *end || v == 0 || v > 100000000ULL) {
				fprintf(stderr,
					"lgctl rewind: --turn '%s' is not a turn number (1 is the agent's first; lgctl report numbers them)\n",
					optarg);
				return 2;
			}
			r->turn = (long long)v;
			break;
		}
		case 'n':
			r->dry = true;
			break;
		case 's':
			if (lg_parse_duration_ms(optarg, &ms) < 0) {
				fprintf(stderr,
					"lgctl restore: --since '%s' is not a duration (e.g. 10m, 2h)\n",
					optarg);
				return 2;
			}
			r->since_ns = lg_real_ns() - (long long)ms * 1000000LL;
			break;
		case 't':
			free(cl->to);
			cl->to = strdup(optarg);
			break;
		case 'N':
			r->newest = true;
			break;
		case 'f':
			r->force = true;
			break;
		case 'k':
			r->keep_new = true;
			break;
		case 'U':
			r->trust_unsigned = true;
			break;
		case 'r': {
			char *end;
			unsigned long v = strtoul(optarg, &end, 10);

			if (!*optarg || *end || v == 0 || v > 1000000) {
				fprintf(stderr,
					"lgctl restore: --run '%s' is not a run number (1 is the session's first run)\n",
					optarg);
				return 2;
			}
			r->run = (unsigned)v;
			break;
		}
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (r->rewind && !r->turn) {
		fprintf(stderr,
			"lgctl rewind: which turn? --turn K puts the tree back as it was when turn K began (lgctl report SESSION numbers the turns)\n");
		return 2;
	}
	return GO_ON;
}

/*
 * A PATH as the index names paths: absolute (a relative one is from the
 * current directory), its "." and ".." folded and "//" made one, by its
 * text: a symlink in the tree is not followed (the session's paths are
 * the names it used). A new string, or NULL.
 */
static char *absolute(const char *p)
{
	char cwd[PATH_MAX], *out, *o;
	const char *c;
	size_t n;

	if (p[0] != '/' && !getcwd(cwd, sizeof(cwd)))
		return NULL;
	n = (p[0] == '/' ? 0 : strlen(cwd)) + strlen(p) + 2;
	out = malloc(n);
	if (!out)
		return NULL;
	snprintf(out, n, "%s/%s", p[0] == '/' ? "" : cwd, p);
	/* folded in place: the result is never longer than what it reads */
	o = out;
	for (c = out; *c;) {
		size_t k;

		c += strspn(c, "/");
		k = strcspn(c, "/");
		if (k == 0 || (k == 1 && c[0] == '.')) {
		} else if (k == 2 && c[0] == '.' && c[1] == '.') {
			while (o > out && *--o != '/')
				;
		} else {
			*o++ = '/';
			memmove(o, c, k);
			o += k;
		}
		c += k;
	}
	if (o == out)
		*o++ = '/';
	*o = '\0';
	return out;
}

/* The options, then SESSION [PATH...]; --to DIR checked. */
static int parse_args(struct verb *cl, int argc, char **argv)
{
	struct lg_undo_ask *r = &cl->ask;
	int rc = parse_options(cl, argc, argv);

	if (rc != GO_ON)
		return rc;
	if (optind >= argc) {
		(r->rewind ? rewind_usage : restore_usage)(stderr);
		return 2;
	}
	r->id = argv[optind++];
	if (!lg_session_id_valid(r->id)) {
		fprintf(stderr, "lgctl: '%s' is not a valid session id\n",
			r->id);
		return 2;
	}
	cl->npaths = (size_t)(argc - optind);
	cl->paths = calloc(cl->npaths + 1, sizeof(*cl->paths));
	if (!cl->paths)
		return 2;
	for (size_t i = 0; i < cl->npaths; i++) {
		if (!argv[optind + i][0]) {
			fprintf(stderr, "lgctl restore: an empty PATH\n");
			return 2;
		}
		cl->paths[i] = absolute(argv[optind + i]);
		if (!cl->paths[i]) {
			fprintf(stderr, "lgctl restore: %s: %s\n",
				lgq_show(argv[optind + i]), strerror(errno));
			return 2;
		}
	}
	if (cl->to) {
		size_t n = strlen(cl->to);

		while (n > 1 && cl->to[n - 1] == '/')
			cl->to[--n] = '\0';
		if (!lg_undo_path_normal(cl->to)) {
			fprintf(stderr,
				"lgctl restore: --to needs an absolute directory, without '.' or '..'\n");
			return 2;
		}
		r->to = cl->to;
	}
	r->paths = cl->paths;
	r->npaths = cl->npaths;
	return GO_ON;
}

/* The tally in one line (what a dry run would do, said so). */
static void print_summary(const struct lg_undo_ask *a,
			  const struct lg_undo_tally *t)
{
	printf("%s%u file(s) %srestored, %u conflict(s), %u missing, %u failed",
	       a->dry ? "dry run: " : "", t->restored,
	       a->dry ? "would be " : "", t->conflicts, t->missing, t->failed);
	if (t->moved)
		printf("; %u %smoved back", t->moved,
		       a->dry ? "would be " : "");
	if (t->made_gone)
		printf("; %u made by the session %sset aside or removed",
		       t->made_gone, a->dry ? "would be " : "");
	if (t->noted)
		printf("; %u append(s) cut back or mode(s) set back%s",
		       t->noted, a->dry ? " (would be)" : "");
	if (t->earlier)
		printf("; %u restored earlier", t->earlier);
	if (t->set_aside)
		printf("; %u set aside", t->set_aside);
	if (t->refused)
		printf("; %u refused", t->refused);
	if (t->changed)
		printf("; %u changed since kept (--force)", t->changed);
	printf("\n");
}

/* A line the undo says, made safe for the terminal. */
static void say(void *ctx, bool problem, const char *line)
{
	size_t n = strlen(line), size = 4 * n + 1;
	LG_AUTOFREE char *safe = malloc(size);

	(void)ctx;
	if (!safe)
		return;
	lg_term_escape(safe, size, line, n);
	fprintf(problem ? stderr : stdout, "%s\n", safe);
}

static int restore_or_rewind(const char *dir, int argc, char **argv,
			     bool rewind)
{
	LG_VERB_AUTO struct verb cl = {
		.ask = { .state_dir = dir,
			 .rewind = rewind,
			 .by = lgctl_operator(),
			 .say = say },
	};
	struct lg_undo_tally t;
	int rc;

	rc = parse_args(&cl, argc, argv);
	if (rc != GO_ON)
		return rc;
	rc = lg_undo_run(&cl.ask, &t);
	if (rc)
		return rc;
	print_summary(&cl.ask, &t);
	return t.conflicts || t.missing || t.failed || t.refused || t.changed ||
			       t.unmatched ?
		       1 :
		       0;
}

int lgctl_restore(const char *dir, const struct lg_config *cfg, int argc,
		  char **argv)
{
	(void)cfg;
	return restore_or_rewind(dir, argc, argv, false);
}

int lgctl_rewind(const char *dir, const struct lg_config *cfg, int argc,
		 char **argv)
{
	(void)cfg;
	return restore_or_rewind(dir, argc, argv, true);
}
