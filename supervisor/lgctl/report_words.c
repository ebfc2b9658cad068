// SPDX-License-Identifier: MIT
/*
 * lgctl report's words, shared by the page and the text (report_int.h):
 * what matters among the events, a path as the session's folder names it,
 * a change and a call in words, a time of the session. report.c reads and
 * groups; report_html.c and report_text.c write; they all come here.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/canon.h"
#include "report_int.h"

bool rpt_matters(const struct rpt_ev *e)
{
	static const char *const kinds[] = { "warn", "refused", "stop" };
	static const char *const verdicts[] = { "warn", "deny", "kill" };

	if (e->destroy || e->note[0])
		return true;
	for (size_t i = 0; i < 3; i++)
		if (!strcmp(e->kind, kinds[i]) ||
		    !strcmp(e->verdict, verdicts[i]))
			return true;
	return false;
}

const char *rpt_rel(const struct rep *r, const char *path)
{
	size_t n = strlen(r->cwd);

	if (n > 1 && !strncmp(path, r->cwd, n)) {
		if (!path[n])
			return ".";
		if (path[n] == '/' && path[n + 1])
			return path + n + 1;
	}
	return path;
}

static bool under_cwd(const struct rep *r, const char *path)
{
	return path && rpt_rel(r, path) != path;
}

bool rpt_in_project(const struct rep *r, const struct lgq_entry *e)
{
	if (strlen(r->cwd) < 2)
		return true; /* no folder known: every change is the session's */
	return under_cwd(r, rpt_entry_path(e)) || under_cwd(r, e->path) ||
	       under_cwd(r, e->moved_to);
}

const char *rpt_entry_path(const struct lgq_entry *e)
{
	return e->at_path && *e->at_path ? e->at_path : e->path;
}

const char *rpt_change_word(const struct lgq_entry *e)
{
	if (e->moved)
		return "renamed";
	if (e->made_new)
		return "created";
	if (e->appended)
		return "appended to";
	if (e->mode_only)
		return "mode changed";
	if (e->dir)
		return !strcmp(e->op, "rmdir") ? "removed folder" :
						 "folder changed";
	if (!strcmp(e->op, "unlink"))
		return "removed";
	if (!strcmp(e->op, "rename") || !strcmp(e->op, "link"))
		return "replaced";
	if (!strcmp(e->op, "open_trunc") || !strcmp(e->op, "truncate"))
		return "overwritten";
	return "changed";
}

const char *rpt_clock(const struct rep *r, uint64_t t, char *out, size_t size)
{
	long long ns = r->start_ns + (long long)t * 1000000LL;
	time_t s = (time_t)(ns / 1000000000LL);
	struct tm tm;
	char hms[16];

	out[0] = '\0';
	if (r->start_ns <= 0 || !gmtime_r(&s, &tm))
		return out;
	strftime(hms, sizeof(hms), "%H:%M:%S", &tm);
	snprintf(out, size, "%s.%03lld UTC", hms, (ns / 1000000LL) % 1000LL);
	return out;
}

const char *rpt_started(const struct rep *r, char *out, size_t size)
{
	time_t s = (time_t)(r->start_ns / 1000000000LL);
	struct tm tm;

	out[0] = '\0';
	if (r->start_ns > 0 && gmtime_r(&s, &tm))
		strftime(out, size, "%Y-%m-%d %H:%M:%S UTC", &tm);
	return out;
}

struct word_count {
	const char *w;
	size_t n;
};

void rpt_fold_words(const struct rep *r, const struct rpt_turn *u, char *out,
		    size_t size)
{
	struct word_count c[16];
	size_t nc = 0, o = 0, other = 0;

	out[0] = '\0';
	for (size_t i = u->ev0; i < u->ev0 + u->nev; i++) {
		const struct rpt_ev *e = &r->e[i];
		const char *w = !strcmp(e->kind, "destructive") && e->cls[0] ?
					e->cls :
					e->kind;
		size_t k;

		if (e->matters)
			continue;
		for (k = 0; k < nc && strcmp(c[k].w, w); k++)
			;
		if (k == nc && nc == sizeof(c) / sizeof(c[0])) {
			other++;
			continue;
		}
		if (k == nc)
			c[nc++].n = 0;
		c[k].w = w;
		c[k].n++;
	}
	for (size_t shown = 0; shown < 4 && shown < nc; shown++) {
		size_t best = shown;

		for (size_t k = shown + 1; k < nc; k++)
			if (c[k].n > c[best].n)
				best = k;
		if (best != shown) {
			struct word_count x = c[best];

			c[best] = c[shown];
			c[shown] = x;
		}
		o += (size_t)snprintf(out + o, o < size ? size - o : 0,
				      "%s%s %zu", shown ? ", " : "", c[shown].w,
				      c[shown].n);
	}
	for (size_t k = 4; k < nc; k++)
		other += c[k].n;
	if (other && o < size)
		snprintf(out + o, size - o, ", other %zu", other);
}

bool rpt_call_text(const struct rpt_call *c, char *out, size_t size)
{
	if (lg_canon_command(c->args, strlen(c->args), out, size) > 0)
		return true;
	snprintf(out, size, "%s", c->args);
	return false;
}
