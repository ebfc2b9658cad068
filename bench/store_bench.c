// SPDX-License-Identifier: MIT
/*
 * The guard with its windows in Redis: store_bench URL [EVENTS]
 *
 * Feeds EVENTS (default 2000) LG_EV_DESTRUCTIVE unlink events with
 * distinct targets, all LG_CLASS_DESTROY, through lg_guard_feed() twice:
 * first with the windows in memory, then shared through the Redis store at
 * URL (volumetric and same-target each make one round trip per event).
 * Config: volumetric max 1,000,000 per 60 s, same_target 3 per 60 s: never
 * reached. Prints one line:
 * "events=N mem_ns=X redis_ns=Y added_us=Z mem_per_s=A redis_per_s=B".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "guard/guard.h"
#include "store/store.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double run(unsigned long n, const struct lg_shared_windows *shared,
		  unsigned long *trips)
{
	struct lg_guard_cfg cfg = {
		.volumetric = { 1000000, 60000, LG_KILL },
		.same_target = { 3, 60000, LG_KILL },
	};
	struct lg_guard *g = lg_guard_new(&cfg, 0);
	char target[64];
	struct lg_findings out;
	double t0, t1;

	if (!g)
		exit(2);
	t0 = now_s();
	for (unsigned long i = 0; i < n; i++) {
		struct lg_guard_env env = { .now_ms = i, .shared = shared };
		struct lg_event ev = { .kind = LG_EV_DESTRUCTIVE,
				       .op = LG_OP_UNLINK,
				       .cls = LG_CLASS_DESTROY,
				       .pid = 1,
				       .exe = "rm",
				       .target = target };

		snprintf(target, sizeof(target), "/srv/data/f%07lu", i);
		if (lg_guard_feed(g, &ev, &env, &out) != LG_ALLOW)
			(*trips)++;
	}
	t1 = now_s();
	lg_guard_free(g);
	return (t1 - t0) * 1e9 / (double)n;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 2 ? strtoul(argv[2], NULL, 10) : 2000;
	char session[64], why[512];
	struct lg_store_cfg sc = { 0 };
	struct lg_store *st;
	unsigned long trips = 0;
	double mem, red;

	if (argc < 2 || !n) {
		fprintf(stderr, "usage: store_bench URL [EVENTS]\n");
		return 2;
	}
	snprintf(session, sizeof(session), "bench-%d", getpid());
	sc.url = argv[1];
	sc.session = session;
	sc.self = "bench";
	sc.timeout_ms = 1000;
	if (lg_store_open(&st, &sc, why, sizeof(why)) < 0) {
		fprintf(stderr, "store_bench: %s\n", why);
		return 1;
	}
	mem = run(n, NULL, &trips);
	red = run(n, lg_store_windows(st), &trips);
	if (trips || !lg_store_up(st)) {
		fprintf(stderr, "store_bench: %lu trips, store %s\n", trips,
			lg_store_up(st) ? "up" : "lost");
		return 1;
	}
	printf("events=%lu mem_ns=%.1f redis_ns=%.1f added_us=%.2f mem_per_s=%.0f redis_per_s=%.0f\n",
	       n, mem, red, (red - mem) / 1000.0, 1e9 / mem, 1e9 / red);
	lg_store_free(st);
	return 0;
}
