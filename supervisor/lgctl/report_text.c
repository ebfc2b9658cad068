// SPDX-License-Identifier: MIT
/*
 * lgctl report's text form (--text, or -o FILE.txt): the same turns as the
 * page, for a terminal or a mail. Every string from the session goes
 * through lg_term_escape (control characters and bytes that are not UTF-8
 * made visible): a file name cannot drive the reader's terminal.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/termtext.h"
#include "report_int.h"

#define TEXT_EVENTS 20 /* of what matters, per turn */
#define TEXT_OUTSIDE 5 /* changes outside the session's folder named */
#define TEXT_ARGS 400 /* a call's arguments (not a command) shown */

/* n bytes of s, escaped for the terminal (lines included: "\n"). */
static void tn(FILE *f, const char *s, size_t n)
{
	char small[1024], *buf = NULL;
	size_t size = 4 * n + 1; /* the longest escape of a byte: "\x1b" */

	if (size > sizeof(small))
		buf = malloc(size);
	if (!buf) { /* short, or no memory: cut */
		buf = small;
		size = sizeof(small);
	}
	lg_term_escape(buf, size, s, n);
	fputs(buf, f);
	if (buf != small)
		free(buf);
}

static void t(FILE *f, const char *s)
{
	tn(f, s, strlen(s));
}

/* A note's text, a line at a time, each escaped and indented. */
static void lines(FILE *f, const char *s)
{
	for (;;) {
		const char *nl = strchr(s, '\n');
		size_t n = nl ? (size_t)(nl - s) : strlen(s);

		fputs("    | ", f);
		tn(f, s, n);
		fputc('\n', f);
		if (!nl)
			break;
		s = nl + 1;
	}
}

static void calls(FILE *f, const struct rep *r, const struct rpt_turn *u)
{
	char text[8192];

	if (!u->ncall)
		return;
	fputs("  calls:\n", f);
	for (size_t i = u->call0; i < u->call0 + u->ncall; i++) {
		const struct rpt_call *c = &r->c[i];
		bool cmd = rpt_call_text(c, text, sizeof(text));
		size_t n = strlen(text);

		fputs("    ", f);
		t(f, c->tool);
		if (c->stream != u->stream)
			fputs(" (subagent)", f);
		fputs(": ", f);
		if (!cmd && n > TEXT_ARGS) {
			n = TEXT_ARGS;
			while (n && ((unsigned char)text[n] & 0xc0) == 0x80)
				n--; /* not into a character */
			tn(f, text, n);
			fputs("...", f);
		} else {
			t(f, text);
		}
		fputc('\n', f);
	}
}

static void change_line(FILE *f, const struct rep *r, const struct lgq_entry *e)
{
	fprintf(f, "    %-15s ", rpt_change_word(e));
	t(f, rpt_rel(r, rpt_entry_path(e)));
	if (e->moved) {
		fputs(" -> ", f);
		t(f, e->moved_to ? rpt_rel(r, e->moved_to) : "?");
	}
	if (e->own)
		fputs("  (its own file, from an earlier turn)", f);
	fputc('\n', f);
}

static void changes(FILE *f, const struct rep *r, const struct rpt_turn *u)
{
	size_t named = 0;

	if (!u->nch) {
		fputs("  changed: nothing recorded\n", f);
		return;
	}
	fputs("  changed:\n", f);
	if (u->nch == u->outside)
		fputs("    nothing in the session's folder\n", f);
	for (size_t i = u->ch0; i < u->ch0 + u->nch; i++)
		if (rpt_in_project(r, r->ch[i]))
			change_line(f, r, r->ch[i]);
	if (!u->outside)
		return;
	fprintf(f, "    and %zu outside ", u->outside);
	t(f, r->cwd);
	fputs(" (the agent's own files: a rewind leaves them)", f);
	fputs(u->outside > TEXT_OUTSIDE ? ", the first:\n" : ":\n", f);
	for (size_t i = u->ch0; i < u->ch0 + u->nch && named < TEXT_OUTSIDE;
	     i++)
		if (!rpt_in_project(r, r->ch[i])) {
			fputs("  ", f);
			change_line(f, r, r->ch[i]);
			named++;
		}
}

static void notes(FILE *f, const struct rep *r, const struct rpt_turn *u)
{
	if (!u->nnote)
		fputs("  note to the model: none\n", f);
	for (size_t i = u->note0; i < u->note0 + u->nnote; i++) {
		const struct rpt_note *n = &r->notes_sent[i];

		fputs("  note to the model (", f);
		t(f, n->rule);
		fputs(", ", f);
		t(f, n->reason);
		fprintf(f, ")%s", n->observe ? ", observe mode: not sent" : "");
		if (n->times > 1)
			fprintf(f, ", in %u requests", n->times);
		fputs(":\n", f);
		lines(f, n->text);
	}
	if (r->tripped && r->trip_turn == u->n) {
		fprintf(f, "  %s%s, at %.3fs, by ",
			r->observe ? "WOULD HAVE TRIPPED" : "TRIPPED",
			u->n	    ? " in this turn" :
			r->any_turn ? " before turn 1" :
				      "",
			(double)r->trip_t / 1000.0);
		t(f, r->trip_rule);
		fputs(": ", f);
		t(f, r->trip_summary);
		fputc('\n', f);
	}
}

static void events(FILE *f, const struct rep *r, const struct rpt_turn *u)
{
	char words[256];
	size_t shown = 0;

	fprintf(f, "  events: %zu that matter", u->matters);
	if (u->folded) {
		rpt_fold_words(r, u, words, sizeof(words));
		fprintf(f, "; %zu routine, folded (", u->folded);
		t(f, words);
		fputc(')', f);
	}
	fputs(u->matters ? ":\n" : "\n", f);
	for (size_t i = u->ev0; i < u->ev0 + u->nev; i++) {
		const struct rpt_ev *e = &r->e[i];

		if (!e->matters)
			continue;
		if (++shown > TEXT_EVENTS)
			continue;
		fprintf(f, "    %8.3fs ", (double)e->t / 1000.0);
		t(f, e->verdict);
		fputc(' ', f);
		t(f, e->kind);
		fputc(' ', f);
		t(f, e->what);
		fputc(' ', f);
		t(f, rpt_rel(r, e->target));
		if (e->cls[0]) {
			fputs(" [", f);
			t(f, e->cls);
			fputc(']', f);
		}
		if (e->note[0]) {
			fputs(" note: ", f);
			t(f, e->note);
		}
		fputc('\n', f);
	}
	if (shown > TEXT_EVENTS)
		fprintf(f,
			"    ... and %zu more (the HTML report lists them)\n",
			shown - TEXT_EVENTS);
}

static void turn(FILE *f, const struct rep *r, const struct rpt_turn *u)
{
	char when[48];

	if (u->n) {
		fprintf(f, "\n== Turn %u  ", u->n);
		if (*rpt_clock(r, u->t, when, sizeof(when)))
			fprintf(f, "%s, ", when);
		fprintf(f, "+%.3fs ==\n", (double)u->t / 1000.0);
	} else {
		fputs(r->any_turn ? "\n== Before turn 1 ==\n" :
				    "\n== What happened (no turns) ==\n",
		      f);
	}
	calls(f, r, u);
	changes(f, r, u);
	notes(f, r, u);
	events(f, r, u);
	if (u->n) {
		fputs("  rewind: lgctl rewind ", f);
		t(f, r->id);
		fprintf(f, " --turn %u\n", u->n);
	} else if (u->nch) {
		fputs("  undo by time: lgctl restore ", f);
		t(f, r->id);
		fputs(" --since DUR (the whole session: lgctl restore ", f);
		t(f, r->id);
		fputs(")\n", f);
	}
}

void rpt_text(FILE *f, const struct rep *r)
{
	char started[48];
	size_t n = r->nturns - (r->nturns && !r->turns[0].n);

	fputs("lgrun session ", f);
	t(f, r->session[0] ? r->session : r->id);
	fputs(" (agent ", f);
	t(f, r->agent);
	fprintf(f, "): %zu events over %.3fs", r->n,
		(double)r->last_t / 1000.0);
	if (*rpt_started(r, started, sizeof(started)))
		fprintf(f, " from %s", started);
	fputc('\n', f);
	if (r->cwd[0]) {
		fputs("folder ", f);
		t(f, r->cwd);
		fputs(", ", f);
	}
	fputs("config ", f);
	t(f, r->config[0] ? r->config : "(defaults)");
	if (r->profile[0]) {
		fputs(", profile ", f);
		t(f, r->profile);
	}
	fputs(r->observe ? " (observe mode)\n" : "\n", f);
	if (r->tripped) {
		fprintf(f, "%s at %.3fs by ",
			r->observe ? "Would have tripped" : "Tripped",
			(double)r->trip_t / 1000.0);
		t(f, r->trip_rule);
		if (r->any_turn)
			fprintf(f, " in turn %u", r->trip_turn);
		fputs(": ", f);
		t(f, r->trip_summary);
		fputc('\n', f);
	} else {
		fprintf(f, "No trip (%lu warning(s)).\n", r->warns);
	}
	if (r->any_turn) {
		fprintf(f,
			"%zu turn(s): a turn is one response of the model that called tools; lgctl rewind ",
			n);
		t(f, r->id);
		fputs(" --turn K puts the session's folder back as it was when turn K began.\n",
		      f);
	} else {
		fputs("No turns: no model was seen through lgrun's proxy.\n",
		      f);
	}
	for (size_t i = 0; i < r->nturns; i++) {
		const struct rpt_turn *u = &r->turns[i];

		if (r->any_turn && !u->n && !u->nev && !u->nch && !u->nnote)
			continue;
		turn(f, r, u);
	}
}
