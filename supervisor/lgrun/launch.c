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
 * The proxies and the control socket: the LLM proxy's routes and socket,
 * the egress proxy, the agent's own settings checked, the control socket.
 */
int start_proxies(struct run *run)
{
	bool egress = run->cfg.llm_mode != LG_LLM_BASE_URL || run->cfg.sealed;
	int r = run->cfg.llm_proxy || egress ? make_secret(&run->l) : 0;

	if (r < 0) {
		lg_err("cannot make the session's secret for its proxies: %s",
		       strerror(-r));
		return LG_EXIT_ERROR;
	}
	if (run->cfg.llm_proxy && (r = proxy_start(&run->l)) != 0)
		return r;
	if (run->cfg.sealed && geteuid() != 0) {
		lg_err("network.egress = proxy-only needs root (the tree gets a network namespace of its own): run lgrun as root, or set egress = open");
		return LG_EXIT_ERROR;
	}
	if (egress && (r = egress_start(&run->l)) != 0)
		return r;
	if (run->cfg.llm_proxy)
		proxy_check_agent_settings(&run->l);
	if (run->sock_path[0])
		return control_start(&run->l, run->sock_path);
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
		if (run->l.ctl.ctl)
			e |= setvar(set, max, "LGRUN_SOCK", "%s",
				    lg_control_path(run->l.ctl.ctl));
		if (run->l.ctl.ctl && run->shim_path[0]) {
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
		if (run->l.proxy.fd >= 0)
			e |= setvar(set, max, "LGRUN_PROXY_PORT", "%u",
				    run->l.proxy.port);
		/* base URLs on our loopback: out of a sealed tree's reach */
		for (size_t i = 0; run->l.proxy.fd >= 0 && !run->cfg.sealed &&
				   run->cfg.llm_mode != LG_LLM_PROXY &&
				   i < run->l.proxy.nroutes;
		     i++)
			if (run->l.proxy.routes[i].env[0])
				e |= setvar(set, max,
					    run->l.proxy.routes[i].env,
					    "http://127.0.0.1:%u/%s/%s",
					    run->l.proxy.port, run->l.secret,
					    run->l.proxy.routes[i].name);
		if (run->l.egress.egress) {
			static const char *const vars[] = { "HTTP_PROXY",
							    "HTTPS_PROXY",
							    "http_proxy",
							    "https_proxy" };

			for (size_t i = 0; i < 4; i++)
				e |= setvar(set, max, vars[i],
					    "http://%s:%s@127.0.0.1:%u",
					    LG_EGRESS_USER, run->l.secret,
					    run->l.egress.port);
			/*
			 * Set and empty, not unset: gemini-cli's .env files
			 * fill only variables that are unset.
			 */
			e |= setvar(set, max, "NO_PROXY", "%s", "");
			e |= setvar(set, max, "no_proxy", "%s", "");
			if (run->l.egress.ca) {
				/*
				 * Node and Codex add the CA to what they
				 * trust; the others replace their store: the
				 * system's with the CA appended.
				 */
				e |= setvar(set, max, "NODE_EXTRA_CA_CERTS",
					    "%s", run->l.egress.ca_path);
				e |= setvar(set, max, "CODEX_CA_CERTIFICATE",
					    "%s", run->l.egress.ca_path);
				e |= setvar(set, max, "SSL_CERT_FILE", "%s",
					    run->l.egress.bundle_path);
				e |= setvar(set, max, "REQUESTS_CA_BUNDLE",
					    "%s", run->l.egress.bundle_path);
				e |= setvar(set, max, "CURL_CA_BUNDLE", "%s",
					    run->l.egress.bundle_path);
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

/* What the command's file is (lg_image_flags), found as the launch will. */
static unsigned command_image(const char *cmd)
{
	char file[PATH_MAX];

	return lg_launch_which(cmd, file, sizeof(file)) == 0 ?
		       lg_image_flags(AT_FDCWD, file) :
		       0;
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
	if (run->cfg.bpf_mode != LG_BPF_OFF && lg_may_load_bpf())
		img = command_image(run->o.argv[0]);
	if (run->cfg.bpf_mode == LG_BPF_ON || img) {
		struct lg_error why;

		if (observer_start(&run->l, false, &why) < 0) {
			if (run->cfg.bpf_mode == LG_BPF_ON) {
				lg_err("--bpf=on: %s", why.msg);
				return LG_EXIT_ERROR;
			}
			lg_info("the eBPF observer is off: %s", why.msg);
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
			lg_observer_watch_syscalls(run->l.observer.obs, say);
		}
	}
	if (run->cfg.watch_output) {
		r = output_ends(&run->l, &ends);
		if (r) {
			/* ours too: nobody reads them */
			lg_closep(&ends.out[0]);
			lg_closep(&ends.err[0]);
			return r;
		}
	}
	protect_state(run);
	if (run->cfg.sealed)
		lg_launch_seal(run->l.egress.port);
	r = lg_launch(&run->l.child, run->o.argv, run->env, &run->filter,
		      &run->cg, &exec_errno);
	if (r >= 0)
		lg_watchdog_tree(&run->wd, run->l.child.pid);
	if (r >= 0 && run->l.child.args_way == LG_PROCMEM_FILE)
		lg_info("the tree's syscall arguments are read through /proc/PID/mem (%s%s)",
			run->l.child.args_vm_err == -ENOTSUP ?
				"LGRUN_ARGS_VIA=proc" :
				"process_vm_readv was refused: ",
			run->l.child.args_vm_err == -ENOTSUP ?
				"" :
				strerror(-run->l.child.args_vm_err));
	if (r >= 0 && run->l.child.sealed_fd >= 0) {
		lg_egress_listen_also(run->l.egress.egress,
				      run->l.child.sealed_fd);
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
		output_watch(&run->l, &ends, r >= 0);
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
 * lgctl doctor's verdict for this session, in one line (-v): what guards
 * it here, each layer as it took effect.
 */
static void say_verdict(struct run *run, bool sync_wakeup)
{
	const struct lg_child *c = &run->l.child;
	const char *bpf = run->l.observer.obs ? "on" :
			  run->l.observer.bpf_at ?
						"loaded if the session lasts" :
						"off";

	lg_info("protected here: seccomp notify%s; arguments through %s; the tree killed by %s; eBPF %s; lgrun's state %s (lgctl doctor says more)",
		sync_wakeup ? " with sync wake-up" : "",
		lg_procmem_way_name((enum lg_procmem_way)c->args_way),
		c->in_cgroup ? "cgroup.kill" : "a walk of its descendants", bpf,
		(c->isolated & LG_ISOLATED_STATE) ?
			"read-only in the tree's mounts" :
			"guarded by the filter only");
}

/*
 * The tree runs: the notify thread, the loop's sources, the observer, the
 * store, the signals and the process budget wired in.
 */
int start_watching(struct run *run)
{
	bool sync_wakeup;

	run->l.notify.nt =
		lg_notifier_new(run->l.child.notify_fd, &run->l.sink);
	if (!run->l.notify.nt) {
		lg_err("out of memory");
		kill(run->l.child.pid, SIGKILL);
		return LG_EXIT_ERROR;
	}
	exec_watch_init(&run->l);
	sync_wakeup = lg_notifier_sync_wakeup(run->l.notify.nt);
	if (!sync_wakeup)
		lg_dbg("SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP not supported");
	add_sources(&run->l);
	lg_info("session %s (agent %s): pid %d%s, %s%s", run->id, run->agent,
		run->l.child.pid, run->cfg.observe ? ", observe mode" : "",
		run->l.child.in_cgroup ? "cgroup " : "no cgroup",
		run->l.child.in_cgroup ? run->cg.path : "");
	observer_at_start(&run->l);
	say_verdict(run, sync_wakeup);
	run->l.id = run->id;
	store_start(&run->l, run->store_down);
	lg_session_write_state(run->l.s, "running", -1, run->l.child.pid);
	lg_session_bind(run->l.s,
			&(struct lg_session_hooks){ .on_kill = kill_now,
						    .on_kill_ctx = &run->l });
	tree_start(&run->l);
	if (start_notify_thread(&run->l, run->l.notify.nt) < 0) {
		lg_err("cannot start the notify thread");
		lg_tree_kill(&run->cg, KILL_WAIT_MS, &(const char *){ NULL });
		return LG_EXIT_ERROR;
	}
	return 0;
}
