// SPDX-License-Identifier: MIT
/*
 * lgrun: run a command under the loop guard. Sets up, launches, then runs
 * one epoll loop over the seccomp listener, signals and timers until the
 * command's tree is gone or the guard trips.
 */
#include "run.h"

struct opts {
	const char *config, *profile, *agent, *session, *state_dir;
	const char *timeout, *bpf;
	bool observe, watch_output;
	int verbose;
	char **argv;
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: lgrun [OPTIONS] -- COMMAND [ARGS...]\n"
		"Run COMMAND (an AI agent, or anything it drives) under the loop guard:\n"
		"destructive file syscalls of the whole process tree are checked, and a\n"
		"destructive loop is refused, the tree killed, the trip audited.\n"
		"\n"
		"  -c, --config FILE     config file (default: $LGRUN_CONFIG, else %s/lgrun.ini)\n"
		"  -p, --profile NAME    apply a profile (e.g. ci, bulk-cleanup)\n"
		"  -a, --agent NAME      agent name: picks [agent NAME] overrides (default: COMMAND's name)\n"
		"  -s, --session ID      session id; a killed session refuses to start until reset\n"
		"  -d, --state-dir DIR   killed markers, audit log, metrics (default: $LGRUN_STATE_DIR,\n"
		"                        else /var/lib/lgrun as root, else $XDG_STATE_HOME/lgrun)\n"
		"  -t, --timeout DUR     wall-clock budget, e.g. 90s, 10m (budget.timeout)\n"
		"  -n, --observe         dry run: never deny or kill, audit what would have tripped\n"
		"      --watch-output    pass stdout/stderr through lgrun to watch for repeated output\n"
		"      --bpf MODE        the eBPF observer: auto (default: if it can load), on, off\n"
		"  -v, --verbose         more output (-vv: every destructive attempt)\n"
		"  -h, --help            this help\n"
		"  -V, --version         version\n"
		"\n"
		"Exit status: the command's (128+N if killed by signal N); 86 the guard tripped;\n"
		"87 the session is blocked (lgctl reset ID); 88 the guard tripped but the block\n"
		"could not be written; 125 lgrun's own error; 126 command not executable;\n"
		"127 command not found.\n",
		LG_SYSCONFDIR);
}

static int parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "profile", required_argument, NULL, 'p' },
		{ "agent", required_argument, NULL, 'a' },
		{ "session", required_argument, NULL, 's' },
		{ "state-dir", required_argument, NULL, 'd' },
		{ "timeout", required_argument, NULL, 't' },
		{ "observe", no_argument, NULL, 'n' },
		{ "watch-output", no_argument, NULL, 'W' },
		{ "bpf", required_argument, NULL, 'B' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	memset(o, 0, sizeof(*o));
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+c:p:a:s:d:t:nvhV", lo, NULL)) !=
	       -1) {
		switch (c) {
		case 'c':
			o->config = optarg;
			break;
		case 'p':
			o->profile = optarg;
			break;
		case 'a':
			o->agent = optarg;
			break;
		case 's':
			o->session = optarg;
			break;
		case 'd':
			o->state_dir = optarg;
			break;
		case 't':
			o->timeout = optarg;
			break;
		case 'n':
			o->observe = true;
			break;
		case 'W':
			o->watch_output = true;
			break;
		case 'B':
			o->bpf = optarg;
			break;
		case 'v':
			o->verbose++;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case 'V':
			printf("lgrun %s\n", LG_VERSION);
			exit(0);
		default:
			if (optopt)
				lg_err("option '-%c' %s; see lgrun --help",
				       optopt,
				       strchr("cpasdt", optopt) ?
					       "needs a value" :
					       "is unknown");
			else
				lg_err("unknown option '%s'; see lgrun --help",
				       argv[optind - 1]);
			return -1;
		}
	}
	if (optind >= argc) {
		lg_err("no command given: lgrun [OPTIONS] -- COMMAND [ARGS...]");
		return -1;
	}
	o->argv = argv + optind;
	return 0;
}

/* Descriptors 0-2 must exist: libseccomp mistakes a listener on fd 0. */
static void ensure_std_fds(void)
{
	for (int fd = 0; fd < 3; fd++) {
		if (fcntl(fd, F_GETFD) < 0) {
			int n = open("/dev/null", O_RDWR);

			if (n >= 0 && n != fd) {
				dup2(n, fd);
				close(n);
			}
		}
	}
}

/*
 * Inside a session already: the enclosing supervisor's filter covers us.
 * Register as a child session of its flow (refused: exit 86 with the
 * reason), then become the command.
 */
static int run_nested(const struct opts *o, const char *sock, const char *flow)
{
	const char *name = o->session ? o->session :
			   o->agent   ? o->agent :
					lg_path_basename(o->argv[0]);
	char why[1024];
	int r;

	if (o->timeout || o->observe || o->watch_output || o->config ||
	    o->profile || o->state_dir)
		lg_warn("inside a session: --timeout, --observe, --watch-output, --config, --profile and --state-dir of a nested lgrun are ignored; the enclosing session's settings apply");
	r = lg_nested_enter(sock, flow, name, why, sizeof(why));
	if (r < 0) {
		lg_err("inside a session, but its supervisor (%s) cannot be asked: %s; not starting '%s'",
		       sock, strerror(-r), o->argv[0]);
		return LG_EXIT_ERROR;
	}
	if (r > 0) {
		lg_err("%s", why[0] ?
				     why :
				     "the enclosing session refused this call");
		lg_err("'%s' was not started", name);
		if (!*flow)
			fprintf(stderr,
				"lgrun: LGRUN_FLOW (the flow's correlation id) was not in the environment: keep LGRUN_FLOW and LGRUN_SOCK when starting lgrun inside a session\n");
		if (!o->session && !o->agent && strstr(why, "self-calls"))
			fprintf(stderr,
				"lgrun: the nested session was named after its command ('%s'); if this is not an agent calling itself, name it: lgrun --agent NAME -- ...\n",
				name);
		return LG_EXIT_TRIPPED;
	}
	lg_info("inside the session: '%s' runs as child session '%s'",
		o->argv[0], name);
	execvp(o->argv[0], o->argv);
	lg_err("cannot execute '%s': %s", o->argv[0], strerror(errno));
	return errno == ENOENT ? LG_EXIT_NOTFOUND : LG_EXIT_NOEXEC;
}

/* Frees what make_env() added; the rest is environ's. */
static void free_env(char **env, size_t ours_from)
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
	char *v = NULL, *kv;
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
	free(v);
	if (r < 0)
		return -ENOMEM;
	set[n] = kv;
	set[n + 1] = NULL;
	return 0;
}

/* A file of ours in <bindir>/../lib: the shim, the proxy library. */
bool libdir_file(const char *name, char *out, size_t size)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;

	if (n <= 0)
		return false;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return false;
	*slash = '\0';
	snprintf(out, size, "%s/../lib/%s", exe, name);
	return access(out, R_OK) == 0;
}

static int exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return LG_EXIT_ERROR;
}

/* What main sets up, phase by phase, and tears down. */
struct run {
	struct opts o;
	struct lg_config cfg;
	struct lg_session_info info;
	struct loop l;
	struct lg_cgroup cg;
	struct lg_bpf filter;
	char state_dir[PATH_MAX], audit_path[PATH_MAX + 16];
	char metrics_path[PATH_MAX + 16], gen_id[96];
	char flow_id[33];
	char store_self[64], store_down[600];
	char shim_path[PATH_MAX + 32], sock_path[PATH_MAX + 32];
	struct lg_proxy_route routes[16];
	size_t nroutes;
	const char *id, *agent;
	char **env; /* made, until the launch */
	size_t env_ours;
	bool cg_made;
	bool readers_left, egress_left; /* threads that may still use them */
};

/*
 * The configuration: the file, the profile and the agent's section, then
 * the command line over it; the state dir, the session's id.
 */
static int configure(struct run *run)
{
	struct lg_error err;
	int r;

	run->agent = run->o.agent ? run->o.agent :
				    lg_path_basename(run->o.argv[0]);
	lg_config_init(&run->cfg);
	if (lg_config_load(&run->cfg, run->o.config, run->o.profile, run->agent,
			   &err) < 0 ||
	    lg_config_finish(&run->cfg, &err) < 0) {
		lg_err("%s", err.msg);
		return LG_EXIT_ERROR;
	}
	if (run->cfg.llm_mode == LG_LLM_AUTO) {
		/*
		 * An agent CLI may ignore the base-URL variables (Codex does,
		 * gemini-cli with a Google login does): it gets the egress
		 * proxy too. Any other command pays nothing for it.
		 */
		const char *cli = run->cfg.llm_proxy ?
					  lg_agentenv_is_agent(run->o.argv) :
					  NULL;

		run->cfg.llm_mode = cli ? LG_LLM_BOTH : LG_LLM_BASE_URL;
		if (cli)
			lg_info("llm.mode = auto: both (the command runs %s)",
				cli);
	}
	if (run->o.observe)
		run->cfg.observe = true;
	if (run->o.watch_output)
		run->cfg.watch_output = true;
	if (run->o.bpf) {
		int m = lg_bpf_mode_parse(run->o.bpf);

		if (m < 0) {
			lg_err("--bpf '%s' is not a mode: auto, on or off",
			       run->o.bpf);
			return LG_EXIT_ERROR;
		}
		run->cfg.bpf_mode = m;
	}
	if (run->o.timeout) {
		unsigned long ms;

		if (lg_parse_duration_ms(run->o.timeout, &ms) < 0 || !ms) {
			lg_err("--timeout '%s' is not a duration (e.g. 90s, 10m, 1h)",
			       run->o.timeout);
			return LG_EXIT_ERROR;
		}
		run->cfg.guard.budget.timeout_ms = ms;
	}

	if (lg_state_dir_resolve(run->o.state_dir, &run->cfg, run->state_dir,
				 sizeof(run->state_dir)) < 0) {
		lg_err("no state directory: pass --state-dir DIR or set LGRUN_STATE_DIR");
		return LG_EXIT_ERROR;
	}
	r = lg_state_prepare(run->state_dir);
	if (r < 0) {
		lg_err("cannot create the state directory %s: %s (pass --state-dir DIR to use another)",
		       run->state_dir, strerror(-r));
		return LG_EXIT_ERROR;
	}
	if (run->o.session) {
		if (!lg_session_id_valid(run->o.session)) {
			lg_err("session id '%s' is not valid: use 1-128 letters, digits and . _ : @ + -",
			       run->o.session);
			return LG_EXIT_ERROR;
		}
		run->id = run->o.session;
	} else {
		snprintf(run->gen_id, sizeof(run->gen_id), "%.40s-%lld-%d",
			 lg_session_id_valid(run->agent) ? run->agent : "lg",
			 (long long)(lg_real_ns() / 1000000000LL), getpid());
		run->id = run->gen_id;
	}
	return 0;
}

/*
 * A blocked session stays blocked: the store's marker (the truth when
 * there is one) or the state dir's. The store is opened here.
 */
static int check_blocked(struct run *run)
{
	int r;

	if (run->cfg.store_redis) {
		char why[600], host[128] = "?";
		struct lg_store_cfg sc = { run->cfg.store_url,
					   run->cfg.store_prefix,
					   run->cfg.store_password_env,
					   (unsigned)run->cfg.store_timeout_ms,
					   run->id,
					   run->store_self,
					   run->cfg.store_fail };

		gethostname(host, sizeof(host) - 1);
		snprintf(run->store_self, sizeof(run->store_self), "%.40s:%d",
			 host, getpid());
		if (lg_store_open(&run->l.store, &sc, why, sizeof(why)) < 0) {
			if (run->cfg.store_fail) {
				lg_err("the shared store is unavailable: %s (set [store] on_store_error = local to run on this host's counts alone)",
				       why);
				return LG_EXIT_ERROR;
			}
			snprintf(run->store_down, sizeof(run->store_down), "%s",
				 why);
			lg_warn("the shared store is unavailable: %s; counting on this host alone (on_store_error = local)",
				why);
		}
	}
	{
		char marker[4096], reason[256], summary[512], when[64];

		/* With a store its marker is the truth: a reset elsewhere
		 * clears this host's too. */
		r = run->l.store ? lg_store_killed(run->l.store, marker,
						   sizeof(marker)) :
				   -1;
		if (r == 0 && lg_state_killed(run->state_dir, run->id, summary,
					      sizeof(summary)) > 0) {
			lg_info("session '%s' was reset on another host: its marker here goes too",
				run->id);
			lg_state_reset(run->state_dir, run->id);
		}
		if (r < 0)
			r = lg_state_killed(run->state_dir, run->id, marker,
					    sizeof(marker));
		if (r > 0) {
			lg_json_field(marker, "summary", summary,
				      sizeof(summary));
			lg_json_field(marker, "reason", reason, sizeof(reason));
			lg_json_field(marker, "time", when, sizeof(when));
			fprintf(stderr,
				"lgrun: session '%s' is blocked: session_killed_loop_guard (%s at %s)\n"
				"lgrun: %s\n"
				"lgrun: an operator must reset it before it can run again: lgctl reset %s\n",
				run->id, reason[0] ? reason : "tripped",
				when[0] ? when : "?",
				summary[0] ? summary : "no summary recorded",
				run->id);
			return LG_EXIT_KILLED_SESSION;
		}
	}
	return 0;
}

/*
 * The session's identity (paths, flow id) and the filter; the CA starts
 * being made on its thread.
 */
static int prepare(struct run *run)
{
	if (run->cfg.llm_mode != LG_LLM_BASE_URL || run->cfg.sealed)
		ca_start(&run->l, run->state_dir, run->id);
	snprintf(run->audit_path, sizeof(run->audit_path), "%s/audit.jsonl",
		 run->state_dir);
	snprintf(run->metrics_path, sizeof(run->metrics_path), "%s/lgrun.prom",
		 run->state_dir);
	{
		unsigned char rnd[16];

		if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd)) {
			lg_err("cannot make a flow id: %s", strerror(errno));
			return LG_EXIT_ERROR;
		}
		for (size_t i = 0; i < sizeof(rnd); i++)
			snprintf(run->flow_id + 2 * i, 3, "%02x", rnd[i]);
	}
	run->info.id = run->id;
	run->info.agent = run->agent;
	run->info.flow = run->flow_id;
	run->info.name = run->o.session ? run->o.session : run->agent;
	run->info.state_dir = run->state_dir;
	run->info.audit_path = run->cfg.audit_log ? run->cfg.audit_log :
						    run->audit_path;
	run->info.metrics_path = run->cfg.metrics_file ? run->cfg.metrics_file :
							 run->metrics_path;

	if (lg_filter_build(run->cfg.syscalls, &run->filter) < 0)
		return LG_EXIT_ERROR;
	return 0;
}

/*
 * Signals and the loop's fds: what the main thread waits on.
 */
static int setup_loop_fds(struct run *run)
{
	sigset_t mask;

	lg_launch_raise_nofile();
	/* Orphans of the tree come back to us, so nothing escapes the kill. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGQUIT);
	sigaddset(&mask, SIGWINCH);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	{
		/*
		 * Only the notify thread takes SIGUSR1 (it interrupts it). A
		 * write to a peer that went (the egress proxy's TLS to a
		 * killed agent) fails with EPIPE instead of killing lgrun:
		 * SIGPIPE stays blocked in every thread (the tree gets a clean
		 * mask, launch.c).
		 */
		sigset_t usr1;

		sigemptyset(&usr1);
		sigaddset(&usr1, SIGUSR1);
		sigaddset(&usr1, SIGPIPE);
		sigprocmask(SIG_BLOCK, &usr1, NULL);
	}
	run->l.sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	run->l.epfd = epoll_create1(EPOLL_CLOEXEC);
	run->l.efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	errno = 0;
	if (run->l.sfd < 0 || run->l.epfd < 0 || run->l.efd < 0 ||
	    (errno = -lg_sources_init(&run->l.src, run->l.epfd)) != 0) {
		lg_err("cannot set up the event loop: %s", strerror(errno));
		return LG_EXIT_ERROR;
	}
	return 0;
}

/*
 * The cgroup, the shim's library, the control socket's path, the session.
 */
static int setup_session(struct run *run)
{
	char cgname[200];

	snprintf(cgname, sizeof(cgname), "lgrun-%.128s-%d", run->id, getpid());
	lg_cgroup_create(&run->cg, cgname);
	run->cg_made = true;
	if (!run->cg.ok)
		lg_info("no cgroup for the session (%s); the tree is killed by walking descendants",
			run->cg.why);
	run->l.cg = &run->cg;
	run->l.cfg = &run->cfg;

	if (!run->cfg.shim)
		lg_info("the shim is off ([shim] enabled = false)");
	else if (!libdir_file("liblgshim.so", run->shim_path,
			      sizeof(run->shim_path))) {
		lg_info("no shim next to lgrun (%s): tool calls are not observed",
			run->shim_path);
		run->shim_path[0] = '\0';
	}
	{
		/* the control socket: the shim's, and nested lgruns' */
		char run_dir[PATH_MAX + 8];

		snprintf(run_dir, sizeof(run_dir), "%s/run", run->state_dir);
		mkdir(run_dir, 0700);
		if (snprintf(run->sock_path, sizeof(run->sock_path),
			     "%s/%d.sock", run_dir, getpid()) >= 100)
			snprintf(run->sock_path, sizeof(run->sock_path),
				 "/tmp/lgrun-%d-%d.sock", getuid(), getpid());
	}
	run->info.start_real_ns = lg_real_ns();
	run->info.start_mono_ms = lg_mono_ms();
	run->l.s = lg_session_new(&run->cfg, &run->info);
	if (!run->l.s) {
		lg_err("out of memory");
		return LG_EXIT_ERROR;
	}
	return 0;
}

/*
 * The LLM proxy's routes and socket, the egress proxy, the agent's own
 * settings checked, the control socket.
 */
static int start_proxies(struct run *run)
{
	if (run->cfg.llm_proxy) {
		char perr[256];

		const char *bad = NULL;
		int nr, with_default = 0;

		run->nroutes = lg_proxy_default_routes(run->routes, 16);
		nr = lg_proxy_extra_routes(run->cfg.llm_variables, run->routes,
					   run->nroutes, 16, &bad);
		if (nr < 0) {
			lg_err("llm.variables: cannot read '%.*s': write VARIABLE:FORMAT, the format one of anthropic, openai, gemini (at most 13 more)",
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
			lg_err("llm.decrypt: cannot read '%.*s': write HOST[:FORMAT][=UPSTREAM] or default (" LG_PROXY_DECRYPT_DEFAULT
			       "), each host once, the format anthropic, openai or gemini (needed for a host not in the default list), the upstream an http:// or https:// URL; at most 8 hosts",
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
		run->l.proxy_fd = lg_proxy_listen(&run->l.proxy_port);
		if (run->l.proxy_fd < 0) {
			lg_warn("the LLM proxy is off: cannot listen on 127.0.0.1: %s",
				strerror(-run->l.proxy_fd));
		} else {
			struct epoll_event ev = { .events = EPOLLIN };

			/* served once the agent first connects (load_proxy) */
			ev.data.fd = run->l.proxy_fd;
			epoll_ctl(run->l.epfd, EPOLL_CTL_ADD, run->l.proxy_fd,
				  &ev);
			run->l.routes = run->routes;
			run->l.nroutes = run->nroutes;
			lg_info("LLM proxy on 127.0.0.1:%u", run->l.proxy_port);
		}
		(void)perr;
	}
	if (run->cfg.sealed && geteuid() != 0) {
		lg_err("network.egress = proxy-only needs root (the tree gets a network namespace of its own): run lgrun as root, or set egress = open");
		return LG_EXIT_ERROR;
	}
	if (run->cfg.llm_mode != LG_LLM_BASE_URL || run->cfg.sealed) {
		int fd = lg_proxy_listen(&run->l.egress_port);
		struct lg_egress_cfg ec = { .flow = egress_flow,
					    .decrypt = egress_decrypt,
					    .mitm = egress_mitm,
					    .ctx = &run->l };

		run->l.egress = fd >= 0 ? lg_egress_start(fd, &ec) : NULL;
		if (!run->l.egress) {
			lg_err("llm.mode: cannot start the egress proxy on 127.0.0.1: %s",
			       strerror(fd < 0 ? -fd : errno));
			if (fd >= 0)
				close(fd);
			return LG_EXIT_ERROR;
		}
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

			ev.data.fd = lg_control_listen_fd(run->l.ctl);
			epoll_ctl(run->l.epfd, EPOLL_CTL_ADD, ev.data.fd, &ev);
		}
	}
	return 0;
}

/*
 * The tree's environment: lgrun's variables, the shim, the routes, the
 * proxies and the session CA.
 */
static int build_env(struct run *run)
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
			e |= setvar(set, max, run->routes[i].env,
				    "http://127.0.0.1:%u/%s", run->l.proxy_port,
				    run->routes[i].name);
		if (run->l.egress) {
			static const char *const vars[] = { "HTTP_PROXY",
							    "HTTPS_PROXY",
							    "http_proxy",
							    "https_proxy" };

			for (size_t i = 0; i < 4; i++)
				e |= setvar(set, max, vars[i],
					    "http://127.0.0.1:%u",
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

/*
 * The tree, launched: the observer first with --bpf=on, the output's
 * pipes or pseudo-terminal, lgrun's state protected, the network sealed.
 */
static int launch_tree(struct run *run)
{
	int outp[2] = { -1, -1 }, errp[2] = { -1, -1 }, pty_slave = -1;
	bool err_tty = false;
	int r, exec_errno;

	if (run->cfg.bpf_mode == LG_BPF_ON) {
		char why[300];

		if (observer_start(&run->l, &run->cfg, false, why,
				   sizeof(why)) < 0) {
			lg_err("--bpf=on: %s", why);
			return LG_EXIT_ERROR;
		}
	}

	if (run->cfg.watch_output) {
		/* On a terminal the command still gets one: a pty we read. */
		if (isatty(STDOUT_FILENO)) {
			r = lg_pty_open(isatty(STDIN_FILENO) ? STDIN_FILENO :
							       STDOUT_FILENO,
					STDOUT_FILENO, &run->l.pty_master,
					&pty_slave);
			if (r < 0)
				lg_warn("--watch-output: no pseudo-terminal (%s): the command's output goes through pipes",
					strerror(-r));
		}
		if (pty_slave >= 0) {
			/* a background lgrun leaves the keyboard alone */
			run->l.relay_in = isatty(STDIN_FILENO) &&
					  tcgetpgrp(STDIN_FILENO) == getpgrp();
			err_tty = isatty(STDERR_FILENO);
			lg_launch_set_pty(pty_slave, run->l.relay_in, err_tty);
		}
		if ((pty_slave < 0 && pipe2(outp, O_CLOEXEC) < 0) ||
		    (!err_tty && pipe2(errp, O_CLOEXEC) < 0)) {
			lg_err("--watch-output: cannot make pipes: %s",
			       strerror(errno));
			return LG_EXIT_ERROR;
		}
		lg_launch_set_stdio(outp[1], errp[1]);
	}
	{
		/* lgrun's record, read-only for the tree where we can */
		const char *keep[] = { run->state_dir, run->info.audit_path,
				       run->info.metrics_path };

		lg_launch_isolate(run->cfg.isolate);
		for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++) {
			size_t n = strlen(run->state_dir);

			if (i && keep[i] &&
			    (strncmp(keep[i], run->state_dir, n) == 0 &&
			     keep[i][n] == '/'))
				continue; /* inside the state dir */
			if (keep[i] && access(keep[i], F_OK) == 0)
				lg_launch_protect(keep[i]);
		}
	}
	if (run->cfg.sealed)
		lg_launch_seal(run->l.egress_port);
	r = lg_launch(&run->l.child, run->o.argv, run->env, &run->filter,
		      &run->cg, &exec_errno);
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
	if (run->cfg.watch_output) {
		struct epoll_event ev = { .events = EPOLLIN };

		for (int i = 0; i < 2; i++) {
			if (i ? errp[1] >= 0 : outp[1] >= 0)
				close(i ? errp[1] : outp[1]);
		}
		if (pty_slave >= 0)
			close(pty_slave);
		run->l.out_r[0] = pty_slave >= 0 ? run->l.pty_master : outp[0];
		run->l.out_r[1] = errp[0];
		for (int i = 0; i < 2; i++) {
			if (run->l.out_r[i] < 0)
				continue;
			/* bigger pipes: fewer wake-ups for bulk output */
			if (run->l.out_r[i] != run->l.pty_master)
				fcntl(run->l.out_r[i], F_SETPIPE_SZ, 1 << 20);
			fcntl(run->l.out_r[i], F_SETFL, O_NONBLOCK);
			ev.data.fd = run->l.out_r[i];
			epoll_ctl(run->l.epfd, EPOLL_CTL_ADD, run->l.out_r[i],
				  &ev);
		}
		if (r >= 0 && run->l.relay_in &&
		    lg_tty_raw(STDIN_FILENO, &run->l.saved_tty) == 0) {
			run->l.tty_raw = true;
			lg_log_crlf = isatty(STDERR_FILENO);
			fcntl(run->l.pty_master, F_SETFL, O_NONBLOCK);
			ev.data.fd = STDIN_FILENO;
			epoll_ctl(run->l.epfd, EPOLL_CTL_ADD, STDIN_FILENO,
				  &ev);
		}
	}
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
static int start_watching(struct run *run)
{
	run->l.nt = lg_notifier_new(run->l.child.notify_fd);
	if (!run->l.nt) {
		lg_err("out of memory");
		kill(run->l.child.pid, SIGKILL);
		return LG_EXIT_ERROR;
	}
	if (!lg_notifier_sync_wakeup(run->l.nt))
		lg_dbg("SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP not supported");
	{
		struct epoll_event ev = { .events = EPOLLIN };

		ev.data.fd = run->l.efd;
		epoll_ctl(run->l.epfd, EPOLL_CTL_ADD, run->l.efd, &ev);
		ev.data.fd = run->l.sfd;
		epoll_ctl(run->l.epfd, EPOLL_CTL_ADD, run->l.sfd, &ev);
		add_sources(&run->l);
	}
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
		struct epoll_event ev = { .events = EPOLLIN };

		lg_session_shared(run->l.s, lg_store_windows(run->l.store));
		lg_store_on_state(run->l.store, store_state, &run->l);
		if (run->cfg.store_fail)
			lg_session_store_required(run->l.s, store_is_up,
						  run->l.store);
		ev.data.fd = lg_store_sub_fd(run->l.store);
		if (ev.data.fd >= 0)
			epoll_ctl(run->l.epfd, EPOLL_CTL_ADD, ev.data.fd, &ev);
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
			char pm[PATH_MAX + 32], v[32];
			FILE *f;

			snprintf(pm, sizeof(pm), "%s/pids.max", run->cg.path);
			f = fopen(pm, "we");
			if (f) { /* the pids controller is on: the kernel enforces */
				snprintf(v, sizeof(v), "%u\n",
					 run->cfg.guard.budget.max_processes +
						 1);
				fputs(v, f);
				fclose(f);
			}
		}
	}
	if (start_notify_thread(&run->l, run->l.nt) < 0) {
		lg_err("cannot start the notify thread");
		lg_tree_kill(&run->cg, KILL_WAIT_MS, &(const char *){ NULL });
		return LG_EXIT_ERROR;
	}
	return 0;
}

/*
 * The session ended (rc from the loop): its records, and the exit status.
 */
static int finish(struct run *run, int rc)
{
	drain_output(&run->l);
	restore_terminal(&run->l);
	run->readers_left = !stop_notify_thread(&run->l);
	/* its last flows, before the end record */
	run->egress_left = !lg_egress_stop(run->l.egress);
	run->l.egress = NULL;
	observer_finish(&run->l);
	if (rc == LG_EXIT_TRIPPED || rc == LG_EXIT_UNRECORDED) {
		const char *why = lg_session_trip_reason(run->l.s);

		print_trip(&run->l, run->id, lg_session_trip_summary(run->l.s),
			   run->info.audit_path, run->state_dir);
		/* the one terminal record: how the session ended */
		lg_session_audit_end(run->l.s,
				     why && strcmp(why, "timeout") == 0 ?
					     "timed_out" :
				     why && (strncmp(why, "budget", 6) == 0 ||
					     strncmp(why, "max_", 4) == 0) ?
					     "budget_exceeded" :
					     "tripped",
				     rc, lg_session_trip_summary(run->l.s));
	} else {
		lg_launch_restore_tty(&run->l.child);
		rc = rc < 0 ? LG_EXIT_ERROR : exit_code(run->l.status);
		record_shim_stats(&run->l);
		lg_session_write_state(
			run->l.s, run->l.got_signal ? "cancelled" : "exited",
			rc, run->l.child.pid);
		lg_session_write_metrics(run->l.s);
		{
			char why[128];

			if (run->l.got_signal)
				snprintf(why, sizeof(why),
					 "cancelled by %s, exit status %d",
					 strsignal(run->l.got_signal), rc);
			else
				snprintf(why, sizeof(why),
					 "completed, exit status %d", rc);
			lg_session_audit_end(
				run->l.s,
				run->l.got_signal ? "cancelled" :
				rc == LG_EXIT_ERROR && run->l.status == 0 ?
						    "error" :
						    "completed",
				rc, why);
		}
		{
			struct lg_session_stats st;

			lg_session_stats(run->l.s, &st);
			if (st.would_trip)
				fprintf(stderr,
					"lgrun: observe mode: the guard would have tripped %llu time(s); see %s\n",
					(unsigned long long)st.would_trip,
					run->info.audit_path);
		}
	}
	return rc;
}

/* Everything main made, released in every case. */
static void teardown(struct run *run)
{
	ca_wait(&run->l, false); /* an error while it was being made */
	restore_terminal(&run->l);
	run->egress_left |=
		!lg_egress_stop(run->l.egress); /* NULL once stopped */
	if (run->l.ca_path[0])
		unlink(run->l.ca_path);
	if (run->l.bundle_path[0])
		unlink(run->l.bundle_path);
	if (run->l.ca && !run->readers_left && !run->egress_left)
		run->l.tls->ca_free(run->l.ca);
	if (run->env) /* an error between making it and the launch */
		free_env(run->env, run->env_ours);
	/* each source's finish; what was made before they were added: here */
	lg_sources_finish(&run->l.src);
	observer_free(&run->l);
	store_free(&run->l);
	lg_filter_free(&run->filter); /* a no-op once the launch took it */
	proxy_free(&run->l);
	control_free(&run->l);
	if (run->cg_made)
		lg_cgroup_destroy(&run->cg);
	if (!run->readers_left &&
	    !run->egress_left) { /* else a notify thread may still use them */
		lg_notifier_free(run->l.nt);
		lg_session_free(run->l.s);
		lg_config_free(&run->cfg);
	}
}

int main(int argc, char **argv)
{
	/* one per process: large, and what every phase shares */
	static struct run R = { .l = { .proxy_fd = -1,
				       .out_r = { -1, -1 },
				       .pty_master = -1,
				       .src.tfd = -1 } };
	struct run *run = &R;
	int rc;

	ensure_std_fds();
	if (parse_args(argc, argv, &run->o) < 0)
		return LG_EXIT_ERROR;
	lg_log_verbosity = LG_LOG_WARN + run->o.verbose;

	{
		char sock[PATH_MAX], flow[128];

		if (lg_nested_find(sock, sizeof(sock), flow, sizeof(flow)))
			return run_nested(&run->o, sock, flow);
	}

	if ((rc = configure(run)) || (rc = check_blocked(run)) ||
	    (rc = prepare(run)) || (rc = setup_loop_fds(run)) ||
	    (rc = setup_session(run)) || (rc = start_proxies(run)) ||
	    (rc = build_env(run)) || (rc = launch_tree(run)) ||
	    (rc = start_watching(run))) {
		teardown(run);
		return rc;
	}
	rc = finish(run, event_loop(&run->l));
	teardown(run);
	return rc;
}
