// SPDX-License-Identifier: MIT
#include "control_int.h"

/* The answer to a gate or a registration; why: the reason of a refusal. */
static void send_verdict(int fd, uint32_t seq, uint32_t verdict,
			 const char *why)
{
	struct lg_wire_buf w;

	lg_wire_start(&w, LG_W_VERDICT, seq);
	lg_wire_put_u32(&w, LG_T_VERDICT, verdict);
	if (why && *why)
		lg_wire_put_str(&w, LG_T_PREVIEW, why);
	lg_wire_finish(&w);
	if (send(fd, w.b, w.n, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		lg_dbg("control: cannot answer: %s", strerror(errno));
}

static struct pending *find_call(struct conn *k, uint64_t chan, bool take)
{
	for (unsigned i = 0; k->calls && i < MAX_PENDING; i++) {
		if (k->calls[i].used && k->calls[i].chan == chan) {
			if (take)
				k->calls[i].used = false;
			return &k->calls[i];
		}
	}
	return NULL;
}

static void remember_call(struct lg_control *c, struct conn *k,
			  const struct lg_wire_msg *m)
{
	struct pending *p = NULL;

	if (!k->calls) {
		const uint64_t need = MAX_PENDING * sizeof(*k->calls);

		/* [shim] max_memory: the calls awaiting their results are
		 * what grows with the tree; past the cap a call is dropped,
		 * counted, and said once in the audit */
		if (c->mem_cap && c->mem_used + need > c->mem_cap) {
			c->st.dropped++;
			if (!c->mem_warned) {
				char msg[300];

				c->mem_warned = true;
				snprintf(
					msg, sizeof(msg),
					"the shim's calls awaiting results reached [shim] max_memory (%llu bytes): further calls of new connections are dropped (counted in shim_dropped), not judged",
					(unsigned long long)c->mem_cap);
				lg_sink_notice(&c->sink, LG_EV_WARN,
					       &(struct lg_notice){
						       .rule = "shim",
						       .reason = "memory_cap",
						       .pid = k->pid,
						       .exe = k->exe,
						       .summary = msg });
			}
			return;
		}
		k->calls = calloc(MAX_PENDING, sizeof(*k->calls));
		if (!k->calls) {
			c->st.dropped++;
			return;
		}
		c->mem_used += need;
	}
	for (unsigned i = 0; i < MAX_PENDING && !p; i++)
		if (!k->calls[i].used)
			p = &k->calls[i];
	if (!p) { /* full: the oldest-placed slot goes */
		p = &k->calls[k->next++ % MAX_PENDING];
	}
	p->used = true;
	p->chan = m->chan;
	p->endpoint = m->endpoint;
	p->proto = m->proto;
	p->decision = m->decision == 1;
	snprintf(p->tool, sizeof(p->tool), "%s", m->tool);
	snprintf(p->args, sizeof(p->args), "%.*s",
		 (int)(m->args_len < ARGS_KEEP - 1 ? m->args_len :
						     ARGS_KEEP - 1),
		 m->args ? (const char *)m->args : "");
}

/*
 * The target of a destructive call: the first configured key its JSON
 * arguments hold ("asset_id=fact_sales"), else the URL path (HTTP), else
 * the tool's name.
 */
static const char *gate_target(struct lg_control *c,
			       const struct lg_wire_msg *m, char *buf,
			       size_t size)
{
	if (m->args_len && lg_canon_target((const char *)m->args, m->args_len,
					   c->target_keys, buf, size) > 0)
		return buf;
	if (m->proto == LG_P_HTTP && c->url_targets &&
	    lg_url_target(m->target, c->url_targets, buf, size) > 0)
		return buf;
	return m->target[0] ? m->target : m->tool;
}

_Static_assert(LG_OP_REMOTE_DELETE == LG_WIRE_OP_REMOTE_DELETE,
	       "the shim's op numbers are enum lg_op's");

/*
 * Off this host (issue 38): a remote delete asked (before it leaves) or
 * answered (it ran), or a remote resource the session made.
 */
static int on_remote(struct lg_control *c, struct conn *k,
		     const struct lg_wire_msg *m, const char *exe)
{
	char args[512];
	struct lg_event ev = { .source = LG_SRC_SHIM,
			       .pid = k->pid,
			       .exe = exe,
			       .tool = m->tool,
			       .system = *m->system ? m->system : "remote",
			       .chan = m->chan,
			       .proto = m->proto };

	if (*m->made) {
		ev.kind = LG_EV_OBSERVED;
		ev.made = m->made;
		ev.target = m->made;
		return c->sink.feed(c->sink.ctx, &ev, NULL);
	}
	if (!*m->target)
		return c->sink.refusal(c->sink.ctx);
	ev.kind = LG_EV_DESTRUCTIVE;
	ev.op = LG_OP_REMOTE_DELETE;
	ev.target = m->target;
	ev.happened = LG_WIRE_HAS(m, LG_T_STATUS);
	ev.asked = !ev.happened;
	if (m->args_len) {
		size_t n = m->args_len < sizeof(args) - 1 ? m->args_len :
							    sizeof(args) - 1;

		memcpy(args, m->args, n);
		args[n] = '\0';
		ev.args_preview = args;
	}
	return c->sink.feed(c->sink.ctx, &ev, NULL);
}

/* A call held back until the session answers: a delete, an A2A call. */
static void on_gate(struct lg_control *c, struct conn *k,
		    const struct lg_wire_msg *m, const char *exe)
{
	char target[512], args[4096];
	int err;

	c->st.gates++;
	if (*m->call_to) {
		send_verdict(k->fd, m->seq, (uint32_t)ctl_on_a2a(c, k, m),
			     NULL);
		return;
	}
	if (*m->made ||
	    (LG_WIRE_HAS(m, LG_T_OP) && m->op == LG_OP_REMOTE_DELETE)) {
		send_verdict(k->fd, m->seq, (uint32_t)on_remote(c, k, m, exe),
			     NULL);
		return;
	}
	/* HTTP results carry their call; JSON-RPC ones are paired. */
	if (m->proto != LG_P_HTTP)
		remember_call(c, k, m);
	if (LG_WIRE_HAS(m, LG_T_OP) && m->op == LG_OP_TOOL_DELETE) {
		struct lg_event ev = { .kind = LG_EV_DESTRUCTIVE,
				       .source = LG_SRC_SHIM,
				       .op = LG_OP_TOOL_DELETE,
				       .pid = k->pid,
				       .exe = exe,
				       .target = gate_target(c, m, target,
							     sizeof(target)),
				       .tool = m->tool };

		/*
		 * What its server may remove: the session takes the server's
		 * removal of a path named here for this same decision.
		 */
		if (m->args_len && m->args_len < sizeof(args)) {
			memcpy(args, m->args, m->args_len);
			args[m->args_len] = '\0';
			ev.args = args;
		}
		if (m->proto == LG_P_HTTP && m->target[0])
			ev.url = m->target;
		err = c->sink.feed(c->sink.ctx, &ev, NULL);
	} else /* any call waits, so none leaves a blocked session */
		err = c->sink.refusal(c->sink.ctx);
	send_verdict(k->fd, m->seq, (uint32_t)err, NULL);
}

static uint64_t stream_of(pid_t pid, uint64_t endpoint)
{
	if (!endpoint)
		return (uint64_t)pid;
	return lg_wire_hash((uint64_t)pid, &endpoint, sizeof(endpoint)) | 1;
}

/* A tool's result, matched with its call: a decision, or observed. */
static void on_tool_result(struct lg_control *c, struct conn *k,
			   const struct lg_wire_msg *m, const char *exe)
{
	char digest[LG_DIGEST_HEX], canon[ARGS_KEEP + 256];
	char args_pv[160], result_pv[160];
	const char *tool, *args, *raw;
	struct pending *p = NULL;
	uint64_t endpoint = m->endpoint;
	bool decision;

	if (ctl_a2a_done(c, k, m->chan))
		return; /* a return, not a tool's work */
	if (LG_WIRE_HAS(m, LG_T_TOOL)) {
		/* A whole call in one frame: args by digest (HTTP). */
		tool = m->tool;
		decision = m->decision == 1;
		lg_digest_hex(m->args_digest, canon);
		args = canon;
		raw = m->args ? (const char *)m->args : "";
		snprintf(result_pv, sizeof(result_pv), "%.*s",
			 (int)(m->args_len < 100 ? m->args_len : 100), raw);
		lg_preview(result_pv, args_pv, sizeof(args_pv), 80);
	} else {
		p = find_call(k, m->chan, true);
		if (!p) /* not a call we keep (initialize, tools/list), or
			   one dropped at the memory cap (counted then) */
			return;
		tool = p->tool;
		decision = p->decision;
		endpoint = p->endpoint;
		/* Same arguments however the agent spelled them. */
		args = lg_canon_call(tool, p->args, strlen(p->args),
				     c->sink.ignore_keys, canon,
				     sizeof(canon)) >= 0 ?
			       canon :
			       p->args;
		lg_preview(args, args_pv, sizeof(args_pv), 80);
	}
	lg_digest_hex(m->digest, digest);
	lg_preview(m->preview, result_pv, sizeof(result_pv), 80);
	/*
	 * A stream of calls is a process's with one server: parallel
	 * workers of a process, each with a server of its own, are not one
	 * run (an older shim sends no endpoint: the process is the stream).
	 */
	c->sink.feed(c->sink.ctx,
		     &(struct lg_event){ .kind = decision ? LG_EV_TOOL_DONE :
							    LG_EV_OBSERVED,
					 .source = LG_SRC_SHIM,
					 .pid = k->pid,
					 .exe = exe,
					 .target = tool,
					 .tool = tool,
					 .args = args,
					 .result_digest = digest,
					 .args_preview = args_pv,
					 .result_preview = result_pv,
					 .stream = stream_of(k->pid, endpoint),
					 .proto = m->proto },
		     NULL);
}

/* A nested lgrun's registration, answered: allowed, or refused and why. */
static void on_enter(struct lg_control *c, int epfd, struct conn *k,
		     const struct lg_wire_msg *m)
{
	struct lg_session_verdict v;
	int err = ctl_on_enter(c, epfd, k, m, &v);

	send_verdict(k->fd, m->seq, (uint32_t)err, err ? v.why : NULL);
}

void ctl_on_frame(struct lg_control *c, int epfd, struct conn *k,
		  const struct lg_wire_msg *m)
{
	const char *exe = k->exe[0] ? k->exe : "?";

	switch (m->type) {
	case LG_W_HELLO:
		snprintf(k->exe, sizeof(k->exe), "%s",
			 lg_path_basename(m->exe));
		k->hello = true;
		k->hello_ns = m->time_ns;
		if (c->on_hello)
			c->on_hello(c->on_hello_ctx, k->pid, m->time_ns);
		break;
	case LG_W_OP_RESULT:
		c->st.op_results++;
		c->sink.feed(c->sink.ctx,
			     &(struct lg_event){ .kind = LG_EV_OP_RESULT,
						 .source = LG_SRC_SHIM,
						 .op = (enum lg_op)m->op,
						 .pid = k->pid,
						 .exe = exe,
						 .target = m->path,
						 .result = (int)m->result },
			     NULL);
		break;
	case LG_W_TOOL_CALL:
		if (m->proto == LG_P_TLS) { /* opaque: counted, not paired */
			c->st.tls++;
			break;
		}
		c->st.tool_calls++;
		remember_call(c, k, m);
		break;
	case LG_W_GATE:
		on_gate(c, k, m, exe);
		break;
	case LG_W_TOOL_RESULT:
		on_tool_result(c, k, m, exe);
		break;
	case LG_W_DROPS:
		c->st.dropped += m->count;
		break;
	case LG_W_ENTER:
		on_enter(c, epfd, k, m);
		break;
	default:
		break;
	}
}
