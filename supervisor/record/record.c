// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/json.h"
#include "lib/spill.h"
#include "lib/text.h"
#include "held.h"
#include "record.h"

#define BUF_MAX (64 * 1024)
#define TURN_TEXT_MAX 4096 /* what greeting reads of a turn's text */
#define FLUSH_MS 250
/* the events held for their lines: 1 MiB a room (touched as used) */
#define HELD_BYTES (1u << 20)

struct lg_record {
	char path[PATH_MAX], old[PATH_MAX + 8];
	/*
	 * wm: the file (fd, part, part_bytes, buf, len, pending_ms). The
	 * session's lock is taken before it, never after: the main loop's
	 * flush writes without the session's lock (lg_record_flush).
	 */
	pthread_mutex_t wm;
	int fd;
	atomic_bool stopped; /* the file could not be made again: no more */
	/*
	 * The part's size as last written, plus twice what each event held
	 * since takes (a line is about as long as its record): past half of
	 * max_bytes, the event's own thread flushes and the file says
	 * whether it is time to rotate. The part stays within its bound.
	 */
	_Atomic uint64_t approx;
	uint64_t part_bytes, max_bytes;
	uint64_t start_ms;
	uint64_t pending_ms; /* without sp: the first unwritten line's, or 0 */
	unsigned part;
	struct lg_record_head head; /* its strings copied below */
	char session[200], agent[200], config[PATH_MAX], profile[200];
	char options[2048];
	char cwd[PATH_MAX];
	char *buf; /* BUF_MAX, not cleared: a short session touches a page */
	size_t len;
	/*
	 * The events held for their lines (lg_spill: made by the flush,
	 * without the session's lock); NULL: each line made as it comes.
	 */
	struct lg_spill *sp;
	bool own_sp; /* made here (else the caller's: lg_record_spill) */
	/* an event as held, made here: its room kept (the session's lock) */
	struct held *held;
	size_t held_cap;
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

/* Under wm: the buffer written out. */
static void buf_out(struct lg_record *r)
{
	r->pending_ms = 0;
	if (r->fd < 0 || !r->len)
		return;
	if (write(r->fd, r->buf, r->len) < 0) {
		/* a recording is best effort: the audit is the record */
	}
	r->len = 0;
}

/* Under wm. */
static void out(struct lg_record *r, const char *s, size_t n)
{
	if (r->fd < 0)
		return;
	if (r->len + n > BUF_MAX)
		buf_out(r);
	if (n > BUF_MAX) { /* one huge line: straight through */
		if (write(r->fd, s, n) < 0) {
			/* best effort, as above */
		}
		r->part_bytes += n;
		return;
	}
	memcpy(r->buf + r->len, s, n);
	r->len += n;
	r->part_bytes += n;
}

/*
 * Under wm: a line of the file's own (its head). With a spill, it goes
 * through the spill, ahead of the events held after it, so that the
 * watchdog writes it too when lgrun dies before the first flush.
 */
static void line(struct lg_record *r, struct lg_json *j)
{
	lg_json_end(j);
	if (j->buf) {
		lg_json_append(j, "\n", 1);
		if (r->sp && r->fd >= 0) {
			lg_spill_add(r->sp, r->fd, r->path, j->buf, j->len);
			r->part_bytes += j->len;
		} else {
			out(r, j->buf, j->len);
		}
	}
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
	if (r->cwd[0])
		lg_json_str(&j, "cwd", r->cwd);
	line(r, &j);
}

/* Under wm (or before the record is shared). */
static int open_part(struct lg_record *r)
{
	r->fd = open(r->path,
		     O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
		     0600);
	if (r->fd < 0)
		return -errno;
	r->part_bytes = 0;
	write_head(r);
	return 0;
}

struct lg_spill *lg_record_spill(void)
{
	return lg_spill_new(HELD_BYTES, lg_record_held_line);
}

struct lg_record *lg_record_open(const char *path, uint64_t max_bytes,
				 const struct lg_record_head *h,
				 struct lg_spill *sp)
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
	pthread_mutex_init(&r->wm, NULL);
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
	snprintf(r->cwd, sizeof(r->cwd), "%s", h->cwd ? h->cwd : "");
	r->head.cwd = r->cwd[0] ? r->cwd : NULL;
	r->head.session = r->session;
	r->head.agent = r->agent;
	r->head.config = h->config ? r->config : NULL;
	r->head.profile = h->profile ? r->profile : NULL;
	unlink(r->old); /* an earlier run's */
	r->own_sp = !sp;
	r->sp = sp ? sp : lg_record_spill(); /* NULL: lines now */
	if (open_part(r) < 0) {
		if (r->own_sp)
			lg_spill_free(r->sp);
		pthread_mutex_destroy(&r->wm);
		free(r->buf);
		free(r);
		return NULL;
	}
	return r;
}

/* Past half the bound: this part becomes the old one, a new one starts. */
static void rotate(struct lg_record *r)
{
	off_t end;

	if (!r->max_bytes || r->fd < 0)
		return;
	if (r->sp) { /* the lines went by the spill: the file says */
		end = lseek(r->fd, 0, SEEK_END);
		if (end >= 0)
			r->part_bytes = (uint64_t)end + r->len;
	}
	atomic_store(&r->approx, r->part_bytes);
	if (r->part_bytes < r->max_bytes / 2)
		return;
	buf_out(r);
	lg_closep(&r->fd);
	if (rename(r->path, r->old) < 0 || open_part(r) < 0) {
		/* recording stops: what is held goes nowhere */
		atomic_store(&r->stopped, true);
		r->fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
		r->len = 0;
		return;
	}
	r->part++;
	atomic_store(&r->approx, r->part_bytes);
}

void lg_record_flush(struct lg_record *r)
{
	if (!r)
		return;
	pthread_mutex_lock(&r->wm);
	buf_out(r); /* the head first */
	if (r->sp && r->fd >= 0)
		lg_spill_flush(r->sp, r->fd);
	rotate(r);
	pthread_mutex_unlock(&r->wm);
}

uint64_t lg_record_due(struct lg_record *r)
{
	uint64_t due;

	if (!r)
		return 0;
	if (r->sp) {
		due = lg_spill_since(r->sp);
		return due ? due + FLUSH_MS : 0;
	}
	pthread_mutex_lock(&r->wm);
	due = r->pending_ms ? r->pending_ms + FLUSH_MS : 0;
	pthread_mutex_unlock(&r->wm);
	return due;
}

bool lg_record_flush_wanted(struct lg_record *r)
{
	return r && r->sp && lg_spill_wanted(r->sp);
}

void lg_record_close(struct lg_record *r)
{
	if (!r)
		return;
	lg_record_flush(r);
	lg_closep(&r->fd);
	if (r->own_sp)
		lg_spill_free(r->sp);
	pthread_mutex_destroy(&r->wm);
	free(r->held);
	free(r->buf);
	free(r);
}

/* The strings of an event to hold, and their room. */
struct strs {
	const char *s[NSTR];
	size_t n[NSTR];
};

static void put_s(struct strs *x, int k, const char *v, size_t n)
{
	x->s[k] = v;
	x->n[k] = n;
}

static void put_c(struct strs *x, int k, const char *v)
{
	if (v)
		put_s(x, k, v, strlen(v));
}

/*
 * The event into r->held (its room grown as needed): NULL without memory.
 * Its length into *len.
 */
static struct held *hold_event(struct lg_record *r, const struct held *base,
			       const struct strs *x, size_t *len)
{
	size_t n = sizeof(*base);
	struct held *h;
	uint32_t at = 0;

	for (int k = 0; k < NSTR; k++)
		if (x->s[k])
			n += x->n[k] + 1;
	if (n > r->held_cap) {
		void *b = realloc(r->held, n);

		if (!b)
			return NULL;
		r->held = b;
		r->held_cap = n;
	}
	h = r->held;
	*h = *base;
	for (int k = 0; k < NSTR; k++) {
		h->off[k] = 0;
		if (!x->s[k])
			continue;
		memcpy(h->s + at, x->s[k], x->n[k]);
		h->s[at + x->n[k]] = '\0';
		h->off[k] = at + 1;
		at += (uint32_t)x->n[k] + 1;
	}
	h->len = at;
	*len = n;
	return h;
}

/* Held len more bytes: past the bound's half, written and rotated now. */
static void account(struct lg_record *r, size_t len)
{
	uint64_t half = r->max_bytes / 2;

	if (r->sp && half &&
	    atomic_fetch_add(&r->approx, 2 * len) + 2 * len >= half)
		lg_record_flush(r);
}

/*
 * The held event on its way: into the spill (its line made later, by the
 * main loop's flush), else made now into the buffer. Under the session's
 * lock: one at a time.
 */
static void emit(struct lg_record *r, const struct held *h, size_t len)
{
	size_t n = 0;
	char *line;

	if (r->sp) {
		int e = lg_spill_hold(r->sp, r->path, h, len);

		if (e == -ENOSPC) { /* the main loop lags: lines now */
			pthread_mutex_lock(&r->wm);
			buf_out(r); /* the head first */
			if (r->fd >= 0)
				lg_spill_settle(r->sp, r->fd);
			pthread_mutex_unlock(&r->wm);
			e = lg_spill_hold(r->sp, r->path, h, len);
		}
		if (e != -ENOSPC)
			return;
		/* larger than a room: its line, after those held before */
		line = lg_record_held_line(h, len, &n);
		pthread_mutex_lock(&r->wm);
		buf_out(r);
		if (line && r->fd >= 0)
			lg_spill_add(r->sp, r->fd, r->path, line, n);
		r->part_bytes += n;
		pthread_mutex_unlock(&r->wm);
		free(line);
		return;
	}
	line = lg_record_held_line(h, len, &n);
	if (line) {
		pthread_mutex_lock(&r->wm);
		out(r, line, n);
		if (r->max_bytes && r->part_bytes >= r->max_bytes / 2)
			rotate(r);
		pthread_mutex_unlock(&r->wm);
	}
	free(line);
}

/*
 * base and its strings held, on their way (emit); without the spill, the
 * buffer's first line's time. True when the buffer is due (FLUSH_MS).
 */
static bool hold(struct lg_record *r, const struct held *base,
		 const struct strs *x, uint64_t now_ms)
{
	struct held *h;
	bool due = false;
	size_t len;

	h = hold_event(r, base, x, &len);
	if (h) {
		emit(r, h, len);
		account(r, len);
	}
	if (!r->sp) {
		pthread_mutex_lock(&r->wm);
		if (!r->pending_ms)
			r->pending_ms = now_ms ? now_ms : 1;
		due = now_ms - r->pending_ms >= FLUSH_MS;
		pthread_mutex_unlock(&r->wm);
	}
	return due;
}

/* The strings of ev (and of its verdict's findings) that its line says. */
static void event_strings(const struct lg_record *r, const struct lg_event *ev,
			  enum lg_verdict v, const struct lg_findings *f,
			  struct held *base, struct strs *x, char digest[33])
{
	put_c(x, S_EXE, ev->exe);
	put_c(x, S_TARGET, ev->target);
	if (ev->kind == LG_EV_DESTRUCTIVE && ev->op == LG_OP_REMOTE_DELETE) {
		put_c(x, S_TOOL, ev->tool);
		put_c(x, S_SYSTEM, ev->system);
	}
	/* what a block device written over held (issue 39) */
	if (ev->kind == LG_EV_DESTRUCTIVE && ev->op == LG_OP_DEVICE_WRITE)
		put_c(x, S_SYSTEM, ev->system);
	switch (ev->kind) {
	case LG_EV_TOOL_DONE:
		put_c(x, S_TOOL, ev->tool);
		if (ev->args) {
			lg_record_digest(ev->args, digest);
			put_c(x, S_ARGS_DIGEST, digest);
		}
		put_c(x, S_RESULT_DIGEST, ev->result_digest);
		put_c(x, S_ARGS_PREVIEW, ev->args_preview);
		put_c(x, S_RESULT_PREVIEW, ev->result_preview);
		break;
	case LG_EV_TURN:
		put_c(x, S_STOP, ev->stop_reason);
		if (ev->turn_text && *ev->turn_text)
			put_s(x, S_TURN_TEXT, ev->turn_text,
			      strnlen(ev->turn_text, TURN_TEXT_MAX));
		break;
	case LG_EV_TEXT:
		if ((ev->source == LG_SRC_OUTPUT ? r->head.output :
						   r->head.text) &&
		    ev->text) {
			if (strnlen(ev->text, ev->text_len) == ev->text_len)
				put_s(x, S_TEXT, ev->text, ev->text_len);
			else
				base->text_cut = true;
		}
		break;
	case LG_EV_CALL:
	case LG_EV_RETURN:
		put_c(x, S_FLOW, ev->flow);
		put_c(x, S_FROM, ev->from);
		put_c(x, S_TO, ev->to);
		break;
	default:
		break;
	}
	if (v != LG_ALLOW && f && f->n) {
		base->verdict_why = true;
		put_c(x, S_RULE, f->f[0].rule ? f->f[0].rule : "");
		put_c(x, S_REASON, f->f[0].reason ? f->f[0].reason : "");
		put_c(x, S_SUMMARY, f->f[0].summary);
	}
	for (size_t i = 0; f && i < f->n; i++)
		if (lg_finding_steers(&f->f[i])) {
			put_c(x, S_NOTE, f->f[i].rule ? f->f[i].rule : "");
			put_c(x, S_NOTE_REASON,
			      f->f[i].reason ? f->f[i].reason : "");
			break;
		}
}

void lg_record_event(struct lg_record *r, int guard, uint64_t now_ms,
		     unsigned turn, const struct lg_event *ev,
		     enum lg_verdict v, const struct lg_findings *f)
{
	struct held base = { .guard = guard,
			     .kind = ev->kind,
			     .source = ev->source,
			     .op = ev->op,
			     .pid = ev->pid,
			     .cls = ev->cls,
			     .verdict = v,
			     .t = (long long)(now_ms - (r ? r->start_ms : 0)),
			     .start_ms = r ? r->start_ms : 0,
			     .id = ev->id,
			     .left_empty = ev->left_empty,
			     .left_stub = ev->left_stub,
			     .left_quiet_s = ev->left_quiet_s,
			     .ran = ev->happened,
			     .result = ev->result,
			     .tokens_in = ev->tokens_in,
			     .tokens_out = ev->tokens_out,
			     .turn_tool_calls = ev->turn_tool_calls,
			     .cost = ev->cost,
			     .text_len = ev->text_len,
			     .processes = ev->processes,
			     .turn = turn,
			     .stream = ev->stream };
	struct strs x;
	char digest[33];
	bool due;

	if (!r || atomic_load_explicit(&r->stopped, memory_order_relaxed))
		return;
	memset(&x, 0, sizeof(x));
	event_strings(r, ev, v, f, &base, &x, digest);
	due = hold(r, &base, &x, now_ms);
	/*
	 * A trip: on disk before the kill. Else within FLUSH_MS (due); so is
	 * an observe mode's would-trip, which kills nothing (rm -rf of 10,000
	 * files would otherwise write at every 3rd removal).
	 */
	if ((v > LG_WARN && !r->head.observe) || due)
		lg_record_flush(r);
}

void lg_record_call(struct lg_record *r, uint64_t now_ms, unsigned turn,
		    uint64_t stream, const char *tool, const char *args)
{
	struct held base = { .call = true,
			     .turn = turn,
			     .stream = stream,
			     .t = (long long)(now_ms - (r ? r->start_ms : 0)),
			     .start_ms = r ? r->start_ms : 0 };
	char cut[LG_RECORD_ARGS_MAX];
	struct strs x;

	if (!r || atomic_load_explicit(&r->stopped, memory_order_relaxed))
		return;
	memset(&x, 0, sizeof(x));
	lg_preview(args ? args : "", cut, sizeof(cut), 0);
	put_c(&x, S_TOOL, tool ? tool : "");
	put_c(&x, S_ARGS, cut);
	hold(r, &base, &x, now_ms);
}

void lg_record_restored(struct lg_record *r, uint64_t now_ms,
			const char *target, enum lg_op op,
			const struct lg_target_id *id, bool answer)
{
	struct held base = { .restored = true,
			     .op = op,
			     .answer = answer,
			     .t = (long long)(now_ms - (r ? r->start_ms : 0)),
			     .start_ms = r ? r->start_ms : 0,
			     .id = *id };
	struct strs x;

	if (!r || atomic_load_explicit(&r->stopped, memory_order_relaxed))
		return;
	memset(&x, 0, sizeof(x));
	put_c(&x, S_TARGET, target);
	hold(r, &base, &x, now_ms); /* due with the event that asked */
}
