// SPDX-License-Identifier: MIT
/*
 * The session's way to its guards: every feed goes through sess_feed(),
 * which records it (record.h) with its verdict and the answers the guard
 * got to "has this removed file come back?", for lgctl replay, suggest,
 * report and top.
 */
#include "session_int.h"

/* The recording of this run (record.h); without it, the session goes on. */
void sess_record_open(struct lg_session *s, const struct lg_config *cfg,
		      const struct lg_session_info *info)
{
	struct lg_record_head h = { .session = info->id,
				    .agent = info->agent,
				    .config = cfg->config_path,
				    .profile = cfg->profile,
				    .observe = cfg->observe,
				    .start_real_ns = info->start_real_ns,
				    .start_mono_ms = info->start_mono_ms,
				    .text = cfg->record_text,
				    .output = cfg->record_output,
				    .options = info->options };
	char p[PATH_MAX], cwd[PATH_MAX];

	h.cwd = getcwd(cwd, sizeof(cwd)); /* the tree starts here */
	snprintf(p, sizeof(p), "%s/sessions", info->state_dir);
	if (mkdir(p, 0700) < 0 && errno != EEXIST)
		return;
	snprintf(p, sizeof(p), "%s/sessions/%s.events.jsonl", info->state_dir,
		 info->id);
	s->rec = lg_record_open(p, cfg->record_max_bytes, &h, info->rec_spill);
	if (!s->rec)
		lg_warn("cannot record the session's events in %s: %s (lgctl replay will not have it)",
			p, strerror(errno));
}

/* The quarantine's index lines wait at most as long as the recording's. */
#define INDEX_FLUSH_MS 250

uint64_t lg_session_record_due(const struct lg_session *s)
{
	HOLD(s);
	uint64_t due = lg_record_due(s->rec);
	uint64_t q = lg_quarantine_pending_since(s->quarantine);

	if (lg_quarantine_flush_wanted(s->quarantine) ||
	    lg_record_flush_wanted(s->rec))
		return 1; /* now: the held entries fill half their room */
	if (q && (!due || q + INDEX_FLUSH_MS < due))
		due = q + INDEX_FLUSH_MS;
	return due;
}

void lg_session_record_flush(struct lg_session *s)
{
	struct lg_quarantine *q;
	struct lg_record *rec;
	int r;

	{
		HOLD(s);

		rec = s->rec; /* both live as long as the session */
		q = s->quarantine;
	}
	/*
	 * Without the session's lock: the recording's and the index's lines
	 * are made while the notify thread keeps on deciding and keeping
	 * (their own locks).
	 */
	lg_record_flush(rec);
	r = lg_quarantine_flush(q);
	if (r < 0)
		lg_warn("cannot write the quarantine's index %s: %s",
			lg_quarantine_index(q), strerror(-r));
}

/* The guard's question, "has it come back?", and who answers it. */
struct asked {
	struct lg_session *s;
	bool (*restored)(void *ctx, const char *target, enum lg_op op,
			 const struct lg_target_id *id);
	void *ctx;
};

/*
 * The answer, recorded for a replay when it is "it came back": a replay
 * takes every unrecorded answer as "still gone", and an entry whose target
 * came back leaves the window, so it is never asked again. "Still gone" is
 * the answer of nearly every ask (rm -rf in observe mode asks once per
 * removal): a line each was a third of the recording.
 */
static bool restored_recorded(void *ctx, const char *target, enum lg_op op,
			      const struct lg_target_id *id)
{
	const struct asked *q = ctx;
	bool a = q->restored(q->ctx, target, op, id);

	if (a)
		lg_record_restored(q->s->rec, q->s->feed_now, target, op, id,
				   a);
	return a;
}

enum lg_verdict sess_feed(struct lg_session *s, struct lg_guard *g,
			  const struct lg_event *ev,
			  const struct lg_guard_env *env,
			  struct lg_findings *out)
{
	enum lg_verdict v;

	if (!s->rec) {
		v = lg_guard_feed(g, ev, env, out);
	} else {
		struct asked q = { s, env->restored, env->ctx };
		struct lg_guard_env rec_env = *env;

		if (env->restored) {
			rec_env.restored = restored_recorded;
			rec_env.ctx = &q;
		}
		s->feed_now = env->now_ms;
		v = lg_guard_feed(g, ev, &rec_env, out);
		lg_record_event(s->rec, g == s->out_guard, env->now_ms,
				s->turns.turn, ev, v, out);
	}
	sess_steer_findings(s, out); /* a note for the model (issue 28) */
	return v;
}
