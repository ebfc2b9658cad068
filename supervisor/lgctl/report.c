// SPDX-License-Identifier: MIT
/*
 * lgctl report SESSION [-o FILE] [--text]: a session read back and told by
 * the agent's turns (issue 40): each turn's time, its tool calls, what it
 * changed (the quarantine index's lines of that turn), the notes lgrun sent
 * to the model (the audit's steer records), a trip in it, its events (what
 * matters shown, the routine folded) and the command that rewinds it.
 * From the recording (record.h), the audit log, the config's limits and
 * the quarantine index; written as one self-contained HTML page
 * (report_html.c) or as text (report_text.c).
 */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "config/config.h"
#include "guard/event.h"
#include "lgctl.h"
#include "report_int.h"
#include "store/state.h"

static const char *js(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s ? s : "";
}

static char *dup_js(json_t *o, const char *k)
{
	return strdup(js(o, k));
}

/* The recording's head: the session, its config, its folder, its start. */
static void take_head(struct rep *r, json_t *o)
{
	if (r->session[0])
		return; /* the oldest part's head */
	snprintf(r->session, sizeof(r->session), "%s", js(o, "session"));
	snprintf(r->agent, sizeof(r->agent), "%s", js(o, "agent"));
	snprintf(r->config, sizeof(r->config), "%s", js(o, "config"));
	snprintf(r->profile, sizeof(r->profile), "%s", js(o, "profile"));
	snprintf(r->cwd, sizeof(r->cwd), "%s", js(o, "cwd"));
	r->start_ns = json_integer_value(json_object_get(o, "start_real_ns"));
	r->observe = json_is_true(json_object_get(o, "observe"));
}

/* A model_call line: one tool call; the first of a turn's number begins it. */
static void take_call(struct rep *r, json_t *o, unsigned *cur, size_t seq)
{
	struct rpt_call *p = realloc(r->c, (r->nc + 1) * sizeof(*p)), *c;
	unsigned turn =
		(unsigned)json_integer_value(json_object_get(o, "turn"));

	if (!p)
		return;
	r->c = p;
	c = &p[r->nc];
	c->t = (uint64_t)json_integer_value(json_object_get(o, "t"));
	c->seq = seq;
	c->turn = turn;
	c->stream = (uint64_t)json_integer_value(json_object_get(o, "stream"));
	c->tool = dup_js(o, "tool");
	c->args = dup_js(o, "args");
	if (!c->tool || !c->args) {
		free(c->tool);
		free(c->args);
		return;
	}
	r->nc++;
	if (turn > *cur)
		*cur = turn;
}

static void take(struct rep *r, json_t *o, unsigned *cur, size_t seq)
{
	struct rpt_ev *e;
	const char *k = js(o, "k"), *v = js(o, "v");
	json_t *tn = json_object_get(o, "turn");

	if (json_object_get(o, "record")) {
		take_head(r, o);
		return;
	}
	if (!strcmp(k, "model_call")) {
		take_call(r, o, cur, seq);
		return;
	}
	if (!*k || !strcmp(k, "restored"))
		return;
	r->last_t = (uint64_t)json_integer_value(json_object_get(o, "t"));
	if (!strcmp(k, "processes") || !strcmp(k, "tick"))
		return; /* the clock's and the tree's counts: no event to show */
	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 256;
		struct rpt_ev *p = realloc(r->e, cap * sizeof(*p));

		if (!p)
			return;
		r->e = p;
		r->cap = cap;
	}
	e = &r->e[r->n++];
	memset(e, 0, sizeof(*e));
	e->t = r->last_t;
	e->seq = seq;
	/*
	 * Its turn: what the line says, else the one under way (lgrun's own
	 * events said none before a0a3802; no line after a turn began is
	 * before it).
	 */
	e->turn = tn ? (unsigned)json_integer_value(tn) : *cur;
	if (e->turn > *cur)
		*cur = e->turn;
	e->src = lg_source_parse(js(o, "src"));
	snprintf(e->kind, sizeof(e->kind), "%s", k);
	snprintf(e->what, sizeof(e->what), "%s",
		 *js(o, "op") ? js(o, "op") : js(o, "tool"));
	snprintf(e->target, sizeof(e->target), "%s", js(o, "target"));
	/* a block device written over: what it held (issue 39) */
	if (!strcmp(e->what, "device_write") && *js(o, "system"))
		snprintf(e->target, sizeof(e->target), "%.120s (held %.120s)",
			 js(o, "target"), js(o, "system"));
	if (!*e->target && *js(o, "to")) /* a flow's call: to whom */
		snprintf(e->target, sizeof(e->target), "to %s", js(o, "to"));
	snprintf(e->cls, sizeof(e->cls), "%s", js(o, "cls"));
	snprintf(e->verdict, sizeof(e->verdict), "%s", v);
	snprintf(e->note, sizeof(e->note), "%s", js(o, "note"));
	e->destroy = !strcmp(k, "destructive") && !strcmp(e->cls, "destroy");
	e->matters = rpt_matters(e);
	if (e->destroy)
		r->destroys++;
	if (e->destroy && !strcmp(e->what, "remote_delete"))
		r->remote++;
	if (e->destroy && !strcmp(e->what, "device_write"))
		r->devices++;
	if (!strcmp(k, "tool_done"))
		r->tools++;
	if (!strcmp(k, "turn")) {
		r->model_turns++;
		r->tokens += (unsigned long long)json_integer_value(
				     json_object_get(o, "tokens_in")) +
			     (unsigned long long)json_integer_value(
				     json_object_get(o, "tokens_out"));
	}
	if (!strcmp(v, "warn"))
		r->warns++;
	if (e->note[0])
		r->notes++;
	if (!r->tripped && (!strcmp(v, "kill") || !strcmp(v, "deny"))) {
		r->tripped = true;
		r->trip_t = e->t;
		r->trip_turn = e->turn;
		snprintf(r->trip_rule, sizeof(r->trip_rule), "%s",
			 js(o, "rule"));
		snprintf(r->trip_summary, sizeof(r->trip_summary), "%s",
			 js(o, "summary"));
	}
}

static int load(struct rep *r, const char *dir, const char *id)
{
	static const char *const parts[] = { "events.old.jsonl",
					     "events.jsonl" };
	char p[PATH_MAX + 256];
	LG_AUTOFREE char *line = NULL;
	size_t cap = 0, seq = 0;
	unsigned cur = 0;
	bool any = false;

	for (size_t i = 0; i < 2; i++) {
		LG_AUTOFCLOSE FILE *f = NULL;

		snprintf(p, sizeof(p), "%s/sessions/%s.%s", dir, id, parts[i]);
		f = fopen(p, "re");
		if (!f)
			continue;
		any = true;
		while (getline(&line, &cap, f) > 0) {
			json_t *o = json_loads(line, 0, NULL);

			if (o && json_is_object(o))
				take(r, o, &cur, seq++);
			json_decref(o);
		}
	}
	return any ? 0 : -ENOENT;
}

/* An audit record's "time" ("2026-11-28T11:49:52.936Z") in ms, or -1. */
static long long audit_ms(const char *s)
{
	struct tm tm = { 0 };
	int ms = 0, n = 0;

	if (sscanf(s, "%d-%d-%dT%d:%d:%d.%3d%n", &tm.tm_year, &tm.tm_mon,
		   &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms,
		   &n) < 7 ||
	    !n)
		return -1;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	return (long long)timegm(&tm) * 1000 + ms;
}

/*
 * The notes lgrun sent to the model: the audit's steer records of this
 * session, from this run on (a session id may run again; the audit's times
 * are cut to the ms, the run's start is not).
 */
static void load_notes(struct rep *r, const char *dir)
{
	char p[PATH_MAX + 32], key[256];
	const char *path = p;
	LG_AUTOFCLOSE FILE *f = NULL;
	LG_AUTOFREE char *line = NULL;
	size_t cap = 0, seq = 0;
	long long from = r->start_ns / 1000000;

	if (r->have_cfg && r->cfg.audit_log && *r->cfg.audit_log)
		path = r->cfg.audit_log;
	else
		snprintf(p, sizeof(p), "%s/audit.jsonl", dir);
	f = fopen(path, "re");
	if (!f)
		return;
	snprintf(key, sizeof(key), "\"session\":\"%s\"", r->id);
	while (getline(&line, &cap, f) > 0) {
		json_t *o;
		struct rpt_note *n;

		seq++;
		if (!strstr(line, key) || !strstr(line, "\"event\":\"steer\""))
			continue; /* most lines: no parse */
		o = json_loads(line, 0, NULL);
		if (!o || strcmp(js(o, "session"), r->id) ||
		    strcmp(js(o, "event"), "steer") ||
		    audit_ms(js(o, "time")) < from) {
			json_decref(o);
			continue;
		}
		n = realloc(r->notes_sent, (r->nn + 1) * sizeof(*n));
		if (n) {
			r->notes_sent = n;
			n = &n[r->nn];
			n->turn = (unsigned)json_integer_value(
				json_object_get(o, "turn"));
			n->seq = seq;
			n->observe =
				json_is_true(json_object_get(o, "observe"));
			n->times = 1;
			n->rule = dup_js(o, "rule");
			n->reason = dup_js(o, "reason");
			n->text = dup_js(o, "text");
			if (n->rule && n->reason && n->text)
				r->nn++;
			else {
				free(n->rule);
				free(n->reason);
				free(n->text);
			}
		}
		json_decref(o);
	}
}

/* The quarantine index: this run's lines (a restore's set-asides left out). */
static void load_index(struct rep *r, const char *dir)
{
	char p[PATH_MAX + 256];

	snprintf(p, sizeof(p), "%s/quarantine/%s.jsonl", dir, r->id);
	if (lgq_load(&r->x, p, NULL, 0, 0) < 0)
		return;
	r->have_x = true;
	for (size_t i = 0; r->start_ns && i < r->x.nruns; i++)
		if (r->x.runs[i].start_ns == r->start_ns) {
			lgq_keep_run(&r->x, r->start_ns);
			break;
		}
	r->ch = calloc(r->x.n ? r->x.n : 1, sizeof(*r->ch));
	for (size_t i = 0; r->ch && i < r->x.n; i++)
		if (strcmp(r->x.e[i].op, "set_aside"))
			r->ch[r->nch++] = &r->x.e[i];
}

static int cmp_ev(const void *a, const void *b)
{
	const struct rpt_ev *x = a, *y = b;

	if (x->turn != y->turn)
		return x->turn < y->turn ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int cmp_call(const void *a, const void *b)
{
	const struct rpt_call *x = a, *y = b;

	if (x->turn != y->turn)
		return x->turn < y->turn ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int cmp_note(const void *a, const void *b)
{
	const struct rpt_note *x = a, *y = b;

	if (x->turn != y->turn)
		return x->turn < y->turn ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int cmp_change(const void *a, const void *b)
{
	const struct lgq_entry *x = *(const struct lgq_entry *const *)a;
	const struct lgq_entry *y = *(const struct lgq_entry *const *)b;

	if (x->turn != y->turn)
		return x->turn < y->turn ? -1 : 1;
	return x->n < y->n ? -1 : x->n > y->n;
}

static int cmp_uint(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;

	return x < y ? -1 : x > y;
}

/* The same note placed in several requests of a turn, said once. */
static void notes_once(struct rep *r)
{
	size_t k = 0;

	for (size_t i = 0; i < r->nn; i++) {
		struct rpt_note *n = &r->notes_sent[i];
		size_t j;

		for (j = k; j > 0; j--) {
			struct rpt_note *m = &r->notes_sent[j - 1];

			if (m->turn != n->turn)
				break;
			if (!strcmp(m->text, n->text) &&
			    m->observe == n->observe)
				break;
		}
		if (j > 0 && r->notes_sent[j - 1].turn == n->turn) {
			r->notes_sent[j - 1].times++;
			free(n->rule);
			free(n->reason);
			free(n->text);
			continue;
		}
		r->notes_sent[k++] = *n;
	}
	r->nn = k;
}

/*
 * Every list sorted by turn (in its own order within one), the turns that
 * any of them names (turn 0 always), and each turn's share of each list.
 */
static int by_turns(struct rep *r)
{
	size_t all = 1 + r->n + r->nc + r->nch + r->nn, m = 0, ie = 0, ic = 0,
	       ih = 0, in = 0;
	LG_AUTOFREE unsigned *num = malloc(all * sizeof(*num));

	if (!num)
		return -ENOMEM;
	qsort(r->e, r->n, sizeof(*r->e), cmp_ev);
	qsort(r->c, r->nc, sizeof(*r->c), cmp_call);
	qsort(r->ch, r->nch, sizeof(*r->ch), cmp_change);
	qsort(r->notes_sent, r->nn, sizeof(*r->notes_sent), cmp_note);
	notes_once(r);
	num[m++] = 0;
	for (size_t i = 0; i < r->n; i++)
		num[m++] = r->e[i].turn;
	for (size_t i = 0; i < r->nc; i++)
		num[m++] = r->c[i].turn;
	for (size_t i = 0; i < r->nch; i++)
		num[m++] = (unsigned)r->ch[i]->turn;
	for (size_t i = 0; i < r->nn; i++)
		num[m++] = r->notes_sent[i].turn;
	qsort(num, m, sizeof(*num), cmp_uint);
	r->turns = calloc(m, sizeof(*r->turns));
	if (!r->turns)
		return -ENOMEM;
	for (size_t i = 0; i < m; i++) {
		struct rpt_turn *u;

		if (r->nturns && r->turns[r->nturns - 1].n == num[i])
			continue;
		u = &r->turns[r->nturns++];
		u->n = num[i];
		r->any_turn |= u->n > 0;
		for (u->ev0 = ie; ie < r->n && r->e[ie].turn == u->n; ie++) {
			if (r->e[ie].matters)
				u->matters++;
			else
				u->folded++;
		}
		u->nev = ie - u->ev0;
		for (u->call0 = ic; ic < r->nc && r->c[ic].turn == u->n; ic++)
			;
		u->ncall = ic - u->call0;
		for (u->ch0 = ih; ih < r->nch && r->ch[ih]->turn == u->n; ih++)
			if (!rpt_in_project(r, r->ch[ih]))
				u->outside++;
		u->nch = ih - u->ch0;
		for (u->note0 = in;
		     in < r->nn && r->notes_sent[in].turn == u->n; in++)
			;
		u->nnote = in - u->note0;
		if (u->ncall) {
			u->t = r->c[u->call0].t;
			u->stream = r->c[u->call0].stream;
			u->have_t = true;
		} else if (u->nev) {
			u->t = r->e[u->ev0].t;
			u->have_t = true;
		}
	}
	return 0;
}

static void rep_free(struct rep *r)
{
	for (size_t i = 0; i < r->nc; i++) {
		free(r->c[i].tool);
		free(r->c[i].args);
	}
	for (size_t i = 0; i < r->nn; i++) {
		free(r->notes_sent[i].rule);
		free(r->notes_sent[i].reason);
		free(r->notes_sent[i].text);
	}
	free(r->c);
	free(r->notes_sent);
	free(r->e);
	free(r->ch);
	free(r->turns);
	lgq_free(&r->x);
	lg_config_free(&r->cfg);
}

static void report_usage(FILE *f)
{
	fputs("Usage: lgctl report SESSION [-o FILE] [--text]\n"
	      "The session by the agent's turns (a turn: one model response with tool\n"
	      "calls): each turn's time, its tool calls, what it changed, the notes lgrun\n"
	      "sent to the model, a trip, its events (routine ones folded) and the command\n"
	      "that rewinds it; before them, the timeline, the deletes window against\n"
	      "max_ops, budgets; after them, the quarantine.\n"
	      "Default: one self-contained HTML page, SESSION.html here. --text, or a FILE\n"
	      "ending in .txt: text, to stdout without -o. -o -: stdout.\n",
	      f);
}

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), k = strlen(tail);

	return n >= k && !strcmp(s + n - k, tail);
}

int lgctl_report(const char *dir, const struct lg_config *cfg, int argc,
		 char **argv)
{
	static const struct option lo[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "text", no_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *outp = NULL;
	struct rep r = { 0 };
	struct lg_error err;
	char def[PATH_MAX];
	bool text = false, out_std;
	FILE *f;
	int c, rc = 0;

	(void)cfg;
	optind = 0;
	while ((c = getopt_long(argc, argv, "o:th", lo, NULL)) != -1) {
		switch (c) {
		case 'o':
			outp = optarg;
			break;
		case 't':
			text = true;
			break;
		case 'h':
			report_usage(stdout);
			return 0;
		default:
			report_usage(stderr);
			return 2;
		}
	}
	if (optind != argc - 1) {
		report_usage(stderr);
		return 2;
	}
	if (!lg_session_id_valid(argv[optind])) {
		fprintf(stderr, "lgctl: '%s' is not a valid session id\n",
			lgq_show(argv[optind]));
		return 2;
	}
	snprintf(r.id, sizeof(r.id), "%s", argv[optind]);
	lg_config_init(&r.cfg);
	if (load(&r, dir, r.id) < 0) {
		fprintf(stderr,
			"lgctl: no recording of session '%s' in %s/sessions ([record] events)\n",
			lgq_show(r.id), lgq_show(dir));
		rep_free(&r);
		return 2;
	}
	r.have_cfg = lg_config_load(&r.cfg, r.config[0] ? r.config : NULL,
				    r.profile[0] ? r.profile : NULL, r.agent,
				    &err) == 0;
	load_notes(&r, dir);
	load_index(&r, dir);
	if (by_turns(&r) < 0) {
		fprintf(stderr, "lgctl: report: %s\n", strerror(ENOMEM));
		rep_free(&r);
		return 2;
	}
	text |= outp && ends_with(outp, ".txt");
	if (!outp && !text) {
		snprintf(def, sizeof(def), "%s.html", r.id);
		outp = def;
	}
	out_std = !outp || !strcmp(outp, "-");
	f = out_std ? stdout : fopen(outp, "we");
	if (!f) {
		fprintf(stderr, "lgctl: cannot write %s: %s\n", lgq_show(outp),
			strerror(errno));
		rc = 2;
	} else {
		if (text)
			rpt_text(f, &r);
		else
			rpt_html_page(f, &r, dir);
		if (out_std ? fflush(f) != 0 : fclose(f) != 0)
			rc = 2;
		else if (!out_std)
			printf("report: %s\n", lgq_show(outp));
	}
	rep_free(&r);
	return rc;
}
