// SPDX-License-Identifier: MIT
/* lgctl: inspect and reset lgrun sessions. */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record/audit.h"
#include "config/config.h"
#include "lib/json.h"
#include "lgctl.h"
#include "lib/log.h"
#include "session/session.h"
#include "store/state.h"
#include "lib/termtext.h"
#include "store/store.h"
#include "tree/watchdog.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: lgctl [--state-dir DIR] [--config FILE] COMMAND\n"
		"  status [ID]   list sessions and their state (or one session)\n"
		"  reset ID      unblock a session killed by the guard\n"
		"  stop ID       stop a running session (it ends as cancelled)\n"
		"  replay ID [--config FILE] [--profile P] [--agent NAME]\n"
		"                what the guard saw, judged again: where it trips;\n"
		"                where each of the agent's turns began\n"
		"  report ID [-o FILE] [--text]\n"
		"                the session by the agent's turns: calls, changes,\n"
		"                notes, trip, rewind command; one HTML page (default\n"
		"                ID.html), or text (--text to stdout, -o FILE.txt)\n"
		"  top [--interval DUR] [--once]\n"
		"                running sessions, live: counters against limits\n"
		"  suggest ID... [--config FILE] [--margin F]\n"
		"                thresholds that let these sessions through (INI)\n"
		"  restore ID [--dry-run] [--since DUR] [--to DIR] [--newest] [PATH...]\n"
		"                put back what the session removed (its quarantine)\n"
		"  rewind ID --turn K [--dry-run] [--keep-new] [PATH...]\n"
		"                the tree as it was when the agent's turn K began\n"
		"  quarantine list               what each session's quarantine holds\n"
		"  quarantine gc [--max-age DUR] [--max-bytes SIZE] [--force] [ID...]\n"
		"                remove what is older than max_age (or over SIZE in all)\n"
		"  doctor [--no-canary] [--quiet]\n"
		"                what lgrun can do on this host, for this user, and\n"
		"                a canary session (exit 0: lgrun protects here)\n"
		"Exit status: 0 ok; 1 no such session / not killed; 2 usage or error.\n");
}

/* Text from a record or a file name, made safe for the terminal. */
static const char *safe(const char *s, char *buf, size_t size)
{
	lg_term_escape(buf, size, s, strlen(s));
	return buf;
}

static void show(const char *dir, const char *id, bool header, bool detail)
{
	char e_id[256], e_agent[256], e_started[80], e_state[64];
	char e_summary[1024];
	char buf[8192], killed[8192];
	char state[32], agent[128], started[40], updated[40], st[16];
	char summary[512];
	bool is_killed;

	lg_state_last(dir, id, buf, sizeof(buf));
	if (lg_state_orphaned(buf)) {
		/* its lgrun and its watchdog are gone: the end is ours to write */
		lg_session_lost(dir, id, NULL, 0, "lgctl status", summary,
				sizeof(summary));
		lg_state_last(dir, id, buf, sizeof(buf));
	}
	is_killed = lg_state_killed(dir, id, killed, sizeof(killed)) > 0;
	lg_json_field(buf, "state", state, sizeof(state));
	lg_json_field(buf, "agent", agent, sizeof(agent));
	lg_json_field(buf, "started", started, sizeof(started));
	lg_json_field(buf, "updated", updated, sizeof(updated));
	lg_json_field(buf, "exit_status", st, sizeof(st));
	if (is_killed) {
		snprintf(state, sizeof(state), "killed");
		lg_json_field(killed, "summary", summary, sizeof(summary));
	} else {
		summary[0] = '\0';
		if (lg_state_orphaned(buf)) /* its end could not be written */
			snprintf(state, sizeof(state), "lost");
		else if (strcmp(state, "supervisor_lost") == 0)
			lg_json_field(buf, "summary", summary, sizeof(summary));
		else if (strcmp(state, "killed") == 0)
			snprintf(state, sizeof(state), "reset");
		if (st[0])
			snprintf(summary, sizeof(summary), "exit status %s",
				 st);
	}
	if (header)
		printf("%-32s %-15s %-14s %-24s %s\n", "SESSION", "STATE",
		       "AGENT", "STARTED", "DETAIL");
	printf("%-32s %-15s %-14s %-24s %s\n", safe(id, e_id, sizeof(e_id)),
	       safe(state[0] ? state : "?", e_state, sizeof(e_state)),
	       safe(agent[0] ? agent : "-", e_agent, sizeof(e_agent)),
	       safe(started[0] ? started : "-", e_started, sizeof(e_started)),
	       safe(summary, e_summary, sizeof(e_summary)));
	if (detail) {
		char bpf[320], e_bpf[1024];

		lg_json_field(buf, "bpf", bpf, sizeof(bpf));
		if (bpf[0])
			printf("  eBPF observer: %s\n",
			       safe(bpf, e_bpf, sizeof(e_bpf)));
	}
}

static int status(const char *dir, const char *id)
{
	char p[PATH_MAX];
	struct dirent **list;
	int n, shown = 0;

	if (id) {
		char buf[16];

		snprintf(p, sizeof(p), "%s/sessions/%s.json", dir, id);
		if (access(p, F_OK) < 0 &&
		    lg_state_killed(dir, id, buf, sizeof(buf)) <= 0) {
			fprintf(stderr, "lgctl: no session '%s' in %s\n", id,
				dir);
			return 1;
		}
		show(dir, id, true, true);
		return 0;
	}
	snprintf(p, sizeof(p), "%s/sessions", dir);
	n = scandir(p, &list, NULL, alphasort);
	if (n < 0) {
		printf("no sessions in %s\n", dir);
		return 0;
	}
	for (int i = 0; i < n; i++) {
		char *name = list[i]->d_name;
		size_t len = strlen(name);

		if (len > 5 && strcmp(name + len - 5, ".json") == 0) {
			name[len - 5] = '\0';
			show(dir, name, shown++ == 0, false);
		} else if (len > 7 && strcmp(name + len - 7, ".killed") == 0) {
			char j[PATH_MAX];

			/* A killed marker without a record: still show it. */
			name[len - 7] = '\0';
			snprintf(j, sizeof(j), "%s/%s.json", p, name);
			if (access(j, F_OK) < 0)
				show(dir, name, shown++ == 0, false);
		}
		free(list[i]);
	}
	free(list);
	if (!shown)
		printf("no sessions in %s\n", dir);
	return 0;
}

/* Cancels a running session through its lgrun (which forwards SIGTERM to
 * the tree, then SIGKILL after kill_grace, and records the end). */
static int stop(const char *dir, const char *id)
{
	char buf[8192], state[32], pid_s[16];
	pid_t pid;

	if (!lg_session_id_valid(id)) {
		fprintf(stderr, "lgctl: '%s' is not a valid session id\n", id);
		return 2;
	}
	if (lg_state_last(dir, id, buf, sizeof(buf)) < 0 || !buf[0]) {
		fprintf(stderr, "lgctl: no session '%s' in %s\n", id, dir);
		return 1;
	}
	lg_json_field(buf, "state", state, sizeof(state));
	lg_json_field(buf, "lgrun_pid", pid_s, sizeof(pid_s));
	pid = (pid_t)atoi(pid_s);
	if (strcmp(state, "running") != 0 || pid <= 1 || kill(pid, 0) < 0) {
		fprintf(stderr, "lgctl: session '%s' is not running (%s)\n", id,
			state[0] ? state : "no state");
		return 1;
	}
	if (kill(pid, SIGTERM) < 0) {
		fprintf(stderr, "lgctl: cannot signal lgrun (pid %d): %s\n",
			pid, strerror(errno));
		return 2;
	}
	/* lgrun gives the tree its grace period, then kills what is left */
	for (int i = 0; i < 300 && kill(pid, 0) == 0; i++)
		usleep(50000);
	if (kill(pid, 0) == 0) {
		fprintf(stderr,
			"lgctl: session '%s' (lgrun pid %d) is still stopping\n",
			id, pid);
		return 1;
	}
	printf("session '%s' stopped\n", id);
	return 0;
}

/*
 * [store] backend = redis: the shared marker goes too, so every host may
 * start the session again. 1 removed, 0 there was none, -errno.
 */
static int reset_shared(const struct lg_config *cfg, const char *id)
{
	struct lg_store_cfg sc = { cfg->store_url,
				   cfg->store_prefix,
				   cfg->store_password_env,
				   (unsigned)cfg->store_timeout_ms,
				   id,
				   "lgctl",
				   false };
	struct lg_store *st;
	struct lg_error why;
	char rec[4096];
	int r;

	if (lg_store_open(&st, &sc, &why) < 0) {
		fprintf(stderr, "lgctl: the shared store is unavailable: %s\n",
			why.msg);
		return -EIO;
	}
	r = lg_store_killed(st, rec, sizeof(rec));
	if (r > 0)
		r = lg_store_reset(st) < 0 ? -EIO : 1;
	lg_store_free(st);
	return r;
}

static int reset(const char *dir, const char *id, const struct lg_config *cfg)
{
	struct lg_json j = { 0 };
	char audit[PATH_MAX + 16];
	int r, shared = 0;

	if (!lg_session_id_valid(id)) {
		fprintf(stderr, "lgctl: '%s' is not a valid session id\n", id);
		return 2;
	}
	r = lg_state_reset(dir, id);
	if (cfg->store_redis) {
		shared = reset_shared(cfg, id);
		if (shared < 0) {
			fprintf(stderr,
				"lgctl: %s; the other hosts of session '%s' stay blocked until the store can be reached\n",
				r == 0 ? "this host's marker was removed" :
					 "nothing was reset",
				id);
			return 2;
		}
		if (shared > 0 && r == -ENOENT)
			r = 0;
	}
	if (r == -ENOENT) {
		fprintf(stderr,
			"lgctl: session '%s' is not killed (nothing to reset in %s)\n",
			id, dir);
		return 1;
	}
	if (r < 0) {
		fprintf(stderr, "lgctl: cannot reset '%s': %s\n", id,
			strerror(-r));
		return 2;
	}
	lg_audit_begin(&j, lg_real_ns(), id, NULL, NULL, 0);
	lg_json_str(&j, "event", "reset");
	lg_json_str(&j, "by", lgctl_operator());
	{
		const char *sum =
			shared > 0 ?
				"session reset by operator, on every host (shared store)" :
				"session reset by operator";

		lg_json_str(&j, "summary", sum);
		lg_audit_falco(&j, id, NULL, "reset",
			       &(struct lg_falco){ .priority = "Notice",
						   .output = sum });
	}
	snprintf(audit, sizeof(audit), "%s/audit.jsonl", dir);
	lg_audit_append(audit, lg_json_end(&j), true);
	lg_json_free(&j);
	printf("session '%s' reset: it may run again\n", id);
	return 0;
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
	lg_config_init(&cfg);
	if (lg_config_load(&cfg, config, NULL, NULL, &err) < 0) {
		fprintf(stderr, "lgctl: %s\n", err.msg);
		return 2;
	}
	if (lg_state_dir_resolve(sd, &cfg, dir, sizeof(dir), &err) < 0) {
		dir[0] = '\0'; /* doctor says so */
		if (strcmp(argv[optind], "doctor") == 0)
			goto doctor;
		fprintf(stderr, "lgctl: %s\n", err.msg);
		return 2;
	}
	if (strcmp(argv[optind], "status") == 0 && argc - optind <= 2)
		rc = status(dir, argv[optind + 1]);
	else if (strcmp(argv[optind], "reset") == 0 && argc - optind == 2)
		rc = reset(dir, argv[optind + 1], &cfg);
	else if (strcmp(argv[optind], "stop") == 0 && argc - optind == 2)
		rc = stop(dir, argv[optind + 1]);
	else if (strcmp(argv[optind], "report") == 0)
		rc = lgctl_report(dir, argc - optind, argv + optind);
	else if (strcmp(argv[optind], "top") == 0)
		rc = lgctl_top(dir, argc - optind, argv + optind);
	else if (strcmp(argv[optind], "suggest") == 0)
		rc = lgctl_suggest(dir, argc - optind, argv + optind);
	else if (strcmp(argv[optind], "replay") == 0)
		rc = lgctl_replay(dir, argc - optind, argv + optind);
	else if (strcmp(argv[optind], "restore") == 0)
		rc = lgctl_restore(dir, argc - optind, argv + optind);
	else if (strcmp(argv[optind], "rewind") == 0)
		rc = lgctl_rewind(dir, argc - optind, argv + optind);
	else if (strcmp(argv[optind], "doctor") == 0)
doctor:
		rc = lgctl_doctor(dir, argc - optind, argv + optind);
	else if (strcmp(argv[optind], "quarantine") == 0)
		rc = lgctl_quarantine(dir, &cfg, argc - optind, argv + optind);
	else {
		usage(stderr);
		rc = 2;
	}
	lg_config_free(&cfg);
	return rc;
}
