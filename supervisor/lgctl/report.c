// SPDX-License-Identifier: MIT
/*
 * lgctl report SESSION [-o FILE]: one self-contained HTML page (styles and
 * script inline, nothing fetched) of a session from its recording
 * (record.h), its config's limits and its quarantine index: a timeline of
 * events by source, the deletes in the volumetric window against max_ops
 * with the trip marked, budget use, the recent events, what was kept.
 */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "config/config.h"
#include "guard/event.h"
#include "lgctl.h"
#include "store/state.h"
#include "lib/text.h"

#define W 1000 /* the charts' width in px */
#define RECENT_ROWS 200

struct ev {
	uint64_t t;
	int src;
	char kind[16], what[48], target[256], cls[16], verdict[8];
	bool destroy;
};

struct rep {
	struct ev *e;
	size_t n, cap;
	char session[200], agent[200], config[PATH_MAX], profile[200];
	bool observe, tripped;
	uint64_t trip_t, last_t;
	char trip_rule[32], trip_summary[LG_SUMMARY_MAX];
	unsigned long tools, turns, destroys, warns, notes;
	unsigned long remote; /* deletes of data off this host: never kept */
	unsigned long devices; /* block devices written over: never kept */
	unsigned long long tokens;
	struct lg_config cfg;
	bool have_cfg;
};

static const char *js(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s ? s : "";
}

/* Text made safe in HTML (elements and attributes). */
static void h(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		case '\'':
			fputs("&#39;", f);
			break;
		default:
			fputc(*s, f);
		}
	}
}

static void take(struct rep *r, json_t *o)
{
	struct ev *e;
	const char *k = js(o, "k"), *v = js(o, "v");

	if (json_object_get(o, "record")) {
		if (!r->session[0]) {
			snprintf(r->session, sizeof(r->session), "%s",
				 js(o, "session"));
			snprintf(r->agent, sizeof(r->agent), "%s",
				 js(o, "agent"));
			snprintf(r->config, sizeof(r->config), "%s",
				 js(o, "config"));
			snprintf(r->profile, sizeof(r->profile), "%s",
				 js(o, "profile"));
			r->observe =
				json_is_true(json_object_get(o, "observe"));
		}
		return;
	}
	if (!*k || !strcmp(k, "restored"))
		return;
	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 256;
		struct ev *p = realloc(r->e, cap * sizeof(*p));

		if (!p)
			return;
		r->e = p;
		r->cap = cap;
	}
	e = &r->e[r->n++];
	memset(e, 0, sizeof(*e));
	e->t = (uint64_t)json_integer_value(json_object_get(o, "t"));
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
	e->destroy = !strcmp(k, "destructive") && !strcmp(e->cls, "destroy");
	r->last_t = e->t;
	if (e->destroy)
		r->destroys++;
	if (e->destroy && !strcmp(e->what, "remote_delete"))
		r->remote++;
	if (e->destroy && !strcmp(e->what, "device_write"))
		r->devices++;
	if (!strcmp(k, "tool_done"))
		r->tools++;
	if (!strcmp(k, "turn")) {
		r->turns++;
		r->tokens += (unsigned long long)json_integer_value(
				     json_object_get(o, "tokens_in")) +
			     (unsigned long long)json_integer_value(
				     json_object_get(o, "tokens_out"));
	}
	if (!strcmp(v, "warn"))
		r->warns++;
	if (*js(o, "note"))
		r->notes++;
	if (!r->tripped && (!strcmp(v, "kill") || !strcmp(v, "deny"))) {
		r->tripped = true;
		r->trip_t = e->t;
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
	char p[PATH_MAX + 256], line[1 << 16];
	bool any = false;

	for (size_t i = 0; i < 2; i++) {
		LG_AUTOFCLOSE FILE *f = NULL;

		snprintf(p, sizeof(p), "%s/sessions/%s.%s", dir, id, parts[i]);
		f = fopen(p, "re");
		if (!f)
			continue;
		any = true;
		while (fgets(line, sizeof(line), f)) {
			json_t *o = json_loads(line, 0, NULL);

			if (o)
				take(r, o);
			json_decref(o);
		}
	}
	return any ? 0 : -ENOENT;
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
	for (size_t i = 0; i < r->n; i++) {
		const struct ev *e = &r->e[i];

		if (e->src < 0 || e->src >= rows ||
		    !strcmp(e->kind, "processes") || !strcmp(e->kind, "tick"))
			continue;
		fprintf(f,
			"<circle class=\"ev %s\" cx=\"%.1f\" cy=\"%d\" r=\"3\"><title>%.3fs ",
			e->verdict, x_of(r, e->t), 24 * e->src + 16,
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

/* Deletes of pre-existing data in the sliding window, against max_ops. */
/*
 * At each delete of pre-existing data, how many fall in the window ending
 * there: one pass, the window's start moving on as its end does.
 */
static unsigned *window_counts(const struct rep *r, uint64_t win,
			       unsigned *peak)
{
	unsigned *c = calloc(r->n ? r->n : 1, sizeof(*c)), in = 0;
	size_t lo = 0;

	*peak = 0;
	for (size_t i = 0; c && i < r->n; i++) {
		if (!r->e[i].destroy)
			continue;
		in++;
		for (; lo <= i && r->e[i].t - r->e[lo].t >= win; lo++)
			in -= r->e[lo].destroy;
		c[i] = in;
		*peak = in > *peak ? in : *peak;
	}
	return c;
}

static void window_chart(FILE *f, const struct rep *r)
{
	unsigned max = r->have_cfg ? r->cfg.guard.volumetric.max : 0;
	uint64_t win = r->have_cfg ? r->cfg.guard.volumetric.window_ms : 60000;
	unsigned peak, top, *count = window_counts(r, win, &peak);
	const int hgt = 180;
	double y_prev = hgt - 20, y_max;

	top = (max > peak ? max : peak) + 1;
	y_max = (double)(hgt - 20) - (double)max * (hgt - 40) / top;
	fprintf(f,
		"<h2>Deletes in the window (volumetric)</h2>\n<p>Pre-existing data destroyed within %.0fs, against <code>max_ops</code> = %u%s.</p>\n<svg id=\"window-chart\" width=\"%d\" height=\"%d\" role=\"img\">\n<polyline class=\"count\" points=\"40,%d",
		(double)win / 1000.0, max, max ? "" : " (off)", W, hgt,
		hgt - 20);
	for (size_t i = 0; count && i < r->n; i++) { /* a step at each one */
		double y;

		if (!r->e[i].destroy)
			continue;
		y = (double)(hgt - 20) - (double)count[i] * (hgt - 40) / top;
		fprintf(f, " %.1f,%.1f %.1f,%.1f", x_of(r, r->e[i].t), y_prev,
			x_of(r, r->e[i].t), y);
		y_prev = y;
	}
	free(count);
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
	bar(f, "model turns", r->turns, b ? b->max_turns : 0);
	bar(f, "tokens", r->tokens, b ? b->max_tokens : 0);
	bar(f, "seconds", r->last_t / 1000, b ? b->timeout_ms / 1000 : 0);
	fputs("</table>\n", f);
}

static void recent(FILE *f, const struct rep *r)
{
	size_t shown = 0, from;

	for (from = r->n; from > 0 && shown < RECENT_ROWS; from--)
		if (strcmp(r->e[from - 1].kind, "processes") &&
		    strcmp(r->e[from - 1].kind, "tick"))
			shown++;
	fputs("<h2>Recent events</h2>\n<table id=\"events\" class=\"sortable\"><thead><tr><th>t (s)</th><th>source</th><th>kind</th><th>op / tool</th><th>target</th><th>class</th><th>verdict</th></tr></thead><tbody>\n",
	      f);
	for (size_t i = from; i < r->n; i++) {
		const struct ev *e = &r->e[i];

		if (!strcmp(e->kind, "processes") || !strcmp(e->kind, "tick"))
			continue;
		fprintf(f, "<tr class=\"%s\"><td>%.3f</td><td>%s</td><td>",
			e->verdict, (double)e->t / 1000.0,
			lg_source_name(
				(enum lg_source)(e->src < 0 ? 0 : e->src)));
		h(f, e->kind);
		fputs("</td><td>", f);
		h(f, e->what);
		fputs("</td><td>", f);
		h(f, e->target);
		fputs("</td><td>", f);
		h(f, e->cls);
		fputs("</td><td>", f);
		h(f, e->verdict);
		fputs("</td></tr>\n", f);
	}
	fputs("</tbody></table>\n", f);
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

static void quarantine(FILE *f, const char *dir, const char *id,
		       unsigned long remote, unsigned long devices)
{
	struct lgq_index x = { 0 };
	char p[PATH_MAX + 256];
	bool held_any = false;

	snprintf(p, sizeof(p), "%s/quarantine/%s.jsonl", dir, id);
	fputs("<h2>Quarantine</h2>\n", f);
	if (remote) /* issue 38: said before what was kept, whatever it is */
		fprintf(f,
			"<p id=\"quarantine-remote\">%lu delete(s) of data off this host (a service, a database, a cluster) could not be kept: lgrun keeps only this machine's files, and nothing puts those back.</p>\n",
			remote);
	if (devices) /* issue 39: the same of block devices */
		fprintf(f,
			"<p id=\"quarantine-devices\">%lu block device(s) holding data (a filesystem, a partition table) were written over and could not be kept: lgrun cannot keep a block device's content.</p>\n",
			devices);
	if (lgq_load(&x, p, NULL, 0, 0) < 0 || !kept_any(&x)) {
		fputs(remote ?
			      "<p id=\"quarantine-empty\">Nothing was kept: the session removed no pre-existing file of this host (or the quarantine was off).</p>\n" :
			      "<p id=\"quarantine-empty\">Nothing was kept: the session removed no pre-existing data (or the quarantine was off).</p>\n",
		      f);
		lgq_free(&x);
		return;
	}
	fputs("<table id=\"quarantine\"><tr><th>#</th><th>kind</th><th>path</th><th>size</th><th>now</th></tr>\n",
	      f);
	for (size_t i = 0; i < x.n; i++) {
		const struct lgq_entry *e = &x.e[i];
		bool held = e->dir || (e->kept && access(e->kept, F_OK) == 0);
		char size[32];

		if (e->appended || e->mode_only) { /* no data: a size, a mode */
			fprintf(f, "<tr><td>%lld</td><td>%s</td><td>", e->n,
				e->appended ? "appended" : "mode");
			h(f, e->path);
			fputs("</td><td></td><td class=\"noted\">a restore sets it back</td></tr>\n",
			      f);
			continue;
		}
		if (e->made_new) { /* a name the session made: no data */
			fprintf(f, "<tr><td>%lld</td><td>made</td><td>", e->n);
			h(f, e->path);
			fputs("</td><td></td><td class=\"made\">made by the session (a restore sets it aside)</td></tr>\n",
			      f);
			continue;
		}
		if (e->moved) { /* a rename: no data held */
			fprintf(f, "<tr><td>%lld</td><td>moved</td><td>", e->n);
			h(f, e->path);
			fputs("</td><td></td><td class=\"moved\">renamed to ",
			      f);
			h(f, e->moved_to ? e->moved_to : "?");
			fputs("</td></tr>\n", f);
			continue;
		}
		held_any |= held && !e->dir;
		lg_human_bytes((uint64_t)e->size, size, sizeof(size));
		fprintf(f, "<tr><td>%lld</td><td>%s</td><td>", e->n,
			e->dir ? "dir" : "file");
		h(f, e->path);
		fprintf(f, "</td><td>%s</td><td class=\"%s\">%s</td></tr>\n",
			e->dir ? "" : size, held ? "held" : "gone",
			e->dir ? "metadata" :
			held   ? "held" :
				 "gone: restored or collected");
	}
	fputs("</table>\n", f);
	if (held_any) {
		fputs("<p>Put it back: <code>lgctl restore ", f);
		h(f, id);
		fputs("</code></p>\n", f);
	}
	lgq_free(&x);
}

static const char STYLE[] =
	"body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222}"
	"h1{font-size:20px}h2{font-size:16px;margin-top:28px}"
	"svg{background:#fafafa;border:1px solid #ddd}"
	".axis{font-size:11px;fill:#666}.row{stroke:#e4e4e4}"
	".ev{fill:#4a7}.ev.warn{fill:#e90}.ev.deny,.ev.kill{fill:#d22}"
	".trip{stroke:#d22;stroke-width:2;stroke-dasharray:4 3}"
	".count{fill:none;stroke:#36c;stroke-width:2}"
	".threshold-line{stroke:#d22;stroke-width:1.5}"
	"table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:2px 8px;text-align:left}"
	"th{background:#f0f0f0;cursor:pointer}tr.kill td,tr.deny td{background:#fdd}"
	".bar{width:200px;height:10px;background:#eee}.bar div{height:10px;background:#36c}"
	".outcome.tripped{color:#d22;font-weight:bold}";

/* Sorting the events table by a column; then the page says it is ready. */
static const char SCRIPT[] =
	"(function(){var t=document.getElementById('events');"
	"if(t){var hs=t.tHead.rows[0].cells;for(var i=0;i<hs.length;i++){"
	"(function(c){hs[c].addEventListener('click',function(){"
	"var b=t.tBodies[0],rs=Array.prototype.slice.call(b.rows);"
	"var num=c===0,dir=hs[c].dataset.dir==='1'?-1:1;hs[c].dataset.dir=dir===1?'1':'0';"
	"rs.sort(function(x,y){var a=x.cells[c].textContent,z=y.cells[c].textContent;"
	"return (num?(parseFloat(a)-parseFloat(z)):a.localeCompare(z))*dir;});"
	"rs.forEach(function(r){b.appendChild(r);});});})(i);}}"
	"document.body.dataset.ready='1';})();";

static void page(FILE *f, const struct rep *r, const char *dir, const char *id)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>lgrun session ",
	      f);
	h(f, r->session);
	fprintf(f, "</title><style>%s</style></head><body>\n<h1>lgrun session ",
		STYLE);
	h(f, r->session);
	fputs("</h1>\n<p>agent <b>", f);
	h(f, r->agent);
	fprintf(f, "</b>, %zu events over %.3fs, config ", r->n,
		(double)r->last_t / 1000.0);
	h(f, r->config[0] ? r->config : "(defaults)");
	if (r->profile[0]) {
		fputs(", profile ", f);
		h(f, r->profile);
	}
	fputs(r->observe ? " (observe mode)" : "", f);
	fputs("</p>\n", f);
	if (r->tripped) {
		fprintf(f,
			"<p id=\"outcome\" class=\"outcome tripped\">%s at %.3fs by %s: ",
			r->observe ? "Would have tripped" : "Tripped",
			(double)r->trip_t / 1000.0, r->trip_rule);
		h(f, r->trip_summary);
		fputs("</p>\n", f);
	} else {
		fprintf(f,
			"<p id=\"outcome\" class=\"outcome\">No trip (%lu warning(s)).</p>\n",
			r->warns);
	}
	if (r->notes)
		fprintf(f,
			"<p id=\"steer\">lgrun decided %lu note(s) for the model before acting ([steer]: what it saw, what happens next, what to do instead). A note reaches the model with the agent's next request through lgrun's proxy; the audit's steer records are the ones sent.</p>\n",
			r->notes);
	timeline(f, r);
	window_chart(f, r);
	budgets(f, r);
	recent(f, r);
	quarantine(f, dir, id, r->remote, r->devices);
	fprintf(f, "<script>%s</script>\n</body></html>\n", SCRIPT);
}

int lgctl_report(const char *dir, int argc, char **argv)
{
	static const struct option lo[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *outp = NULL;
	struct rep r = { 0 };
	struct lg_error err;
	FILE *f;
	int c, rc = 0;

	optind = 0;
	while ((c = getopt_long(argc, argv, "o:h", lo, NULL)) != -1) {
		switch (c) {
		case 'o':
			outp = optarg;
			break;
		case 'h':
			puts("Usage: lgctl report SESSION [-o FILE]\n"
			     "One self-contained HTML page of the session (from its recording):\n"
			     "timeline, the deletes window against max_ops with the trip, budgets,\n"
			     "recent events, the quarantine. Default: SESSION.html here.");
			return 0;
		default:
			return 2;
		}
	}
	if (optind != argc - 1) {
		fputs("Usage: lgctl report SESSION [-o FILE]\n", stderr);
		return 2;
	}
	if (!lg_session_id_valid(argv[optind])) {
		fprintf(stderr, "lgctl: '%s' is not a valid session id\n",
			lgq_show(argv[optind]));
		return 2;
	}
	if (load(&r, dir, argv[optind]) < 0) {
		fprintf(stderr,
			"lgctl: no recording of session '%s' in %s/sessions ([record] events)\n",
			lgq_show(argv[optind]), lgq_show(dir));
		return 2;
	}
	lg_config_init(&r.cfg);
	r.have_cfg = lg_config_load(&r.cfg, r.config[0] ? r.config : NULL,
				    r.profile[0] ? r.profile : NULL, r.agent,
				    &err) == 0;
	{
		char def[PATH_MAX];

		if (!outp) {
			snprintf(def, sizeof(def), "%s.html", argv[optind]);
			outp = def;
		}
		f = fopen(outp, "we");
		if (!f) {
			fprintf(stderr, "lgctl: cannot write %s: %s\n",
				lgq_show(outp), strerror(errno));
			rc = 2;
		} else {
			page(f, &r, dir, argv[optind]);
			if (fclose(f) != 0)
				rc = 2;
			else
				printf("report: %s\n", lgq_show(outp));
		}
	}
	lg_config_free(&r.cfg);
	free(r.e);
	return rc;
}
