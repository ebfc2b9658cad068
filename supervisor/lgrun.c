// SPDX-License-Identifier: MIT
/*
 * lgrun: run a command under the loop guard. Sets up, launches, then runs
 * one epoll loop over the seccomp listener, signals and timers until the
 * command's tree is gone or the guard trips.
 */
#include "run.h"

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
