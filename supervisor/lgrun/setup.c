// SPDX-License-Identifier: MIT
#include "run.h"

#include "quarantine/seal.h"

/* In the watchdog, lgrun dead and its tree killed: the index sealed. */
static void seal_after_crash(void)
{
	lg_seal_write(lg_real_ns());
}

/*
 * The state dir as ssh's StrictModes checks a home (store/strict.c): made
 * if missing, else refused, saying what to fix, when it, a folder above
 * it or what lgrun opens in it is another user's, open to others, or a
 * symlink; so are a configured audit_log and metrics_file.
 */

static int check_state(struct run *run)
{
	struct lg_error err;
	LG_AUTOCLOSE int dfd = lg_state_open(run->state_dir, true, &err);

	if (dfd < 0 ||
	    lg_state_check_entries(dfd, run->state_dir, run->id, &err) < 0 ||
	    (run->cfg.audit_log &&
	     lg_state_check_file(run->cfg.audit_log, &err) < 0) ||
	    (run->cfg.metrics_file &&
	     lg_state_check_file(run->cfg.metrics_file, &err) < 0)) {
		lg_err("%s", err.msg);
		return LG_EXIT_ERROR;
	}
	if (mkdirat(dfd, "sessions", 0750) < 0 && errno != EEXIST) {
		lg_err("cannot create %s/sessions: %s (set LGRUN_STATE_DIR=DIR, which lgctl reads too, or pass --state-dir DIR, to use another)",
		       run->state_dir, strerror(errno));
		return LG_EXIT_ERROR;
	}
	return 0;
}

/*
 * The configuration: the file, the profile and the agent's section, then
 * the command line over it; the state dir, the session's id.
 */
int configure(struct run *run)
{
	struct lg_error err;
	int r, fallback;

	run->agent = run->o.agent ? run->o.agent :
				    lg_path_basename(run->o.argv[0]);
	lg_config_init(&run->cfg);
	if (lg_config_load(&run->cfg, run->o.config, run->o.profile, run->agent,
			   &err) < 0) {
		lg_err("%s", err.msg);
		return LG_EXIT_ERROR;
	}
	/* the command line over the file, each by its key's parser */
	for (size_t i = 0; i < run->o.nsets; i++)
		if (lg_config_set_option(&run->cfg, run->o.sets[i].opt,
					 run->o.sets[i].arg, &err) < 0) {
			lg_err("%s", err.msg);
			return LG_EXIT_ERROR;
		}
	if (lg_config_finish(&run->cfg, &err) < 0) {
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

	/* the session's id checked before anything is made for it */
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
	fallback = lg_state_dir_resolve(run->o.state_dir, &run->cfg,
					run->state_dir, sizeof(run->state_dir),
					&err);
	if (fallback < 0) {
		lg_err("%s", err.msg);
		return LG_EXIT_ERROR;
	}
	if (fallback) {
		r = lg_state_prepare_private(run->state_dir);
		if (r < 0) {
			lg_err("no home to keep lgrun's state in (HOME=%s), and %s cannot be used: %s. Set LGRUN_STATE_DIR=DIR (lgctl reads it too) to a folder of this user's",
			       getenv("HOME") ? getenv("HOME") : "",
			       run->state_dir,
			       r == -EPERM ?
				       "it belongs to another user or is open to others" :
			       r == -ENOTDIR ?
				       "it is a symlink or not a folder" :
				       strerror(-r));
			return LG_EXIT_ERROR;
		}
		lg_info("the state dir is %s: no home this user may write (HOME=%s); set LGRUN_STATE_DIR to keep it elsewhere",
			run->state_dir, getenv("HOME") ? getenv("HOME") : "");
	}
	return check_state(run);
}

/*
 * A blocked session stays blocked: the store's marker (the truth when
 * there is one) or the state dir's. The store is opened here.
 */
int check_blocked(struct run *run)
{
	int r;

	if (run->cfg.store_redis) {
		struct lg_error why;
		char host[128] = "?";
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
		if (lg_store_open(&run->l.store.store, &sc, &why) < 0) {
			if (run->cfg.store_fail) {
				lg_err("the shared store is unavailable: %s (set [store] on_store_error = local to run on this host's counts alone)",
				       why.msg);
				return LG_EXIT_ERROR;
			}
			snprintf(run->store_down, sizeof(run->store_down), "%s",
				 why.msg);
			lg_warn("the shared store is unavailable: %s; counting on this host alone (on_store_error = local)",
				why.msg);
		}
	}
	{
		char marker[4096], reason[256], summary[512], when[64];

		/* With a store its marker is the truth: a reset elsewhere
		 * clears this host's too. */
		r = run->l.store.store ?
			    lg_store_killed(run->l.store.store, marker,
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

/* The options that set keys, as the session recording's head keeps them. */
static const char *options_json(struct run *run)
{
	struct lg_json j = { 0 };

	lg_json_append(&j, "[", 1);
	for (size_t i = 0; i < run->o.nsets; i++) {
		if (i)
			lg_json_append(&j, ",", 1);
		lg_json_append(&j, "[", 1);
		lg_json_quote(&j, run->o.sets[i].opt->name);
		lg_json_append(&j, ",", 1);
		if (run->o.sets[i].arg)
			lg_json_quote(&j, run->o.sets[i].arg);
		else
			lg_json_append(&j, "null", 4);
		lg_json_append(&j, "]", 1);
	}
	lg_json_append(&j, "]", 1);
	snprintf(run->options_json, sizeof(run->options_json), "%s",
		 j.buf && j.len < sizeof(run->options_json) ? j.buf : "[]");
	lg_json_free(&j);
	return run->options_json;
}

/*
 * The session's identity (paths, flow id) and the filter; the CA starts
 * being made on its thread.
 */
int prepare(struct run *run)
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
	run->info.options = options_json(run);
	run->info.flow = run->flow_id;
	run->info.name = run->o.session ? run->o.session : run->agent;
	run->info.state_dir = run->state_dir;
	run->info.audit_path = run->cfg.audit_log ? run->cfg.audit_log :
						    run->audit_path;
	run->info.metrics_path = run->cfg.metrics_file ? run->cfg.metrics_file :
							 run->metrics_path;

	{
		unsigned sc = run->cfg.syscalls;

		if (run->cfg.quarantine && run->cfg.quarantine_keep_writes)
			sc |= LG_SC_KEEP_WRITES;
		/*
		 * a static program's syscalls traced from its exec on; the
		 * command line of a CLI that deletes off this host read there
		 */
		if ((run->cfg.bpf_mode != LG_BPF_OFF && lg_may_load_bpf()) ||
		    run->cfg.remote)
			sc |= LG_SC_EXEC;
		if (lg_filter_build(sc, &run->filter) < 0)
			return LG_EXIT_ERROR;
	}
	return 0;
}

/*
 * Signals and the loop's fds: what the main thread waits on.
 */
int setup_loop_fds(struct run *run)
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
	run->l.tree.sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	run->l.efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	errno = 0;
	if (run->l.tree.sfd < 0 || run->l.efd < 0 ||
	    (errno = -lg_sources_init(&run->l.src)) != 0) {
		lg_err("cannot set up the event loop: %s", strerror(errno));
		return LG_EXIT_ERROR;
	}
	return 0;
}

/*
 * The cgroup and the watchdog: as early as they can be (the config read,
 * the session not blocked), when lgrun is at its smallest. The fork
 * copies less, and what lgrun writes afterwards into memory it had then
 * (the filter's build, the session) is copied again on write: the
 * watchdog holds its copy for the whole session.
 */
int setup_watchdog(struct run *run)
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
	run->l.state_dir = run->state_dir;
	run->info.cgroup = run->cg.ok ? run->cg.path : NULL;
	/*
	 * A fork of lgrun as it is now, before the tree, the proxies and the
	 * CA's thread: lgrun's one thread (glibc's fork leaves malloc usable
	 * in the child), its signals blocked (setup_loop_fds), as they stay
	 * in the watchdog: a Ctrl-C is lgrun's to handle.
	 */
	{
		int r;

		/* the quarantine's index lines, the watchdog's if lgrun dies */
		if (run->cfg.quarantine) {
			run->spill =
				lg_spill_new(SPILL_BYTES, lg_quarantine_line);
			/* its key, in memory only, the watchdog's too */
			if (lg_seal_init(run->state_dir, run->id) == 0)
				lg_watchdog_after(seal_after_crash);
			else
				lg_warn("the quarantine index cannot be sealed (no random key): a restore will refuse its lines");
		}
		run->info.spill = run->spill;
		/* and the recording's lines and held events */
		if (run->cfg.record_events)
			run->rec_spill = lg_record_spill();
		run->info.rec_spill = run->rec_spill;
		r = lg_watchdog_start(&run->wd, &run->cg, run->state_dir,
				      run->id, run->spill, run->rec_spill);

		if (r < 0)
			lg_warn("no watchdog (%s): if lgrun is killed, what the session started may outlive it",
				strerror(-r));
	}
	return 0;
}

/*
 * The session's sink (guard/sink.h): its functions, for sources that do
 * not include it. Each a direct call (a tail call once compiled).
 */
static int sink_feed(void *s, const struct lg_event *ev,
		     struct lg_session_verdict *v)
{
	return lg_session_feed(s, ev, v);
}

static int sink_refusal(void *s)
{
	return lg_session_refusal(s);
}

static void sink_defer_kill(void *s, bool defer)
{
	lg_session_defer_kill(s, defer);
}

static bool sink_reads_commands(void *s)
{
	return lg_session_cli_on(s);
}

static bool sink_reads_command_of(void *s, const char *program)
{
	return lg_session_exec_wanted(s, program);
}

static void make_sink(struct loop *l)
{
	struct lg_session_view v;

	lg_session_view(l->s, &v); /* its strings live as long as it */
	l->sink = (struct lg_sink){ .feed = sink_feed,
				    .refusal = sink_refusal,
				    .defer_kill = sink_defer_kill,
				    .reads_commands = sink_reads_commands,
				    .reads_command_of = sink_reads_command_of,
				    .flow = v.flow,
				    .name = v.name,
				    .ignore_keys = v.ignore_keys,
				    .ctx = l->s };
}

/*
 * The shim's library, the control socket's path, the session and its sink.
 */
int setup_session(struct run *run)
{
	if (!run->cfg.shim)
		lg_info("the shim is off ([shim] enabled = false)");
	else if (!lg_libdir_file("liblgshim.so", run->shim_path,
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
		/* what the tree makes is stamped after this */
		run->info.start_real_ns = lg_real_ns();
		lg_real_start_after(run_dir, run->info.start_real_ns);
	}
	run->info.start_mono_ms = lg_mono_ms();
	run->l.s = lg_session_new(&run->cfg, &run->info);
	if (!run->l.s) {
		lg_err("out of memory");
		return LG_EXIT_ERROR;
	}
	make_sink(&run->l);
	return 0;
}
