// SPDX-License-Identifier: MIT
#include "control_int.h"

/* The session's flow and name: strings that live as long as it does. */
static const char *session_flow(struct lg_control *c)
{
	return c->sink.flow;
}

static const char *session_name(struct lg_control *c)
{
	return c->sink.name;
}

/* The newest live nested session of pid, or NULL. */
static struct nested *nested_of(struct lg_control *c, pid_t pid)
{
	struct nested *best = NULL;

	for (int i = 0; i < MAX_NESTED; i++)
		if (c->nested[i].used && c->nested[i].pid == pid &&
		    (!best || c->nested[i].seq > best->seq))
			best = &c->nested[i];
	return best;
}

/*
 * The session pid runs in: the nearest nested session among pid and its
 * ancestors, else the top session. Decided here from the process tree,
 * not from anything the agent says.
 */
static const char *caller_of(struct lg_control *c, pid_t pid)
{
	pid_t self = getpid();

	for (int depth = 0; depth < 4096 && pid > 1 && pid != self; depth++) {
		struct nested *n = nested_of(c, pid);
		pid_t ppid;
		char state;

		if (n)
			return n->name;
		if (lg_proc_stat(pid, &state, &ppid) < 0)
			break;
		pid = ppid;
	}
	return session_name(c);
}

/* The flow id a frame carries, if it is this session's; else "". */
static const char *our_flow(struct lg_control *c, const struct lg_wire_msg *m,
			    pid_t pid)
{
	if (*m->flow && strcmp(m->flow, session_flow(c)) != 0) {
		lg_warn("pid %d gave a correlation id that is not this session's flow: treated as none",
			pid);
		return "";
	}
	return m->flow;
}

/*
 * A call of the session's flow (from and to: session names), fed to the
 * session: 0, or the errno to refuse it with and v->why.
 */
static int flow_call(struct lg_control *c, pid_t pid, const char *exe,
		     const char *flow, const char *from, const char *to,
		     struct lg_session_verdict *v)
{
	struct lg_event ev = { .kind = LG_EV_CALL,
			       .source = LG_SRC_SHIM,
			       .pid = pid,
			       .exe = exe,
			       .flow = flow,
			       .from = from,
			       .to = to };

	return c->sink.feed(c->sink.ctx, &ev, v);
}

/* ... and its end: control goes back from `from` to `to`. */
static void flow_return(struct lg_control *c, const char *from, const char *to)
{
	struct lg_event ev = { .kind = LG_EV_RETURN,
			       .source = LG_SRC_SHIM,
			       .flow = session_flow(c),
			       .from = from,
			       .to = to };

	c->sink.feed(c->sink.ctx, &ev, NULL);
}

/*
 * A nested lgrun asks to start as a child session: 0, or the errno to
 * refuse it with and v->why (the caller answers the frame).
 */
int ctl_on_enter(struct lg_control *c, int epfd, struct conn *k,
		 const struct lg_wire_msg *m, struct lg_session_verdict *v)
{
	char caller[FLOW_NAME];
	struct nested *n = NULL;
	int err, pidfd;

	snprintf(caller, sizeof(caller), "%s", caller_of(c, k->pid));
	c->st.enters++;
	if (c->on_call)
		c->on_call(c->on_call_ctx);
	/* a refusal's kill waits until the nested lgrun has said why */
	c->sink.defer_kill(c->sink.ctx, true);
	err = flow_call(c, k->pid, k->exe[0] ? k->exe : "lgrun",
			our_flow(c, m, k->pid), caller, m->name, v);
	c->sink.defer_kill(c->sink.ctx, false);
	if (err) {
		c->st.enter_refused++;
		k->refused = true;
		c->lingering++;
		return err;
	}
	for (int i = 0; i < MAX_NESTED && !n; i++)
		if (!c->nested[i].used)
			n = &c->nested[i];
	pidfd = (int)syscall(SYS_pidfd_open, k->pid, 0);
	if (!n || pidfd < 0) {
		/* allowed, but its return cannot be seen: say so once */
		lg_warn("cannot follow nested session '%s' (pid %d): %s",
			m->name, k->pid,
			n ? strerror(errno) : "too many at once");
		if (pidfd >= 0)
			close(pidfd);
	} else {
		struct epoll_event ev = { .events = EPOLLIN };

		n->used = true;
		n->pid = k->pid;
		n->pidfd = pidfd;
		n->seq = ++c->nested_seq;
		snprintf(n->name, sizeof(n->name), "%s", m->name);
		snprintf(n->caller, sizeof(n->caller), "%s", caller);
		ev.data.fd = pidfd;
		epoll_ctl(epfd, EPOLL_CTL_ADD, pidfd, &ev);
	}
	return 0;
}

/* A nested session's process ended: it and any it exec'd into return. */
bool ctl_on_pidfd(struct lg_control *c, int epfd, int fd)
{
	struct nested *n = NULL, *last;
	pid_t pid;

	for (int i = 0; i < MAX_NESTED && !n; i++)
		if (c->nested[i].used && c->nested[i].pidfd == fd)
			n = &c->nested[i];
	if (!n)
		return false;
	pid = n->pid;
	while ((last = nested_of(c, pid))) {
		flow_return(c, last->name, last->caller);
		epoll_ctl(epfd, EPOLL_CTL_DEL, last->pidfd, NULL);
		close(last->pidfd);
		last->used = false;
	}
	return true;
}

/* An A2A request held by the shim: a call to the endpoint. */
int ctl_on_a2a(struct lg_control *c, struct conn *k,
	       const struct lg_wire_msg *m)
{
	struct lg_session_verdict v;
	char to[FLOW_NAME + 8];
	struct a2a *a = NULL;
	const char *from = caller_of(c, k->pid);
	int err;

	snprintf(to, sizeof(to), "a2a:%s", m->call_to);
	c->st.a2a_calls++;
	if (c->on_call)
		c->on_call(c->on_call_ctx);
	err = flow_call(c, k->pid, k->exe[0] ? k->exe : "?", session_flow(c),
			from, to, &v);
	if (err) {
		lg_warn("%s", v.why[0] ? v.why : "an A2A call was refused");
		return err;
	}
	for (int i = 0; i < MAX_A2A && !a; i++)
		if (!k->a2a[i].used)
			a = &k->a2a[i];
	if (!a)
		a = &k->a2a[m->chan % MAX_A2A];
	a->used = true;
	a->chan = m->chan;
	snprintf(a->from, sizeof(a->from), "%s", from);
	snprintf(a->to, sizeof(a->to), "%s", to);
	return 0;
}

/* The response to an A2A call: the return. */
bool ctl_a2a_done(struct lg_control *c, struct conn *k, uint64_t chan)
{
	for (int i = 0; i < MAX_A2A; i++) {
		struct a2a *a = &k->a2a[i];

		if (a->used && a->chan == chan) {
			flow_return(c, a->to, a->from);
			a->used = false;
			return true;
		}
	}
	return false;
}
