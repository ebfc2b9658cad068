// SPDX-License-Identifier: MIT
/*
 * A held event's JSON line (held.h): the same fields, in the same order,
 * as the recording has always had (record.h; read back by replay.c).
 */
#include <stdio.h>
#include <string.h>

#include "guard/guard.h"
#include "held.h"
#include "lib/json.h"

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

static const char *held_str(const struct held *h, int k)
{
	return h->off[k] ? h->s + h->off[k] - 1 : NULL;
}

static void target_id(struct lg_json *j, const struct held *h)
{
	const struct lg_target_id *id = &h->id;

	if (!id->ino && !id->tid)
		return;
	lg_json_int(j, "dev", (long long)id->dev);
	lg_json_int(j, "ino", (long long)id->ino);
	lg_json_int(j, "birth", id->birth_ns);
	lg_json_int(j, "mtime", id->mtime_ns);
	lg_json_int(j, "tid", id->tid);
	if (id->at_ms)
		lg_json_int(j, "at", (long long)(id->at_ms - h->start_ms));
}

/* The fields of the event its kind has (the guard reads no others). */
static void fields(struct lg_json *j, const struct held *h)
{
	switch (h->kind) {
	case LG_EV_DESTRUCTIVE:
		lg_json_str(j, "cls", lg_class_name(h->cls));
		target_id(j, h);
		if (h->left_empty) /* found after it, not an attempt */
			lg_json_bool(j, "left_empty", true);
		if (h->left_stub)
			lg_json_bool(j, "left_stub", true);
		if (h->left_quiet_s)
			lg_json_int(j, "left_quiet_s", h->left_quiet_s);
		if (h->op == LG_OP_REMOTE_DELETE) { /* off this host */
			str(j, "tool", held_str(h, S_TOOL));
			str(j, "system", held_str(h, S_SYSTEM));
			if (h->ran)
				lg_json_bool(j, "ran", true);
		}
		if (h->op == LG_OP_DEVICE_WRITE) /* what the device held */
			str(j, "system", held_str(h, S_SYSTEM));
		break;
	case LG_EV_OP_RESULT:
		lg_json_int(j, "result", h->result);
		break;
	case LG_EV_TOOL_DONE:
		str(j, "tool", held_str(h, S_TOOL));
		if (held_str(h, S_ARGS_DIGEST))
			lg_json_str(j, "args_digest",
				    held_str(h, S_ARGS_DIGEST));
		str(j, "result_digest", held_str(h, S_RESULT_DIGEST));
		str(j, "args_preview", held_str(h, S_ARGS_PREVIEW));
		str(j, "result_preview", held_str(h, S_RESULT_PREVIEW));
		break;
	case LG_EV_TURN:
		lg_json_int(j, "tokens_in", (long long)h->tokens_in);
		lg_json_int(j, "tokens_out", (long long)h->tokens_out);
		lg_json_int(j, "tool_calls", h->turn_tool_calls);
		str(j, "stop_reason", held_str(h, S_STOP));
		if (h->cost)
			num(j, "cost", h->cost);
		str(j, "turn_text", held_str(h, S_TURN_TEXT));
		break;
	case LG_EV_TEXT:
		lg_json_int(j, "len", (long long)h->text_len);
		/* bytes as they were: lg_json_str adds text_b64 */
		if (held_str(h, S_TEXT))
			lg_json_str(j, "text", held_str(h, S_TEXT));
		else if (h->text_cut) /* a NUL inside (never in text) */
			lg_json_bool(j, "text_cut", true);
		break;
	case LG_EV_PROCESSES:
		lg_json_int(j, "processes", h->processes);
		break;
	case LG_EV_CALL:
	case LG_EV_RETURN:
		str(j, "flow", held_str(h, S_FLOW));
		str(j, "from", held_str(h, S_FROM));
		str(j, "to", held_str(h, S_TO));
		break;
	default:
		break;
	}
	if (h->stream)
		lg_json_int(j, "stream", (long long)h->stream);
}

/* A held event's line into j (begun). */
static void format(struct lg_json *j, const struct held *h)
{
	lg_json_int(j, "t", h->t);
	if (h->turn)
		lg_json_int(j, "turn", h->turn);
	if (h->call) { /* the model's call, as it made it (issue 40) */
		lg_json_str(j, "k", "model_call");
		str(j, "tool", held_str(h, S_TOOL));
		str(j, "args", held_str(h, S_ARGS));
		if (h->stream)
			lg_json_int(j, "stream", (long long)h->stream);
		return;
	}
	if (h->restored) {
		lg_json_str(j, "k", "restored");
		lg_json_str(j, "op", lg_op_name(h->op));
		str(j, "target", held_str(h, S_TARGET));
		target_id(j, h);
		lg_json_bool(j, "answer", h->answer);
		return;
	}
	if (h->guard)
		lg_json_int(j, "g", h->guard);
	lg_json_str(j, "k", lg_kind_name(h->kind));
	lg_json_str(j, "src", lg_source_name(h->source));
	if (h->op != LG_OP_NONE)
		lg_json_str(j, "op", lg_op_name(h->op));
	if (h->pid)
		lg_json_int(j, "pid", h->pid);
	str(j, "exe", held_str(h, S_EXE));
	str(j, "target", held_str(h, S_TARGET));
	fields(j, h);
	lg_json_str(j, "v", lg_verdict_name(h->verdict));
	if (h->verdict_why) {
		lg_json_str(j, "rule", held_str(h, S_RULE));
		lg_json_str(j, "reason", held_str(h, S_REASON));
		lg_json_str(j, "summary", held_str(h, S_SUMMARY));
	}
	/* a note for the model decided here ([steer], issue 28) */
	if (held_str(h, S_NOTE)) {
		lg_json_str(j, "note", held_str(h, S_NOTE));
		lg_json_str(j, "note_reason", held_str(h, S_NOTE_REASON));
	}
}

/* lg_spill's: a held record's line, with its newline (allocated). */
char *lg_record_held_line(const void *rec, size_t len, size_t *n)
{
	const struct held *h = rec;
	struct lg_json j = { 0 };

	if (len < sizeof(*h) || len < sizeof(*h) + h->len)
		return NULL;
	lg_json_begin(&j);
	format(&j, h);
	lg_json_end(&j);
	lg_json_append(&j, "\n", 1);
	*n = j.len;
	return j.buf; /* the line's, now */
}
