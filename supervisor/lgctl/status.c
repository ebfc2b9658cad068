// SPDX-License-Identifier: MIT
/*
 * lgctl status [ID]: the sessions of the state dir and their state, or one
 * session with its detail. A session whose lgrun and watchdog are both
 * gone gets its end written here (lg_session_lost).
 */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lgctl.h"
#include "lib/json.h"
#include "lib/termtext.h"
#include "store/state.h"
#include "tree/watchdog.h"

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

int lgctl_status(const char *dir, const struct lg_config *cfg, int argc,
		 char **argv)
{
	const char *id = argv[1];
	char p[PATH_MAX];
	struct dirent **list;
	int n, shown = 0;

	(void)cfg;
	if (argc > 2)
		return LGCTL_USAGE;
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
