// SPDX-License-Identifier: MIT
/*
 * lgrun: run a command under the loop guard. Sets up, launches, then runs
 * one epoll loop over the seccomp listener, signals and timers until the
 * command's tree is gone or the guard trips.
 */
#include "lib/cleanup.h"
#include "run.h"
#include "quarantine/index.h"
#include "lib/text.h"

static void usage(FILE *f)
{
	fputs("Usage: lgrun [OPTIONS] -- COMMAND [ARGS...]\n"
	      "Run COMMAND (an AI agent, or anything it drives) under the loop guard:\n"
	      "destructive file syscalls of the whole process tree are checked, and a\n"
	      "destructive loop is refused, the tree killed, the trip audited.\n"
	      "\n",
	      f);
	for (const struct lg_option *o = lg_options; o->name; o++) {
		char head[64];
		int n = snprintf(head, sizeof(head), "  %c%c%c --%s%s%s",
				 o->short_name ? '-' : ' ',
				 o->short_name ? o->short_name : ' ',
				 o->short_name ? ',' : ' ', o->name,
				 o->arg ? " " : "", o->arg ? o->arg : "");

		const char *last = strrchr(o->help, '\n');
		size_t col = 24 + strlen(last ? last + 1 : o->help);

		fprintf(f, "%s%*s", head, n < 24 ? 24 - n : 1, "");
		for (const char *p = o->help; *p; p++) {
			fputc(*p, f);
			if (*p == '\n')
				fprintf(f, "%24s", "");
		}
		if (o->section) /* what it sets, in the config file's words */
			fprintf(f, "%s(%s.%s)",
				col + strlen(o->section) + strlen(o->key) + 4 >
						80 ?
					"\n                        " :
					" ",
				o->section, o->key);
		fputc('\n', f);
	}
	fputs("\n"
	      "Exit status: the command's (128+N if killed by signal N); 86 the guard tripped;\n"
	      "87 the session is blocked (lgctl reset ID); 88 the guard tripped but the block\n"
	      "could not be written; 125 lgrun's own error; 126 command not executable;\n"
	      "127 command not found.\n",
	      f);
}

/* lgrun's own options; the others set config keys, over the file. */
static void own_option(struct opts *o, const struct lg_option *opt,
		       const char *arg)
{
	switch (opt->short_name) {
	case 'c':
		o->config = arg;
		break;
	case 'p':
		o->profile = arg;
		break;
	case 'a':
		o->agent = arg;
		break;
	case 's':
		o->session = arg;
		break;
	case 'd':
		o->state_dir = arg;
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
	}
}

static int parse_args(int argc, char **argv, struct opts *o)
{
	enum { NOPT = 32, BY_INDEX = 256 };
	struct option lo[NOPT + 1];
	char shorts[2 * NOPT + 2] = "+";
	size_t n = 0, ns = 1;
	int c;

	memset(o, 0, sizeof(*o));
	memset(lo, 0, sizeof(lo));
	for (const struct lg_option *opt = lg_options; opt->name && n < NOPT;
	     opt++, n++) {
		lo[n] = (struct option){ opt->name,
					 opt->arg ? required_argument :
						    no_argument,
					 NULL, BY_INDEX + (int)n };
		if (opt->short_name) {
			shorts[ns++] = (char)opt->short_name;
			if (opt->arg)
				shorts[ns++] = ':';
		}
	}
	opterr = 0;
	while ((c = getopt_long(argc, argv, shorts, lo, NULL)) != -1) {
		const struct lg_option *opt = NULL;

		if (c >= BY_INDEX)
			opt = &lg_options[c - BY_INDEX];
		for (size_t i = 0; i < n && !opt && c != '?'; i++)
			if (lg_options[i].short_name == c)
				opt = &lg_options[i];
		if (!opt) {
			const char *needs = NULL;

			for (size_t i = 0; optopt && i < n; i++)
				if (lg_options[i].short_name == optopt)
					needs = lg_options[i].arg;
			if (optopt >= BY_INDEX &&
			    !lg_options[optopt - BY_INDEX].arg)
				lg_err("option '--%s' takes no value; see lgrun --help",
				       lg_options[optopt - BY_INDEX].name);
			else if (optopt && optopt < BY_INDEX)
				lg_err("option '-%c' %s; see lgrun --help",
				       optopt,
				       needs ? "needs a value" : "is unknown");
			else
				lg_err("%s option '%s'; see lgrun --help",
				       optopt ? "a value is missing after" :
						"unknown",
				       argv[optind - 1]);
			return -1;
		}
		if (!opt->section)
			own_option(o, opt, optarg);
		else if (o->nsets < sizeof(o->sets) / sizeof(o->sets[0]))
			o->sets[o->nsets++] =
				(struct opt_set){ opt, optarg ? optarg : "" };
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
	struct lg_error why;
	int r;

	if (o->nsets || o->config || o->profile || o->state_dir)
		lg_warn("inside a session: --%s of a nested lgrun is ignored (so are the config file, the profile, the state dir and the other options that set config keys); the enclosing session's settings apply",
			o->nsets   ? o->sets[0].opt->name :
			o->config  ? "config" :
			o->profile ? "profile" :
				     "state-dir");
	r = lg_nested_enter(sock, flow, name, &why);
	if (r < 0) {
		lg_err("inside a session, but its supervisor (%s) cannot be asked: %s; not starting '%s'",
		       sock, strerror(-r), o->argv[0]);
		return LG_EXIT_ERROR;
	}
	if (r > 0) {
		lg_err("%s", why.msg[0] ?
				     why.msg :
				     "the enclosing session refused this call");
		lg_err("'%s' was not started", name);
		if (!*flow)
			fprintf(stderr,
				"lgrun: LGRUN_FLOW (the flow's correlation id) was not in the environment: keep LGRUN_FLOW and LGRUN_SOCK when starting lgrun inside a session\n");
		if (!o->session && !o->agent && strstr(why.msg, "self-calls"))
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
/* What sessions kept longer than max_age ago goes (lgrun looks hourly). */
static void expire_quarantine(struct run *run)
{
	unsigned n;
	uint64_t bytes;
	char size[32];

	if (!run->cfg.quarantine || !run->state_dir[0] ||
	    lgq_expire(run->state_dir, run->cfg.quarantine_max_age_ms, run->id,
		       &n, &bytes) != 0 ||
	    !n)
		return;
	lg_human_bytes(bytes, size, sizeof(size));
	lg_info("quarantine: %u older session(s) expired (quarantine.max_age), %s freed",
		n, size);
}

static int finish(struct run *run, int rc)
{
	struct lg_session_view v;

	drain_output(&run->l);
	restore_terminal(&run->l);
	run->readers_left = !stop_notify_thread(&run->l);
	/* its last flows, before the end record */
	run->egress_left = !lg_egress_stop(run->l.egress.egress);
	run->l.egress.egress = NULL;
	observer_finish(&run->l);
	/* what is judged once the tree is over: files it left empty */
	if (rc == 0)
		lg_session_feed(run->l.s,
				&(struct lg_event){ .kind = LG_EV_TREE_OVER,
						    .source = LG_SRC_TIMER },
				NULL);
	/*
	 * The last events, read after the tree ended (the observer's ring
	 * above all: a short static program's, and the files it left
	 * empty), may have decided a kill. Nothing is left to stop, but the
	 * session tripped: its trip record, its block and exit status 86, as
	 * its recording says.
	 */
	if (rc == 0 && lg_session_kill_pending(run->l.s)) {
		lg_warn("the command had ended when its last events were judged; they trip the session");
		run->l.trip.after_end = true;
		rc = run_trip(&run->l);
	}
	lg_session_view(run->l.s, &v);
	if (rc == LG_EXIT_TRIPPED || rc == LG_EXIT_UNRECORDED) {
		const char *why = v.trip_reason;

		print_trip(&run->l, run->id, v.trip_summary,
			   run->info.audit_path, run->state_dir);
		/* the one terminal record: how the session ended */
		lg_session_audit_end(run->l.s,
				     why && strcmp(why, "timeout") == 0 ?
					     "timed_out" :
				     why && (strncmp(why, "budget", 6) == 0 ||
					     strncmp(why, "max_", 4) == 0) ?
					     "budget_exceeded" :
					     "tripped",
				     rc, v.trip_summary);
	} else {
		lg_launch_restore_tty(&run->l.child);
		rc = rc < 0 ? LG_EXIT_ERROR : exit_code(run->l.tree.status);
		record_shim_stats(&run->l);
		lg_session_write_state(run->l.s,
				       run->l.tree.got_signal ? "cancelled" :
								"exited",
				       rc, run->l.child.pid);
		lg_session_write_metrics(run->l.s);
		{
			char why[128];

			if (run->l.tree.got_signal)
				snprintf(why, sizeof(why),
					 "cancelled by %s, exit status %d",
					 strsignal(run->l.tree.got_signal), rc);
			else
				snprintf(why, sizeof(why),
					 "completed, exit status %d", rc);
			lg_session_audit_end(
				run->l.s,
				run->l.tree.got_signal ? "cancelled" :
				rc == LG_EXIT_ERROR && run->l.tree.status == 0 ?
							 "error" :
							 "completed",
				rc, why);
		}
		lg_session_view(run->l.s, &v);
		if (v.stats.would_trip)
			fprintf(stderr,
				"lgrun: observe mode: the guard would have tripped %llu time(s); see %s\n",
				(unsigned long long)v.stats.would_trip,
				run->info.audit_path);
	}
	expire_quarantine(run);
	return rc;
}

/* Everything main made, released in every case (main's cleanup). */
static void teardown(struct run **made)
{
	struct run *run = *made;

	ca_wait(&run->l, false); /* an error while it was being made */
	restore_terminal(&run->l);
	run->egress_left |=
		!lg_egress_stop(run->l.egress.egress); /* NULL once stopped */
	if (run->l.egress.ca_path[0])
		unlink(run->l.egress.ca_path);
	if (run->l.egress.bundle_path[0])
		unlink(run->l.egress.bundle_path);
	if (run->l.egress.ca && !run->readers_left && !run->egress_left)
		run->l.egress.tls->ca_free(run->l.egress.ca);
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
	lg_watchdog_done(&run->wd); /* the session is ended: it leaves */
	if (!run->readers_left &&
	    !run->egress_left) { /* else a notify thread may still use them */
		lg_notifier_free(run->l.notify.nt);
		lg_session_free(run->l.s); /* its index lines written */
		lg_spill_free(run->spill);
		lg_spill_free(run->rec_spill);
		lg_config_free(&run->cfg);
	}
}

int main(int argc, char **argv)
{
	/* one per process: large, and what every phase shares */
	static struct run R = {
		.l = { .src = { .epfd = -1, .tfd = -1 },
		       .out = { .r = { -1, -1 }, .pty_master = -1 },
		       .proxy.fd = -1,
		       .ctl.epfd = -1,
		       .store.fd = -1 },
		/* none yet: an early error writes nothing to fd 0 */
		.wd = { .fd = -1, .pidfd = -1 }
	};
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

	{
		/* from here on, everything made is released on the way out */
		struct run *made LG_AUTO(teardown) = run;

		if ((rc = configure(made)) || (rc = check_blocked(made)) ||
		    (rc = setup_loop_fds(made)) ||
		    (rc = setup_watchdog(made)) || (rc = prepare(made)) ||
		    (rc = setup_session(made)) || (rc = start_proxies(made)) ||
		    (rc = build_env(made)) || (rc = launch_tree(made)) ||
		    (rc = start_watching(made)))
			return rc;
		return finish(made, event_loop(&made->l));
	}
}
