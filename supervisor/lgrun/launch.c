// SPDX-License-Identifier: MIT
#include "run.h"

static int setvar(char **set, size_t max, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Frees what make_env() added; the rest is environ's. */
void free_env(char **env, size_t ours_from)
{
	if (!env)
		return;
	for (size_t i = ours_from; env[i]; i++)
		free(env[i]);
	free(env);
}

/*
 * The command's environment: ours, with every variable in set ("KEY=value",
 * NULL-terminated) replacing what was there. The strings in set are
 * taken over (freed with the environment).
 */
static char **make_env(char **set, size_t *ours_from)
{
	extern char **environ;
	size_t n = 0, k = 0, nset = 0;
	char **env;

	while (environ[n])
		n++;
	while (set[nset])
		nset++;
	env = calloc(n + nset + 1, sizeof(*env));
	if (!env)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		bool skip = false;

		for (size_t o = 0; o < nset && !skip; o++) {
			size_t kl = strcspn(set[o], "=") + 1;

			skip = strncmp(environ[i], set[o], kl) == 0;
		}
		if (!skip)
			env[k++] = environ[i];
	}
	*ours_from = k;
	for (size_t o = 0; o < nset; o++)
		env[k++] = set[o];
	return env;
}

/* Appends "KEY=value" to set (size max, NULL-terminated). */
static int setvar(char **set, size_t max, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int setvar(char **set, size_t max, const char *key, const char *fmt, ...)
{
	size_t n = 0;
	LG_AUTOFREE char *v = NULL;
	char *kv;
	va_list ap;
	int r;

	while (set[n])
		n++;
	if (n + 1 >= max)
		return -ENOSPC;
	va_start(ap, fmt);
	r = vasprintf(&v, fmt, ap);
	va_end(ap);
	if (r < 0)
		return -ENOMEM;
	r = asprintf(&kv, "%s=%s", key, v);
	if (r < 0)
		return -ENOMEM;
	set[n] = kv;
	set[n + 1] = NULL;
	return 0;
}

/*
 * The LLM proxy's routes and socket, the egress proxy, the agent's own
 * settings checked, the control socket.
 */
int start_proxies(struct run *run)
{
	int r = run->cfg.llm_proxy || run->cfg.llm_mode != LG_LLM_BASE_URL ||
				run->cfg.sealed ?
			make_secret(&run->l) :
			0;

	if (r < 0) {
		lg_err("cannot make the session's secret for its proxies: %s",
		       strerror(-r));
		return LG_EXIT_ERROR;
	}
	if (run->cfg.llm_proxy) {
		const char *bad = NULL;
		int nr, with_default = 0;

		run->nroutes = lg_proxy_default_routes(run->routes, 16);
		nr = lg_proxy_extra_routes(run->cfg.llm_variables, run->routes,
					   run->nroutes, 16, &bad);
		if (nr < 0) {
			/* each entry was read with the config: the table is full */
			lg_err("llm.variables: no room for '%.*s': the base-URL variables and the decrypted hosts share 16 routes",
			       (int)strcspn(bad, ", \t"), bad);
			return LG_EXIT_ERROR;
		}
		run->nroutes = (size_t)nr;
		if (run->cfg.llm_mode != LG_LLM_BASE_URL || run->cfg.sealed)
			with_default = lg_proxy_decrypt_routes(
				run->cfg.llm_decrypt, run->routes,
				&run->nroutes, 16, run->l.decrypt,
				&run->l.ndecrypt, &bad);
		if (with_default < 0) {
			lg_err("llm.decrypt: no room for '%.*s': at most 8 hosts, and the base-URL variables and the decrypted hosts share 16 routes",
			       (int)strcspn(bad, ", \t"), bad);
			return LG_EXIT_ERROR;
		}
		if (with_default > 0) {
			/* a gateway of the user's is a model host too */
			size_t nbase = run->nroutes - run->l.ndecrypt;

			lg_proxy_decrypt_upstreams(run->routes, nbase,
						   &run->nroutes, 16,
						   run->l.decrypt,
						   &run->l.ndecrypt);
		}
		if (run->cfg.llm_mode != LG_LLM_BASE_URL || run->cfg.sealed) {
			/*
			 * A model gateway in clear through the egress proxy
			 * (a Codex provider at http://127.0.0.1:PORT/v1):
			 * its requests come to this route as
			 * /http/HOST:PORT/PATH, its upstream http://HOST:PORT.
			 */
			if (run->nroutes < 16) {
				struct lg_proxy_route *rt =
					&run->routes[run->nroutes++];

				memset(rt, 0, sizeof(*rt));
				snprintf(rt->name, sizeof(rt->name), "http");
				snprintf(rt->format, sizeof(rt->format),
					 "openai");
				snprintf(rt->upstream, sizeof(rt->upstream),
					 "http:/");
				snprintf(run->l.model_prefix,
					 sizeof(run->l.model_prefix), "%s/http",
					 run->l.secret);
			} else {
				lg_warn("llm.mode: no room for the route of plain-HTTP model gateways (16 routes): their requests are forwarded unread");
			}
		}
		run->l.proxy_fd = lg_proxy_listen(&run->l.proxy_port);
		if (run->l.proxy_fd < 0) {
			lg_warn("the LLM proxy is off: cannot listen on 127.0.0.1: %s",
				strerror(-run->l.proxy_fd));
		} else {
			/* served once the agent first connects (load_proxy) */
			lg_sources_watch(&run->l.src, run->l.proxy_fd, EPOLLIN,
					 &proxy_source, &run->l);
			run->l.routes = run->routes;
			run->l.nroutes = run->nroutes;
			lg_info("LLM proxy on 127.0.0.1:%u", run->l.proxy_port);
		}
	}
	if (run->cfg.sealed && geteuid() != 0) {
		lg_err("network.egress = proxy-only needs root (the tree gets a network namespace of its own): run lgrun as root, or set egress = open");
		return LG_EXIT_ERROR;
	}
	if (run->cfg.llm_mode != LG_LLM_BASE_URL || run->cfg.sealed) {
		LG_AUTOCLOSE int fd = lg_proxy_listen(&run->l.egress_port);
		struct lg_egress_cfg ec = {
			.flow = egress_flow,
			.decrypt = egress_decrypt,
			.mitm = egress_mitm,
			.auth = run->l.egress_auth,
			.refused = egress_refused,
			/* plain-HTTP model requests: to the LLM proxy, if on */
			.model_port = run->l.proxy_fd >= 0 ? run->l.proxy_port :
							     0,
			.model_prefix = run->l.model_prefix,
			.ctx = &run->l
		};

		run->l.egress = fd >= 0 ? lg_egress_start(fd, &ec) : NULL;
		if (!run->l.egress) {
			lg_err("llm.mode: cannot start the egress proxy on 127.0.0.1: %s",
			       strerror(fd < 0 ? -fd : errno));
			return LG_EXIT_ERROR;
		}
		lg_steal_fd(&fd); /* the egress proxy's now */
		lg_info("egress proxy on 127.0.0.1:%u (HTTP_PROXY, HTTPS_PROXY)",
			run->l.egress_port);
		ca_wait(&run->l, true);
	}
	if (run->cfg.llm_proxy) {
		char cwd[PATH_MAX];

		lg_agentenv_check(getcwd(cwd, sizeof(cwd)) ? cwd : NULL,
				  getenv("HOME"), agentenv_say, &run->l);
	}
	if (run->sock_path[0]) {
		run->l.ctl = lg_control_new(run->sock_path, run->l.s, &run->cg,
					    run->cfg.target_keys ?
						    run->cfg.target_keys :
						    LG_DEFAULT_TARGET_KEYS,
					    run->cfg.url_targets);
		if (run->l.ctl) {
			struct epoll_event ev = { .events = EPOLLIN };

			lg_control_set_memory_cap(run->l.ctl,
						  run->cfg.shim_max_memory);
			/* its own set: the socket, its connections, pidfds */
			run->l.ctl_epfd = epoll_create1(EPOLL_CLOEXEC);
			ev.data.fd = lg_control_listen_fd(run->l.ctl);
			if (run->l.ctl_epfd < 0 ||
			    epoll_ctl(run->l.ctl_epfd, EPOLL_CTL_ADD,
				      ev.data.fd, &ev) < 0 ||
			    lg_sources_watch(&run->l.src, run->l.ctl_epfd,
					     EPOLLIN, &control_source,
					     &run->l) < 0) {
				lg_err("cannot watch the control socket: %s",
				       strerror(errno));
				return LG_EXIT_ERROR;
			}
		}
	}
	return 0;
}

/*
 * The tree's environment: lgrun's variables, the shim, the routes, the
 * proxies and the session CA.
 */
int build_env(struct run *run)
{
	{
		char *set[40] = { NULL };
		const char *preload = getenv("LD_PRELOAD");
		const size_t max = sizeof(set) / sizeof(set[0]);
		int e = 0;

		e |= setvar(set, max, "LGRUN_SESSION", "%s", run->id);
		e |= setvar(set, max, "LGRUN_AGENT", "%s", run->agent);
		e |= setvar(set, max, "LGRUN_STATE_DIR", "%s", run->state_dir);
		e |= setvar(set, max, "LGRUN_SUPERVISOR_PID", "%d", getpid());
		e |= setvar(set, max, "LGRUN_FLOW", "%s", run->flow_id);
		if (run->l.ctl)
			e |= setvar(set, max, "LGRUN_SOCK", "%s",
				    lg_control_path(run->l.ctl));
		if (run->l.ctl && run->shim_path[0]) {
			e |= setvar(set, max, "LGRUN_GATE_TOOLS", "%s",
				    run->cfg.gate_tools ?
					    run->cfg.gate_tools :
					    LG_DEFAULT_GATE_TOOLS);
			/* always set: a value from outside is not our config */
			e |= setvar(set, max, "LGRUN_TOOL_ENDPOINTS", "%s",
				    run->cfg.tool_endpoints ?
					    run->cfg.tool_endpoints :
					    "");
			e |= setvar(set, max, "LGRUN_JUDGE_ALL", "%d",
				    run->cfg.judge_all ? 1 : 0);
			/* ours first, keeping what the user preloads */
			e |= setvar(set, max, "LD_PRELOAD", "%s%s%s",
				    run->shim_path,
				    preload && *preload ? ":" : "",
				    preload ? preload : "");
		}
		if (run->l.proxy_fd >= 0)
			e |= setvar(set, max, "LGRUN_PROXY_PORT", "%u",
				    run->l.proxy_port);
		/* base URLs on our loopback: out of a sealed tree's reach */
		for (size_t i = 0;
		     run->l.proxy_fd >= 0 && !run->cfg.sealed &&
		     run->cfg.llm_mode != LG_LLM_PROXY && i < run->nroutes;
		     i++)
			if (run->routes[i].env[0])
				e |= setvar(set, max, run->routes[i].env,
					    "http://127.0.0.1:%u/%s/%s",
					    run->l.proxy_port, run->l.secret,
					    run->routes[i].name);
		if (run->l.egress) {
			static const char *const vars[] = { "HTTP_PROXY",
							    "HTTPS_PROXY",
							    "http_proxy",
							    "https_proxy" };

			for (size_t i = 0; i < 4; i++)
				e |= setvar(set, max, vars[i],
					    "http://%s:%s@127.0.0.1:%u",
					    LG_EGRESS_USER, run->l.secret,
					    run->l.egress_port);
			/*
			 * Set and empty, not unset: gemini-cli's .env files
			 * fill only variables that are unset.
			 */
			e |= setvar(set, max, "NO_PROXY", "%s", "");
			e |= setvar(set, max, "no_proxy", "%s", "");
			if (run->l.ca) {
				/*
				 * Node and Codex add the CA to what they
				 * trust; the others replace their store: the
				 * system's with the CA appended.
				 */
				e |= setvar(set, max, "NODE_EXTRA_CA_CERTS",
					    "%s", run->l.ca_path);
				e |= setvar(set, max, "CODEX_CA_CERTIFICATE",
					    "%s", run->l.ca_path);
				e |= setvar(set, max, "SSL_CERT_FILE", "%s",
					    run->l.bundle_path);
				e |= setvar(set, max, "REQUESTS_CA_BUNDLE",
					    "%s", run->l.bundle_path);
				e |= setvar(set, max, "CURL_CA_BUNDLE", "%s",
					    run->l.bundle_path);
			}
		}
		run->env = e ? NULL : make_env(set, &run->env_ours);
		if (!run->env)
			for (size_t i = 0; set[i]; i++)
				free(set[i]);
	}
	if (!run->env) {
		lg_err("out of memory");
		return LG_EXIT_ERROR;
	}
	return 0;
}

/* The command's ends of its output (--watch-output), made before it starts. */
struct output_ends {
	int out[2], err[2], pty_slave;
};

static void output_ends_close(struct output_ends *e)
{
	lg_closep(&e->out[1]);
	lg_closep(&e->err[1]);
	lg_closep(&e->pty_slave);
}

/*
 * --watch-output: on a terminal the command still gets one (a pty we
 * read), else pipes. 0, or an exit status.
 */
static int output_ends(struct run *run, struct output_ends *e)
{
	bool err_tty = false;
	int r;

	if (isatty(STDOUT_FILENO)) {
		r = lg_pty_open(
			isatty(STDIN_FILENO) ? STDIN_FILENO : STDOUT_FILENO,
			STDOUT_FILENO, &run->l.pty_master, &e->pty_slave);
		if (r < 0)
			lg_warn("--watch-output: no pseudo-terminal (%s): the command's output goes through pipes",
				strerror(-r));
	}
	if (e->pty_slave >= 0) {
		/* a background lgrun leaves the keyboard alone */
		run->l.relay_in = isatty(STDIN_FILENO) &&
				  tcgetpgrp(STDIN_FILENO) == getpgrp();
		err_tty = isatty(STDERR_FILENO);
		lg_launch_set_pty(e->pty_slave, run->l.relay_in, err_tty);
	}
	if ((e->pty_slave < 0 && pipe2(e->out, O_CLOEXEC) < 0) ||
	    (!err_tty && pipe2(e->err, O_CLOEXEC) < 0)) {
		lg_err("--watch-output: cannot make pipes: %s",
		       strerror(errno));
		return LG_EXIT_ERROR;
	}
	lg_launch_set_stdio(e->out[1], e->err[1]);
	return 0;
}

/* lgrun's record, read-only for the tree where we can. */
static void protect_state(struct run *run)
{
	const char *keep[] = { run->state_dir, run->info.audit_path,
			       run->info.metrics_path };
	size_t n = strlen(run->state_dir);

	lg_launch_isolate(run->cfg.isolate);
	for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++) {
		if (i && keep[i] &&
		    (strncmp(keep[i], run->state_dir, n) == 0 &&
		     keep[i][n] == '/'))
			continue; /* inside the state dir */
		if (keep[i] && access(keep[i], F_OK) == 0)
			lg_launch_protect(keep[i]);
	}
}

/* Our ends of the command's output into the loop; the keyboard relayed. */
static void watch_output(struct run *run, const struct output_ends *e,
			 bool started)
{
	run->l.out_r[0] = e->pty_slave >= 0 ? run->l.pty_master : e->out[0];
	run->l.out_r[1] = e->err[0];
	for (int i = 0; i < 2; i++) {
		if (run->l.out_r[i] < 0)
			continue;
		/* bigger pipes: fewer wake-ups for bulk output */
		if (run->l.out_r[i] != run->l.pty_master)
			fcntl(run->l.out_r[i], F_SETPIPE_SZ, 1 << 20);
		fcntl(run->l.out_r[i], F_SETFL, O_NONBLOCK);
		lg_sources_watch(&run->l.src, run->l.out_r[i], EPOLLIN,
				 &output_source, &run->l);
	}
	if (started && run->l.relay_in &&
	    lg_tty_raw(STDIN_FILENO, &run->l.saved_tty) == 0) {
		run->l.tty_raw = true;
		lg_log_crlf = isatty(STDERR_FILENO);
		fcntl(run->l.pty_master, F_SETFL, O_NONBLOCK);
		lg_sources_watch(&run->l.src, STDIN_FILENO, EPOLLIN,
				 &output_source, &run->l);
	}
}

/* What the command's file is (lg_image_flags), found as execvp would. */
static unsigned command_image(const char *cmd)
{
	const char *path = getenv("PATH");

	if (strchr(cmd, '/'))
		return lg_image_flags(AT_FDCWD, cmd);
	for (const char *p = path; p && *p;) {
		const char *e = strchr(p, ':');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		char file[PATH_MAX];

		if (n &&
		    snprintf(file, sizeof(file), "%.*s/%s", (int)n, p, cmd) <
			    (int)sizeof(file) &&
		    access(file, X_OK) == 0)
			return lg_image_flags(AT_FDCWD, file);
		p = e ? e + 1 : NULL;
	}
	return 0;
}

/*
 * The tree, launched: the observer first with --bpf=on, the output's
 * pipes or pseudo-terminal, lgrun's state protected, the network sealed.
 */
int launch_tree(struct run *run)
{
	/* the command's ends: closed here once it has them, in every case */
	struct output_ends ends __attribute__((
		cleanup(output_ends_close))) = { { -1, -1 }, { -1, -1 }, -1 };
	int r, exec_errno;
	unsigned img = 0;

	/*
	 * The command itself runs without the shim (static, setuid): its
	 * syscalls are traced from its first instruction, so the observer
	 * loads before it starts, as with --bpf=on (issue 29: a short static
	 * program was seen in some runs only).
	 */
	if (run->cfg.bpf_mode != LG_BPF_OFF && may_load_bpf())
		img = command_image(run->o.argv[0]);
	if (run->cfg.bpf_mode == LG_BPF_ON || img) {
		char why[300];

		if (observer_start(&run->l, &run->cfg, false, why,
				   sizeof(why)) < 0) {
			if (run->cfg.bpf_mode == LG_BPF_ON) {
				lg_err("--bpf=on: %s", why);
				return LG_EXIT_ERROR;
			}
			lg_info("the eBPF observer is off: %s", why);
		} else if (img) {
			char say[300];

			observer_ready(&run->l);
			snprintf(
				say, sizeof(say),
				"the command %s is %s (decided at its exec)",
				run->o.argv[0],
				img & LG_IMAGE_STATIC ?
					"a static binary" :
					"setuid, setgid or privileged (no LD_PRELOAD)");
			lg_observer_watch_syscalls(run->l.obs, say);
		}
	}
	if (run->cfg.watch_output) {
		r = output_ends(run, &ends);
		if (r) {
			/* ours too: nobody reads them */
			lg_closep(&ends.out[0]);
			lg_closep(&ends.err[0]);
			return r;
		}
	}
	protect_state(run);
	if (run->cfg.sealed)
		lg_launch_seal(run->l.egress_port);
	r = lg_launch(&run->l.child, run->o.argv, run->env, &run->filter,
		      &run->cg, &exec_errno);
	if (r >= 0)
		lg_watchdog_tree(&run->wd, run->l.child.pid);
	if (r >= 0 && run->l.child.sealed_fd >= 0) {
		lg_egress_listen_also(run->l.egress, run->l.child.sealed_fd);
		lg_info("network: sealed, the egress proxy is the tree's only way out");
	}
	if (r >= 0 && run->cfg.isolate)
		lg_info("the tree's view: %s; %s",
			(run->l.child.isolated & LG_ISOLATED_STATE) ?
				"lgrun's state is read-only in its mounts" :
				"lgrun's state is guarded by the filter only",
			(run->l.child.isolated & LG_ISOLATED_CGROUP) ?
				"it cannot leave its cgroup" :
				"a privileged process could leave its cgroup");
	if (run->cfg.watch_output)
		watch_output(run, &ends, r >= 0);
	lg_filter_free(&run->filter);
	free_env(run->env, run->env_ours);
	run->env = NULL;
	if (r < 0) {
		lg_cgroup_destroy(&run->cg);
		if (exec_errno) {
			lg_err("cannot execute '%s': %s", run->o.argv[0],
			       strerror(exec_errno));
			return exec_errno == ENOENT ? LG_EXIT_NOTFOUND :
						      LG_EXIT_NOEXEC;
		}
		return LG_EXIT_ERROR;
	}
	return 0;
}

/*
 * The tree runs: the notify thread, the loop's sources, the observer, the
 * store and the process budget wired in.
 */
int start_watching(struct run *run)
{
	run->l.nt = lg_notifier_new(run->l.child.notify_fd);
	if (!run->l.nt) {
		lg_err("out of memory");
		kill(run->l.child.pid, SIGKILL);
		return LG_EXIT_ERROR;
	}
	exec_watch_init(&run->l);
	if (!lg_notifier_sync_wakeup(run->l.nt))
		lg_dbg("SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP not supported");
	add_sources(&run->l);
	lg_info("session %s (agent %s): pid %d%s, %s%s", run->id, run->agent,
		run->l.child.pid, run->cfg.observe ? ", observe mode" : "",
		run->l.child.in_cgroup ? "cgroup " : "no cgroup",
		run->l.child.in_cgroup ? run->cg.path : "");
	if (run->l.obs) {
		observer_ready(&run->l); /* --bpf=on: loaded before the start */
	} else if (run->cfg.bpf_mode == LG_BPF_AUTO) {
		/*
		 * Loading takes some 10-20 ms of kernel work a short command
		 * would wait for at its exit: a session that lasts loads it.
		 */
		if (may_load_bpf()) {
			run->l.bpf_at = lg_mono_ms() + BPF_AUTO_DELAY_MS;
			lg_session_bpf_state(
				run->l.s,
				"off: the session ended before the observer was loaded");
		} else {
			lg_session_bpf_state(
				run->l.s,
				"off: loading eBPF programs needs root, or CAP_BPF and CAP_PERFMON");
			lg_info("the eBPF observer is off: it needs root, or CAP_BPF and CAP_PERFMON");
		}
	} else {
		lg_session_bpf_state(run->l.s, "off");
	}
	run->l.id = run->id;
	if (run->l.store) {
		lg_session_shared(run->l.s, lg_store_windows(run->l.store));
		lg_store_on_state(run->l.store, store_state, &run->l);
		if (run->cfg.store_fail)
			lg_session_store_required(run->l.s, store_is_up,
						  run->l.store);
		store_watch(&run->l);
	} else if (run->store_down[0]) {
		char msg[700];

		snprintf(
			msg, sizeof(msg),
			"the shared store is unavailable (%s): this session counts on this host alone (on_store_error = local)",
			run->store_down);
		lg_session_warn(run->l.s, "store", "store_unavailable", 0,
				"lgrun", msg);
	}
	lg_session_write_state(run->l.s, "running", -1, run->l.child.pid);
	lg_session_on_kill(run->l.s, kill_now, &run->l);
	if (run->cfg.guard.budget.max_processes) {
		run->l.procs_at = lg_mono_ms() + PROCS_TICK_MS;
		if (run->cg.ok) {
			char pm[PATH_MAX + 32];

			snprintf(pm, sizeof(pm), "%s/pids.max", run->cg.path);
			LG_AUTOFCLOSE FILE *f = fopen(pm, "we");

			/* the pids controller is on: the kernel enforces */
			if (f)
				fprintf(f, "%u\n",
					run->cfg.guard.budget.max_processes +
						1);
		}
	}
	if (start_notify_thread(&run->l, run->l.nt) < 0) {
		lg_err("cannot start the notify thread");
		lg_tree_kill(&run->cg, KILL_WAIT_MS, &(const char *){ NULL });
		return LG_EXIT_ERROR;
	}
	return 0;
}
