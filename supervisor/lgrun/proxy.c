// SPDX-License-Identifier: MIT
/*
 * The LLM proxy's side in lgrun: its routes (the base-URL variables, the
 * hosts the egress proxy decrypts), its socket, made before the agent
 * starts and watched until the agent first connects, then liblgproxy.so
 * loaded to serve it.
 */
#include "run.h"

/*
 * The routes: the base-URL variables, then (egress proxy) the decrypted
 * hosts and the route of plain-HTTP model gateways. 0, or an exit status.
 */
static int proxy_routes(struct loop *l)
{
	struct run_proxy *p = &l->proxy;
	struct run_egress *eg = &l->egress;
	bool egress = l->cfg->llm_mode != LG_LLM_BASE_URL || l->cfg->sealed;
	const char *bad = NULL;
	int nr, with_default = 0;

	p->nroutes = lg_proxy_default_routes(p->routes, 16);
	nr = lg_proxy_extra_routes(l->cfg->llm_variables, p->routes, p->nroutes,
				   16, &bad);
	if (nr < 0) {
		/* each entry was read with the config: the table is full */
		lg_err("llm.variables: no room for '%.*s': the base-URL variables and the decrypted hosts share 16 routes",
		       (int)strcspn(bad, ", \t"), bad);
		return LG_EXIT_ERROR;
	}
	p->nroutes = (size_t)nr;
	if (egress)
		with_default = lg_proxy_decrypt_routes(l->cfg->llm_decrypt,
						       p->routes, &p->nroutes,
						       16, eg->decrypt,
						       &eg->ndecrypt, &bad);
	if (with_default < 0) {
		lg_err("llm.decrypt: no room for '%.*s': at most 8 hosts, and the base-URL variables and the decrypted hosts share 16 routes",
		       (int)strcspn(bad, ", \t"), bad);
		return LG_EXIT_ERROR;
	}
	if (with_default > 0) {
		/* a gateway of the user's is a model host too */
		size_t nbase = p->nroutes - eg->ndecrypt;

		lg_proxy_decrypt_upstreams(p->routes, nbase, &p->nroutes, 16,
					   eg->decrypt, &eg->ndecrypt);
	}
	if (!egress)
		return 0;
	/*
	 * A model gateway in clear through the egress proxy (a Codex
	 * provider at http://127.0.0.1:PORT/v1): its requests come to this
	 * route as /http/HOST:PORT/PATH, its upstream http://HOST:PORT.
	 */
	if (p->nroutes < 16) {
		struct lg_proxy_route *rt = &p->routes[p->nroutes++];

		memset(rt, 0, sizeof(*rt));
		snprintf(rt->name, sizeof(rt->name), "http");
		snprintf(rt->format, sizeof(rt->format), "openai");
		snprintf(rt->upstream, sizeof(rt->upstream), "http:/");
		snprintf(p->model_prefix, sizeof(p->model_prefix), "%s/http",
			 l->secret);
	} else {
		lg_warn("llm.mode: no room for the route of plain-HTTP model gateways (16 routes): their requests are forwarded unread");
	}
	return 0;
}

/*
 * What only the proxy asks of the session (proxy.h), beside its sink: thin
 * wrappers over session.h, as the sink's are (lgrun/setup.c).
 */
static bool ops_model_blocked(void *s)
{
	return lg_session_model_blocked(s);
}

static void ops_stop_message(void *s, char *out, size_t size)
{
	lg_session_stop_message(s, out, size);
}

static bool ops_judge_calls(void *s)
{
	return lg_session_judge_calls(s);
}

static size_t ops_steer(void *s, uint64_t conv, size_t items, bool stateful,
			bool agentic, const char *uri,
			struct lg_steer_note *out, size_t max)
{
	return lg_session_steer(s, conv, items, stateful, agentic, uri, out,
				max);
}

static bool ops_cuts_text(void *s)
{
	return lg_session_cuts_text(s);
}

static void ops_call(void *s, uint64_t conv, bool first, const char *tool,
		     const char *args)
{
	lg_session_model_call(s, conv, first, tool, args);
}

/*
 * The agent talks to its model for the first time: load liblgproxy.so
 * (next to the shim) and let it serve the socket, where the connection
 * waits in the backlog.
 */
static void load_proxy(struct loop *l)
{
	struct run_proxy *p = &l->proxy;
	__typeof__(lg_proxy_start) *start;
	char path[PATH_MAX + 32];
	struct lg_error err = { "" };
	void *h;

	lg_sources_unwatch(&l->src, p->fd);
	if (!lg_libdir_file("liblgproxy.so", path, sizeof(path))) {
		lg_error_set(&err, 0, "liblgproxy.so is not next to lgrun");
		goto fail;
	}
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		lg_error_set(&err, 0, "%s", dlerror());
		goto fail;
	}
	start = (__typeof__(start))dlsym(h, "lg_proxy_start");
	p->stop = (__typeof__(p->stop))dlsym(h, "lg_proxy_stop");
	if (!start || !p->stop) {
		lg_error_set(&err, 0, "%s lacks lg_proxy_start", path);
		goto fail;
	}
	p->proxy = start(
		&(const struct lg_proxy_ops){ .sink = l->sink,
					      .model_blocked =
						      ops_model_blocked,
					      .stop_message = ops_stop_message,
					      .judge_calls = ops_judge_calls,
					      .steer = ops_steer,
					      .cuts_text = ops_cuts_text,
					      .call = ops_call },
		p->fd, p->routes, p->nroutes, l->secret, wake_main, l, &err);
	if (p->proxy)
		return;
fail:
	/* The agent's model calls get "connection refused", not a hang. */
	lg_warn("the LLM proxy could not start: %s", err.msg);
	atomic_store(&p->up, false);
	close(p->fd);
	p->fd = -1;
}

/* The LLM proxy's socket: its library is loaded on the first connection. */
static void proxy_handle(void *ctx, int fd, uint32_t events)
{
	struct loop *l = ctx;

	(void)fd;
	(void)events;
	if (!l->proxy.proxy)
		load_proxy(l);
}

void proxy_free(void *ctx)
{
	struct loop *l = ctx;

	if (l->proxy.proxy && l->proxy.stop)
		l->proxy.stop(l->proxy.proxy);
	else if (l->proxy.fd >= 0)
		close(l->proxy.fd);
	l->proxy.proxy = NULL;
	atomic_store(&l->proxy.up, false);
	l->proxy.fd = -1;
}

const struct lg_loop_source proxy_source = { "proxy", proxy_handle, NULL, NULL,
					     proxy_free };

int proxy_start(struct loop *l)
{
	int r = proxy_routes(l);

	if (r)
		return r;
	l->proxy.fd = lg_proxy_listen(&l->proxy.port);
	if (l->proxy.fd < 0) {
		lg_warn("the LLM proxy is off: cannot listen on 127.0.0.1: %s",
			strerror(-l->proxy.fd));
		return 0;
	}
	atomic_store(&l->proxy.up, true);
	/* served once the agent first connects (load_proxy) */
	lg_sources_watch(&l->src, l->proxy.fd, EPOLLIN, &proxy_source, l);
	lg_info("LLM proxy on 127.0.0.1:%u", l->proxy.port);
	return 0;
}

/* A settings file of the agent's that can take it around lgrun. */
static void agentenv_say(void *ctx, const char *file, const char *key)
{
	struct loop *l = ctx;
	char msg[PATH_MAX + 300];

	snprintf(
		msg, sizeof(msg),
		"%s sets %s in its \"env\" block: Claude Code applies it over the environment lgrun gives it, which can take its model traffic around lgrun",
		file, key);
	lg_session_notice(l->s, LG_EV_WARN,
			  &(struct lg_notice){ .rule = "llm",
					       .reason = "agent_settings",
					       .pid = 0,
					       .exe = "",
					       .summary = msg });
}

void proxy_check_agent_settings(struct loop *l)
{
	char cwd[PATH_MAX];

	lg_agentenv_check(getcwd(cwd, sizeof(cwd)) ? cwd : NULL, getenv("HOME"),
			  agentenv_say, l);
}
