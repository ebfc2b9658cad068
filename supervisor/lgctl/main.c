// SPDX-License-Identifier: MIT
/*
 * lgctl: inspect, stop, reset, undo lgrun sessions. The table of verbs,
 * the dispatch, and the usage built from the table; each verb is a file
 * of its own (lgctl.h).
 */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "config/config.h"
#include "lgctl.h"
#include "lib/log.h"
#include "store/state.h"

/* lgctl's verbs, in the order of its usage. */
static const struct lgctl_command lgctl_commands[] = {
	{ .name = "status",
	  .run = lgctl_status,
	  .args = "[ID]",
	  .help = "list sessions and their state (or one session)" },
	{ .name = "reset",
	  .run = lgctl_reset,
	  .args = "ID",
	  .help = "unblock a session killed by the guard" },
	{ .name = "stop",
	  .run = lgctl_stop,
	  .args = "ID",
	  .help = "stop a running session (it ends as cancelled)" },
	{ .name = "replay",
	  .run = lgctl_replay,
	  .args = "ID [--config FILE] [--profile P] [--agent NAME]",
	  .help = "what the guard saw, judged again: where it trips;\n"
		  "where each of the agent's turns began" },
	{ .name = "report",
	  .run = lgctl_report,
	  .args = "ID [-o FILE] [--text]",
	  .help = "the session by the agent's turns: calls, changes,\n"
		  "notes, trip, rewind command; one HTML page (default\n"
		  "ID.html), or text (--text to stdout, -o FILE.txt)" },
	{ .name = "top",
	  .run = lgctl_top,
	  .args = "[--interval DUR] [--once]",
	  .help = "running sessions, live: counters against limits" },
	{ .name = "suggest",
	  .run = lgctl_suggest,
	  .args = "ID... [--config FILE] [--margin F]",
	  .help = "thresholds that let these sessions through (INI)" },
	{ .name = "restore",
	  .run = lgctl_restore,
	  .args = "ID [--dry-run] [--since DUR] [--to DIR] [--newest] [PATH...]",
	  .help = "put back what the session removed (its quarantine)" },
	{ .name = "rewind",
	  .run = lgctl_rewind,
	  .args = "ID --turn K [--dry-run] [--keep-new] [PATH...]",
	  .help = "the tree as it was when the agent's turn K began" },
	{ .name = "quarantine",
	  .run = lgctl_quarantine,
	  .args = "list | gc [--max-age DUR] [--max-bytes SIZE] [--force] [ID...]",
	  .help = "list: what each session's quarantine holds; gc: remove\n"
		  "what is older than max_age (or over SIZE in all)" },
	{ .name = "doctor",
	  .run = lgctl_doctor,
	  .args = "[--no-canary] [--quiet]",
	  .help = "what lgrun can do on this host, for this user, and\n"
		  "a canary session (exit 0: lgrun protects here)",
	  .dir_optional = true },
};

#define NCOMMANDS (sizeof(lgctl_commands) / sizeof(lgctl_commands[0]))

/* The help's column: a verb and its arguments shorter than this share
 * their line with its help. */
enum { HELP_COLUMN = 16 };

static void usage(FILE *f)
{
	fprintf(f, "Usage: lgctl [--state-dir DIR] [--config FILE] COMMAND\n");
	for (size_t i = 0; i < NCOMMANDS; i++) {
		const struct lgctl_command *c = &lgctl_commands[i];
		const char *h = c->help;
		int n = fprintf(f, "  %s %s", c->name, c->args);

		if (n < HELP_COLUMN - 1)
			fprintf(f, "%*s", HELP_COLUMN - n, "");
		else
			fprintf(f, "\n%*s", HELP_COLUMN, "");
		while (*h) {
			size_t k = strcspn(h, "\n");

			fprintf(f, "%.*s\n", (int)k, h);
			h += k;
			if (*h && *++h)
				fprintf(f, "%*s", HELP_COLUMN, "");
		}
	}
	fprintf(f,
		"  help          this text\n"
		"Exit status: 0 ok; 1 no such session / not killed; 2 usage or error.\n");
}

static const struct lgctl_command *command(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (strcmp(lgctl_commands[i].name, name) == 0)
			return &lgctl_commands[i];
	return NULL;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "state-dir", required_argument, NULL, 'd' },
		{ "config", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *sd = NULL, *config = NULL;
	const struct lgctl_command *cmd;
	char dir[PATH_MAX];
	struct lg_config cfg;
	struct lg_error err;
	int c, rc;

	lg_log_prog = "lgctl";
	while ((c = getopt_long(argc, argv, "+d:c:h", lo, NULL)) != -1) {
		switch (c) {
		case 'd':
			sd = optarg;
			break;
		case 'c':
			config = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	if (strcmp(argv[optind], "help") == 0) {
		usage(stdout);
		return 0;
	}
	cmd = command(argv[optind]);
	lg_config_init(&cfg);
	if (lg_config_load(&cfg, config, NULL, NULL, &err) < 0) {
		fprintf(stderr, "lgctl: %s\n", err.msg);
		return 2;
	}
	if (lg_state_dir_resolve(sd, &cfg, dir, sizeof(dir), &err) < 0) {
		dir[0] = '\0'; /* a verb that runs without one says so */
		if (!cmd || !cmd->dir_optional) {
			fprintf(stderr, "lgctl: %s\n", err.msg);
			return 2;
		}
	}
	rc = cmd ? cmd->run(dir, &cfg, argc - optind, argv + optind) :
		   LGCTL_USAGE;
	if (rc == LGCTL_USAGE) {
		usage(stderr);
		rc = 2;
	}
	lg_config_free(&cfg);
	return rc;
}
