// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/json.h"
#include "record.h"

#define BUF_MAX (64 * 1024)
#define TURN_TEXT_MAX 4096 /* what greeting reads of a turn's text */
#define FLUSH_MS 250

struct lg_record {
	char path[PATH_MAX], old[PATH_MAX + 8];
	int fd;
	uint64_t part_bytes, max_bytes;
	uint64_t start_ms;
	uint64_t pending_ms; /* the first unwritten event's time, or 0 */
	unsigned part;
	struct lg_record_head head; /* its strings copied below */
	char session[200], agent[200], config[PATH_MAX], profile[200];
	char options[2048];
	char *buf; /* BUF_MAX, not cleared: a short session touches a page */
	size_t len;
	/*
	 * An event's line is made here, its room kept from one to the next
	 * (the caller holds the session's lock: one line at a time). A new
	 * lg_json per line was a malloc, a realloc and a free per removal.
	 */
	struct lg_json scratch;
};

void lg_record_digest(const char *s, char out[33])
{
	uint64_t a = 1469598103934665603ULL, b = 0x9e3779b97f4a7c15ULL;

	for (; *s; s++) {
		a = (a ^ (uint8_t)*s) * 1099511628211ULL;
		b = (b ^ (uint8_t)*s) * 0x100000001b3ULL;
		b ^= b >> 29;
	}
	snprintf(out, 33, "%016llx%016llx", (unsigned long long)a,
		 (unsigned long long)b);
}

static void out(struct lg_record *r, const char *s, size_t n)
{
	if (r->fd < 0)
		return;
	if (r->len + n > BUF_MAX)
		lg_record_flush(r);
	if (n > BUF_MAX) { /* one huge line: straight through */
		if (write(r->fd, s, n) < 0) {
			/* a recording is best effort: the audit is the record */
		}
		r->part_bytes += n;
		return;
	}
	memcpy(r->buf + r->len, s, n);
	r->len += n;
	r->part_bytes += n;
}

static void line(struct lg_record *r, struct lg_json *j)
{
	lg_json_end(j);
	if (j->buf) {
		lg_json_append(j, "\n", 1);
		out(r, j->buf, j->len);
	}
	if (j != &r->scratch)
		lg_json_free(j);
}

static void write_head(struct lg_record *r)
{
	struct lg_json j = { 0 };
	const struct lg_record_head *h = &r->head;

	lg_json_begin(&j);
	lg_json_int(&j, "record", LG_RECORD_VERSION);
	lg_json_int(&j, "part", r->part);
	lg_json_str(&j, "session", h->session);
	lg_json_str(&j, "agent", h->agent ? h->agent : "");
	if (h->config)
		lg_json_str(&j, "config", h->config);
	if (h->profile)
		lg_json_str(&j, "profile", h->profile);
	lg_json_bool(&j, "observe", h->observe);
	lg_json_int(&j, "start_real_ns", h->start_real_ns);
	lg_json_bool(&j, "text", h->text);
	lg_json_bool(&j, "output", h->output);
	if (r->options[0])
		lg_json_raw(&j, "options", r->options);
	line(r, &j);
}

static int open_part(struct lg_record *r)
{
	r->fd = open(r->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (r->fd < 0)
		return -errno;
	r->part_bytes = 0;
	write_head(r);
	return 0;
}

struct lg_record *lg_record_open(const char *path, uint64_t max_bytes,
				 const struct lg_record_head *h)
{
	struct lg_record *r = calloc(1, sizeof(*r));
	size_t n;

	if (!r)
		return NULL;
	r->buf = malloc(BUF_MAX);
	if (!r->buf) {
		free(r);
		return NULL;
	}
	snprintf(r->path, sizeof(r->path), "%s", path);
	n = strlen(r->path);
	if (n > 6 && strcmp(r->path + n - 6, ".jsonl") == 0)
		n -= 6;
	snprintf(r->old, sizeof(r->old), "%.*s.old.jsonl", (int)n, r->path);
	r->max_bytes = max_bytes;
	r->start_ms = h->start_mono_ms;
	r->head = *h;
	snprintf(r->session, sizeof(r->session), "%s", h->session);
	snprintf(r->agent, sizeof(r->agent), "%s", h->agent ? h->agent : "");
	snprintf(r->config, sizeof(r->config), "%s",
		 h->config ? h->config : "");
	snprintf(r->profile, sizeof(r->profile), "%s",
		 h->profile ? h->profile : "");
	snprintf(r->options, sizeof(r->options), "%s",
		 h->options ? h->options : "");
	r->head.session = r->session;
	r->head.agent = r->agent;
	r->head.config = h->config ? r->config : NULL;
	r->head.profile = h->profile ? r->profile : NULL;
	unlink(r->old); /* an earlier run's */
	if (open_part(r) < 0) {
		free(r->buf);
		free(r);
		return NULL;
	}
	return r;
}

void lg_record_flush(struct lg_record *r)
{
	if (!r)
		return;
	r->pending_ms = 0;
	if (r->fd < 0 || !r->len)
		return;
	if (write(r->fd, r->buf, r->len) < 0) {
		/* best effort, as above */
	}
	r->len = 0;
}

uint64_t lg_record_due(const struct lg_record *r)
{
	return r && r->pending_ms ? r->pending_ms + FLUSH_MS : 0;
}

void lg_record_close(struct lg_record *r)
{
	if (!r)
		return;
	lg_record_flush(r);
	lg_closep(&r->fd);
	free(r->buf);
	lg_json_free(&r->scratch);
	free(r);
}

/* Past half the bound: this part becomes the old one, a new one starts. */
static void rotate(struct lg_record *r)
{
	if (!r->max_bytes || r->part_bytes < r->max_bytes / 2)
		return;
	lg_record_flush(r);
	lg_closep(&r->fd);
	if (rename(r->path, r->old) < 0)
		return; /* recording stops: fd stays -1 */
	r->part++;
	open_part(r);
}

static void str(struct lg_json *j, const char *k, const char *v)
{
	if (v && *v)
		lg_json_str(j, k, v);
}

static void num(struct lg_json *j, const char *k, double v)
{
	char b[40];

	snprintf(b, sizeof(b), "%.17g", v);
	lg_json_raw(j, k, b);
}

static void target_id(struct lg_record *r, struct lg_json *j,
		      const struct lg_target_id *id)
{
	if (!id->ino && !id->tid)
		return;
	lg_json_int(j, "dev", (long long)id->dev);
	lg_json_int(j, "ino", (long long)id->ino);
	lg_json_int(j, "birth", id->birth_ns);
	lg_json_int(j, "mtime", id->mtime_ns);
	lg_json_int(j, "tid", id->tid);
	if (id->at_ms)
		lg_json_int(j, "at", (long long)(id->at_ms - r->start_ms));
}

/* The fields of ev its kind has (the guard reads no others). */
static void fields(struct lg_record *r, struct lg_json *j,
		   const struct lg_event *ev)
{
	char d[33], cut[TURN_TEXT_MAX + 1];

	switch (ev->kind) {
	case LG_EV_DESTRUCTIVE:
		lg_json_str(j, "cls", lg_class_name(ev->cls));
		target_id(r, j, &ev->id);
		if (ev->left_empty) /* found at the end, not an attempt */
			lg_json_bool(j, "left_empty", true);
		break;
	case LG_EV_OP_RESULT:
		lg_json_int(j, "result", ev->result);
		break;
	case LG_EV_TOOL_DONE:
		str(j, "tool", ev->tool);
		if (ev->args) {
			lg_record_digest(ev->args, d);
			lg_json_str(j, "args_digest", d);
		}
		str(j, "result_digest", ev->result_digest);
		str(j, "args_preview", ev->args_preview);
		str(j, "result_preview", ev->result_preview);
		break;
	case LG_EV_TURN:
		lg_json_int(j, "tokens_in", (long long)ev->tokens_in);
		lg_json_int(j, "tokens_out", (long long)ev->tokens_out);
		lg_json_int(j, "tool_calls", ev->turn_tool_calls);
		str(j, "stop_reason", ev->stop_reason);
		if (ev->cost)
			num(j, "cost", ev->cost);
		if (ev->turn_text && *ev->turn_text) {
			snprintf(cut, sizeof(cut), "%s", ev->turn_text);
			lg_json_str(j, "turn_text", cut);
		}
		break;
	case LG_EV_TEXT: {
		bool keep = ev->source == LG_SRC_OUTPUT ? r->head.output :
							  r->head.text;

		lg_json_int(j, "len", (long long)ev->text_len);
		if (keep && ev->text) {
			/* bytes as they were: lg_json_str adds text_b64 */
			char *t = strndup(ev->text, ev->text_len);

			if (t && strlen(t) == ev->text_len)
				lg_json_str(j, "text", t);
			else /* a NUL inside (never in text), or no memory */
				lg_json_bool(j, "text_cut", true);
			free(t);
		}
		break;
	}
	case LG_EV_PROCESSES:
		lg_json_int(j, "processes", ev->processes);
		break;
	case LG_EV_CALL:
	case LG_EV_RETURN:
		str(j, "flow", ev->flow);
		str(j, "from", ev->from);
		str(j, "to", ev->to);
		break;
	default:
		break;
	}
	if (ev->stream)
		lg_json_int(j, "stream", (long long)ev->stream);
}

void lg_record_event(struct lg_record *r, int guard, uint64_t now_ms,
		     const struct lg_event *ev, enum lg_verdict v,
		     const struct lg_findings *f)
{
	struct lg_json *j;

	if (!r || r->fd < 0)
		return;
	j = &r->scratch;
	lg_json_begin(j);
	lg_json_int(j, "t", (long long)(now_ms - r->start_ms));
	if (guard)
		lg_json_int(j, "g", guard);
	lg_json_str(j, "k", lg_kind_name(ev->kind));
	lg_json_str(j, "src", lg_source_name(ev->source));
	if (ev->op != LG_OP_NONE)
		lg_json_str(j, "op", lg_op_name(ev->op));
	if (ev->pid)
		lg_json_int(j, "pid", ev->pid);
	str(j, "exe", ev->exe);
	str(j, "target", ev->target);
	fields(r, j, ev);
	lg_json_str(j, "v", lg_verdict_name(v));
	if (v != LG_ALLOW && f && f->n) {
		lg_json_str(j, "rule", f->f[0].rule);
		lg_json_str(j, "reason", f->f[0].reason);
		lg_json_str(j, "summary", f->f[0].summary);
	}
	/* a note for the model decided here ([steer], issue 28) */
	for (size_t i = 0; f && i < f->n; i++)
		if (lg_finding_steers(&f->f[i])) {
			lg_json_str(j, "note", f->f[i].rule);
			lg_json_str(j, "note_reason", f->f[i].reason);
			break;
		}
	line(r, j);
	/*
	 * A trip: on disk before the kill. Else within FLUSH_MS (due); so is
	 * an observe mode's would-trip, which kills nothing (rm -rf of 10,000
	 * files would otherwise write at every 3rd removal).
	 */
	if (!r->pending_ms)
		r->pending_ms = now_ms ? now_ms : 1;
	if ((v > LG_WARN && !r->head.observe) ||
	    now_ms - r->pending_ms >= FLUSH_MS)
		lg_record_flush(r);
	rotate(r);
}

void lg_record_restored(struct lg_record *r, uint64_t now_ms,
			const char *target, enum lg_op op,
			const struct lg_target_id *id, bool answer)
{
	struct lg_json *j;

	if (!r || r->fd < 0)
		return;
	j = &r->scratch;
	lg_json_begin(j);
	lg_json_int(j, "t", (long long)(now_ms - r->start_ms));
	lg_json_str(j, "k", "restored");
	lg_json_str(j, "op", lg_op_name(op));
	str(j, "target", target);
	target_id(r, j, id);
	lg_json_bool(j, "answer", answer);
	line(r, j);
}
