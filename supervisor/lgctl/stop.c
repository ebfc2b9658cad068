// SPDX-License-Identifier: MIT
/* lgctl stop ID: a running session cancelled through its lgrun. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lgctl.h"
#include "lib/json.h"
#include "store/state.h"

/* Cancels a running session through its lgrun (which forwards SIGTERM to
 * the tree, then SIGKILL after kill_grace, and records the end). */
int lgctl_stop(const char *dir, const struct lg_config *cfg, int argc,
	       char **argv)
{
	const char *id = argv[1];
	char buf[8192], state[32], pid_s[16];
	pid_t pid;

	(void)cfg;
	if (argc != 2)
		return LGCTL_USAGE;
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
