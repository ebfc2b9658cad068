// SPDX-License-Identifier: MIT
/*
 * lgctl top [--interval DUR] [--once]: the running sessions of a state dir,
 * live: counters against their limits, the last event, a trip as it
 * happens. Read from the sessions' state files and recordings (record.h),
 * followed as they grow; the limits from each recording's config. Keys as
 * in top: q quits; n, a, e, d sort by name, age, events, deletes; r
 * reverses. One frame, drawn in place (no clearing: no flicker).
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "record/audit.h"
#include "lib/clock.h"
#include "config/config.h"
#include "lgctl.h"
#include "store/state.h"

#define MAX_SHOWN 64
#define DELETES_KEPT 4096 /* times of the last counted deletes */
#define LINGER_NS (120LL * 1000000000LL) /* an ended session stays shown */

struct tsess {
	char id[200], agent[64], state[16];
	long long started_ns, updated_ns, start_real_ns;
	FILE *rec;
	long off;
	bool seen, have_limits;
	/* what the recording says so far */
	unsigned long events, tools, turns, warns, notes;
	unsigned long long tokens;
	uint64_t del_t[DELETES_KEPT]; /* ms since start, a ring */
	size_t ndel, del_head;
	unsigned long deletes; /* all of them */
	char last[200], trip[400], note[120];
	bool tripped;
	/* the limits it ran under */
	unsigned max_ops, max_tool_calls, max_turns;
	uint64_t window_ms, max_tokens;
};

static struct tsess S[MAX_SHOWN];
static size_t NS;
static volatile sig_atomic_t stop_now, resized;
static struct termios saved_tio;
static bool tty;

static void on_signal(int sig)
{
	if (sig == SIGWINCH)
		resized = 1;
	else
		stop_now = 1;
}

static void term_restore(void)
{
	if (!tty)
		return;
	fputs("\033[?25h\033[?1049l", stdout);
	fflush(stdout);
	tcsetattr(STDIN_FILENO, TCSANOW, &saved_tio);
	tty = false;
}

static void term_setup(void)
{
	struct termios t;

	if (tcgetattr(STDIN_FILENO, &saved_tio) < 0)
		return;
	t = saved_tio;
	t.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
	t.c_cc[VMIN] = 0;
	t.c_cc[VTIME] = 0;
	tcsetattr(STDIN_FILENO, TCSANOW, &t);
	tty = true;
	fputs("\033[?1049h\033[?25l", stdout); /* alternate screen, no cursor */
	atexit(term_restore);
}

static const char *js(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s ? s : "";
}

static long long iso_ns(const char *s)
{
	struct tm tm = { 0 };
	int ms = 0;

	if (sscanf(s, "%d-%d-%dT%d:%d:%d.%dZ", &tm.tm_year, &tm.tm_mon,
		   &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms) < 6)
		return 0;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	return (long long)timegm(&tm) * 1000000000LL + ms * 1000000LL;
}

static struct tsess *find(const char *id)
{
	for (size_t i = 0; i < NS; i++)
		if (strcmp(S[i].id, id) == 0)
			return &S[i];
	if (NS == MAX_SHOWN)
		return NULL;
	memset(&S[NS], 0, sizeof(S[NS]));
	snprintf(S[NS].id, sizeof(S[NS].id), "%s", id);
	return &S[NS++];
}

static void limits_of(struct tsess *t, json_t *head)
{
	struct lg_config c;
	struct lg_error err;
	const char *cfg = js(head, "config"), *prof = js(head, "profile");

	lg_config_init(&c);
	if (lg_config_load(&c, *cfg ? cfg : NULL, *prof ? prof : NULL,
			   js(head, "agent"), &err) == 0) {
		t->max_ops = c.guard.volumetric.max;
		t->window_ms = c.guard.volumetric.window_ms;
		t->max_tool_calls = c.guard.budget.max_tool_calls;
		t->max_turns = c.guard.budget.max_turns;
		t->max_tokens = c.guard.budget.max_tokens;
		t->have_limits = true;
	}
	lg_config_free(&c);
	t->start_real_ns =
		json_integer_value(json_object_get(head, "start_real_ns"));
}

/* One line of the recording, counted. */
static void take(struct tsess *t, json_t *o)
{
	const char *k = js(o, "k"), *v = js(o, "v");

	if (json_object_get(o, "record")) {
		if (json_integer_value(json_object_get(o, "part")) == 0 ||
		    !t->have_limits)
			limits_of(t, o);
		return;
	}
	if (!strcmp(k, "restored") || !strcmp(k, "processes") ||
	    !strcmp(k, "tick"))
		return; /* not the agent's doing */
	t->events++;
	if (!strcmp(k, "destructive") && !strcmp(js(o, "cls"), "destroy")) {
		t->del_t[t->del_head] =
			(uint64_t)json_integer_value(json_object_get(o, "t"));
		t->del_head = (t->del_head + 1) % DELETES_KEPT;
		if (t->ndel < DELETES_KEPT)
			t->ndel++;
		t->deletes++;
	} else if (!strcmp(k, "tool_done")) {
		t->tools++;
	} else if (!strcmp(k, "turn")) {
		t->turns++;
		t->tokens += (unsigned long long)json_integer_value(
				     json_object_get(o, "tokens_in")) +
			     (unsigned long long)json_integer_value(
				     json_object_get(o, "tokens_out"));
	}
	snprintf(t->last, sizeof(t->last), "%s %s%s%s", k,
		 *js(o, "op") ? js(o, "op") : js(o, "tool"),
		 *js(o, "target") ? " " : "", js(o, "target"));
	if (!strcmp(v, "warn"))
		t->warns++;
	if (*js(o, "note")) {
		t->notes++;
		snprintf(t->note, sizeof(t->note), "%s (%s)", js(o, "note"),
			 js(o, "note_reason"));
	}
	if ((!strcmp(v, "kill") || !strcmp(v, "deny")) && !t->tripped) {
		t->tripped = true;
		snprintf(t->trip, sizeof(t->trip), "%s: %s", v,
			 js(o, "summary"));
	}
}

/* What the recording has gained since the last frame. */
static void follow(const char *dir, struct tsess *t)
{
	char line[1 << 16];

	if (!t->rec) {
		char p[PATH_MAX + 256];

		snprintf(p, sizeof(p), "%s/sessions/%s.events.jsonl", dir,
			 t->id);
		t->rec = fopen(p, "re");
		t->off = 0;
		if (!t->rec)
			return;
	}
	fseek(t->rec, t->off, SEEK_SET);
	while (fgets(line, sizeof(line), t->rec)) {
		size_t n = strlen(line);
		json_t *o;
		int ch = 0;

		if (n == sizeof(line) - 1 && line[n - 1] != '\n') {
			/* longer than we read (model text): passed over */
			while ((ch = getc(t->rec)) != EOF && ch != '\n')
				;
			if (ch != '\n')
				break; /* its end is still to come */
			t->off = ftell(t->rec);
			continue;
		}
		if (!n || line[n - 1] != '\n')
			break; /* not whole yet: read it next time */
		t->off = ftell(t->rec);
		o = json_loads(line, 0, NULL);
		if (o)
			take(t, o);
		json_decref(o);
	}
	clearerr(t->rec);
}

/* The sessions to show: running, or ended in the last two minutes. */
static void scan(const char *dir)
{
	char p[PATH_MAX + 16];
	long long now = lg_real_ns();
	struct dirent *d;
	DIR *dd;

	for (size_t i = 0; i < NS; i++)
		S[i].seen = false;
	snprintf(p, sizeof(p), "%s/sessions", dir);
	dd = opendir(p);
	while (dd && (d = readdir(dd))) {
		size_t len = strlen(d->d_name);
		char f[PATH_MAX + 300], last[8192] = "", buf[8192];
		struct tsess *t;
		json_t *o;
		FILE *fp;

		if (len <= 5 || strcmp(d->d_name + len - 5, ".json") != 0)
			continue;
		snprintf(f, sizeof(f), "%s/%s", p, d->d_name);
		fp = fopen(f, "re");
		while (fp && fgets(buf, sizeof(buf), fp))
			if (buf[0] == '{')
				memcpy(last, buf, sizeof(last));
		if (fp)
			fclose(fp);
		o = json_loads(last, 0, NULL);
		if (!o)
			continue;
		if (strcmp(js(o, "state"), "running") != 0 &&
		    now - iso_ns(js(o, "updated")) > LINGER_NS) {
			json_decref(o);
			continue;
		}
		d->d_name[len - 5] = '\0';
		t = find(d->d_name);
		if (t) {
			t->seen = true;
			snprintf(t->agent, sizeof(t->agent), "%s",
				 js(o, "agent"));
			snprintf(t->state, sizeof(t->state), "%s",
				 js(o, "state"));
			/* its lgrun is gone (lgctl status writes the end) */
			if (lg_state_orphaned(last))
				snprintf(t->state, sizeof(t->state), "lost");
			t->started_ns = iso_ns(js(o, "started"));
			follow(dir, t);
		}
		json_decref(o);
	}
	if (dd)
		closedir(dd);
	for (size_t i = 0; i < NS;) { /* gone from the list */
		if (S[i].seen) {
			i++;
			continue;
		}
		if (S[i].rec)
			fclose(S[i].rec);
		S[i] = S[--NS];
	}
}

static unsigned long in_window(const struct tsess *t, long long now)
{
	uint64_t at = t->start_real_ns ?
			      (uint64_t)((now - t->start_real_ns) / 1000000) :
			      0;
	unsigned long n = 0;

	for (size_t i = 0; i < t->ndel; i++)
		if (!t->window_ms || at - t->del_t[i] <= t->window_ms)
			n++;
	return n;
}

static char sort_key = 'e';
static bool sort_rev;
static long long sort_now;

static int cmp(const void *a, const void *b)
{
	const struct tsess *x = a, *y = b;
	int r;

	switch (sort_key) {
	case 'n':
		r = strcmp(x->id, y->id);
		break;
	case 'a':
		r = (x->started_ns > y->started_ns) -
		    (x->started_ns < y->started_ns);
		break;
	case 'd':
		r = (int)in_window(y, sort_now) - (int)in_window(x, sort_now);
		break;
	default:
		r = (y->events > x->events) - (y->events < x->events);
	}
	return sort_rev ? -r : r;
}

static void of(char *out, size_t size, unsigned long long n,
	       unsigned long long max)
{
	if (max)
		snprintf(out, size, "%llu/%llu", n, max);
	else
		snprintf(out, size, "%llu/-", n);
}

/* One line, cut to the width, cleared to its end (tty). */
static void put(int width, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void put(int width, const char *fmt, ...)
{
	char buf[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (width > 0 && (int)strlen(buf) > width)
		buf[width] = '\0';
	fputs(buf, stdout);
	fputs(tty ? "\033[K\n" : "\n", stdout);
}

static void frame(const char *dir, double interval, int width)
{
	long long now = lg_real_ns();
	static const char *names[] = {
		['n'] = "name", ['a'] = "age", ['e'] = "events", ['d'] = "deletes"
	};

	sort_now = now;
	qsort(S, NS, sizeof(S[0]), cmp);
	if (tty)
		fputs("\033[H", stdout);
	put(width,
	    "lgctl top: %zu session(s) in %s, every %.1fs; sorted by %s%s (n a e d sort, r reverse, q quit)",
	    NS, lgq_show(dir), interval, names[(int)sort_key],
	    sort_rev ? ", reversed" : "");
	put(width, "%s", "");
	put(width, "%-24s %-12s %-9s %6s %7s %9s %9s %9s %11s  %s", "SESSION",
	    "AGENT", "STATE", "AGE", "EVENTS", "DELETES", "TOOLS", "TURNS",
	    "TOKENS", "LAST EVENT");
	for (size_t i = 0; i < NS; i++) {
		struct tsess *t = &S[i];
		char dl[32], tl[32], tu[32], tk[32], age[16];
		long long s = t->started_ns ?
				      (now - t->started_ns) / 1000000000LL :
				      0;

		of(dl, sizeof(dl), in_window(t, now), t->max_ops);
		of(tl, sizeof(tl), t->tools, t->max_tool_calls);
		of(tu, sizeof(tu), t->turns, t->max_turns);
		of(tk, sizeof(tk), t->tokens, t->max_tokens);
		if (s < 120)
			snprintf(age, sizeof(age), "%llds", s);
		else if (s < 7200)
			snprintf(age, sizeof(age), "%lldm", s / 60);
		else
			snprintf(age, sizeof(age), "%lldh", s / 3600);
		put(width,
		    "%s%-24.24s %-12.12s %-9s %6s %7lu %9s %9s %9s %11s  %s%s",
		    t->tripped && tty ? "\033[7m" : "", lgq_show(t->id),
		    lgq_show(t->agent), t->tripped ? "TRIPPED" : t->state, age,
		    t->events, dl, tl, tu, tk, lgq_show(t->last),
		    t->tripped && tty ? "\033[0m" : "");
	}
	put(width, "%s", "");
	for (size_t i = 0; i < NS; i++)
		if (S[i].tripped)
			put(width, "TRIPPED %s: %s", lgq_show(S[i].id),
			    lgq_show(S[i].trip));
	for (size_t i = 0; i < NS; i++)
		if (S[i].notes)
			put(width,
			    "NOTES   %s: %lu note(s) decided for the model, the last: %s",
			    lgq_show(S[i].id), S[i].notes, lgq_show(S[i].note));
	if (tty)
		fputs("\033[J", stdout); /* what an earlier frame left below */
	fflush(stdout);
}

static void top_usage(FILE *f)
{
	fprintf(f,
		"Usage: lgctl top [--interval DUR] [--once]\n"
		"The running sessions (and those that ended in the last two minutes): events,\n"
		"deletes in the volumetric window, tool calls, turns and tokens against their\n"
		"limits, the last event, trips as they happen. Keys: q quit; n a e d sort by\n"
		"name, age, events, deletes; r reverse. --once: one frame, no terminal control.\n");
}

int lgctl_top(const char *dir, const struct lg_config *cfg, int argc,
	      char **argv)
{
	static const struct option lo[] = {
		{ "interval", required_argument, NULL, 'i' },
		{ "once", no_argument, NULL, '1' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long interval_ms = 1000;
	bool once = false;
	int c;

	(void)cfg;
	optind = 0;
	while ((c = getopt_long(argc, argv, "i:1h", lo, NULL)) != -1) {
		switch (c) {
		case 'i':
			if (lg_parse_duration_ms(optarg, &interval_ms) < 0 ||
			    interval_ms < 100) {
				fprintf(stderr,
					"lgctl top: --interval '%s' is not a duration of 100ms or more (e.g. 2s)\n",
					optarg);
				return 2;
			}
			break;
		case '1':
			once = true;
			break;
		case 'h':
			top_usage(stdout);
			return 0;
		default:
			top_usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		top_usage(stderr);
		return 2;
	}
	if (once || !isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		scan(dir);
		frame(dir, (double)interval_ms / 1000.0, 0);
		return 0;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
	signal(SIGWINCH, on_signal);
	term_setup();
	while (!stop_now) {
		struct winsize ws = { 0 };
		struct pollfd p = { STDIN_FILENO, POLLIN, 0 };
		char key;

		ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws);
		scan(dir);
		frame(dir, (double)interval_ms / 1000.0,
		      ws.ws_col ? ws.ws_col : 80);
		resized = 0;
		if (poll(&p, 1, (int)interval_ms) > 0 &&
		    read(STDIN_FILENO, &key, 1) == 1) {
			if (key == 'q' || key == 'Q')
				break;
			if (key == 'n' || key == 'a' || key == 'e' ||
			    key == 'd')
				sort_key = key;
			else if (key == 'r')
				sort_rev = !sort_rev;
		}
	}
	term_restore();
	return 0;
}
