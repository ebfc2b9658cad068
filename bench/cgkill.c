// SPDX-License-Identifier: MIT
/*
 * Baseline for the kill row: cgkill CGROUP_DIR [poll|spin]
 *
 * Writes "1" to CGROUP_DIR/cgroup.kill and waits until CGROUP_DIR/cgroup.events
 * says "populated 0"; prints the elapsed milliseconds (one number).
 *
 * "poll" (default) waits the way lgrun does (supervisor/tree/cgroup.c:
 * lg_tree_kill + wait_cgroup_empty): open/write/close cgroup.kill; then loop
 * { open/read/close cgroup.events; reap; pread the kept-open events fd to re-arm;
 * poll(POLLPRI, 10 ms) }. "spin" re-reads cgroup.events in a tight loop.
 * Exit status: 0 emptied, 1 still populated after 10 s, 2 usage/IO error.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TIMEOUT_MS 10000

static char events_path[4096];

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Same as lg_cgroup_populated(): open, read, close, look for "populated 1". */
static bool populated(void)
{
	char buf[256];
	ssize_t n;
	int fd = open(events_path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	return strstr(buf, "populated 1") != NULL;
}

static void reap(void)
{
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

int main(int argc, char **argv)
{
	char kill_path[4096];
	bool spin;
	double t0, t1, end;
	int fd, efd;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: cgkill CGROUP_DIR [poll|spin]\n");
		return 2;
	}
	spin = argc == 3 && strcmp(argv[2], "spin") == 0;
	snprintf(kill_path, sizeof(kill_path), "%s/cgroup.kill", argv[1]);
	snprintf(events_path, sizeof(events_path), "%s/cgroup.events", argv[1]);

	t0 = now_ms();
	end = t0 + TIMEOUT_MS;
	fd = open(kill_path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, "1", 1) != 1) {
		fprintf(stderr, "cgkill: %s: %s\n", kill_path, strerror(errno));
		return 2;
	}
	close(fd);
	efd = spin ? -1 : open(events_path, O_RDONLY | O_CLOEXEC);
	while (populated()) {
		double now = now_ms();

		if (now >= end)
			break;
		if (spin)
			continue;
		reap();
		if (efd >= 0) {
			struct pollfd pfd = { efd, POLLPRI, 0 };
			char buf[128];
			int left = (int)(end - now);

			if (pread(efd, buf, sizeof(buf), 0) < 0) {
				/* re-armed by reading */
			}
			poll(&pfd, 1, left < 10 ? left : 10);
		} else {
			usleep(1000);
		}
	}
	if (efd >= 0)
		close(efd);
	reap();
	t1 = now_ms();
	printf("%.3f\n", t1 - t0);
	return populated() ? 1 : 0;
}
