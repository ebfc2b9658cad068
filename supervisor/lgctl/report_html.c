// SPDX-License-Identifier: MIT
/*
 * lgctl report's HTML page: self-contained (styles and script inline,
 * nothing fetched; SVG made here), every string from the session escaped
 * for HTML and made valid UTF-8. The timeline of events by source, the
 * deletes in the volumetric window against max_ops with the trip marked,
 * budget use, then the turns (report_int.h), then what was kept. Routine
 * events are folded in <details>: one click away, no script needed.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "guard/event.h"
#include "lib/termtext.h"
#include "report_int.h"

#define W 1000 /* the charts' width in px */

/*
 * n bytes of s as HTML text (or an attribute's value): markup escaped;
 * control characters and bytes that are not UTF-8 made visible as the
 * terminal's escapes ("\x1b"), so the page stays valid UTF-8 and no
 * recorded byte reaches a reader's terminal through a copy; line ends kept
 * when lines (in a <pre>), else "\n".
 */
static void hn(FILE *f, const char *s, size_t n, bool lines)
{
	const unsigned char *p = (const unsigned char *)s;

	for (size_t i = 0; i < n;) {
		unsigned cp = 0;
		size_t len = lg_utf8_len(p + i, n - i, &cp);

		if (!len) {
			fprintf(f, "\\x%02x", p[i++]);
			continue;
		}
		if (cp == '&')
			fputs("&amp;", f);
		else if (cp == '<')
			fputs("&lt;", f);
		else if (cp == '>')
			fputs("&gt;", f);
		else if (cp == '"')
			fputs("&quot;", f);
		else if (cp == '\'')
			fputs("&#39;", f);
		else if (cp == '\n')
			fputs(lines ? "\n" : "\\n", f);
		else if (cp == '\t')
			fputc('\t', f);
		else if (cp < 0x20 || cp == 0x7f)
			fprintf(f, "\\x%02x", cp);
		else if (cp >= 0x80 && cp < 0xa0)
			fprintf(f, "\\u%04x", cp);
		else
			fwrite(p + i, 1, len, f);
		i += len;
	}
}

static void h(FILE *f, const char *s)
{
	hn(f, s, strlen(s), false);
}

/* A verdict as a class name: one lgrun writes, else "other". */
static const char *vclass(const char *v)
{
	static const char *const known[] = { "allow", "warn", "deny", "kill" };

	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (!strcmp(v, known[i]))
			return known[i];
	return *v ? "other" : "none";
}

static double x_of(const struct rep *r, uint64_t t)
{
	uint64_t span = r->last_t ? r->last_t : 1;

	return 40.0 + (double)t * (W - 60) / (double)span;
}

static void trip_line(FILE *f, const struct rep *r, const char *id, int y0,
		      int y1)
{
	if (!r->tripped)
		return;
	fprintf(f,
		"<line id=\"%s\" class=\"trip\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\"><title>",
		id, x_of(r, r->trip_t), x_of(r, r->trip_t), y0, y1);
	h(f, r->trip_summary);
	fputs("</title></line>\n", f);
}

static void timeline(FILE *f, const struct rep *r)
{
	static const char *const names[] = { "seccomp", "shim",	  "proxy",
					     "bpf",	"output", "timer" };
	const int rows = 6, hgt = 24 * rows + 30;

	fprintf(f,
		"<h2>Timeline</h2>\n<svg id=\"timeline\" width=\"%d\" height=\"%d\" role=\"img\">\n",
		W, hgt);
	for (int i = 0; i < rows; i++)
		fprintf(f,
			"<text x=\"0\" y=\"%d\" class=\"axis\">%s</text><line class=\"row\" x1=\"40\" x2=\"%d\" y1=\"%d\" y2=\"%d\"/>\n",
			24 * i + 20, names[i], W - 20, 24 * i + 16,
			24 * i + 16);
	for (size_t i = 0; i < r->nturns; i++) /* where each turn began */
		if (r->turns[i].n && r->turns[i].have_t)
			fprintf(f,
				"<line class=\"turn-mark\" x1=\"%.1f\" x2=\"%.1f\" y1=\"0\" y2=\"%d\"><title>turn %u</title></line>\n",
				x_of(r, r->turns[i].t), x_of(r, r->turns[i].t),
				hgt - 20, r->turns[i].n);
	for (size_t i = 0; i < r->n; i++) {
		const struct rpt_ev *e = &r->e[i];

		if (e->src < 0 || e->src >= rows)
			continue;
		fprintf(f,
			"<circle class=\"ev %s\" cx=\"%.1f\" cy=\"%d\" r=\"3\"><title>%.3fs ",
			vclass(e->verdict), x_of(r, e->t), 24 * e->src + 16,
			(double)e->t / 1000.0);
		h(f, e->kind);
		fputc(' ', f);
		h(f, e->what);
		fputc(' ', f);
		h(f, e->target);
		fputs("</title></circle>\n", f);
	}
	trip_line(f, r, "trip-marker-timeline", 0, hgt - 20);
	fprintf(f, "<text x=\"40\" y=\"%d\" class=\"axis\">0s</text>", hgt - 4);
	fprintf(f,
		"<text x=\"%d\" y=\"%d\" class=\"axis\">%.3fs</text>\n</svg>\n",
		W - 80, hgt - 4, (double)r->last_t / 1000.0);
}

/*
 * At each delete of pre-existing data, how many fall in the window ending
 * there: one pass over the deletes in time order, the window's start
 * moving on as its end does.
 */
static int cmp_t(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void window_chart(FILE *f, const struct rep *r)
{
	unsigned max = r->have_cfg ? r->cfg.guard.volumetric.max : 0;
	uint64_t win = r->have_cfg ? r->cfg.guard.volumetric.window_ms : 60000;
	uint64_t *d = calloc(r->destroys ? r->destroys : 1, sizeof(*d));
	unsigned *count = calloc(r->destroys ? r->destroys : 1, sizeof(*count));
	unsigned peak = 0, top, in = 0;
	size_t nd = 0, lo = 0;
	const int hgt = 180;
	double y_prev = hgt - 20, y_max;

	for (size_t i = 0; d && i < r->n && nd < r->destroys; i++)
		if (r->e[i].destroy)
			d[nd++] = r->e[i].t;
	qsort(d, nd, sizeof(*d), cmp_t); /* the events are by turn */
	for (size_t i = 0; count && i < nd; i++) {
		in++;
		for (; lo <= i && d[i] - d[lo] >= win; lo++)
			in--;
		count[i] = in;
		peak = in > peak ? in : peak;
	}
	top = (max > peak ? max : peak) + 1;
	y_max = (double)(hgt - 20) - (double)max * (hgt - 40) / top;
	fprintf(f,
		"<h2>Deletes in the window (volumetric)</h2>\n<p>Pre-existing data destroyed within %.0fs, against <code>max_ops</code> = %u%s.</p>\n<svg id=\"window-chart\" width=\"%d\" height=\"%d\" role=\"img\">\n<polyline class=\"count\" points=\"40,%d",
		(double)win / 1000.0, max, max ? "" : " (off)", W, hgt,
		hgt - 20);
	for (size_t i = 0; count && i < nd; i++) { /* a step at each one */
		double y = (double)(hgt - 20) -
			   (double)count[i] * (hgt - 40) / top;

		fprintf(f, " %.1f,%.1f %.1f,%.1f", x_of(r, d[i]), y_prev,
			x_of(r, d[i]), y);
		y_prev = y;
	}
	free(count);
	free(d);
	fprintf(f, " %.1f,%.1f\"/>\n", x_of(r, r->last_t), y_prev);
	fprintf(f, "<text x=\"0\" y=\"%d\" class=\"axis\">0</text>\n",
		hgt - 16);
	if (max)
		fprintf(f,
			"<line id=\"threshold-volumetric\" class=\"threshold-line\" data-max=\"%u\" x1=\"40\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\"><title>max_ops %u</title></line>\n<text x=\"0\" y=\"%.1f\" class=\"axis\">%u</text>\n",
			max, W - 20, y_max, y_max, max, y_max + 4, max);
	trip_line(f, r, "trip-marker", 0, hgt - 20);
	fputs("</svg>\n", f);
}

static void bar(FILE *f, const char *name, unsigned long long n,
		unsigned long long max)
{
	double pct = max ? 100.0 * (double)n / (double)max : 0;

	fprintf(f, "<tr class=\"budget\"><td>%s</td><td>%llu</td><td>", name,
		n);
	if (max)
		fprintf(f,
			"%llu</td><td><div class=\"bar\"><div style=\"width:%.0f%%\"></div></div>",
			max, pct > 100 ? 100 : pct);
	else
		fputs("off</td><td>", f);
	fputs("</td></tr>\n", f);
}

static void budgets(FILE *f, const struct rep *r)
{
	const struct lg_budget_cfg *b = r->have_cfg ? &r->cfg.guard.budget :
						      NULL;

	fputs("<h2>Budgets</h2>\n<table id=\"budgets\"><tr><th>budget</th><th>used</th><th>limit</th><th></th></tr>\n",
	      f);
	bar(f, "destructive ops", r->destroys, b ? b->max_destructive_ops : 0);
	bar(f, "tool calls", r->tools, b ? b->max_tool_calls : 0);
	bar(f, "model turns", r->model_turns, b ? b->max_turns : 0);
	bar(f, "tokens", r->tokens, b ? b->max_tokens : 0);
	bar(f, "seconds", r->last_t / 1000, b ? b->timeout_ms / 1000 : 0);
	fputs("</table>\n", f);
}

/* A turn's tool calls: the tool, and its command or its arguments. */
static void calls(FILE *f, const struct rep *r, const struct rpt_turn *u)
{
	char text[8192]; /* a call's arguments are cut at 4 KB */

	if (!u->ncall)
		return;
	fputs("<h4>Tool calls</h4>\n<ol class=\"calls\">\n", f);
	for (size_t i = u->call0; i < u->call0 + u->ncall; i++) {
		const struct rpt_call *c = &r->c[i];
		bool cmd = rpt_call_text(c, text, sizeof(text));

		fputs("<li><span class=\"tool\">", f);
		h(f, c->tool);
		fputs("</span>", f);
		if (c->stream != u->stream)
			fputs(" <span class=\"sub\">(subagent)</span>", f);
		fprintf(f, " <code class=\"%s\">", cmd ? "cmd" : "args");
		h(f, text);
		fputs("</code></li>\n", f);
	}
	fputs("</ol>\n", f);
}

static void change_rows(FILE *f, const struct rep *r, const struct rpt_turn *u,
			bool inside)
{
	fputs("<table class=\"changes\"><tr><th>what</th><th>path</th></tr>\n",
	      f);
	for (size_t i = u->ch0; i < u->ch0 + u->nch; i++) {
		const struct lgq_entry *e = r->ch[i];
		const char *w = rpt_change_word(e);

		if (rpt_in_project(r, e) != inside)
			continue;
		fputs("<tr class=\"change\" data-what=\"", f);
		h(f, w);
		fputs("\"><td>", f);
		h(f, w);
		if (e->own)
			fputs(" <span class=\"own\">(its own file, from an earlier turn)</span>",
			      f);
		fputs("</td><td>", f);
		h(f, rpt_rel(r, rpt_entry_path(e)));
		if (e->moved) {
			fputs(" &rarr; ", f);
			h(f, e->moved_to ? rpt_rel(r, e->moved_to) : "?");
		}
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n", f);
}

/* What the turn changed: under the session's folder, then folded the rest. */
static void changes(FILE *f, const struct rep *r, const struct rpt_turn *u)
{
	fputs("<h4>Changes</h4>\n", f);
	if (!u->nch) {
		fputs("<p class=\"nochange\">None recorded (the quarantine's index: what was removed, overwritten, made, renamed, appended to, chmodded).</p>\n",
		      f);
		return;
	}
	if (u->nch > u->outside)
		change_rows(f, r, u, true);
	else
		fputs("<p class=\"nochange\">None in the session's folder.</p>\n",
		      f);
	if (!u->outside)
		return;
	fprintf(f, "<details class=\"outside\"><summary>%zu change(s) outside ",
		u->outside);
	h(f, r->cwd);
	fputs(" (the agent's own files: a rewind leaves them)</summary>\n", f);
	change_rows(f, r, u, false);
	fputs("</details>\n", f);
}

/* The notes lgrun sent to the model in the turn, in full; a trip in it. */
static void notes(FILE *f, const struct rep *r, const struct rpt_turn *u)
{
	fputs("<h4>lgrun's note to the model</h4>\n", f);
	if (!u->nnote)
		fputs("<p class=\"nonote\">None.</p>\n", f);
	for (size_t i = u->note0; i < u->note0 + u->nnote; i++) {
		const struct rpt_note *n = &r->notes_sent[i];

		fputs("<div class=\"note\"><p>", f);
		h(f, n->rule);
		fputs(" (", f);
		h(f, n->reason);
		fprintf(f, ")%s", n->observe ? ", observe mode: not sent" : "");
		if (n->times > 1)
			fprintf(f, ", in %u requests", n->times);
		fputs("</p><pre class=\"note-text\">", f);
		hn(f, n->text, strlen(n->text), true);
		fputs("</pre></div>\n", f);
	}
	if (r->tripped && r->trip_turn == u->n) {
		fprintf(f, "<p class=\"trip\">%s%s, at %.3fs, by ",
			r->observe ? "Would have tripped" : "Tripped",
			u->n	    ? " in this turn" :
			r->any_turn ? " before turn 1" :
				      "",
			(double)r->trip_t / 1000.0);
		h(f, r->trip_rule);
		fputs(": ", f);
		h(f, r->trip_summary);
		fputs("</p>\n", f);
	}
}

static void event_rows(FILE *f, const struct rep *r, const struct rpt_turn *u,
		       bool matters, size_t *shown)
{
	fputs("<table class=\"events sortable\"><thead><tr><th>t (s)</th><th>source</th><th>kind</th><th>op / tool</th><th>target</th><th>class</th><th>verdict</th></tr></thead><tbody>\n",
	      f);
	*shown = 0;
	for (size_t i = u->ev0; i < u->ev0 + u->nev; i++) {
		const struct rpt_ev *e = &r->e[i];

		if (e->matters != matters)
			continue;
		if (++*shown > RPT_ROWS)
			continue;
		fprintf(f, "<tr class=\"%s\"><td>%.3f</td><td>%s</td><td>",
			vclass(e->verdict), (double)e->t / 1000.0,
			lg_source_name(
				(enum lg_source)(e->src < 0 ? 0 : e->src)));
		h(f, e->kind);
		fputs("</td><td>", f);
		h(f, e->what);
		fputs("</td><td>", f);
		h(f, rpt_rel(r, e->target));
		fputs("</td><td>", f);
		h(f, e->cls);
		fputs("</td><td>", f);
		h(f, e->verdict);
		if (e->note[0]) {
			fputs(", note: ", f);
			h(f, e->note);
		}
		fputs("</td></tr>\n", f);
	}
	fputs("</tbody></table>\n", f);
	if (*shown > RPT_ROWS)
		fprintf(f, "<p class=\"cut\">The first %d of %zu shown.</p>\n",
			RPT_ROWS, *shown);
}

/* What matters shown (trips, warnings, destroys, denials, notes); the rest folded. */
static void events(FILE *f, const struct rep *r, const struct rpt_turn *u)
{
	char words[256];
	size_t shown;

	fputs("<h4>Events</h4>\n", f);
	if (u->matters)
		event_rows(f, r, u, true, &shown);
	else
		fputs("<p class=\"quiet\">None that matters (no trip, warning, destroyed pre-existing data, denial or note).</p>\n",
		      f);
	if (!u->folded)
		return;
	rpt_fold_words(r, u, words, sizeof(words));
	fprintf(f,
		"<details class=\"folded\" data-folded=\"%zu\"><summary>%zu routine event(s) folded (",
		u->folded, u->folded);
	h(f, words);
	fputs(")</summary>\n", f);
	event_rows(f, r, u, false, &shown);
	fputs("</details>\n", f);
}

/* One turn (u->n 0: before the first, or the whole of a session without). */
static void turn(FILE *f, const struct rep *r, const struct rpt_turn *u)
{
	char when[48];

	fprintf(f, "<section class=\"turn\" id=\"turn-%u\" data-turn=\"%u\">\n",
		u->n, u->n);
	if (u->n) {
		fprintf(f, "<h3>Turn %u <span class=\"when\">", u->n);
		if (*rpt_clock(r, u->t, when, sizeof(when)))
			fprintf(f, "%s, ", when);
		fprintf(f, "+%.3fs</span></h3>\n", (double)u->t / 1000.0);
	} else if (r->any_turn) {
		fputs("<h3>Before turn 1</h3>\n", f);
	}
	calls(f, r, u);
	changes(f, r, u);
	notes(f, r, u);
	events(f, r, u);
	if (u->n) {
		fputs("<p class=\"rewind\">Undo this turn and the ones after it: <code>lgctl rewind ",
		      f);
		h(f, r->id);
		fprintf(f, " --turn %u</code></p>\n", u->n);
	} else if (u->nch) {
		fputs("<p class=\"restore\">Undo by time (no turn to rewind to): <code>lgctl restore ",
		      f);
		h(f, r->id);
		fputs(" --since DUR</code> (DUR: how far back, e.g. 10m); the whole session: <code>lgctl restore ",
		      f);
		h(f, r->id);
		fputs("</code></p>\n", f);
	}
	fputs("</section>\n", f);
}

static void turns(FILE *f, const struct rep *r)
{
	size_t n = r->nturns - (r->nturns && !r->turns[0].n);

	if (!r->any_turn) {
		fputs("<h2 id=\"turns\">What happened</h2>\n<p id=\"turns-intro\">No turns: no model was seen through lgrun's proxy.</p>\n",
		      f);
		turn(f, r, &r->turns[0]);
		return;
	}
	fprintf(f,
		"<h2 id=\"turns\">Turns</h2>\n<p id=\"turns-intro\">%zu turn(s): a turn is one response of the model that called tools. <code>lgctl rewind ",
		n);
	h(f, r->id);
	fputs(" --turn K</code> puts the session's folder", f);
	if (r->cwd[0]) {
		fputs(" (", f);
		h(f, r->cwd);
		fputc(')', f);
	}
	fputs(" back as it was when turn K began.</p>\n", f);
	for (size_t i = 0; i < r->nturns; i++) {
		const struct rpt_turn *u = &r->turns[i];

		if (!u->n && !u->nev && !u->nch && !u->nnote)
			continue; /* nothing before turn 1 */
		turn(f, r, u);
	}
}

/* Did the session keep anything (not only names it made or renamed)? */
static bool kept_any(const struct lgq_index *x)
{
	for (size_t i = 0; i < x->n; i++)
		if (!x->e[i].moved && !x->e[i].made_new && !x->e[i].appended &&
		    !x->e[i].mode_only)
			return true;
	return false;
}

static void noted_row(FILE *f, const struct lgq_entry *e)
{
	fprintf(f, "<tr><td>%lld</td><td>%s</td><td>", e->n,
		e->appended  ? "appended" :
		e->mode_only ? "mode" :
		e->made_new  ? "made" :
			       "moved");
	h(f, e->path);
	fputs("</td><td>", f);
	if (e->moved) {
		fputs("renamed to ", f);
		h(f, e->moved_to ? e->moved_to : "?");
	} else {
		fputs(e->made_new ?
			      "made by the session (a restore sets it aside)" :
			      "a restore sets it back",
		      f);
	}
	fputs("</td></tr>\n", f);
}

static void quarantine(FILE *f, const struct rep *r)
{
	const struct lgq_index *x = &r->x;
	bool held_any = false;
	size_t noted = 0;

	fputs("<h2>Quarantine</h2>\n", f);
	if (r->remote) /* issue 38: said before what was kept, whatever it is */
		fprintf(f,
			"<p id=\"quarantine-remote\">%lu delete(s) of data off this host (a service, a database, a cluster) could not be kept: lgrun keeps only this machine's files, and nothing puts those back.</p>\n",
			r->remote);
	if (r->devices) /* issue 39: the same of block devices */
		fprintf(f,
			"<p id=\"quarantine-devices\">%lu block device(s) holding data (a filesystem, a partition table) were written over and could not be kept: lgrun cannot keep a block device's content.</p>\n",
			r->devices);
	if (!r->have_x || !kept_any(x)) {
		fputs(r->remote ?
			      "<p id=\"quarantine-empty\">Nothing was kept: the session removed no pre-existing file of this host (or the quarantine was off).</p>\n" :
			      "<p id=\"quarantine-empty\">Nothing was kept: the session removed no pre-existing data (or the quarantine was off).</p>\n",
		      f);
		return;
	}
	fputs("<table id=\"quarantine\"><tr><th>#</th><th>kind</th><th>path</th><th>size</th><th>now</th></tr>\n",
	      f);
	for (size_t i = 0; i < x->n; i++) {
		const struct lgq_entry *e = &x->e[i];
		bool held = e->dir || (e->kept && access(e->kept, F_OK) == 0);
		char size[32];

		if (e->appended || e->mode_only || e->made_new || e->moved) {
			noted++; /* no data: below, folded */
			continue;
		}
		held_any |= held && !e->dir && !e->own;
		lg_human_bytes((uint64_t)e->size, size, sizeof(size));
		fprintf(f, "<tr><td>%lld</td><td>%s</td><td>", e->n,
			e->dir ? "dir" :
			e->own ? "own (a rewind's)" :
				 "file");
		h(f, e->path);
		fprintf(f, "</td><td>%s</td><td class=\"%s\">%s</td></tr>\n",
			e->dir ? "" : size, held ? "held" : "gone",
			e->dir ? "metadata" :
			held   ? "held" :
				 "gone: restored or collected");
	}
	fputs("</table>\n", f);
	if (noted) {
		fprintf(f,
			"<details id=\"quarantine-noted\"><summary>%zu name(s) made, renamed, appended to or chmodded (no data kept: a restore or a rewind sets them back)</summary>\n<table id=\"quarantine-notes\"><tr><th>#</th><th>kind</th><th>path</th><th>now</th></tr>\n",
			noted);
		for (size_t i = 0; i < x->n; i++) {
			const struct lgq_entry *e = &x->e[i];

			if (e->appended || e->mode_only || e->made_new ||
			    e->moved)
				noted_row(f, e);
		}
		fputs("</table></details>\n", f);
	}
	if (held_any) {
		fputs("<p>Put it back: <code>lgctl restore ", f);
		h(f, r->id);
		fputs("</code></p>\n", f);
	}
}

static const char STYLE[] =
	"body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222}"
	"h1{font-size:20px}h2{font-size:16px;margin-top:28px}"
	"h3{font-size:15px;margin:0 0 6px}h4{font-size:13px;margin:10px 0 4px;color:#444}"
	"svg{background:#fafafa;border:1px solid #ddd}"
	".axis{font-size:11px;fill:#666}.row{stroke:#e4e4e4}"
	".ev{fill:#4a7}.ev.warn{fill:#e90}.ev.deny,.ev.kill{fill:#d22}"
	".trip{stroke:#d22;stroke-width:2;stroke-dasharray:4 3}"
	".turn-mark{stroke:#99b;stroke-width:1}"
	".count{fill:none;stroke:#36c;stroke-width:2}"
	".threshold-line{stroke:#d22;stroke-width:1.5}"
	"table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:2px 8px;text-align:left}"
	"th{background:#f0f0f0}table.sortable th{cursor:pointer}"
	"tr.kill td,tr.deny td{background:#fdd}tr.warn td{background:#fff3d6}"
	".bar{width:200px;height:10px;background:#eee}.bar div{height:10px;background:#36c}"
	".outcome.tripped,p.trip{color:#d22;font-weight:bold}"
	"section.turn{border-top:1px solid #ccc;padding:10px 0}"
	".when{font-weight:normal;color:#666}.sub,.own{color:#666}"
	"code{white-space:pre-wrap;word-break:break-all}"
	"pre.note-text{white-space:pre-wrap;background:#fff8e0;border:1px solid #ec9;padding:8px;margin:4px 0}"
	"details{margin:4px 0}summary{cursor:pointer;color:#555}";

/* Sorting a sortable table by a column; then the page says it is ready. */
static const char SCRIPT[] =
	"(function(){var ts=document.querySelectorAll('table.sortable');"
	"Array.prototype.forEach.call(ts,function(t){"
	"var hs=t.tHead.rows[0].cells;for(var i=0;i<hs.length;i++){"
	"(function(c){hs[c].addEventListener('click',function(){"
	"var b=t.tBodies[0],rs=Array.prototype.slice.call(b.rows);"
	"var num=c===0,dir=hs[c].dataset.dir==='1'?-1:1;hs[c].dataset.dir=dir===1?'1':'0';"
	"rs.sort(function(x,y){var a=x.cells[c].textContent,z=y.cells[c].textContent;"
	"return (num?(parseFloat(a)-parseFloat(z)):a.localeCompare(z))*dir;});"
	"rs.forEach(function(r){b.appendChild(r);});});})(i);}});"
	"document.body.dataset.ready='1';})();";

void rpt_html_page(FILE *f, const struct rep *r, const char *dir)
{
	char started[48];

	(void)dir;
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>lgrun session ",
	      f);
	h(f, r->session[0] ? r->session : r->id);
	fprintf(f, "</title><style>%s</style></head><body>\n<h1>lgrun session ",
		STYLE);
	h(f, r->session[0] ? r->session : r->id);
	fputs("</h1>\n<p>agent <b>", f);
	h(f, r->agent);
	fprintf(f, "</b>, %zu events over %.3fs", r->n,
		(double)r->last_t / 1000.0);
	if (*rpt_started(r, started, sizeof(started)))
		fprintf(f, " from %s", started);
	if (r->cwd[0]) {
		fputs(", in ", f);
		h(f, r->cwd);
	}
	fputs(", config ", f);
	h(f, r->config[0] ? r->config : "(defaults)");
	if (r->profile[0]) {
		fputs(", profile ", f);
		h(f, r->profile);
	}
	fputs(r->observe ? " (observe mode)" : "", f);
	fputs("</p>\n", f);
	if (r->tripped) {
		fprintf(f,
			"<p id=\"outcome\" class=\"outcome tripped\">%s at %.3fs by ",
			r->observe ? "Would have tripped" : "Tripped",
			(double)r->trip_t / 1000.0);
		h(f, r->trip_rule);
		if (r->any_turn)
			fprintf(f, " in turn %u", r->trip_turn);
		fputs(": ", f);
		h(f, r->trip_summary);
		fputs("</p>\n", f);
	} else {
		fprintf(f,
			"<p id=\"outcome\" class=\"outcome\">No trip (%lu warning(s)).</p>\n",
			r->warns);
	}
	if (r->notes)
		fprintf(f,
			"<p id=\"steer\">lgrun decided %lu note(s) for the model before acting ([steer]: what it saw, what happens next, what to do instead). A note reaches the model with the agent's next request through lgrun's proxy; the audit's steer records are the ones sent (each turn shows its own).</p>\n",
			r->notes);
	timeline(f, r);
	window_chart(f, r);
	budgets(f, r);
	turns(f, r);
	quarantine(f, r);
	fprintf(f, "<script>%s</script>\n</body></html>\n", SCRIPT);
}
