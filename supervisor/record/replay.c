// SPDX-License-Identifier: MIT
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "guard/event.h"
#include "lib/canon.h"
#include "lib/cleanup.h"
#include "record.h"
#include "replay.h"

/* Guard time: the recording's t plus this (0 means "none" to the guard). */
#define BASE_MS 1000000ULL
#define LINE_MAX_BYTES (1 << 22)

/* What the session's guard was told when it asked about a target. */
struct answer {
	char *target;
	uint64_t ino;
	int64_t birth;
	uint64_t t;
	bool back;
};

struct run {
	struct answer *a;
	size_t na, cap;
	uint64_t now; /* the recording's t of the feed under way */
};

static const char *s_of(json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static long long i_of(json_t *o, const char *k)
{
	return json_integer_value(json_object_get(o, k));
}

static int b64(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	return c == '+' ? 62 : c == '/' ? 63 : -1;
}

/*
 * A string field as it was: "<k>_b64" holds the exact bytes of one that
 * was not UTF-8 (audit.h). Owned by the caller when *own is set.
 */
static const char *exact(json_t *o, const char *k, size_t *len, char **own)
{
	char bk[64];
	const char *e, *s = s_of(o, k);

	snprintf(bk, sizeof(bk), "%s_b64", k);
	e = s_of(o, bk);
	if (len)
		*len = s ? strlen(s) : 0;
	if (!e)
		return s;
	{
		size_t n = strlen(e), w = 0;
		unsigned v = 0;
		int bits = 0;
		char *d = malloc(n + 1);

		if (!d)
			return s;
		for (size_t i = 0; i < n; i++) {
			int x = b64(e[i]);

			if (x < 0)
				continue; /* '=' */
			v = v << 6 | (unsigned)x;
			bits += 6;
			if (bits >= 8) {
				bits -= 8;
				d[w++] = (char)(v >> bits & 0xff);
			}
		}
		d[w] = '\0';
		*own = d;
		if (len)
			*len = w;
		return d;
	}
}

static bool answered(void *ctx, const char *target, enum lg_op op,
		     const struct lg_target_id *id)
{
	const struct run *r = ctx;
	bool back = false;
	uint64_t at = 0;

	(void)op;
	for (size_t i = 0; i < r->na; i++) {
		const struct answer *a = &r->a[i];

		if (a->ino == id->ino && a->birth == id->birth_ns &&
		    a->t <= r->now && a->t >= at &&
		    strcmp(a->target, target) == 0) {
			back = a->back;
			at = a->t;
		}
	}
	return back;
}

static void remember(struct run *r, json_t *o)
{
	const char *t = s_of(o, "target");

	if (!t)
		return;
	if (r->na == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 64;
		struct answer *a = realloc(r->a, cap * sizeof(*a));

		if (!a)
			return;
		r->a = a;
		r->cap = cap;
	}
	r->a[r->na] =
		(struct answer){ strdup(t), (uint64_t)i_of(o, "ino"),
				 i_of(o, "birth"), (uint64_t)i_of(o, "t"),
				 json_is_true(json_object_get(o, "answer")) };
	if (r->a[r->na].target)
		r->na++;
}

static void trip_from(struct lg_replay_trip *tp, size_t event, uint64_t t,
		      unsigned turn, enum lg_verdict v, const char *rule,
		      const char *reason, const char *summary,
		      const char *target)
{
	tp->found = true;
	tp->turn = turn;
	tp->event = event;
	tp->t_ms = t;
	tp->verdict = v;
	snprintf(tp->rule, sizeof(tp->rule), "%s", rule ? rule : "");
	snprintf(tp->reason, sizeof(tp->reason), "%s", reason ? reason : "");
	snprintf(tp->summary, sizeof(tp->summary), "%s",
		 summary ? summary : "");
	snprintf(tp->target, sizeof(tp->target), "%s", target ? target : "");
}

static void head_from(json_t *o, struct lg_replay *out, bool first)
{
	const char *s;

	if (first) {
		out->partial = i_of(o, "part") > 0;
		snprintf(out->session, sizeof(out->session), "%s",
			 (s = s_of(o, "session")) ? s : "");
		snprintf(out->config, sizeof(out->config), "%s",
			 (s = s_of(o, "config")) ? s : "");
		snprintf(out->profile, sizeof(out->profile), "%s",
			 (s = s_of(o, "profile")) ? s : "");
		snprintf(out->agent, sizeof(out->agent), "%s",
			 (s = s_of(o, "agent")) ? s : "");
		out->observe = json_is_true(json_object_get(o, "observe"));
		{
			char *d = json_dumps(json_object_get(o, "options"),
					     JSON_COMPACT | JSON_ENCODE_ANY);

			snprintf(out->options, sizeof(out->options), "%s",
				 d ? d : "[]");
			free(d);
		}
	}
}

/* The event a recorded line describes; its strings live in o (or owns). */
static int event_of(json_t *o, struct lg_event *ev, char **owns)
{
	int k = lg_kind_parse(s_of(o, "k")),
	    src = lg_source_parse(s_of(o, "src"));
	const char *op = s_of(o, "op"), *cls = s_of(o, "cls");
	size_t len;

	if (k < 0 || src < 0)
		return -EINVAL;
	memset(ev, 0, sizeof(*ev));
	ev->kind = (enum lg_event_kind)k;
	ev->source = (enum lg_source)src;
	ev->op = op ? (enum lg_op)lg_op_parse(op) : LG_OP_NONE;
	if ((int)ev->op < 0)
		return -EINVAL;
	if (cls && lg_class_parse(cls) < 0)
		return -EINVAL;
	ev->cls = cls ? (enum lg_class)lg_class_parse(cls) : LG_CLASS_DESTROY;
	ev->pid = (pid_t)i_of(o, "pid");
	ev->exe = s_of(o, "exe");
	ev->target = exact(o, "target", NULL, &owns[0]);
	ev->id.dev = (uint64_t)i_of(o, "dev");
	ev->id.ino = (uint64_t)i_of(o, "ino");
	ev->id.birth_ns = i_of(o, "birth");
	ev->id.mtime_ns = i_of(o, "mtime");
	ev->id.tid = (pid_t)i_of(o, "tid");
	if (json_object_get(o, "at"))
		ev->id.at_ms = BASE_MS + (uint64_t)i_of(o, "at");
	ev->left_empty = json_is_true(json_object_get(o, "left_empty"));
	ev->left_stub = json_is_true(json_object_get(o, "left_stub"));
	ev->left_quiet_s = (unsigned)i_of(o, "left_quiet_s");
	ev->happened = json_is_true(json_object_get(o, "ran"));
	ev->system = s_of(o, "system");
	ev->result = (int)i_of(o, "result");
	ev->tool = s_of(o, "tool");
	/* the digest stands for the arguments: equal digests, equal calls */
	ev->args = s_of(o, "args_digest");
	ev->result_digest = s_of(o, "result_digest");
	ev->args_preview = s_of(o, "args_preview");
	ev->result_preview = s_of(o, "result_preview");
	ev->stream = (uint64_t)i_of(o, "stream");
	ev->tokens_in = (uint64_t)i_of(o, "tokens_in");
	ev->tokens_out = (uint64_t)i_of(o, "tokens_out");
	ev->turn_tool_calls = (unsigned)i_of(o, "tool_calls");
	ev->stop_reason = s_of(o, "stop_reason");
	ev->turn_text = exact(o, "turn_text", NULL, &owns[1]);
	ev->cost = json_number_value(json_object_get(o, "cost"));
	ev->text = exact(o, "text", &len, &owns[2]);
	ev->text_len = ev->text ? len : 0;
	ev->processes = (unsigned)i_of(o, "processes");
	ev->flow = s_of(o, "flow");
	ev->from = s_of(o, "from");
	ev->to = s_of(o, "to");
	return 0;
}

struct replay_state {
	struct lg_guard *g[2];
	struct run run;
	struct lg_replay *out;
	bool done, first_head;
	unsigned turn; /* the agent's turn under way (the highest said) */
};

/*
 * A tool call the model made (a model_call line, issue 40): the first
 * with a turn's number begins that turn; no event, nothing fed.
 */
static void take_call(struct replay_state *st, json_t *o, uint64_t t)
{
	struct lg_replay *out = st->out;
	unsigned turn = (unsigned)i_of(o, "turn");
	const char *tool = s_of(o, "tool"), *args = s_of(o, "args");
	struct lg_replay_turn *u = out->nturns ? &out->turns[out->nturns - 1] :
						 NULL;
	char cmd[sizeof(u->what)];
	size_t n;

	if (!turn)
		return;
	if (turn > st->turn)
		st->turn = turn;
	if (!u || u->turn != turn) {
		struct lg_replay_turn *p;

		if (u && turn < u->turn)
			return; /* not in order: counted with none */
		p = realloc(out->turns, (out->nturns + 1) * sizeof(*p));
		if (!p)
			return;
		out->turns = p;
		u = &p[out->nturns++];
		memset(u, 0, sizeof(*u));
		u->turn = turn;
		u->t_ms = t;
	}
	if (!args ||
	    lg_canon_command(args, strlen(args), cmd, sizeof(cmd)) <= 0)
		snprintf(cmd, sizeof(cmd), "%s", args ? args : "");
	n = strlen(u->what);
	if (n < sizeof(u->what) - 1)
		snprintf(u->what + n, sizeof(u->what) - n, "%s%s: %s",
			 u->calls ? "; " : "", tool ? tool : "?", cmd);
	u->calls++;
}

/* The copies an event's strings were made in (event_of's owns). */
static void owns_free(char *(*owns)[3])
{
	for (int i = 0; i < 3; i++)
		lg_freep(&(*owns)[i]);
}

/* One line of a recording, fed (st->done: the replay is over). */
static void feed_line(struct replay_state *st, const char *line)
{
	struct lg_replay *out = st->out;
	LG_AUTOJSON json_t *o = json_loads(line, 0, NULL);
	struct lg_findings f;
	struct lg_event ev;
	LG_AUTO(owns_free) char *owns[3] = { NULL };
	enum lg_verdict rec = LG_ALLOW;
	const char *k, *v;
	unsigned turn;
	uint64_t t;
	int g;

	if (!o || !json_is_object(o)) {
		out->malformed++;
		return;
	}
	if (json_object_get(o, "record")) {
		if (i_of(o, "record") > LG_RECORD_VERSION)
			out->newer = true;
		head_from(o, out, st->first_head);
		st->first_head = false;
		return;
	}
	k = s_of(o, "k");
	t = (uint64_t)i_of(o, "t");
	st->run.now = t;
	if (k && strcmp(k, "restored") == 0) {
		remember(&st->run, o);
		return;
	}
	if (k && strcmp(k, "model_call") == 0) {
		take_call(st, o, t);
		return;
	}
	/* its turn: said, else the one under way (an older lgrun's said none) */
	turn = json_object_get(o, "turn") ? (unsigned)i_of(o, "turn") :
					    st->turn;
	if (turn > st->turn)
		st->turn = turn;
	if (event_of(o, &ev, owns) < 0) {
		out->malformed++;
		return;
	}
	g = i_of(o, "g") == 1 ? 1 : 0;
	out->recorded_events++;
	out->last_t_ms = t;
	if (st->done)
		return; /* after the trip: counted, not fed */
	if (ev.kind == LG_EV_TEXT && !ev.text) {
		out->skipped++; /* its text was not recorded */
		return;
	}
	out->events++;
	v = s_of(o, "v");
	if (v && lg_verdict_parse(v, &rec) == 0 && !out->recorded.found &&
	    rec > LG_WARN && !st->done)
		trip_from(&out->recorded, out->events, t, turn, rec,
			  s_of(o, "rule"), s_of(o, "reason"),
			  s_of(o, "summary"), ev.target);
	{
		struct lg_guard_env env = { BASE_MS + t, answered, &st->run,
					    NULL, NULL };
		enum lg_verdict got = lg_guard_feed(st->g[g], &ev, &env, &f);

		if (v && got != rec)
			out->differ++;
		if (got == LG_WARN)
			out->warnings++;
		for (size_t i = 0; i < f.n; i++) {
			if (!lg_finding_steers(&f.f[i]))
				continue;
			if (!out->notes++)
				trip_from(&out->note, out->events, t, turn,
					  f.f[i].action, f.f[i].rule,
					  f.f[i].reason, f.f[i].summary,
					  ev.target);
		}
		if (got > LG_WARN) {
			trip_from(&out->trip, out->events, t, turn, got,
				  f.n ? f.f[0].rule : "",
				  f.n ? f.f[0].reason : "",
				  f.n ? f.f[0].summary : "", ev.target);
			st->done = true;
		}
	}
}

/* The replay's guards and the answers it remembered. */
static void replay_state_free(struct replay_state *st)
{
	int e = errno;

	for (size_t i = 0; i < st->run.na; i++)
		free(st->run.a[i].target);
	free(st->run.a);
	lg_guard_free(st->g[0]);
	lg_guard_free(st->g[1]);
	errno = e;
}

int lg_replay_run(FILE *const *files, size_t nfiles,
		  const struct lg_guard_cfg *cfg, struct lg_replay *out)
{
	LG_AUTO(replay_state_free)
	struct replay_state st = { .out = out, .first_head = true };
	struct lg_guard_cfg oc;
	LG_AUTOFREE char *line = malloc(LINE_MAX_BYTES);
	bool any = false;

	memset(out, 0, sizeof(*out));
	memset(&oc, 0, sizeof(oc));
	oc.output_repeat = cfg->output_repeat;
	st.g[0] = lg_guard_new(cfg, BASE_MS);
	st.g[1] = lg_guard_new(&oc, BASE_MS);
	if (!line || !st.g[0] || !st.g[1])
		return -ENOMEM;
	for (size_t i = 0; i < nfiles; i++) {
		if (!files[i])
			continue;
		any = true;
		while (fgets(line, LINE_MAX_BYTES, files[i]))
			feed_line(&st, line);
	}
	if (!any)
		return -ENOENT;
	if (st.first_head)
		return -EINVAL; /* no head: not a recording */
	if (out->newer)
		return -EPROTO; /* a newer lgrun's: its lines may mean more */
	return 0;
}

void lg_replay_free(struct lg_replay *out)
{
	free(out->turns);
	out->turns = NULL;
	out->nturns = 0;
}

int lg_replay_head(FILE *f, struct lg_replay *out)
{
	char line[8192];
	json_t *o;

	memset(out, 0, sizeof(*out));
	if (!fgets(line, sizeof(line), f))
		return -EINVAL;
	o = json_loads(line, 0, NULL);
	if (!o || !json_object_get(o, "record")) {
		json_decref(o);
		return -EINVAL;
	}
	head_from(o, out, true);
	json_decref(o);
	rewind(f);
	return 0;
}
