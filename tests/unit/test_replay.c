// SPDX-License-Identifier: MIT
/*
 * A recording (record.h) read back by the replay (replay.h): the same
 * config finds the same trip; a raised threshold none; tool arguments are
 * recorded as a digest only, and equal digests are equal calls; a file
 * name that is not UTF-8 comes back byte for byte; the agent's turns
 * (model_call lines) are where each began, with the trip's turn.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record/record.h"
#include "record/replay.h"

static char path[64];

static void tool(struct lg_record *r, uint64_t t, const char *args,
		 enum lg_verdict v)
{
	struct lg_event ev = { .kind = LG_EV_TOOL_DONE,
			       .source = LG_SRC_PROXY,
			       .tool = "run_shell",
			       .args = args,
			       .result_digest = "r1",
			       .args_preview = "run_shell(...)",
			       .result_preview = "ok",
			       .stream = 7 };

	lg_record_event(r, 0, 1000 + t, 0, &ev, v, NULL);
}

static void destroy(struct lg_record *r, uint64_t t, const char *target)
{
	struct lg_event ev = { .kind = LG_EV_DESTRUCTIVE,
			       .source = LG_SRC_SECCOMP,
			       .op = LG_OP_UNLINK,
			       .cls = LG_CLASS_DESTROY,
			       .pid = 42,
			       .exe = "rm",
			       .target = target,
			       .id = { 1, 100 + t, 5, 6, 42, 1000 + t } };

	lg_record_event(r, 0, 1000 + t, 0, &ev, LG_ALLOW, NULL);
}

static struct lg_record *open_rec(void)
{
	struct lg_record_head h = { .session = "s1",
				    .agent = "a",
				    .start_mono_ms = 1000,
				    .text = true };

	snprintf(path, sizeof(path), "/tmp/test_replay.%d.jsonl", getpid());
	return lg_record_open(path, 0, &h, NULL);
}

static int replay(const struct lg_guard_cfg *cfg, struct lg_replay *out)
{
	FILE *f = fopen(path, "re");
	FILE *files[1] = { f };
	int e = lg_replay_run(files, 1, cfg, out);

	fclose(f);
	return e;
}

static void test_repeat_digest(void **state)
{
	struct lg_record *r = open_rec();
	struct lg_guard_cfg cfg;
	struct lg_replay out;
	char all[8192];
	size_t n;
	FILE *f;

	(void)state;
	assert_non_null(r);
	tool(r, 1, "{\"cmd\":\"curl -H 'Authorization: sk-secret-1'\"}",
	     LG_ALLOW);
	tool(r, 2, "{\"cmd\":\"curl -H 'Authorization: sk-secret-1'\"}",
	     LG_ALLOW);
	tool(r, 3, "{\"cmd\":\"other\"}", LG_ALLOW);
	tool(r, 4, "{\"cmd\":\"curl -H 'Authorization: sk-secret-1'\"}",
	     LG_ALLOW);
	tool(r, 5, "{\"cmd\":\"curl -H 'Authorization: sk-secret-1'\"}",
	     LG_ALLOW);
	tool(r, 6, "{\"cmd\":\"curl -H 'Authorization: sk-secret-1'\"}",
	     LG_KILL);
	lg_record_close(r);
	f = fopen(path, "re");
	n = fread(all, 1, sizeof(all) - 1, f);
	fclose(f);
	all[n] = '\0';
	assert_null(strstr(all, "sk-secret-1")); /* a digest, never the args */
	assert_non_null(strstr(all, "\"args_digest\":\""));

	memset(&cfg, 0, sizeof(cfg));
	cfg.repeat = (struct lg_repeat_cfg){ 3, true, LG_KILL, 0 };
	assert_int_equal(replay(&cfg, &out), 0);
	assert_true(out.trip.found);
	assert_int_equal(out.trip.event,
			 6); /* the run restarts after "other" */
	assert_int_equal(out.trip.t_ms, 6);
	assert_string_equal(out.trip.rule, "repeat");
	assert_true(out.recorded.found);
	assert_int_equal(out.recorded.event, 6);
	assert_int_equal(out.differ, 0);

	cfg.repeat.threshold = 4;
	assert_int_equal(replay(&cfg, &out), 0);
	assert_false(out.trip.found);
	assert_int_equal(out.differ, 1); /* the recorded kill */
	assert_int_equal(out.recorded_events, 6);
	unlink(path);
}

static void test_names_exact(void **state)
{
	struct lg_record *r = open_rec();
	struct lg_guard_cfg cfg;
	struct lg_replay out;

	(void)state;
	/* two names that differ only in bytes that are not UTF-8 */
	destroy(r, 1, "/d/a\xff");
	destroy(r, 2, "/d/a\xfe");
	destroy(r, 3, "/d/a\xff");
	lg_record_close(r);
	memset(&cfg, 0, sizeof(cfg));
	cfg.same_target.max = 2;
	cfg.same_target.window_ms = 60000;
	cfg.same_target.action = LG_KILL;
	assert_int_equal(replay(&cfg, &out), 0);
	assert_true(out.trip.found);
	assert_int_equal(out.trip.event, 3); /* not at 2: the names differ */
	assert_string_equal(out.trip.target, "/d/a\xff");
	unlink(path);
}

static void test_not_a_recording(void **state)
{
	struct lg_guard_cfg cfg;
	struct lg_replay out;
	FILE *f;

	(void)state;
	snprintf(path, sizeof(path), "/tmp/test_replay.%d.jsonl", getpid());
	f = fopen(path, "we");
	fputs("{\"t\":1,\"k\":\"tick\",\"src\":\"timer\"}\nnot json\n", f);
	fclose(f);
	memset(&cfg, 0, sizeof(cfg));
	assert_int_equal(replay(&cfg, &out), -EINVAL);
	unlink(path);
}

/*
 * The model's calls (issue 40) begin the turns: each turn once, at its
 * first call, with its calls (a shell tool's command, another tool's
 * arguments); an event that says no turn is in the one under way (an
 * older lgrun's removals said none), and the trip names its turn. A model_call
 * line is no event: nothing is fed, nothing is malformed, and the
 * verdicts are the ones without them.
 */
static void test_turns(void **state)
{
	struct lg_record *r = open_rec();
	struct lg_guard_cfg cfg;
	struct lg_replay out;

	(void)state;
	assert_non_null(r);
	destroy(r, 1, "/d/before"); /* before turn 1 */
	lg_record_call(r, 1010, 1, 7, "Bash",
		       "{\"command\":\"rm /d/a\",\"description\":\"x\"}");
	destroy(r, 11, "/d/a");
	lg_record_call(r, 1020, 2, 7, "Bash", "{\"command\":\"rm /d/b\"}");
	lg_record_call(r, 1020, 2, 7, "Read", "{\"file_path\":\"/d/c\"}");
	lg_record_call(r, 1021, 2, 9, "Bash", "{\"command\":\"ls\"}");
	destroy(r, 21, "/d/b");
	destroy(r, 22, "/d/b2");
	lg_record_call(r, 1030, 3, 7, "Bash", "{\"command\":\"rm /d/c\"}");
	destroy(r, 31, "/d/c");
	lg_record_close(r);

	memset(&cfg, 0, sizeof(cfg));
	cfg.volumetric.max = 4;
	cfg.volumetric.window_ms = 60000;
	cfg.volumetric.action = LG_KILL;
	assert_int_equal(replay(&cfg, &out), 0);
	assert_int_equal(out.malformed, 0);
	assert_int_equal(out.recorded_events, 5); /* the calls are none */
	assert_int_equal(out.nturns, 3);
	assert_int_equal(out.turns[0].turn, 1);
	assert_int_equal(out.turns[0].t_ms, 10);
	assert_int_equal(out.turns[0].calls, 1);
	assert_string_equal(out.turns[0].what, "Bash: rm /d/a");
	assert_int_equal(out.turns[1].turn, 2);
	assert_int_equal(out.turns[1].calls, 3); /* a subagent's included */
	assert_string_equal(
		out.turns[1].what,
		"Bash: rm /d/b; Read: {\"file_path\":\"/d/c\"}; Bash: ls");
	assert_int_equal(out.turns[2].turn, 3);
	assert_int_equal(out.turns[2].t_ms, 30);
	assert_true(out.trip.found);
	assert_int_equal(out.trip.event, 4); /* /d/b2, the 4th removal */
	assert_int_equal(out.trip.turn, 2);
	lg_replay_free(&out);
	assert_null(out.turns);

	cfg.volumetric.max = 5; /* the last one trips, in turn 3 */
	assert_int_equal(replay(&cfg, &out), 0);
	assert_int_equal(out.trip.event, 5);
	assert_int_equal(out.trip.turn, 3);
	assert_int_equal(out.nturns, 3);
	lg_replay_free(&out);
	unlink(path);
}

/*
 * Events are held for their lines and made into them by a flush on
 * another thread (the main loop's, without the session's lock): every
 * event once, in the order held, whatever the flushes in between; a
 * text larger than the held room goes in its place; the head first.
 */
struct flusher {
	struct lg_record *r;
	atomic_bool stop;
};

static void *flush_loop(void *arg)
{
	struct flusher *fl = arg;

	while (!atomic_load(&fl->stop))
		lg_record_flush(fl->r);
	return NULL;
}

static void test_held_lines_in_order(void **state)
{
	enum { N = 30000 };
	struct lg_record *r = open_rec();
	struct flusher fl = { .r = r };
	char target[64], *big = malloc(3 << 20), *line = NULL;
	size_t cap = 0, n = 0, seen = 0;
	pthread_t th;
	FILE *f;

	(void)state;
	assert_non_null(r);
	assert_non_null(big);
	memset(big, 'x', (3 << 20) - 1);
	big[(3 << 20) - 1] = '\0';
	for (unsigned i = 0; i < N; i++) {
		if (i == 100 || i == N / 2 + 1000)
			assert_int_equal(
				pthread_create(&th, NULL, flush_loop, &fl), 0);
		if (i == N / 2) { /* the next lines wait, unwritten */
			atomic_store(&fl.stop, true);
			pthread_join(th, NULL);
			atomic_store(&fl.stop, false);
		}
		snprintf(target, sizeof(target), "/d/f%u", i);
		destroy(r, i, target);
		if (i == N / 2 + 500) { /* past a room of its own */
			struct lg_event ev = { .kind = LG_EV_TEXT,
					       .source = LG_SRC_PROXY,
					       .text = big,
					       .text_len = strlen(big) };

			lg_record_event(r, 0, 1000 + i, 0, &ev, LG_ALLOW, NULL);
		}
	}
	atomic_store(&fl.stop, true);
	pthread_join(th, NULL);
	lg_record_close(r);
	f = fopen(path, "re");
	assert_non_null(f);
	while (getline(&line, &cap, f) > 0) {
		if (n++ == 0) {
			assert_non_null(strstr(line, "\"record\":1"));
			continue;
		}
		if (strstr(line, "\"k\":\"text\"")) {
			assert_int_equal(seen, N / 2 + 501);
			assert_non_null(strstr(line, "xxxxxxxx"));
			continue;
		}
		snprintf(target, sizeof(target), "\"target\":\"/d/f%zu\"",
			 seen);
		assert_non_null(strstr(line, target));
		seen++;
	}
	assert_int_equal(seen, N);
	assert_int_equal(n, N + 2);
	fclose(f);
	free(line);
	free(big);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_repeat_digest),
		cmocka_unit_test(test_names_exact),
		cmocka_unit_test(test_not_a_recording),
		cmocka_unit_test(test_turns),
		cmocka_unit_test(test_held_lines_in_order),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
