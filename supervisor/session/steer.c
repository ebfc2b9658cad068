// SPDX-License-Identifier: MIT
/*
 * Steering (issue 28): lgrun's word in the model's context. A rule at its
 * steer level (a guard finding with note set: short of its action, or a
 * seed 004 detector's firing that is its note), or a budget's reserve,
 * queues a note;
 * the proxy asks for the notes of every model request (lg_session_steer, the proxy's ops.steer),
 * places the queued ones in that request, right after its tool results,
 * and adds the conversation's earlier ones again at their own place.
 * Each placement is a steer audit record; --observe records only.
 */
#include "session_int.h"

/*
 * What a note says, per rule: what it counts (one step, more steps), and
 * what to do instead. What happens next is said from the finding: the
 * rule's action and how many steps are left (the configured steer_at and
 * action, never assumed).
 */
struct steer_text {
	const char *rule;
	const char *one, *many;
	const char *instead; /* NULL: the seed's own corrective text */
	const char *deny; /* what a deny does; NULL: "refuses it" */
};

static const struct steer_text texts[] = {
	{ "volumetric", "removal of pre-existing data within the rule's window",
	  "removals of pre-existing data within the rule's window",
	  "do not remove more files now: tell the user what you would remove and ask them to confirm, or take an approach that keeps the files",
	  NULL },
	/* volumetric, when what it counted was destroyed off this host */
	{ "volumetric", "removal of pre-existing data within the rule's window",
	  "removals of pre-existing data within the rule's window",
	  "lgrun cannot keep data deleted in a database or a service, so it cannot be restored. Do not delete more now: run a dry run first (--dry-run, terraform plan, a SELECT count of what would go), make a backup (pg_dump, mysqldump, kubectl get -o yaml, an export of the records), or tell the user what you would delete and ask them to confirm",
	  NULL },
	{ "same_target", "attempt on the same target",
	  "attempts on the same target",
	  "it did not work the way you expected: check why, report it, and ask the user before trying again",
	  NULL },
	{ "repeat", "identical call with the same result",
	  "identical calls with the same result",
	  "the result will not change: use what it returned, try something different, or ask the user",
	  NULL },
	{ "budget", "", "",
	  "finish the most important part now, and report what is done and what is left",
	  NULL },
	/* seed 004's corrective injections: the detector's own words */
	{ "failures", "failed write of that file", "failed writes of that file",
	  NULL,
	  /* the write failed already: nothing more to refuse */
	  "records a refusal, nothing more is stopped" },
	{ "greeting", "greeting in the middle of the task",
	  "greetings in the middle of the task", NULL,
	  "refuses every further model request of this session" },
	{ "output_repeat", "answer that repeats itself",
	  "answers that repeat themselves", NULL,
	  "refuses every further model request of this session" },
};

/* What lgrun does at the rule's action, in the model's words. */
static const char *deed(const struct steer_text *t, enum lg_verdict v)
{
	switch (v) {
	case LG_KILL:
		return "stops this whole session";
	case LG_DENY:
		return t->deny ? t->deny : "refuses it";
	default:
		return "only warns";
	}
}

/* "Next: ..." from the finding, true to the rule's configuration. */
static void next_of(const struct lg_session *s, const struct steer_text *t,
		    const struct lg_finding *f, char *out, size_t size)
{
	if (strcmp(t->rule, "budget") == 0)
		snprintf(out, size, "when the budget is used up, lgrun %s",
			 deed(t, f->then));
	else if (f->left <= 1)
		snprintf(out, size, "at the next %s, lgrun %s", t->one,
			 deed(t, f->then));
	else
		snprintf(out, size,
			 "%u more %s, and at the last of them lgrun %s",
			 f->left, t->many, deed(t, f->then));
	if (strcmp(t->rule, "volumetric") == 0 && f->remote) {
		size_t n = strlen(out);

		snprintf(
			out + n, size - n,
			"; what was deleted off this host is gone: lgrun keeps only this machine's files");
	} else if (strcmp(t->rule, "volumetric") == 0 && f->device) {
		size_t n = strlen(out);

		snprintf(
			out + n, size - n,
			"; a block device written over is gone: lgrun cannot keep a device's content");
	} else if (strcmp(t->rule, "volumetric") == 0 && s->quarantine) {
		size_t n = strlen(out);

		snprintf(
			out + n, size - n,
			"; what was removed so far is kept and the user can restore it");
	}
}

static const struct steer_text *text_of(const struct lg_finding *f)
{
	bool remote = f->remote && strcmp(f->rule, "volumetric") == 0;

	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
		if (strcmp(texts[i].rule, f->rule) == 0) {
			if (remote) /* the next entry is its remote words */
				remote = false;
			else
				return &texts[i];
		}
	return NULL;
}

/* [steer] RULE = off | note | a text of one's own. */
static const char *configured(const struct lg_session *s, const char *rule)
{
	const struct lg_config *c = s->cfg;

	if (!c->steer)
		return "off";
	for (size_t i = 0; i < LG_STEER_RULES; i++)
		if (strcmp(lg_steer_rules[i], rule) == 0)
			return c->steer_text[i] && c->steer_text[i][0] ?
				       c->steer_text[i] :
				       "note";
	return "off"; /* a rule that does not steer */
}

/* The note's words for a finding of rule (summary: what the rule saw). */
static void compose(const struct lg_session *s, const struct lg_finding *f,
		    const char *own, char *out, size_t size)
{
	const struct steer_text *t = text_of(f);
	char next[512] = "";
	static const char from[] =
		"[lgrun] A note from lgrun, the loop guard supervising this session (not from the user): ";

	if (strcmp(own, "note") != 0) {
		snprintf(out, size, "[lgrun] %s", own);
		return;
	}
	/*
	 * seed 004's detectors: their corrections, and what comes next when
	 * the note is a step of the ladder (left: steps to a deny or kill, or
	 * a warn at steer_at); a warn at the firing itself says no more.
	 */
	if (t && !t->instead && f->left)
		next_of(s, t, f, next, sizeof(next));
	if (strcmp(f->rule, "failures") == 0) {
		/* seed 004: rewrite the whole file rather than patch it again */
		snprintf(
			out, size,
			"%s%s. Stop patching that file piece by piece: read the whole file as it is now, decide what it should contain in full, and write it again in one go.%s%s%s",
			from, f->summary, *next ? " Next: " : "", next,
			*next ? "." : "");
	} else if (strcmp(f->rule, "greeting") == 0) {
		snprintf(
			out, size,
			"%syou answered with a greeting, as if the conversation had just started, but there is work in progress above. Resume the task where you left off; do not start over.%s%s%s",
			from, *next ? " Next: " : "", next, *next ? "." : "");
	} else if (strcmp(f->rule, "output_repeat") == 0) {
		snprintf(
			out, size,
			"%syour last answer repeated itself in a loop (%s). Stop, take a different approach, or say plainly what is blocking you.%s%s%s",
			from, f->summary, *next ? " Next: " : "", next,
			*next ? "." : "");
	} else if (t && t->instead) {
		next_of(s, t, f, next, sizeof(next));
		snprintf(out, size, "%sit saw %s. Next: %s. Instead: %s.", from,
			 f->summary, next, t->instead);
	} else {
		snprintf(out, size, "%sit saw %s.", from, f->summary);
	}
}

/*
 * A finding that steers: a rule at its steer level (f->note: a seed 004
 * detector's firing too, when it is its note), or a budget's reserve. Queued for the next model request, once per
 * rule and reason while it waits.
 */
static void queue(struct lg_session *s, const struct lg_finding *f)
{
	const char *own = configured(s, f->rule);
	struct sess_note *n;

	if (strcmp(own, "off") == 0)
		return;
	for (size_t i = 0; i < s->nnotes; i++)
		if (!s->notes[i].placed &&
		    strcmp(s->notes[i].rule, f->rule) == 0 &&
		    strcmp(s->notes[i].reason, f->reason) == 0)
			return; /* the same, not sent yet */
	if (s->nnotes == SESS_NOTES) {
		s->st.steers_dropped++;
		return;
	}
	n = &s->notes[s->nnotes++];
	memset(n, 0, sizeof(*n));
	n->rule = f->rule;
	n->reason = f->reason;
	compose(s, f, own, n->text, sizeof(n->text));
	lg_digest_hex(lg_digest(n->text, strlen(n->text)), n->digest);
	lg_dbg("steer: a note for the next model request (%s, %s)", f->rule,
	       f->reason);
}

void sess_steer_findings(struct lg_session *s, const struct lg_findings *out)
{
	for (size_t i = 0; i < out->n; i++)
		if (lg_finding_steers(&out->f[i]))
			queue(s, &out->f[i]);
}

size_t lg_session_steer(struct lg_session *s, uint64_t conv, size_t items,
			bool stateful, bool agentic, const char *uri,
			struct lg_steer_note *out, size_t max)
{
	HOLD(s);
	size_t k = 0;

	for (size_t i = 0; i < s->nnotes; i++) {
		struct sess_note *n = &s->notes[i];

		if (n->placed) {
			/* the conversation's earlier notes, at their place */
			if (n->conv != conv || n->once || s->cfg->observe ||
			    k == max)
				continue;
		} else if (!agentic) {
			continue; /* a side request: the loop's next one gets it */
		} else {
			n->placed = true;
			n->conv = conv;
			n->at = items;
			n->once = stateful;
			s->st.steers++;
			sess_audit_steer(s, n->rule, n->reason, n->digest, uri,
					 conv, items, s->cfg->observe, n->text);
			if (s->cfg->observe || k == max)
				continue;
		}
		snprintf(out[k].text, sizeof(out[k].text), "%s", n->text);
		out[k].at = n->at;
		k++;
	}
	return k;
}
