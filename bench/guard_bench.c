// SPDX-License-Identifier: MIT
/*
 * The guard alone: guard_bench [EVENTS] [destroy|session|mixed] [EVENTS_PER_MS]
 *
 * Feeds EVENTS (default 2,000,000) LG_EV_DESTRUCTIVE unlink events with
 * distinct targets through lg_guard_feed() with a fake monotonic clock that
 * advances 1 ms every EVENTS_PER_MS events (default 1). Config: volumetric
 * max 1,000,000 per 60 s (never reached: at most 60 s worth of events are
 * live), same_target max 3 per 60 s (targets are distinct), budget off.
 * Classes: "destroy" all LG_CLASS_DESTROY (every detector does its work),
 * "session" all LG_CLASS_SESSION (the detectors return at once), "mixed"
 * alternates the two (default).
 *
 * Prints one line: "events=N trips=T ns_per_event=X events_per_s=Y".
 * Exit status 1 if anything tripped (the numbers would be meaningless).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "guard/guard.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Increments the decimal digits in [p, p + n) in place ("0009" -> "0010"). */
static void bump(char *p, int n)
{
	for (int i = n - 1; i >= 0; i--) {
		if (p[i] != '9') {
			p[i]++;
			return;
		}
		p[i] = '0';
	}
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 2000000UL;
	const char *mode = argc > 2 ? argv[2] : "mixed";
	unsigned long per_ms = argc > 3 ? strtoul(argv[3], NULL, 10) : 1;
	struct lg_guard_cfg cfg = {
		.volumetric = { .max = 1000000,
				.window_ms = 60000,
				.action = LG_KILL },
		.same_target = { .max = 3,
				 .window_ms = 60000,
				 .action = LG_KILL },
		.budget = { .timeout_ms = 0,
			    .max_destructive_ops = 0,
			    .reserve = 0.2,
			    .action = LG_KILL },
	};
	/* "/srv/data/project/build/d0000000/file-0000000.dat" */
	char target[] = "/srv/data/project/build/d0000000/file-0000000.dat";
	char *digits = strstr(target, "file-") + 5;
	char *dir_digits = strstr(target, "/build/d") + 8;
	struct lg_findings out;
	struct lg_guard_stats st;
	struct lg_guard *g;
	unsigned long trips = 0;
	double t0, t1;
	int cls_mode;

	if (!n || !per_ms) {
		fprintf(stderr,
			"usage: guard_bench [EVENTS] [destroy|session|mixed] [EVENTS_PER_MS]\n");
		return 2;
	}
	if (strcmp(mode, "destroy") == 0)
		cls_mode = 0;
	else if (strcmp(mode, "session") == 0)
		cls_mode = 1;
	else if (strcmp(mode, "mixed") == 0)
		cls_mode = 2;
	else {
		fprintf(stderr, "guard_bench: unknown mode '%s'\n", mode);
		return 2;
	}
	g = lg_guard_new(&cfg, 1000);
	if (!g) {
		fprintf(stderr, "guard_bench: lg_guard_new failed\n");
		return 2;
	}
	t0 = now_s();
	for (unsigned long i = 0; i < n; i++) {
		struct lg_event ev = {
			.kind = LG_EV_DESTRUCTIVE,
			.source = LG_SRC_SECCOMP,
			.op = LG_OP_UNLINK,
			.pid = 4242,
			.exe = "rm",
			.target = target,
		};
		struct lg_guard_env env = { .now_ms = 1000 + i / per_ms,
					    .restored = NULL,
					    .ctx = NULL };

		if (cls_mode == 0)
			ev.cls = LG_CLASS_DESTROY;
		else if (cls_mode == 1)
			ev.cls = LG_CLASS_SESSION;
		else
			ev.cls = (i & 1) ? LG_CLASS_SESSION : LG_CLASS_DESTROY;
		if (lg_guard_feed(g, &ev, &env, &out) != LG_ALLOW) {
			if (!trips++)
				fprintf(stderr,
					"guard_bench: event %lu tripped: %s\n",
					i, out.n ? out.f[0].summary : "?");
		}
		bump(digits, 7);
		if ((i & 1023) == 1023)
			bump(dir_digits, 7);
	}
	t1 = now_s();
	lg_guard_stats(g, &st);
	lg_guard_free(g);
	printf("events=%lu counted=%llu trips=%lu ns_per_event=%.1f events_per_s=%.0f\n",
	       n, (unsigned long long)st.counted, trips,
	       (t1 - t0) * 1e9 / (double)n, (double)n / (t1 - t0));
	return trips ? 1 : 0;
}
