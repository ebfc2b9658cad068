// SPDX-License-Identifier: MIT
#include "proxy_int.h"

/* The session's entry points, handed over by lgrun (one proxy a process). */
struct lg_proxy_ops ops;

/* --- model events -------------------------------------------------------- */

static struct call *find_call(struct lg_proxy *p, const char *id,
			      const char *name)
{
	struct call *best = NULL;
	bool by_id = id && *id;

	for (int pass = 0; pass < 2 && !best; pass++) {
		for (size_t i = 0; i < MAX_CALLS; i++) {
			struct call *c = &p->calls[i];

			if (!c->used)
				continue;
			/*
			 * Without ids (Gemini), the oldest id-less call of
			 * that name: never a call another API's agent is
			 * still waiting on. gemini-cli makes up an id for a
			 * call that came without one and sends it back with
			 * the result: no call has it, so the name decides.
			 */
			if (pass == 0 && by_id ? strcmp(c->id, id) == 0 :
						 (!c->id[0] && name &&
						  strcmp(c->name, name) == 0)) {
				if (!best || c->seq < best->seq)
					best = c;
			}
		}
		if (!by_id)
			break;
	}
	return best;
}

/* To the session; a kill waits until the agent has heard why. */
static void feed(const struct lg_event *ev)
{
	ops.sink.defer_kill(ops.sink.ctx, true);
	ops.sink.feed(ops.sink.ctx, ev, NULL);
	ops.sink.defer_kill(ops.sink.ctx, false);
}

/* A tool call of the model's, with its result's digest ("": none yet). */
static void feed_call(const char *name, const char *args, const char *digest,
		      const char *apv, const char *rpv, uint64_t conv)
{
	feed(&(struct lg_event){ .kind = LG_EV_TOOL_DONE,
				 .source = LG_SRC_PROXY,
				 .exe = "model",
				 .target = name,
				 .tool = name,
				 .args = args,
				 .result_digest = digest,
				 .args_preview = apv,
				 .result_preview = rpv,
				 .stream = conv });
}

void on_tool_call(void *ctx, const struct lg_llm_call *lc)
{
	struct req *r = ctx;
	struct lg_proxy *p = r->p;
	struct call *c = NULL, *oldest = &p->calls[0];

	pthread_mutex_lock(&p->calls_lock);
	for (size_t i = 0; i < MAX_CALLS && !c; i++) {
		if (!p->calls[i].used)
			c = &p->calls[i];
		else if (p->calls[i].seq < oldest->seq)
			oldest = &p->calls[i];
	}
	if (!c)
		c = oldest;
	free(c->input);
	c->used = true;
	c->seq = ++p->seq;
	snprintf(c->id, sizeof(c->id), "%s", lc->id ? lc->id : "");
	snprintf(c->name, sizeof(c->name), "%s", lc->name ? lc->name : "");
	c->input = strdup(lc->input ? lc->input : "{}");
	if (ops.call) /* the agent's turn, before the call goes out */
		ops.call(ops.sink.ctx, r->conv, !r->called, c->name, c->input);
	r->called = true;
	/*
	 * The model's own decision to delete (seed 000: a tool named as
	 * [shim] gate_tools says, whatever runs it): the session decides
	 * whether the name is one, and counts it once (issue 38).
	 */
	if (c->input)
		feed(&(struct lg_event){ .kind = LG_EV_DESTRUCTIVE,
					 .source = LG_SRC_PROXY,
					 .op = LG_OP_TOOL_DELETE,
					 .exe = "model",
					 .tool = c->name,
					 .args = c->input,
					 .stream = r->conv });
	if (r->judged && c->input) {
		/* the signature is the call alone: judge it before it goes out */
		char canon[8192], apv[160];
		const char *args = lg_canon_call(c->name, c->input,
						 strlen(c->input),
						 ops.sink.ignore_keys, canon,
						 sizeof(canon)) >= 0 ?
					   canon :
					   c->input;

		lg_preview(args, apv, sizeof(apv), 80);
		feed_call(c->name, args, "", apv, "", r->conv);
		if (ops.model_blocked(ops.sink.ctx))
			r->withheld = true;
	}
	pthread_mutex_unlock(&p->calls_lock);
}

void on_text(void *ctx, const char *delta, size_t n)
{
	struct req *r = ctx;
	size_t room = sizeof(r->text) - 1 - r->text_len;
	struct lg_session_verdict v;

	memcpy(r->text + r->text_len, delta, n < room ? n : room);
	r->text_len += n < room ? n : room;
	r->text[r->text_len] = '\0';
	ops.sink.defer_kill(ops.sink.ctx, true);
	ops.sink.feed(ops.sink.ctx,
		      &(struct lg_event){ .kind = LG_EV_TEXT,
					  .source = LG_SRC_PROXY,
					  .text = delta,
					  .text_len = n,
					  .can_cut = r->framed },
		      &v);
	ops.sink.defer_kill(ops.sink.ctx, false);
	if (v.cut && r->framed)
		r->cut = true; /* judge_events ends the response */
}

void on_turn(void *ctx, const struct lg_llm_turn *t)
{
	struct req *r = ctx;
	bool stopped;

	feed(&(struct lg_event){ .kind = LG_EV_TURN,
				 .source = LG_SRC_PROXY,
				 .target = t->model,
				 .tokens_in = t->input_tokens,
				 .tokens_out = t->output_tokens,
				 .turn_tool_calls = t->tool_calls,
				 .stop_reason = t->stop_reason,
				 .turn_text = r->text });
	r->called = false; /* a websocket's next response is another turn */
	stopped = ops.model_blocked(ops.sink.ctx);
	/*
	 * A budget ran out with this turn: the agent hears it on its next
	 * request, and if it makes none, the action applies after the grace.
	 */
	if (stopped && r->p->wake)
		r->p->wake(r->p->wake_ctx);
}

static void digest_add(void *ctx, const char *s, size_t k)
{
	lg_digest_update(ctx, s, k);
}

/* A tool result in the agent's request: the call it answers is complete. */
void on_result(void *ctx, const struct lg_llm_result *res)
{
	struct req *r = ctx;
	struct lg_proxy *p = r->p;
	char canon[8192], digest[LG_DIGEST_HEX], apv[160], rpv[160];
	struct lg_digest h;
	struct call *c;
	const char *args;

	pthread_mutex_lock(&p->calls_lock);
	c = find_call(p, res->call_id, res->name);
	if (c) {
		args = lg_canon_call(c->name, c->input, strlen(c->input),
				     ops.sink.ignore_keys, canon,
				     sizeof(canon)) >= 0 ?
			       canon :
			       c->input;
		/* pids, clocks and temp names do not make a result new */
		lg_digest_init(&h);
		lg_volatile_scan(res->content, strlen(res->content), digest_add,
				 &h);
		lg_digest_hex(lg_digest_final(&h), digest);
		lg_preview(args, apv, sizeof(apv), 80);
		lg_preview(res->content, rpv, sizeof(rpv), 80);
		/* The agent must hear why before the tree goes. */
		if (!ops.judge_calls(ops.sink.ctx))
			feed_call(c->name, args, digest, apv, rpv, r->conv);
		c->used = false;
		free(c->input);
		c->input = NULL;
	}
	pthread_mutex_unlock(&p->calls_lock);
}

/*
 * Which conversation a request continues: its first message (task prompt)
 * identifies it, whatever was said since. Parallel subagents differ there.
 */
uint64_t conversation(const char *route, const char *body, size_t len)
{
	static const char *const lists[] = { "messages", "input", "contents" };
	json_t *root = body && len ? json_loadb(body, len, 0, NULL) : NULL;
	const char *model = json_string_value(json_object_get(root, "model"));
	/* Code Assist (gemini-cli's Google login): {model, request} */
	json_t *req = json_object_get(root, "request");
	json_t *in = json_is_object(req) && !json_object_get(root, "contents") ?
			     req :
			     root;
	uint64_t key = 0;

	for (size_t i = 0; root && i < 3 && !key; i++) {
		json_t *l = json_object_get(in, lists[i]);
		char *first =
			json_is_array(l) && json_array_size(l) ?
				json_dumps(json_array_get(l, 0),
					   JSON_COMPACT | JSON_SORT_KEYS) :
				NULL;

		if (first) {
			/* the API and model too: the same prompt elsewhere
			 * is another agent */
			char head[300];

			snprintf(head, sizeof(head), "%s\n%s\n", route,
				 model ? model : "");
			key = (lg_digest(head, strlen(head)) * 31 +
			       lg_digest(first, strlen(first))) |
			      1;
		}
		free(first);
	}
	json_decref(root);
	return key;
}

int steer_body(struct req *r, const char *body, size_t n, char **out,
	       size_t *out_len)
{
	struct lg_steer_note *notes;
	size_t items, k;
	bool stateful;
	int added = 0;

	*out = NULL;
	*out_len = 0;
	if (!ops.steer || r->api == LG_LLM_UNKNOWN || !body || !n ||
	    lg_llm_steer_items(r->api, body, n, &items, &stateful) < 0)
		return 0; /* not a request lgrun can read: as it is */
	notes = calloc(LG_STEER_MAX, sizeof(*notes));
	if (!notes)
		return 0;
	k = ops.steer(ops.sink.ctx, r->conv, items, stateful,
		      lg_llm_steer_agentic(r->api, body, n), r->uri, notes,
		      LG_STEER_MAX);
	if (k > LG_STEER_MAX)
		k = LG_STEER_MAX;
	if (k)
		added = lg_llm_steer_apply(r->api, body, n, notes, k, out,
					   out_len);
	free(notes);
	if (added <= 0) {
		if (added < 0)
			COUNT(r->p->st.unparsed);
		free(*out);
		*out = NULL;
		*out_len = 0;
		return 0;
	}
	__atomic_add_fetch(&r->p->st.steered, (uint64_t)added,
			   __ATOMIC_RELAXED);
	return added;
}
