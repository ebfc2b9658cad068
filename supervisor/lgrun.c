// SPDX-License-Identifier: MIT
/*
 * lgrun: run a command under the loop guard. Sets up, launches, then runs
 * one epoll loop over the seccomp listener, signals and timers until the
 * command's tree is gone or the guard trips.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "audit.h"
#include "agentenv.h"
#include "cgroup.h"
#include "egress.h"
#include "tls.h"
#include "config.h"
#include "control.h"
#include "proxy.h"
#include "pty.h"
#include "filter.h"
#include "launch.h"
#include "log.h"
#include "nested.h"
#include "notify.h"
#include "observer.h"
#include "pathres.h"
#include "session.h"
#include "sources.h"
#include "state.h"
#include "store.h"
#include "termtext.h"
#include "text.h"

enum lg_exit {
	LG_EXIT_TRIPPED = 86,
	LG_EXIT_KILLED_SESSION = 87,
	LG_EXIT_UNRECORDED = 88, /* tripped, but the block was not written */
	LG_EXIT_ERROR = 125,
	LG_EXIT_NOEXEC = 126,
	LG_EXIT_NOTFOUND = 127,
};

#define KILL_WAIT_MS 5000
/*
 * A read of a target's syscall arguments that has not returned after this
 * long is left to its thread, and a new thread answers the rest.
 */
#define READ_DEADLINE_MS 2000
#define MAX_STUCK_READERS 4 /* then the tree is stopped */
#define STOP_READERS_MS 2000 /* at exit, the wait for notify threads */
#define PROXY_TRIP_GRACE_MS 1500 /* for the agent to show the model error */

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
static bool libdir_file(const char *name, char *out, size_t size)
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
 * Two threads: the notify thread blocks in SECCOMP_IOCTL_NOTIF_RECV and
 * answers (blocking there is what lets the kernel's synchronous wake-up
 * hand the CPU straight between target and supervisor); the main thread
 * runs signals, timers and the kill. The session locks itself.
 */
struct loop {
	struct lg_session *s;
	struct lg_notifier *nt;
	struct lg_cgroup *cg;
	struct lg_child child;
	const struct lg_config *cfg;
	struct lg_control *ctl;
	/* the LLM proxy: a socket from the start, the library on first use */
	int proxy_fd;
	uint16_t proxy_port;
	const struct lg_proxy_route *routes;
	size_t nroutes;
	struct lg_proxy *proxy;
	void (*proxy_stop)(struct lg_proxy *p);
	/* the egress proxy ([llm] mode = proxy or both) */
	struct lg_egress *egress;
	uint16_t egress_port;
	const struct lg_tls_ops *tls; /* liblgtls.so, loaded for it */
	struct lg_ca *ca; /* the session's CA, its key in memory only */
	/*
	 * make_ca runs on this thread while the rest of the session is set up
	 * (OpenSSL's load and the keys cost milliseconds), joined before the
	 * egress proxy starts: nothing reads ca, tls or the paths before.
	 */
	pthread_t ca_thread;
	bool ca_started;
	/* the CA is made (its thread's writes seen): the egress proxy's threads */
	atomic_bool ca_ready;
	char ca_run_dir[PATH_MAX + 8];
	const char *ca_id;
	char ca_path[PATH_MAX], bundle_path[PATH_MAX]; /* removed at exit */
	struct lg_proxy_decrypt decrypt[LG_PROXY_DECRYPT_MAX];
	size_t ndecrypt;
	/* when kill_now() wrote cgroup.kill (monotonic ns; another thread) */
	_Atomic uint64_t kill_started_ns;
	uint64_t procs_at; /* next process count (budget.max_processes) */
	int out_r[2]; /* --watch-output: read ends for the command's 1 and 2 */
	int pty_master; /* --watch-output on a terminal: out_r[0] is this */
	bool relay_in, tty_raw; /* our terminal's keys go to the pty */
	bool no_splice[2]; /* splice(2) cannot write to our stdout, stderr */
	struct lg_observer *obs; /* the eBPF observer, or NULL */
	bool obs_finished;
	uint64_t bpf_at; /* --bpf=auto: when to start loading it */
	struct lg_store *store; /* [store] backend = redis, or NULL */
	const char *id;
	struct termios saved_tty;
	struct lg_termtext term[2];
	/* A trip answered through the proxy: the agent may end its turn first. */
	uint64_t linger_until; /* a refused nested lgrun says why first */
	atomic_uint_fast64_t grace_until;
	int epfd, sfd, efd;
	struct lg_sources src; /* every fd and deadline but the loop's own */
	pthread_t thread;
	bool thread_started;
	atomic_int readers; /* notify threads running, abandoned ones too */
	int survivors; /* after the trip's kill */
	unsigned escaped; /* processes that had left the cgroup, killed */
	int marker_err; /* the killed marker could not be written: -errno */
	int audit_err; /* the trip record could not be written: -errno */
	uint64_t watched_id; /* the notification watch_reader acted on */
	atomic_bool stop;
	bool main_exited, draining;
	int status;
	uint64_t kill_at; /* grace period end after a forwarded signal / drain */
	int got_signal;
};

static void on_usr1(int sig)
{
	(void)sig; /* only interrupts the notify thread's blocking receive */
}

/* One notify thread: the loop, and the notifier it reads with. */
struct reader {
	struct loop *l;
	struct lg_notifier *nt;
};

static void *notify_thread(void *arg)
{
	struct reader *rd = arg;
	struct loop *l = rd->l;
	struct lg_notifier *nt = rd->nt;
	bool told = false;
	sigset_t usr1;

	free(rd);
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_UNBLOCK, &usr1, NULL);
	for (;;) {
		int r;
		bool trip;

		/* Abandoned: its one read done, another thread reads on. */
		if (lg_notifier_abandoned(nt) || atomic_load(&l->stop))
			break;
		r = lg_notifier_recv(nt);
		if (r == -EINTR)
			continue;
		if (r == -ENOENT) {
			/*
			 * A target went away, or none is left: then RECV fails
			 * at once forever. Wait for the next one or the hang-up.
			 */
			struct pollfd pfd = { lg_notifier_fd(nt), POLLIN, 0 };

			if (poll(&pfd, 1, -1) > 0 && (pfd.revents & POLLHUP) &&
			    !(pfd.revents & POLLIN))
				break; /* no filtered task is left */
			continue;
		}
		if (r < 0) {
			lg_dbg("notify: receive: %s", strerror(-r));
			break;
		}
		r = lg_notifier_answer(nt, l->s);
		trip = lg_session_kill_pending(l->s);
		if (r < 0)
			lg_dbg("notify: answer: %s", strerror(-r));
		if (trip && !told) {
			uint64_t one = 1;

			told = true;
			if (write(l->efd, &one, sizeof(one)) < 0)
				lg_err("cannot wake the main loop: %s",
				       strerror(errno));
		}
	}
	if (lg_notifier_abandoned(nt))
		lg_notifier_free(nt); /* the main thread has its spare */
	atomic_fetch_sub(&l->readers, 1);
	return NULL;
}

static int start_notify_thread(struct loop *l, struct lg_notifier *nt)
{
	struct sigaction sa = { .sa_handler = on_usr1 }; /* no SA_RESTART */
	struct reader *rd = malloc(sizeof(*rd));
	int r;

	if (!rd)
		return -ENOMEM;
	*rd = (struct reader){ l, nt };
	sigaction(SIGUSR1, &sa, NULL);
	atomic_fetch_add(&l->readers, 1);
	r = pthread_create(&l->thread, NULL, notify_thread, rd);
	if (r) {
		atomic_fetch_sub(&l->readers, 1);
		free(rd);
		return -r;
	}
	l->thread_started = true;
	return 0;
}

/*
 * Stops the notify threads. A read of a target's memory cannot be
 * interrupted (a userfaultfd page served from outside the tree): after a
 * while, a thread still reading is left to our exit. True when none is
 * left, so that the session may be freed.
 */
static bool stop_notify_thread(struct loop *l)
{
	uint64_t until = lg_mono_ms() + STOP_READERS_MS;

	atomic_store(&l->stop, true);
	if (l->thread_started) {
		pthread_kill(l->thread, SIGUSR1);
		pthread_detach(l->thread);
		l->thread_started = false;
	}
	while (atomic_load(&l->readers) > 0) {
		if (lg_mono_ms() >= until) {
			lg_dbg("%d notify thread(s) still reading a target: left to exit",
			       (int)atomic_load(&l->readers));
			return false;
		}
		usleep(2000);
	}
	return true;
}

/*
 * The notify thread has been reading one target's memory for too long: a
 * page that is served late or never (userfaultfd). The kernel would wait
 * as long for it, so that op waits too; but the rest of the tree must not:
 * leave the thread to its read (it answers that op and ends when the read
 * returns) and read the other notifications with a new one. A tree that
 * strands reader after reader is stopped.
 */
static void watch_reader(struct loop *l)
{
	struct lg_notifier *spare;
	struct lg_busy b;

	if (!l->thread_started || !lg_notifier_busy(l->nt, &b) ||
	    b.id == l->watched_id ||
	    lg_mono_ms() < b.since_ms + READ_DEADLINE_MS)
		return;
	l->watched_id = b.id;
	spare = atomic_load(&l->readers) <= MAX_STUCK_READERS ?
			lg_notifier_spare(l->nt) :
			NULL;
	if (!spare) {
		lg_session_supervisor_kill(
			l->s, "unreadable",
			"%d reads of syscall arguments in the tree never finished (memory nobody serves, such as a userfaultfd page)",
			(int)atomic_load(&l->readers));
		return; /* the kill ends the reads */
	}
	{
		char msg[200];

		snprintf(
			msg, sizeof(msg),
			"the %s arguments of pid %d have not been readable for %d s (a userfaultfd page?): that call waits for them, the tree's other calls are answered meanwhile",
			lg_op_name((enum lg_op)b.op), b.pid,
			READ_DEADLINE_MS / 1000);
		lg_session_warn(l->s, "supervisor", "stuck_read", b.pid, "",
				msg);
	}
	lg_notifier_abandon(l->nt);
	pthread_detach(l->thread);
	l->thread_started = false;
	l->nt = spare;
	if (start_notify_thread(l, spare) < 0) {
		lg_notifier_free(spare);
		l->nt = NULL;
		lg_err("cannot start a new notify thread: stopping the session");
		lg_session_supervisor_kill(
			l->s, "unreadable",
			"no notify thread was left to answer the tree's syscalls");
	}
}

static bool kill_pending(struct loop *l)
{
	bool p;

	p = lg_session_kill_pending(l->s);
	return p;
}

/*
 * Until when the tree waits for the agent to hear why (0: it does not): a
 * grace from the proxy's answer (wake_main), or, before that answer is
 * out, from the decision itself (the main loop may turn in between: an
 * observer event, the timer).
 */
static uint64_t trip_grace(struct loop *l)
{
	uint64_t g = atomic_load(&l->grace_until), d;

	if (g)
		return g;
	d = lg_session_kill_deferred(l->s);
	return d ? d + PROXY_TRIP_GRACE_MS : 0;
}

static bool tree_alive(struct loop *l)
{
	pid_t p[1];

	if (l->cg->ok && l->child.in_cgroup)
		return lg_cgroup_populated(l->cg);
	return lg_descendants(p, 1) > 0;
}

static void reap_children(struct loop *l)
{
	int st;
	pid_t p;

	while ((p = waitpid(-1, &st, WNOHANG)) > 0) {
		if (p == l->child.pid) {
			l->main_exited = true;
			l->status = st;
		}
	}
}

static void on_signal(struct loop *l)
{
	struct signalfd_siginfo si;

	while (read(l->sfd, &si, sizeof(si)) == sizeof(si)) {
		int sig = (int)si.ssi_signo;

		if (sig == SIGCHLD) {
			reap_children(l);
			continue;
		}
		if (sig == SIGWINCH) { /* our terminal's size: the pty's */
			if (l->pty_master >= 0)
				lg_pty_resize(l->pty_master, STDOUT_FILENO);
			continue;
		}
		/* A second signal does not wait for the grace period. */
		if (l->got_signal) {
			l->kill_at = lg_mono_ms();
			continue;
		}
		l->got_signal = sig;
		lg_info("forwarding %s to the session's processes",
			strsignal(sig));
		lg_tree_signal(l->cg, sig);
		l->kill_at = lg_mono_ms() + l->cfg->kill_grace_ms;
	}
}

/*
 * The session CA for the egress proxy: liblgtls.so (OpenSSL) loaded now,
 * the CA made in memory, its certificate and a bundle (the system's CAs
 * with it) written to the run dir for the tree to trust. False, said why,
 * when it cannot be: the proxy then tunnels without them.
 */
static bool make_ca(struct loop *l, const char *run_dir, const char *id)
{
	const char *sys = getenv("SSL_CERT_FILE");
	char path[PATH_MAX], err[256];
	void *h;
	const struct lg_tls_ops *(*get)(void);
	int r;

	if (!libdir_file("liblgtls.so", path, sizeof(path)) ||
	    !(h = dlopen(path, RTLD_NOW | RTLD_LOCAL))) {
		const char *e = dlerror();

		lg_warn("egress proxy: no session CA: cannot load %s: %s", path,
			e ? e : "not found");
		return false;
	}
	get = (const struct lg_tls_ops *(*)(void))dlsym(h, "lg_tls_ops");
	l->tls = get ? get() : NULL;
	if (!l->tls) {
		lg_warn("egress proxy: no session CA: %s lacks lg_tls_ops",
			path);
		return false;
	}
	l->ca = l->tls->ca_new(id, err, sizeof(err));
	if (!l->ca) {
		lg_warn("egress proxy: no session CA: %s", err);
		return false;
	}
	if (!sys || access(sys, R_OK) < 0)
		sys = l->tls->default_bundle();
	snprintf(l->ca_path, sizeof(l->ca_path), "%s/%d.ca.pem", run_dir,
		 getpid());
	snprintf(l->bundle_path, sizeof(l->bundle_path), "%s/%d.bundle.pem",
		 run_dir, getpid());
	{
		/*
		 * The bundle replaces the trust of tools that read one of
		 * these variables: it keeps every CA the user had named.
		 */
		const char *more[] = { getenv("REQUESTS_CA_BUNDLE"),
				       getenv("CURL_CA_BUNDLE") };
		const char *files[4] = { NULL };
		size_t n = 0;

		if (access(sys, R_OK) == 0)
			files[n++] = sys;
		for (size_t i = 0; i < 2; i++) {
			bool dup = false;

			for (size_t k = 0; k < n; k++)
				dup |= more[i] &&
				       strcmp(more[i], files[k]) == 0;
			if (more[i] && *more[i] && !dup &&
			    access(more[i], R_OK) == 0)
				files[n++] = more[i];
		}
		r = l->tls->ca_write(l->ca, l->ca_path, l->bundle_path, files);
	}
	if (r < 0) {
		lg_warn("egress proxy: no session CA: cannot write %s: %s",
			l->ca_path, strerror(-r));
		unlink(l->ca_path);
		unlink(l->bundle_path);
		l->ca_path[0] = l->bundle_path[0] = '\0';
		l->tls->ca_free(l->ca);
		l->ca = NULL;
		return false;
	}
	lg_info("session CA: %s (bundle %s)", l->ca_path, l->bundle_path);
	return true;
}

static void *ca_job(void *arg)
{
	struct loop *l = arg;

	mkdir(l->ca_run_dir, 0700);
	make_ca(l, l->ca_run_dir, l->ca_id);
	atomic_store(&l->ca_ready, l->ca != NULL);
	return NULL;
}

/* The session CA: started on its thread (or made now), then waited for. */
static void ca_start(struct loop *l, const char *state_dir, const char *id)
{
	snprintf(l->ca_run_dir, sizeof(l->ca_run_dir), "%s/run", state_dir);
	l->ca_id = id;
	l->ca_started = pthread_create(&l->ca_thread, NULL, ca_job, l) == 0;
}

/* make: if its thread could not start, made now (not at an error's exit) */
static void ca_wait(struct loop *l, bool make)
{
	if (l->ca_started)
		pthread_join(l->ca_thread, NULL);
	else if (make && l->ca_id)
		ca_job(l);
	l->ca_started = false;
	l->ca_id = NULL;
}

/* The egress proxy asks: is host:port one lgrun reads? */
static const char *egress_decrypt(void *ctx, const char *host, uint16_t port)
{
	struct loop *l = ctx;

	/* a connection may come before the CA is made: not decrypted */
	if (!atomic_load(&l->ca_ready) || l->proxy_fd < 0 || port != 443)
		return NULL;
	for (size_t i = 0; i < l->ndecrypt; i++)
		if (strcasecmp(l->decrypt[i].host, host) == 0)
			return l->decrypt[i].route;
	return NULL;
}

static int egress_mitm(void *ctx, int fd, const struct lg_egress_req *r,
		       const char *route, uint64_t *up, uint64_t *down,
		       const char **why)
{
	struct loop *l = ctx;
	unsigned long long u = 0, d = 0;
	int rc = l->tls->mitm(l->ca, fd, r->host, r->port, route, l->proxy_port,
			      &u, &d, why);

	*up += u;
	*down += d;
	return rc;
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
	lg_session_warn(l->s, "llm", "agent_settings", 0, "", msg);
}

/* An egress proxy connection ended (its own thread). */
static void egress_flow(void *ctx, const struct lg_egress_flow *f)
{
	struct loop *l = ctx;

	lg_session_egress(l->s, f);
}

/* The proxy answered the agent after a trip: the main loop acts now. */
static void wake_main(void *ctx)
{
	struct loop *l = ctx;
	uint64_t one = 1;

	atomic_store(&l->grace_until, lg_mono_ms() + PROXY_TRIP_GRACE_MS);
	if (write(l->efd, &one, sizeof(one)) < 0)
		lg_dbg("cannot wake the main loop: %s", strerror(errno));
}

/* The session decided to kill: stop the tree before the op is answered. */
static void kill_now(void *ctx)
{
	struct loop *l = ctx;

	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	atomic_store(&l->kill_started_ns,
		     (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec);
	lg_tree_kill_start(l->cg, l->child.pid);
}

static void record_shim_stats(struct loop *l)
{
	struct lg_control_stats st;

	if (!l->ctl)
		return;
	lg_control_stats(l->ctl, &st);
	lg_session_shim_stats(l->s, st.accepted, st.refused, st.malformed,
			      st.dropped, st.gates, st.tls);
	if (st.dropped) {
		char msg[160];

		/* Nothing is lost silently: the gap itself is on record. */
		snprintf(
			msg, sizeof(msg),
			"warning: the shim dropped %llu event(s): its socket was full",
			(unsigned long long)st.dropped);
		lg_session_audit_simple(l->s, "warn", msg);
	}
}

static void drain_output(struct loop *l);
static void observer_finish(struct loop *l);

/* Our terminal back as it was (the command is gone or going). */
static void restore_terminal(struct loop *l)
{
	if (!l->tty_raw)
		return;
	lg_tty_restore(STDIN_FILENO, &l->saved_tty);
	l->tty_raw = false;
	lg_log_crlf = false;
}

static int run_trip(struct loop *l)
{
	const char *method = "none";
	int survivors;
	double ms;
	struct timespec a, b;

	/* Timed from the moment the kill began, in kill_now(). */
	{
		uint64_t ns = atomic_load(&l->kill_started_ns);

		a.tv_sec = (time_t)(ns / 1000000000u);
		a.tv_nsec = (long)(ns % 1000000000u);
		if (!ns)
			clock_gettime(CLOCK_MONOTONIC, &a);
	}
	survivors = lg_tree_kill(l->cg, KILL_WAIT_MS, &method);
	clock_gettime(CLOCK_MONOTONIC, &b);
	ms = (double)(b.tv_sec - a.tv_sec) * 1e3 +
	     (double)(b.tv_nsec - a.tv_nsec) / 1e6;
	reap_children(l);
	lg_launch_restore_tty(&l->child);
	drain_output(l);
	restore_terminal(l);
	observer_finish(l);
	{
		/* what left the cgroup, as far as the observer saw it born */
		struct lg_observed live[512];
		size_t n = lg_observer_live(l->obs, live, 512);

		for (size_t i = 0; i < n; i++) {
			int r = lg_kill_escaped(l->cg, live[i].pid,
						live[i].fork_ns);

			l->escaped += r != 0;
			survivors += r > 0;
		}
	}
	l->survivors = survivors;
	record_shim_stats(l);
	l->marker_err = lg_session_record_trip(l->s, method, ms, survivors,
					       l->escaped, &l->audit_err);
	if (l->store && !lg_session_peer_killed(l->s)) {
		/* every supervisor of the session stops, and stays blocked */
		struct lg_json j = { 0 };
		char t[40];

		lg_json_begin(&j);
		lg_json_str(&j, "session", l->id);
		lg_json_str(&j, "reason", lg_session_trip_reason(l->s));
		lg_json_str(&j, "summary", lg_session_trip_summary(l->s));
		lg_time_iso(lg_real_ns(), t, sizeof(t));
		lg_json_str(&j, "time", t);
		if (lg_store_mark_killed(l->store, lg_json_end(&j),
					 lg_session_trip_summary(l->s)) < 0)
			lg_err("cannot mark the session killed in the shared store: the other hosts were not told");
		lg_json_free(&j);
	}
	lg_session_write_metrics(l->s);
	lg_session_write_state(l->s, "killed", -1, l->child.pid);
	return l->marker_err ? LG_EXIT_UNRECORDED : LG_EXIT_TRIPPED;
}

/*
 * The agent talks to its model for the first time: load liblgproxy.so
 * (next to the shim) and let it serve the socket, where the connection
 * waits in the backlog.
 */
static void load_proxy(struct loop *l)
{
	static const struct lg_proxy_ops ops = {
		lg_session_defer_kill,	  lg_session_tool_done,
		lg_session_llm_turn,	  lg_session_llm_text,
		lg_session_model_blocked, lg_session_stop_message,
		lg_session_judge_calls,	  lg_session_ignore_keys,
	};
	struct lg_proxy *(*start)(const struct lg_proxy_ops *,
				  struct lg_session *, int,
				  const struct lg_proxy_route *, size_t,
				  void (*)(void *), void *, char *, size_t);
	char path[PATH_MAX + 32], err[256] = "";
	void *h;

	epoll_ctl(l->epfd, EPOLL_CTL_DEL, l->proxy_fd, NULL);
	if (!libdir_file("liblgproxy.so", path, sizeof(path))) {
		snprintf(err, sizeof(err),
			 "liblgproxy.so is not next to lgrun");
		goto fail;
	}
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(err, sizeof(err), "%s", dlerror());
		goto fail;
	}
	start = (__typeof__(start))dlsym(h, "lg_proxy_start");
	l->proxy_stop = (__typeof__(l->proxy_stop))dlsym(h, "lg_proxy_stop");
	if (!start || !l->proxy_stop) {
		snprintf(err, sizeof(err), "%s lacks lg_proxy_start", path);
		goto fail;
	}
	l->proxy = start(&ops, l->s, l->proxy_fd, l->routes, l->nroutes,
			 wake_main, l, err, sizeof(err));
	if (l->proxy)
		return;
fail:
	/* The agent's model calls get "connection refused", not a hang. */
	lg_warn("the LLM proxy could not start: %s", err);
	close(l->proxy_fd);
	l->proxy_fd = -1;
}

/* Of a large read of the command's output, the bytes that are watched. */
#define WATCH_SAMPLE 1024

static void output_line(void *ctx, const char *line, size_t n)
{
	struct loop *l = ctx;

	lg_session_output_text(l->s, line, n);
}

/*
 * The command's output, passed on byte for byte and watched. Returns false
 * at the end of that stream.
 */
static bool pass_output(struct loop *l, int which)
{
	char buf[65536];
	int fd = l->out_r[which], to = which ? STDERR_FILENO : STDOUT_FILENO;
	bool skipped = false;
	ssize_t n;

	/*
	 * Bulk output: all but the last WATCH_SAMPLE bytes waiting in the pipe
	 * go on without passing through user space (splice), the rest is
	 * read, watched and written. Where splice cannot write (a terminal,
	 * an O_APPEND file on some kernels) everything is read.
	 */
	if (!l->no_splice[which] && fd != l->pty_master) {
		int avail = 0;

		if (ioctl(fd, FIONREAD, &avail) == 0 &&
		    avail > 2 * WATCH_SAMPLE) {
			ssize_t m = splice(fd, NULL, to, NULL,
					   (size_t)avail - WATCH_SAMPLE, 0);

			if (m > 0)
				skipped = true;
			else if (m < 0 && errno != EAGAIN && errno != EINTR)
				l->no_splice[which] = true;
		}
	}
	n = read(fd, buf, sizeof(buf));

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return true;
	if (n <= 0) {
		lg_termtext_flush(&l->term[which], output_line, l);
		epoll_ctl(l->epfd, EPOLL_CTL_DEL, l->out_r[which], NULL);
		close(l->out_r[which]);
		l->out_r[which] = -1;
		return false;
	}
	for (ssize_t off = 0; off < n;) {
		ssize_t w = write(to, buf + off, (size_t)(n - off));

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN) {
			struct pollfd pfd = { to, POLLOUT, 0 };

			poll(&pfd, 1, 100);
			continue;
		}
		if (w <= 0)
			break; /* our own output is gone: the bytes cannot go on */
		off += w;
	}
	/*
	 * A bulk copy (a build log, `cat` of a big file) must not cost the
	 * check on every byte: of a large read only its tail is watched. A
	 * loop prints the same thing again and again, so it shows there.
	 */
	if ((size_t)n > WATCH_SAMPLE || skipped) {
		size_t k = (size_t)n > WATCH_SAMPLE ? WATCH_SAMPLE : (size_t)n;

		lg_termtext_reset(&l->term[which]);
		lg_termtext_feed(&l->term[which], buf + n - k, k, output_line,
				 l);
	} else {
		lg_termtext_feed(&l->term[which], buf, (size_t)n, output_line,
				 l);
	}
	return true;
}

/*
 * A key typed on our terminal goes to the command's pty. What the pty
 * cannot take now (a command that does not read) is dropped, never
 * waited for: the loop must stay free to act.
 */
static void relay_input(struct loop *l)
{
	char buf[4096];
	ssize_t n = read(STDIN_FILENO, buf, sizeof(buf));

	if (n <= 0) {
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		epoll_ctl(l->epfd, EPOLL_CTL_DEL, STDIN_FILENO, NULL);
		return;
	}
	if (write(l->pty_master, buf, (size_t)n) != n)
		lg_dbg("--watch-output: the command did not take %zd typed bytes",
		       n);
}

/* Before lgrun exits: every byte the command wrote is passed on. */
static void drain_output(struct loop *l)
{
	for (int i = 0; i < 2; i++) {
		/*
		 * The writers are gone: read to the end. A survivor still
		 * holding the other end must not hold lgrun: 200 ms of
		 * silence ends it.
		 */
		while (l->out_r[i] >= 0) {
			struct pollfd pfd = { l->out_r[i], POLLIN, 0 };

			if (poll(&pfd, 1, 200) <= 0 || !pass_output(l, i))
				break;
		}
	}
}

/*
 * budget.max_processes: where the cgroup has the pids controller the
 * kernel enforces pids.max; the count here warns at the reserve and trips
 * past the limit either way (a fork bomb is stopped within a tick).
 */
#define PROCS_TICK_MS 200
/* How long a kill waits for a refused nested lgrun to print why. */
#define NESTED_LINGER_MS 1000
/* --bpf=auto starts loading the observer this long after the command. */
#define BPF_AUTO_DELAY_MS 50

static void count_processes(struct loop *l)
{
	unsigned n = 0;

	if (l->cg->ok && l->child.in_cgroup) {
		char p[PATH_MAX + 32];
		FILE *f;
		int pid;

		snprintf(p, sizeof(p), "%s/cgroup.procs", l->cg->path);
		f = fopen(p, "re");
		if (f) {
			while (fscanf(f, "%d", &pid) == 1)
				n++;
			fclose(f);
		}
	} else {
		static pid_t pids[8192];
		int k = lg_descendants(pids,
				       (int)(sizeof(pids) / sizeof(pids[0])));

		n = k > 0 ? (unsigned)k : 0;
	}
	lg_session_processes(l->s, n);
	l->procs_at = lg_mono_ms() + PROCS_TICK_MS;
}

/* The store was lost or is back (called under the session's lock). */
static void store_state(void *ctx, bool up, const char *what)
{
	struct loop *l = ctx;
	struct epoll_event ev = { .events = EPOLLIN };

	lg_session_warn(l->s, "store", up ? "store_back" : "store_lost", 0,
			"lgrun", what);
	ev.data.fd = lg_store_sub_fd(l->store);
	if (up && ev.data.fd >= 0) /* the kill channel, reopened */
		epoll_ctl(l->epfd, EPOLL_CTL_ADD, ev.data.fd, &ev);
}

static bool store_is_up(void *ctx)
{
	return lg_store_check(ctx);
}

/* The kill channel: another supervisor of the session tripped. */
static void store_message(struct loop *l)
{
	char summary[LG_SUMMARY_MAX];
	int r = lg_store_sub_read(l->store, summary, sizeof(summary));

	if (r < 0) {
		int fd = lg_store_sub_fd(l->store);

		if (fd >= 0)
			epoll_ctl(l->epfd, EPOLL_CTL_DEL, fd, NULL);
		lg_session_warn(
			l->s, "store", "store_lost", 0, "lgrun",
			"the store's kill channel was lost: a trip on another host no longer stops this one");
		return;
	}
	if (r == 0)
		return;
	lg_warn("another supervisor of the session stopped it: %s", summary);
	lg_session_peer_kill(l->s, summary);
}

/* The level of the session's leaf: lgrun's own cgroup's, plus one. */
static unsigned cgroup_level(void)
{
	char line[PATH_MAX + 8];
	unsigned level = 1;
	FILE *f = fopen("/proc/self/cgroup", "re");

	while (f && fgets(line, sizeof(line), f)) {
		if (strncmp(line, "0::", 3) != 0)
			continue;
		for (const char *p = line + 3; *p && *p != '\n'; p++)
			if (*p == '/' && p[1] && p[1] != '\n')
				level++;
	}
	if (f)
		fclose(f);
	return level;
}

static void obs_hello(void *ctx, pid_t pid, uint64_t sent_ns)
{
	lg_observer_hello(ctx, pid, sent_ns);
}

/* Before an agent call: bytes written since the last one are work. */
static void obs_call(void *ctx)
{
	struct loop *l = ctx;

	if (lg_observer_worked(l->obs)) {
		lg_session_work(l->s);
	}
}

static void obs_lineage(void *ctx, pid_t pid, char *out, size_t size)
{
	lg_observer_lineage(ctx, pid, out, size);
}

/* The observer loaded (or failed to): wire it in, or say why not. */
static void observer_ready(struct loop *l)
{
	char why[300];

	if (!lg_observer_ready(l->obs, l->epfd, why, sizeof(why)))
		return;
	if (why[0]) {
		char st[340];

		snprintf(st, sizeof(st), "off: %s", why);
		lg_session_bpf_state(l->s, st);
		lg_info("the eBPF observer is off: %s", why);
		return;
	}
	lg_session_bpf_state(l->s, "attached");
	lg_session_lineage_fn(l->s, obs_lineage, l->obs);
	if (l->child.pid > 0)
		lg_session_write_state(l->s, "running", -1, l->child.pid);
	if (l->ctl) {
		lg_control_on_hello(l->ctl, obs_hello, l->obs);
		lg_control_on_call(l->ctl, obs_call, l);
	}
	if (!(l->cg->ok && l->child.in_cgroup) && l->child.pid > 0) {
		/* no cgroup: the pid set, seeded with the tree as it is */
		static pid_t pids[4096];
		int n = lg_descendants(pids, 4096);

		lg_observer_add_pid(l->obs, l->child.pid);
		for (int i = 0; i < n; i++)
			lg_observer_add_pid(l->obs, pids[i]);
	}
	lg_info("the eBPF observer is attached (%s)",
		l->cg->ok && l->child.in_cgroup ? "the session's cgroup" :
						  "the session's pids");
}

/* Loading BPF programs needs CAP_SYS_ADMIN, or CAP_BPF and CAP_PERFMON. */
static bool may_load_bpf(void)
{
	char line[256];
	unsigned long long eff = 0;
	FILE *f = fopen("/proc/self/status", "re");

	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "CapEff:", 7) == 0)
			eff = strtoull(line + 7, NULL, 16);
	if (f)
		fclose(f);
	return (eff >> 21 & 1) || ((eff >> 39 & 1) && (eff >> 38 & 1));
}

/* --bpf: on loads before the command starts, auto in the background. */
static int observer_start(struct loop *l, const struct lg_config *cfg,
			  bool async, char *why, size_t why_size)
{
	char lib[PATH_MAX + 32];
	struct lg_observer_cfg oc = { 0 };
	struct stat st;

	if (!libdir_file("liblgbpf.so", lib, sizeof(lib))) {
		snprintf(
			why, why_size,
			"lgrun was built without the eBPF observer (no %s: the kernel had no BTF at build time)",
			lib);
		return -ENOENT;
	}
	if (!may_load_bpf()) {
		snprintf(
			why, why_size,
			"loading eBPF programs needs root, or CAP_BPF and CAP_PERFMON");
		return -EPERM;
	}
	oc.lib = lib;
	if (l->cg->ok && stat(l->cg->path, &st) == 0) {
		oc.cgid = st.st_ino; /* a cgroup v2 directory's id */
		oc.level = cgroup_level();
	}
	oc.ring_bytes = (size_t)cfg->bpf_ring_kb * 1024;
	oc.verbose = lg_log_verbosity - LG_LOG_WARN;
	oc.async = async;
	oc.wake_fd = l->efd;
	oc.proxy_port = l->proxy_port;
	oc.egress = cfg->llm_mode != LG_LLM_BASE_URL || cfg->sealed;
	oc.sealed = cfg->sealed;
	oc.s = l->s;
	return lg_observer_start(&l->obs, &oc, why, why_size);
}

/* --bpf=auto, once the session has lasted BPF_AUTO_DELAY_MS. */
static void observer_auto(struct loop *l)
{
	char why[300], st[340];

	l->bpf_at = 0;
	if (l->main_exited)
		return;
	if (observer_start(l, l->cfg, true, why, sizeof(why)) < 0) {
		snprintf(st, sizeof(st), "off: %s", why);
		lg_info("the eBPF observer is off: %s", why);
	} else {
		snprintf(st, sizeof(st), "loading");
	}
	lg_session_bpf_state(l->s, st);
}

/* Once, before the session's last records: the last events, counters. */
static void observer_finish(struct loop *l)
{
	if (!l->obs || l->obs_finished)
		return; /* the state says why (off, or ended before loading) */
	l->obs_finished = true;
	if (!lg_observer_attached(l->obs)) {
		observer_ready(l); /* it may have finished just now */
		if (!lg_observer_attached(l->obs)) {
			lg_session_bpf_state(
				l->s,
				"off: the session ended before the observer had loaded");
			return;
		}
	}
	lg_observer_finish(l->obs);
}

static int event_loop(struct loop *l)
{
	struct epoll_event evs[8];

	for (;;) {
		int n;

		if (kill_pending(l)) {
			uint64_t g = trip_grace(l);
			uint64_t now = lg_mono_ms();
			bool linger = l->ctl && lg_control_lingering(l->ctl);

			if (linger && !l->linger_until)
				l->linger_until = now + NESTED_LINGER_MS;
			if (!(linger && now < l->linger_until) &&
			    (!g || l->main_exited || now >= g))
				return run_trip(l);
			/* else: the agent (or a refused nested lgrun) is
			 * reading why; the timer wakes us */
		}
		if (l->main_exited && !l->draining) {
			if (!tree_alive(l))
				return 0;
			if (l->cfg->kill_leftovers) {
				lg_info("the command exited; stopping the processes it left behind");
				lg_tree_signal(l->cg, SIGTERM);
				l->kill_at =
					lg_mono_ms() + l->cfg->kill_grace_ms;
			}
			l->draining = true;
		}
		if (l->draining && !tree_alive(l))
			return 0;
		if (l->kill_at && lg_mono_ms() >= l->kill_at) {
			const char *method;

			lg_tree_kill(l->cg, KILL_WAIT_MS, &method);
			l->kill_at = 0;
			reap_children(l);
			if (l->main_exited)
				return 0;
		}
		lg_sources_arm(&l->src);
		n = epoll_wait(l->epfd, evs, 8, -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			lg_err("epoll_wait: %s", strerror(errno));
			return -errno;
		}
		for (int i = 0; i < n; i++)
			if (!lg_sources_dispatch(&l->src, evs[i].data.fd))
				lg_dbg("epoll: fd %d is no source's",
				       evs[i].data.fd);
	}
}

/*
 * The sources of the main loop (sources.h), in the order a ready fd is
 * offered to them. Signals: forwarded to the tree, or its end.
 */
static bool signals_handle(void *ctx, int fd)
{
	struct loop *l = ctx;

	if (fd != l->sfd)
		return false;
	on_signal(l);
	return true;
}

static const struct lg_loop_source signals_source = { "signals", signals_handle,
						      NULL, NULL, NULL };

/* --watch-output: the command's output, and our terminal's keys to it */
static bool output_handle(void *ctx, int fd)
{
	struct loop *l = ctx;

	if (fd == l->out_r[0] || fd == l->out_r[1]) {
		pass_output(l, fd == l->out_r[1]);
		return true;
	}
	if (fd == STDIN_FILENO && l->tty_raw) {
		relay_input(l);
		return true;
	}
	return false;
}

static const struct lg_loop_source output_source = { "output", output_handle,
						     NULL, NULL, NULL };

/* The eBPF observer: kernel events, its own timers, --bpf=auto's load. */
static bool observer_handle(void *ctx, int fd)
{
	struct loop *l = ctx;

	return lg_observer_handle(l->obs, fd);
}

static uint64_t observer_deadline(void *ctx)
{
	struct loop *l = ctx;
	uint64_t o = lg_observer_next_deadline(l->obs);

	return l->bpf_at && (!o || l->bpf_at < o) ? l->bpf_at : o;
}

static void observer_tick(void *ctx, uint64_t now)
{
	struct loop *l = ctx;
	uint64_t next = lg_observer_next_deadline(l->obs);

	if (next && now >= next)
		lg_observer_tick(l->obs);
	if (l->bpf_at && now >= l->bpf_at)
		observer_auto(l);
}

static void observer_free(void *ctx)
{
	struct loop *l = ctx;

	lg_observer_free(l->obs);
	l->obs = NULL;
}

static const struct lg_loop_source observer_source = {
	"observer", observer_handle, observer_deadline, observer_tick,
	observer_free
};

/* The store's kill channel: another supervisor of the session tripped. */
static bool store_handle(void *ctx, int fd)
{
	struct loop *l = ctx;

	if (!l->store || fd != lg_store_sub_fd(l->store))
		return false;
	store_message(l);
	return true;
}

static void store_free(void *ctx)
{
	struct loop *l = ctx;

	lg_store_free(l->store);
	l->store = NULL;
}

static const struct lg_loop_source store_source = { "store", store_handle, NULL,
						    NULL, store_free };

/* The LLM proxy's socket: its library is loaded on the first connection. */
static bool proxy_handle(void *ctx, int fd)
{
	struct loop *l = ctx;

	if (fd != l->proxy_fd || l->proxy)
		return false;
	load_proxy(l);
	return true;
}

static void proxy_free(void *ctx)
{
	struct loop *l = ctx;

	if (l->proxy && l->proxy_stop)
		l->proxy_stop(l->proxy);
	else if (l->proxy_fd >= 0)
		close(l->proxy_fd);
	l->proxy = NULL;
	l->proxy_fd = -1;
}

static const struct lg_loop_source proxy_source = { "proxy", proxy_handle, NULL,
						    NULL, proxy_free };

/* The control socket and the shims' rings, nested sessions' pidfds. */
static bool control_handle(void *ctx, int fd)
{
	struct loop *l = ctx;

	return l->ctl && lg_control_handle(l->ctl, l->epfd, fd);
}

static uint64_t control_deadline(void *ctx)
{
	struct loop *l = ctx;

	return lg_control_next_deadline(l->ctl);
}

static void control_tick(void *ctx, uint64_t now)
{
	struct loop *l = ctx;

	(void)now;
	lg_control_tick(l->ctl, l->epfd);
}

static void control_free(void *ctx)
{
	struct loop *l = ctx;

	lg_control_free(l->ctl);
	l->ctl = NULL;
}

static const struct lg_loop_source control_source = {
	"control", control_handle, control_deadline, control_tick, control_free
};

/* Woken by another thread: the observer loaded, the proxy answered. */
static bool wake_handle(void *ctx, int fd)
{
	struct loop *l = ctx;
	uint64_t x;

	if (fd != l->efd)
		return false;
	if (read(l->efd, &x, sizeof(x)) < 0) {
		/* the flag is what matters */
	}
	if (l->obs && !lg_observer_attached(l->obs))
		observer_ready(l);
	return true;
}

static const struct lg_loop_source wake_source = { "wake", wake_handle, NULL,
						   NULL, NULL };

/* The notify thread's reads, watched (watch_reader). */
static uint64_t notify_deadline(void *ctx)
{
	struct loop *l = ctx;
	struct lg_busy b;

	if (!l->thread_started)
		return 0;
	return lg_notifier_busy(l->nt, &b) ? b.since_ms + READ_DEADLINE_MS :
					     (lg_mono_ms() / 1000 + 1) * 1000;
}

static void notify_tick(void *ctx, uint64_t now)
{
	(void)now;
	watch_reader(ctx);
}

static const struct lg_loop_source notify_source = { "notify", NULL,
						     notify_deadline,
						     notify_tick, NULL };

/* The tree's process count (budget.max_processes). */
static uint64_t procs_deadline(void *ctx)
{
	return ((struct loop *)ctx)->procs_at;
}

static void procs_tick(void *ctx, uint64_t now)
{
	(void)now;
	count_processes(ctx);
}

static const struct lg_loop_source procs_source = { "processes", NULL,
						    procs_deadline, procs_tick,
						    NULL };

/* The guard's time-based rules (budgets). */
static uint64_t session_deadline(void *ctx)
{
	return lg_session_next_deadline(((struct loop *)ctx)->s);
}

static void session_tick(void *ctx, uint64_t now)
{
	struct loop *l = ctx;
	uint64_t next = lg_session_next_deadline(l->s);

	if (next && now >= next)
		lg_session_tick(l->s);
}

static const struct lg_loop_source session_source = { "session", NULL,
						      session_deadline,
						      session_tick, NULL };

/*
 * The loop's own moments (event_loop acts on them when it wakes): a
 * forwarded signal's or a drain's grace, a nested lgrun's linger, the
 * grace of a kill decided on the proxy's path, the drain's poll.
 */
static uint64_t trip_deadline(void *ctx)
{
	struct loop *l = ctx;
	uint64_t next = 0, t[4] = { l->kill_at, l->linger_until, 0, 0 };

	/* only while a deferred kill waits (a deny never arms it) */
	if (kill_pending(l))
		t[2] = trip_grace(l);
	if (l->draining)
		t[3] = lg_mono_ms() + 20;
	for (int i = 0; i < 4; i++)
		if (t[i] && (!next || t[i] < next))
			next = t[i];
	return next;
}

static const struct lg_loop_source trip_source = { "trip", NULL, trip_deadline,
						   NULL, NULL };

static void add_sources(struct loop *l)
{
	lg_sources_add(&l->src, &signals_source, l);
	lg_sources_add(&l->src, &output_source, l);
	lg_sources_add(&l->src, &observer_source, l);
	lg_sources_add(&l->src, &store_source, l);
	lg_sources_add(&l->src, &proxy_source, l);
	lg_sources_add(&l->src, &control_source, l);
	lg_sources_add(&l->src, &wake_source, l);
	lg_sources_add(&l->src, &notify_source, l);
	lg_sources_add(&l->src, &procs_source, l);
	lg_sources_add(&l->src, &session_source, l);
	lg_sources_add(&l->src, &trip_source, l);
}

/* Through lg_log: names from the tree are escaped for the terminal. */
static void print_trip(const struct loop *l, const char *id,
		       const char *summary, const char *audit,
		       const char *state_dir)
{
	lg_err("%s", summary);
	if (l->survivors)
		lg_err("the operation was refused, but %d process(es) of session '%s' survived the kill.",
		       l->survivors, id);
	else
		lg_err("the operation was refused and every process of session '%s' was stopped%s.",
		       id,
		       l->escaped ?
			       " (some had left its cgroup: killed by pid)" :
			       "");
	if (l->audit_err)
		lg_err("the audit record could NOT be written to %s (%s)",
		       audit, strerror(-l->audit_err));
	else
		lg_err("audit record: %s", audit);
	if (l->marker_err)
		lg_err("the session could NOT be blocked: %s/sessions/%s.killed cannot be written (%s). It can be started again; exit status %d.",
		       state_dir, id, strerror(-l->marker_err),
		       LG_EXIT_UNRECORDED);
	else
		lg_err("the session stays blocked (session_killed_loop_guard) until an operator runs: lgctl reset %s",
		       id);
}

int main(int argc, char **argv)
{
	char state_dir[PATH_MAX], audit_path[PATH_MAX + 16];
	char metrics_path[PATH_MAX + 16], gen_id[96], cgname[200];
	char flow_id[33];
	char store_self[64] = "", store_down[600] = "";
	struct lg_config cfg;
	struct lg_error err;
	struct lg_session_info info = { 0 };
	bool readers_left = false, egress_left = false;
	struct loop l = { .proxy_fd = -1,
			  .out_r = { -1, -1 },
			  .pty_master = -1,
			  .src.tfd = -1 };
	struct lg_cgroup cg;
	struct lg_bpf filter = { 0 };
	const char *id, *agent;
	char **env = NULL;
	size_t env_ours = 0;
	bool cg_made = false;
	char shim_path[PATH_MAX + 32] = "", sock_path[PATH_MAX + 32] = "";
	struct lg_proxy_route routes[16];
	size_t nroutes = 0;
	int r, exec_errno, rc;
	sigset_t mask;
	struct opts o;

	ensure_std_fds();
	if (parse_args(argc, argv, &o) < 0)
		return LG_EXIT_ERROR;
	lg_log_verbosity = LG_LOG_WARN + o.verbose;

	{
		char sock[PATH_MAX], flow[128];

		if (lg_nested_find(sock, sizeof(sock), flow, sizeof(flow)))
			return run_nested(&o, sock, flow);
	}

	agent = o.agent ? o.agent : lg_path_basename(o.argv[0]);
	lg_config_init(&cfg);
	if (lg_config_load(&cfg, o.config, o.profile, agent, &err) < 0 ||
	    lg_config_finish(&cfg, &err) < 0) {
		lg_err("%s", err.msg);
		{
			rc = LG_EXIT_ERROR;
			goto out;
		}
	}
	if (cfg.llm_mode == LG_LLM_AUTO) {
		/*
		 * An agent CLI may ignore the base-URL variables (Codex does,
		 * gemini-cli with a Google login does): it gets the egress
		 * proxy too. Any other command pays nothing for it.
		 */
		const char *cli = cfg.llm_proxy ? lg_agentenv_is_agent(o.argv) :
						  NULL;

		cfg.llm_mode = cli ? LG_LLM_BOTH : LG_LLM_BASE_URL;
		if (cli)
			lg_info("llm.mode = auto: both (the command runs %s)",
				cli);
	}
	if (o.observe)
		cfg.observe = true;
	if (o.watch_output)
		cfg.watch_output = true;
	if (o.bpf) {
		int m = lg_bpf_mode_parse(o.bpf);

		if (m < 0) {
			lg_err("--bpf '%s' is not a mode: auto, on or off",
			       o.bpf);
			rc = LG_EXIT_ERROR;
			goto out;
		}
		cfg.bpf_mode = m;
	}
	if (o.timeout) {
		unsigned long ms;

		if (lg_parse_duration_ms(o.timeout, &ms) < 0 || !ms) {
			lg_err("--timeout '%s' is not a duration (e.g. 90s, 10m, 1h)",
			       o.timeout);
			{
				rc = LG_EXIT_ERROR;
				goto out;
			}
		}
		cfg.guard.budget.timeout_ms = ms;
	}

	if (lg_state_dir_resolve(o.state_dir, &cfg, state_dir,
				 sizeof(state_dir)) < 0) {
		lg_err("no state directory: pass --state-dir DIR or set LGRUN_STATE_DIR");
		{
			rc = LG_EXIT_ERROR;
			goto out;
		}
	}
	r = lg_state_prepare(state_dir);
	if (r < 0) {
		lg_err("cannot create the state directory %s: %s (pass --state-dir DIR to use another)",
		       state_dir, strerror(-r));
		{
			rc = LG_EXIT_ERROR;
			goto out;
		}
	}
	if (o.session) {
		if (!lg_session_id_valid(o.session)) {
			lg_err("session id '%s' is not valid: use 1-128 letters, digits and . _ : @ + -",
			       o.session);
			{
				rc = LG_EXIT_ERROR;
				goto out;
			}
		}
		id = o.session;
	} else {
		snprintf(gen_id, sizeof(gen_id), "%.40s-%lld-%d",
			 lg_session_id_valid(agent) ? agent : "lg",
			 (long long)(lg_real_ns() / 1000000000LL), getpid());
		id = gen_id;
	}
	if (cfg.store_redis) {
		char why[600], host[128] = "?";
		struct lg_store_cfg sc = { cfg.store_url,
					   cfg.store_prefix,
					   cfg.store_password_env,
					   (unsigned)cfg.store_timeout_ms,
					   id,
					   store_self,
					   cfg.store_fail };

		gethostname(host, sizeof(host) - 1);
		snprintf(store_self, sizeof(store_self), "%.40s:%d", host,
			 getpid());
		if (lg_store_open(&l.store, &sc, why, sizeof(why)) < 0) {
			if (cfg.store_fail) {
				lg_err("the shared store is unavailable: %s (set [store] on_store_error = local to run on this host's counts alone)",
				       why);
				rc = LG_EXIT_ERROR;
				goto out;
			}
			snprintf(store_down, sizeof(store_down), "%s", why);
			lg_warn("the shared store is unavailable: %s; counting on this host alone (on_store_error = local)",
				why);
		}
	}
	{
		char marker[4096], reason[256], summary[512], when[64];

		/* With a store its marker is the truth: a reset elsewhere
		 * clears this host's too. */
		r = l.store ? lg_store_killed(l.store, marker, sizeof(marker)) :
			      -1;
		if (r == 0 && lg_state_killed(state_dir, id, summary,
					      sizeof(summary)) > 0) {
			lg_info("session '%s' was reset on another host: its marker here goes too",
				id);
			lg_state_reset(state_dir, id);
		}
		if (r < 0)
			r = lg_state_killed(state_dir, id, marker,
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
				id, reason[0] ? reason : "tripped",
				when[0] ? when : "?",
				summary[0] ? summary : "no summary recorded",
				id);
			{
				rc = LG_EXIT_KILLED_SESSION;
				goto out;
			}
		}
	}
	if (cfg.llm_mode != LG_LLM_BASE_URL || cfg.sealed)
		ca_start(&l, state_dir, id);
	snprintf(audit_path, sizeof(audit_path), "%s/audit.jsonl", state_dir);
	snprintf(metrics_path, sizeof(metrics_path), "%s/lgrun.prom",
		 state_dir);
	{
		unsigned char rnd[16];

		if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd)) {
			lg_err("cannot make a flow id: %s", strerror(errno));
			rc = LG_EXIT_ERROR;
			goto out;
		}
		for (size_t i = 0; i < sizeof(rnd); i++)
			snprintf(flow_id + 2 * i, 3, "%02x", rnd[i]);
	}
	info.id = id;
	info.agent = agent;
	info.flow = flow_id;
	info.name = o.session ? o.session : agent;
	info.state_dir = state_dir;
	info.audit_path = cfg.audit_log ? cfg.audit_log : audit_path;
	info.metrics_path = cfg.metrics_file ? cfg.metrics_file : metrics_path;

	if (lg_filter_build(cfg.syscalls, &filter) < 0) {
		rc = LG_EXIT_ERROR;
		goto out;
	}

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
	l.sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	l.epfd = epoll_create1(EPOLL_CLOEXEC);
	l.efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	errno = 0;
	if (l.sfd < 0 || l.epfd < 0 || l.efd < 0 ||
	    (errno = -lg_sources_init(&l.src, l.epfd)) != 0) {
		lg_err("cannot set up the event loop: %s", strerror(errno));
		{
			rc = LG_EXIT_ERROR;
			goto out;
		}
	}

	snprintf(cgname, sizeof(cgname), "lgrun-%.128s-%d", id, getpid());
	lg_cgroup_create(&cg, cgname);
	cg_made = true;
	if (!cg.ok)
		lg_info("no cgroup for the session (%s); the tree is killed by walking descendants",
			cg.why);
	l.cg = &cg;
	l.cfg = &cfg;

	if (!cfg.shim)
		lg_info("the shim is off ([shim] enabled = false)");
	else if (!libdir_file("liblgshim.so", shim_path, sizeof(shim_path))) {
		lg_info("no shim next to lgrun (%s): tool calls are not observed",
			shim_path);
		shim_path[0] = '\0';
	}
	{
		/* the control socket: the shim's, and nested lgruns' */
		char run_dir[PATH_MAX + 8];

		snprintf(run_dir, sizeof(run_dir), "%s/run", state_dir);
		mkdir(run_dir, 0700);
		if (snprintf(sock_path, sizeof(sock_path), "%s/%d.sock",
			     run_dir, getpid()) >= 100)
			snprintf(sock_path, sizeof(sock_path),
				 "/tmp/lgrun-%d-%d.sock", getuid(), getpid());
	}
	info.start_real_ns = lg_real_ns();
	info.start_mono_ms = lg_mono_ms();
	l.s = lg_session_new(&cfg, &info);
	if (!l.s) {
		lg_err("out of memory");
		{
			rc = LG_EXIT_ERROR;
			goto out;
		}
	}
	if (cfg.llm_proxy) {
		char perr[256];

		const char *bad = NULL;
		int nr, with_default = 0;

		nroutes = lg_proxy_default_routes(routes, 16);
		nr = lg_proxy_extra_routes(cfg.llm_variables, routes, nroutes,
					   16, &bad);
		if (nr < 0) {
			lg_err("llm.variables: cannot read '%.*s': write VARIABLE:FORMAT, the format one of anthropic, openai, gemini (at most 13 more)",
			       (int)strcspn(bad, ", \t"), bad);
			rc = LG_EXIT_ERROR;
			goto out;
		}
		nroutes = (size_t)nr;
		if (cfg.llm_mode != LG_LLM_BASE_URL || cfg.sealed)
			with_default = lg_proxy_decrypt_routes(
				cfg.llm_decrypt, routes, &nroutes, 16,
				l.decrypt, &l.ndecrypt, &bad);
		if (with_default < 0) {
			lg_err("llm.decrypt: cannot read '%.*s': write HOST[:FORMAT][=UPSTREAM] or default (" LG_PROXY_DECRYPT_DEFAULT
			       "), each host once, the format anthropic, openai or gemini (needed for a host not in the default list), the upstream an http:// or https:// URL; at most 8 hosts",
			       (int)strcspn(bad, ", \t"), bad);
			rc = LG_EXIT_ERROR;
			goto out;
		}
		if (with_default > 0) {
			/* a gateway of the user's is a model host too */
			size_t nbase = nroutes - l.ndecrypt;

			lg_proxy_decrypt_upstreams(routes, nbase, &nroutes, 16,
						   l.decrypt, &l.ndecrypt);
		}
		l.proxy_fd = lg_proxy_listen(&l.proxy_port);
		if (l.proxy_fd < 0) {
			lg_warn("the LLM proxy is off: cannot listen on 127.0.0.1: %s",
				strerror(-l.proxy_fd));
		} else {
			struct epoll_event ev = { .events = EPOLLIN };

			/* served once the agent first connects (load_proxy) */
			ev.data.fd = l.proxy_fd;
			epoll_ctl(l.epfd, EPOLL_CTL_ADD, l.proxy_fd, &ev);
			l.routes = routes;
			l.nroutes = nroutes;
			lg_info("LLM proxy on 127.0.0.1:%u", l.proxy_port);
		}
		(void)perr;
	}
	if (cfg.sealed && geteuid() != 0) {
		lg_err("network.egress = proxy-only needs root (the tree gets a network namespace of its own): run lgrun as root, or set egress = open");
		rc = LG_EXIT_ERROR;
		goto out;
	}
	if (cfg.llm_mode != LG_LLM_BASE_URL || cfg.sealed) {
		int fd = lg_proxy_listen(&l.egress_port);
		struct lg_egress_cfg ec = { .flow = egress_flow,
					    .decrypt = egress_decrypt,
					    .mitm = egress_mitm,
					    .ctx = &l };

		l.egress = fd >= 0 ? lg_egress_start(fd, &ec) : NULL;
		if (!l.egress) {
			lg_err("llm.mode: cannot start the egress proxy on 127.0.0.1: %s",
			       strerror(fd < 0 ? -fd : errno));
			if (fd >= 0)
				close(fd);
			rc = LG_EXIT_ERROR;
			goto out;
		}
		lg_info("egress proxy on 127.0.0.1:%u (HTTP_PROXY, HTTPS_PROXY)",
			l.egress_port);
		ca_wait(&l, true);
	}
	if (cfg.llm_proxy) {
		char cwd[PATH_MAX];

		lg_agentenv_check(getcwd(cwd, sizeof(cwd)) ? cwd : NULL,
				  getenv("HOME"), agentenv_say, &l);
	}
	if (sock_path[0]) {
		l.ctl = lg_control_new(sock_path, l.s, &cg,
				       cfg.target_keys ? cfg.target_keys :
							 LG_DEFAULT_TARGET_KEYS,
				       cfg.url_targets);
		if (l.ctl) {
			struct epoll_event ev = { .events = EPOLLIN };

			ev.data.fd = lg_control_listen_fd(l.ctl);
			epoll_ctl(l.epfd, EPOLL_CTL_ADD, ev.data.fd, &ev);
		}
	}
	{
		char *set[40] = { NULL };
		const char *preload = getenv("LD_PRELOAD");
		const size_t max = sizeof(set) / sizeof(set[0]);
		int e = 0;

		e |= setvar(set, max, "LGRUN_SESSION", "%s", id);
		e |= setvar(set, max, "LGRUN_AGENT", "%s", agent);
		e |= setvar(set, max, "LGRUN_STATE_DIR", "%s", state_dir);
		e |= setvar(set, max, "LGRUN_SUPERVISOR_PID", "%d", getpid());
		e |= setvar(set, max, "LGRUN_FLOW", "%s", flow_id);
		if (l.ctl)
			e |= setvar(set, max, "LGRUN_SOCK", "%s",
				    lg_control_path(l.ctl));
		if (l.ctl && shim_path[0]) {
			e |= setvar(set, max, "LGRUN_GATE_TOOLS", "%s",
				    cfg.gate_tools ? cfg.gate_tools :
						     LG_DEFAULT_GATE_TOOLS);
			/* always set: a value from outside is not our config */
			e |= setvar(set, max, "LGRUN_TOOL_ENDPOINTS", "%s",
				    cfg.tool_endpoints ? cfg.tool_endpoints :
							 "");
			e |= setvar(set, max, "LGRUN_JUDGE_ALL", "%d",
				    cfg.judge_all ? 1 : 0);
			/* ours first, keeping what the user preloads */
			e |= setvar(set, max, "LD_PRELOAD", "%s%s%s", shim_path,
				    preload && *preload ? ":" : "",
				    preload ? preload : "");
		}
		if (l.proxy_fd >= 0)
			e |= setvar(set, max, "LGRUN_PROXY_PORT", "%u",
				    l.proxy_port);
		/* base URLs on our loopback: out of a sealed tree's reach */
		for (size_t i = 0; l.proxy_fd >= 0 && !cfg.sealed &&
				   cfg.llm_mode != LG_LLM_PROXY && i < nroutes;
		     i++)
			e |= setvar(set, max, routes[i].env,
				    "http://127.0.0.1:%u/%s", l.proxy_port,
				    routes[i].name);
		if (l.egress) {
			static const char *const vars[] = { "HTTP_PROXY",
							    "HTTPS_PROXY",
							    "http_proxy",
							    "https_proxy" };

			for (size_t i = 0; i < 4; i++)
				e |= setvar(set, max, vars[i],
					    "http://127.0.0.1:%u",
					    l.egress_port);
			/*
			 * Set and empty, not unset: gemini-cli's .env files
			 * fill only variables that are unset.
			 */
			e |= setvar(set, max, "NO_PROXY", "%s", "");
			e |= setvar(set, max, "no_proxy", "%s", "");
			if (l.ca) {
				/*
				 * Node and Codex add the CA to what they
				 * trust; the others replace their store: the
				 * system's with the CA appended.
				 */
				e |= setvar(set, max, "NODE_EXTRA_CA_CERTS",
					    "%s", l.ca_path);
				e |= setvar(set, max, "CODEX_CA_CERTIFICATE",
					    "%s", l.ca_path);
				e |= setvar(set, max, "SSL_CERT_FILE", "%s",
					    l.bundle_path);
				e |= setvar(set, max, "REQUESTS_CA_BUNDLE",
					    "%s", l.bundle_path);
				e |= setvar(set, max, "CURL_CA_BUNDLE", "%s",
					    l.bundle_path);
			}
		}
		env = e ? NULL : make_env(set, &env_ours);
		if (!env)
			for (size_t i = 0; set[i]; i++)
				free(set[i]);
	}
	if (!env) {
		lg_err("out of memory");
		rc = LG_EXIT_ERROR;
		goto out;
	}

	int outp[2] = { -1, -1 }, errp[2] = { -1, -1 }, pty_slave = -1;
	bool err_tty = false;

	if (cfg.bpf_mode == LG_BPF_ON) {
		char why[300];

		if (observer_start(&l, &cfg, false, why, sizeof(why)) < 0) {
			lg_err("--bpf=on: %s", why);
			rc = LG_EXIT_ERROR;
			goto out;
		}
	}

	if (cfg.watch_output) {
		/* On a terminal the command still gets one: a pty we read. */
		if (isatty(STDOUT_FILENO)) {
			r = lg_pty_open(isatty(STDIN_FILENO) ? STDIN_FILENO :
							       STDOUT_FILENO,
					STDOUT_FILENO, &l.pty_master,
					&pty_slave);
			if (r < 0)
				lg_warn("--watch-output: no pseudo-terminal (%s): the command's output goes through pipes",
					strerror(-r));
		}
		if (pty_slave >= 0) {
			/* a background lgrun leaves the keyboard alone */
			l.relay_in = isatty(STDIN_FILENO) &&
				     tcgetpgrp(STDIN_FILENO) == getpgrp();
			err_tty = isatty(STDERR_FILENO);
			lg_launch_set_pty(pty_slave, l.relay_in, err_tty);
		}
		if ((pty_slave < 0 && pipe2(outp, O_CLOEXEC) < 0) ||
		    (!err_tty && pipe2(errp, O_CLOEXEC) < 0)) {
			lg_err("--watch-output: cannot make pipes: %s",
			       strerror(errno));
			rc = LG_EXIT_ERROR;
			goto out;
		}
		lg_launch_set_stdio(outp[1], errp[1]);
	}
	{
		/* lgrun's record, read-only for the tree where we can */
		const char *keep[] = { state_dir, info.audit_path,
				       info.metrics_path };

		lg_launch_isolate(cfg.isolate);
		for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++) {
			size_t n = strlen(state_dir);

			if (i && keep[i] &&
			    (strncmp(keep[i], state_dir, n) == 0 &&
			     keep[i][n] == '/'))
				continue; /* inside the state dir */
			if (keep[i] && access(keep[i], F_OK) == 0)
				lg_launch_protect(keep[i]);
		}
	}
	if (cfg.sealed)
		lg_launch_seal(l.egress_port);
	r = lg_launch(&l.child, o.argv, env, &filter, &cg, &exec_errno);
	if (r >= 0 && l.child.sealed_fd >= 0) {
		lg_egress_listen_also(l.egress, l.child.sealed_fd);
		lg_info("network: sealed, the egress proxy is the tree's only way out");
	}
	if (r >= 0 && cfg.isolate)
		lg_info("the tree's view: %s; %s",
			(l.child.isolated & LG_ISOLATED_STATE) ?
				"lgrun's state is read-only in its mounts" :
				"lgrun's state is guarded by the filter only",
			(l.child.isolated & LG_ISOLATED_CGROUP) ?
				"it cannot leave its cgroup" :
				"a privileged process could leave its cgroup");
	if (cfg.watch_output) {
		struct epoll_event ev = { .events = EPOLLIN };

		for (int i = 0; i < 2; i++) {
			if (i ? errp[1] >= 0 : outp[1] >= 0)
				close(i ? errp[1] : outp[1]);
		}
		if (pty_slave >= 0)
			close(pty_slave);
		l.out_r[0] = pty_slave >= 0 ? l.pty_master : outp[0];
		l.out_r[1] = errp[0];
		for (int i = 0; i < 2; i++) {
			if (l.out_r[i] < 0)
				continue;
			/* bigger pipes: fewer wake-ups for bulk output */
			if (l.out_r[i] != l.pty_master)
				fcntl(l.out_r[i], F_SETPIPE_SZ, 1 << 20);
			fcntl(l.out_r[i], F_SETFL, O_NONBLOCK);
			ev.data.fd = l.out_r[i];
			epoll_ctl(l.epfd, EPOLL_CTL_ADD, l.out_r[i], &ev);
		}
		if (r >= 0 && l.relay_in &&
		    lg_tty_raw(STDIN_FILENO, &l.saved_tty) == 0) {
			l.tty_raw = true;
			lg_log_crlf = isatty(STDERR_FILENO);
			fcntl(l.pty_master, F_SETFL, O_NONBLOCK);
			ev.data.fd = STDIN_FILENO;
			epoll_ctl(l.epfd, EPOLL_CTL_ADD, STDIN_FILENO, &ev);
		}
	}
	lg_filter_free(&filter);
	free_env(env, env_ours);
	env = NULL;
	if (r < 0) {
		lg_cgroup_destroy(&cg);
		if (exec_errno) {
			lg_err("cannot execute '%s': %s", o.argv[0],
			       strerror(exec_errno));
			{
				rc = exec_errno == ENOENT ? LG_EXIT_NOTFOUND :
							    LG_EXIT_NOEXEC;
				goto out;
			}
		}
		{
			rc = LG_EXIT_ERROR;
			goto out;
		}
	}
	l.nt = lg_notifier_new(l.child.notify_fd);
	if (!l.nt) {
		lg_err("out of memory");
		kill(l.child.pid, SIGKILL);
		{
			rc = LG_EXIT_ERROR;
			goto out;
		}
	}
	if (!lg_notifier_sync_wakeup(l.nt))
		lg_dbg("SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP not supported");
	{
		struct epoll_event ev = { .events = EPOLLIN };

		ev.data.fd = l.efd;
		epoll_ctl(l.epfd, EPOLL_CTL_ADD, l.efd, &ev);
		ev.data.fd = l.sfd;
		epoll_ctl(l.epfd, EPOLL_CTL_ADD, l.sfd, &ev);
		add_sources(&l);
	}
	lg_info("session %s (agent %s): pid %d%s, %s%s", id, agent, l.child.pid,
		cfg.observe ? ", observe mode" : "",
		l.child.in_cgroup ? "cgroup " : "no cgroup",
		l.child.in_cgroup ? cg.path : "");
	if (l.obs) {
		observer_ready(&l); /* --bpf=on: loaded before the start */
	} else if (cfg.bpf_mode == LG_BPF_AUTO) {
		/*
		 * Loading takes some 10-20 ms of kernel work a short command
		 * would wait for at its exit: a session that lasts loads it.
		 */
		if (may_load_bpf()) {
			l.bpf_at = lg_mono_ms() + BPF_AUTO_DELAY_MS;
			lg_session_bpf_state(
				l.s,
				"off: the session ended before the observer was loaded");
		} else {
			lg_session_bpf_state(
				l.s,
				"off: loading eBPF programs needs root, or CAP_BPF and CAP_PERFMON");
			lg_info("the eBPF observer is off: it needs root, or CAP_BPF and CAP_PERFMON");
		}
	} else {
		lg_session_bpf_state(l.s, "off");
	}
	l.id = id;
	if (l.store) {
		struct epoll_event ev = { .events = EPOLLIN };

		lg_session_shared(l.s, lg_store_windows(l.store));
		lg_store_on_state(l.store, store_state, &l);
		if (cfg.store_fail)
			lg_session_store_required(l.s, store_is_up, l.store);
		ev.data.fd = lg_store_sub_fd(l.store);
		if (ev.data.fd >= 0)
			epoll_ctl(l.epfd, EPOLL_CTL_ADD, ev.data.fd, &ev);
	} else if (store_down[0]) {
		char msg[700];

		snprintf(
			msg, sizeof(msg),
			"the shared store is unavailable (%s): this session counts on this host alone (on_store_error = local)",
			store_down);
		lg_session_warn(l.s, "store", "store_unavailable", 0, "lgrun",
				msg);
	}
	lg_session_write_state(l.s, "running", -1, l.child.pid);
	lg_session_on_kill(l.s, kill_now, &l);
	if (cfg.guard.budget.max_processes) {
		l.procs_at = lg_mono_ms() + PROCS_TICK_MS;
		if (cg.ok) {
			char pm[PATH_MAX + 32], v[32];
			FILE *f;

			snprintf(pm, sizeof(pm), "%s/pids.max", cg.path);
			f = fopen(pm, "we");
			if (f) { /* the pids controller is on: the kernel enforces */
				snprintf(v, sizeof(v), "%u\n",
					 cfg.guard.budget.max_processes + 1);
				fputs(v, f);
				fclose(f);
			}
		}
	}
	if (start_notify_thread(&l, l.nt) < 0) {
		lg_err("cannot start the notify thread");
		lg_tree_kill(&cg, KILL_WAIT_MS, &(const char *){ NULL });
		{
			rc = LG_EXIT_ERROR;
			goto out;
		}
	}

	rc = event_loop(&l);
	drain_output(&l);
	restore_terminal(&l);
	readers_left = !stop_notify_thread(&l);
	/* its last flows, before the end record */
	egress_left = !lg_egress_stop(l.egress);
	l.egress = NULL;
	observer_finish(&l);
	if (rc == LG_EXIT_TRIPPED || rc == LG_EXIT_UNRECORDED) {
		const char *why = lg_session_trip_reason(l.s);

		print_trip(&l, id, lg_session_trip_summary(l.s),
			   info.audit_path, state_dir);
		/* the one terminal record: how the session ended */
		lg_session_audit_end(l.s,
				     why && strcmp(why, "timeout") == 0 ?
					     "timed_out" :
				     why && (strncmp(why, "budget", 6) == 0 ||
					     strncmp(why, "max_", 4) == 0) ?
					     "budget_exceeded" :
					     "tripped",
				     rc, lg_session_trip_summary(l.s));
	} else {
		lg_launch_restore_tty(&l.child);
		rc = rc < 0 ? LG_EXIT_ERROR : exit_code(l.status);
		record_shim_stats(&l);
		lg_session_write_state(l.s,
				       l.got_signal ? "cancelled" : "exited",
				       rc, l.child.pid);
		lg_session_write_metrics(l.s);
		{
			char why[128];

			if (l.got_signal)
				snprintf(why, sizeof(why),
					 "cancelled by %s, exit status %d",
					 strsignal(l.got_signal), rc);
			else
				snprintf(why, sizeof(why),
					 "completed, exit status %d", rc);
			lg_session_audit_end(l.s,
					     l.got_signal ? "cancelled" :
					     rc == LG_EXIT_ERROR &&
							     l.status == 0 ?
							    "error" :
							    "completed",
					     rc, why);
		}
		{
			struct lg_session_stats st;

			lg_session_stats(l.s, &st);
			if (st.would_trip)
				fprintf(stderr,
					"lgrun: observe mode: the guard would have tripped %llu time(s); see %s\n",
					(unsigned long long)st.would_trip,
					info.audit_path);
		}
	}
out:
	ca_wait(&l, false); /* an error while it was being made */
	restore_terminal(&l);
	egress_left |= !lg_egress_stop(l.egress); /* NULL once stopped */
	if (l.ca_path[0])
		unlink(l.ca_path);
	if (l.bundle_path[0])
		unlink(l.bundle_path);
	if (l.ca && !readers_left && !egress_left)
		l.tls->ca_free(l.ca);
	if (env) /* an error between making it and the launch */
		free_env(env, env_ours);
	/* each source's finish; what was made before they were added: here */
	lg_sources_finish(&l.src);
	observer_free(&l);
	store_free(&l);
	lg_filter_free(&filter); /* a no-op once the launch took it */
	proxy_free(&l);
	control_free(&l);
	if (cg_made)
		lg_cgroup_destroy(&cg);
	if (!readers_left &&
	    !egress_left) { /* else a notify thread may still use them */
		lg_notifier_free(l.nt);
		lg_session_free(l.s);
		lg_config_free(&cfg);
	}
	return rc;
}
