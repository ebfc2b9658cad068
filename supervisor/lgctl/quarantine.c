// SPDX-License-Identifier: MIT
/*
 * lgctl's side of the quarantine (quarantine.h): the index reader, and
 * `lgctl quarantine list|gc` (what each session holds; what is old goes).
 * restore.c puts entries back.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "record/audit.h"
#include "lib/cleanup.h"
#include "lib/clock.h"
#include "config/config.h"
#include "lgctl.h"
#include "store/state.h"
#include "lib/text.h"

static void age(long long ns, char *out, size_t size)
{
	long long s = (lg_real_ns() - ns) / 1000000000LL;

	if (s < 120)
		snprintf(out, size, "%llds", s);
	else if (s < 7200)
		snprintf(out, size, "%lldm", s / 60);
	else if (s < 2 * 86400)
		snprintf(out, size, "%lldh", s / 3600);
	else
		snprintf(out, size, "%lldd", s / 86400);
}

static int list(const char *dir)
{
	struct lgq_held *h;
	size_t n = lgq_sessions(dir, &h);
	uint64_t total = 0, disk = 0, copied = 0;

	if (!n) {
		printf("the quarantine is empty (%s/quarantine)\n",
		       lgq_show(dir));
		free(h);
		return 0;
	}
	/*
	 * SIZE: the kept files' sizes (what a restore puts back); DISK: the
	 * blocks they hold; COPIED: of those, what keeping took anew (the
	 * rest are links and reflinks to blocks the files had already)
	 */
	printf("%-32s %6s %5s %10s %10s %10s %8s %8s %s\n", "SESSION", "FILES",
	       "DIRS", "SIZE", "DISK", "COPIED", "OLDEST", "NEWEST", "STATE");
	for (size_t i = 0; i < n; i++) {
		char size[32], dsk[32], cp[32], a[16], b[16];
		const char *state;

		lg_human_bytes(h[i].bytes, size, sizeof(size));
		lg_human_bytes(h[i].disk, dsk, sizeof(dsk));
		lg_human_bytes(h[i].copied, cp, sizeof(cp));
		age(h[i].oldest_ns, a, sizeof(a));
		age(h[i].newest_ns, b, sizeof(b));
		if (h[i].blocked)
			state = "blocked";
		else if (lg_state_running(dir, h[i].id))
			state = "running";
		else
			state = "-";
		printf("%-32s %6u %5u %10s %10s %10s %8s %8s %s\n",
		       lgq_show(h[i].id), h[i].files, h[i].dirs, size, dsk, cp,
		       a, b, state);
		total += h[i].bytes;
		disk += h[i].disk;
		copied += h[i].copied;
	}
	{
		char size[32], dsk[32], cp[32];

		lg_human_bytes(total, size, sizeof(size));
		lg_human_bytes(disk, dsk, sizeof(dsk));
		lg_human_bytes(copied, cp, sizeof(cp));
		printf("%zu session(s), %s held: %s on disk, of which %s copied (the rest: blocks the kept files had already, held by links)\n",
		       n, size, dsk, cp);
	}
	free(h);
	return 0;
}

static int gc(const char *dir, const struct lg_config *cfg, int argc,
	      char **argv)
{
	static const struct option lo[] = {
		{ "max-age", required_argument, NULL, 'a' },
		{ "max-bytes", required_argument, NULL, 'b' },
		{ "force", no_argument, NULL, 'f' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t max_age = cfg->quarantine_max_age_ms, max_bytes = 0, total = 0;
	unsigned long ms;
	bool force = false;
	struct lgq_held *h;
	size_t n, dropped = 0, kept_blocked = 0, running = 0;
	int c;

	optind = 0;
	while ((c = getopt_long(argc, argv, "a:b:f", lo, NULL)) != -1) {
		switch (c) {
		case 'a':
			if (lg_parse_duration_ms(optarg, &ms) < 0) {
				fprintf(stderr,
					"lgctl quarantine gc: --max-age '%s' is not a duration (e.g. 12h, 7d)\n",
					optarg);
				return 2;
			}
			max_age = ms;
			break;
		case 'b':
			if (lg_parse_bytes(optarg, &max_bytes) < 0) {
				fprintf(stderr,
					"lgctl quarantine gc: --max-bytes '%s' is not a size (e.g. 500M, 2G)\n",
					optarg);
				return 2;
			}
			break;
		case 'f':
			force = true;
			break;
		default:
			return 2;
		}
	}
	n = lgq_sessions(dir, &h);
	for (size_t i = 0; i < n; i++)
		total += h[i].disk;
	for (size_t i = 0; i < n; i++) { /* oldest first */
		bool named = optind >= argc, old, over;
		int e;

		for (int k = optind; k < argc && !named; k++)
			named = strcmp(argv[k], h[i].id) == 0;
		old = max_age && lg_real_ns() - h[i].newest_ns >
					 (long long)max_age * 1000000LL;
		over = max_bytes && total > max_bytes;
		if (!named || (!old && !over && optind >= argc))
			continue;
		/*
		 * Never a running session's, --force or not: its next keep
		 * needs its folder and its index (lgq_drop refuses it too).
		 */
		if (lg_state_running(dir, h[i].id)) {
			printf("skipped   %s: session %s is running: skipped (its entries go once it ends)\n",
			       lgq_show(h[i].id), lgq_show(h[i].id));
			running++;
			continue;
		}
		if (h[i].blocked && !force) {
			printf("kept      %s: the session is blocked (lgctl reset it first, or --force)\n",
			       lgq_show(h[i].id));
			kept_blocked++;
			continue;
		}
		e = lgq_drop(dir, h[i].id, NULL);
		if (e == -EBUSY) { /* it started since */
			printf("skipped   %s: session %s is running: skipped (its entries go once it ends)\n",
			       lgq_show(h[i].id), lgq_show(h[i].id));
			running++;
		} else if (e == 0) {
			char size[32];

			lg_human_bytes(h[i].bytes, size, sizeof(size));
			printf("removed   %s: %u file(s), %s\n",
			       lgq_show(h[i].id), h[i].files, size);
			total -= h[i].disk;
			dropped++;
		}
	}
	printf("%zu session(s) removed from the quarantine, %zu blocked kept",
	       dropped, kept_blocked);
	if (running)
		printf(", %zu running skipped", running);
	printf("\n");
	free(h);
	return 0;
}

int lgctl_quarantine(const char *dir, const struct lg_config *cfg, int argc,
		     char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "list") == 0 && argc == 2)
		return list(dir);
	if (argc >= 2 && strcmp(argv[1], "gc") == 0)
		return gc(dir, cfg, argc - 1, argv + 1);
	fprintf(stderr,
		"Usage: lgctl quarantine list\n"
		"       lgctl quarantine gc [--max-age DUR] [--max-bytes SIZE] [--force] [SESSION...]\n"
		"gc removes the sessions whose newest entry is older than max-age\n"
		"([quarantine] max_age, 7d), then the oldest while all together hold more\n"
		"than max-bytes on disk; named SESSIONs are removed whatever their age; a\n"
		"blocked session only with --force; a running session never.\n");
	return 2;
}
