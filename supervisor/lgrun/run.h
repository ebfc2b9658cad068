/* SPDX-License-Identifier: MIT */
/*
 * lgrun's run: one supervised session, internal to lgrun. main.c (the
 * command line, main, the end) runs the phases of setup.c and launch.c
 * over one struct run, then loop.c's event loop. The running session is
 * struct loop: what every part reads (the session, the config, the tree,
 * the proxies' secret), the loop (lib/sources.h: its epoll set, each
 * watched fd's source, the deadlines), and one part per source group, its
 * state a sub-struct that the file running it owns:
 *
 *   loop.c      the loop, the wake-ups from other threads, the guard's
 *               timers and the recording's flush
 *   proxy.c     the LLM proxy: its routes, its socket, its library
 *   trip.c      the kill: when it is due, its run and its record
 *   tree.c      signals (forwarded; SIGCHLD reaps), the command's end,
 *               the process count
 *   notify.c    the notify threads, and the watch on their reads
 *   output.c    --watch-output: the command's output, our terminal's keys
 *   observer.c  the eBPF observer's life, syscall tracing asked at an exec
 *   egress.c    the egress proxy's hooks, the session CA, the secret
 *   control.c   the control socket (the shims, nested lgruns)
 *   store.c     the shared store's kill channel
 *   libdir.c    lgrun's libraries, found next to it
 *
 * A file calls only files below it in this list (main.c, setup.c and
 * launch.c above them all); from tree.c on, a part calls none of the
 * others but libdir.c.
 */
#ifndef LG_RUN_H
#define LG_RUN_H

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
#include "record/audit.h"
#include "record/record.h"
#include "lib/json.h"
#include "egress/agentenv.h"
#include "tree/cgroup.h"
#include "tree/watchdog.h"
#include "lib/cleanup.h"
#include "lib/error.h"
#include "egress/egress.h"
#include "egress/tls.h"
#include "config/config.h"
#include "control/control.h"
#include "proxy/proxy.h"
#include "tree/pty.h"
#include "seccomp/filter.h"
#include "tree/launch.h"
#include "lib/log.h"
#include "lib/procmem.h"
#include "lib/libdir.h"
#include "lib/caps.h"
#include "control/nested.h"
#include "seccomp/notify.h"
#include "observer/observer.h"
#include "seccomp/pathres.h"
#include "guard/sink.h"
#include "session/session.h"
#include "lib/sources.h"
#include "lib/spill.h"
#include "quarantine/quarantine.h"
#include "store/state.h"
#include "store/store.h"
#include "lib/termtext.h"
#include "lib/text.h"

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
#define PROXY_TRIP_GRACE_MS 1500 /* for the agent to show the model error */
/* the quarantine index's lines that may wait (some 600 entries) */
#define SPILL_BYTES (256u << 10)

/*
 * The threads lgrun runs. The main thread runs the loop: signals, timers,
 * the control socket, the observer's events, the kill. A notify thread
 * blocks in SECCOMP_IOCTL_NOTIF_RECV and answers (blocking there is what
 * lets the kernel's synchronous wake-up hand the CPU straight between
 * target and supervisor); one at a time reads, and up to
 * MAX_STUCK_READERS abandoned ones may still wait on a read of a
 * target's memory (watch_reader). While the session is set up, the
 * session CA is made on a thread of its own (joined before the egress
 * proxy starts); with --bpf=auto the observer loads on another (joined
 * once it is done). The LLM proxy (liblgproxy.so, once the agent first
 * connects) runs libmicrohttpd's listening thread, a thread per
 * connection and an upstream thread per forwarded request (libcurl); the
 * egress proxy an acceptor thread and a thread per connection. The
 * watchdog is a process, forked before the tree and the CA's thread
 * (see setup_watchdog). The session and the
 * store lock themselves; of struct loop the other threads read what was
 * set before they started, atomics (the LLM proxy's up, which the main
 * thread clears when the proxy's library cannot load), and what exec_mu
 * guards, and they wake the main thread through efd.
 */

/* tree.c: the command's tree as the main thread follows it. */
struct run_tree {
	int sfd; /* the signals lgrun takes (signalfd) */
	bool main_exited, draining;
	int status; /* the command's, once it exited */
	int got_signal; /* the first signal forwarded to the tree */
	uint64_t kill_at; /* grace period end after a forwarded signal / drain */
	uint64_t procs_at; /* next process count (budget.max_processes) */
};

/* notify.c: the notify threads. */
struct run_notify {
	struct lg_notifier *nt; /* the one that reads now */
	pthread_t thread;
	bool thread_started;
	atomic_int readers; /* notify threads running, abandoned ones too */
	uint64_t watched_id; /* the notification watch_reader acted on */
	atomic_bool stop;
};

/* output.c: --watch-output. */
struct run_output {
	int r[2]; /* read ends for the command's 1 and 2 */
	int pty_master; /* on a terminal: r[0] is this */
	bool relay_in, tty_raw; /* our terminal's keys go to the pty */
	bool no_splice[2]; /* splice(2) cannot write to our stdout, stderr */
	struct termios saved_tty;
	struct lg_termtext term[2];
};

/* observer.c: the eBPF observer. */
struct run_observer {
	struct lg_observer *obs; /* or NULL */
	char btf_cache[PATH_MAX + 8]; /* STATE_DIR/bpf (btfcache.c) */
	bool finished;
	uint64_t bpf_at; /* --bpf=auto: when to start loading it */
	/*
	 * An exec of a static or setuid image waits (on_exec, on a notify
	 * thread) until the main thread has the observer trace syscalls
	 * (exec_watch_serve).
	 */
	pthread_mutex_t exec_mu;
	pthread_cond_t exec_cv;
	bool exec_asked; /* under exec_mu */
	char exec_why[200];
	atomic_bool exec_traced; /* traced now, or it will not be: no more asks */
};

/* proxy.c: the LLM proxy, a socket from the start, the library on first use. */
struct run_proxy {
	int fd;
	uint16_t port;
	/* fd listens: read by the egress proxy's threads (egress_decrypt) */
	atomic_bool up;
	struct lg_proxy_route routes[16];
	size_t nroutes;
	/* the route of plain-HTTP model requests, behind the secret */
	char model_prefix[48];
	struct lg_proxy *proxy;
	void (*stop)(struct lg_proxy *p);
};

/* egress.c: the egress proxy ([llm] mode = proxy or both) and its CA. */
struct run_egress {
	struct lg_egress *egress;
	uint16_t port;
	char auth[128]; /* what it asks for: the secret */
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
};

/* control.c: the control socket. */
struct run_control {
	struct lg_control *ctl;
	int epfd; /* the control module's own epoll set */
};

/* store.c: the shared store ([store] backend = redis). */
struct run_store {
	struct lg_store *store; /* or NULL */
	int fd; /* its kill channel, as watched */
};

/* trip.c: the kill. */
struct run_trip {
	/* when kill_now() wrote cgroup.kill (monotonic ns; another thread) */
	_Atomic uint64_t kill_started_ns;
	/* A trip answered through the proxy: the agent may end its turn first. */
	atomic_uint_fast64_t grace_until;
	uint64_t linger_until; /* a refused nested lgrun says why first */
	int survivors; /* after the trip's kill */
	unsigned escaped; /* processes that had left the cgroup, killed */
	bool after_end; /* tripped by what was judged after the tree ended */
	int marker_err; /* the killed marker could not be written: -errno */
	int audit_err; /* the trip record could not be written: -errno */
};

/* The running session. */
struct loop {
	struct lg_session *s;
	/*
	 * The session as its sources see it (guard/sink.h), made with it
	 * (setup_session): the notify step's, the control socket's, the
	 * observer's and the LLM proxy's one way in.
	 */
	struct lg_sink sink;
	const struct lg_config *cfg;
	struct lg_cgroup *cg;
	struct lg_child child;
	const char *id;
	const char *state_dir;
	/*
	 * The session's secret: in the proxy URL and the base URLs the tree
	 * gets, so only the tree uses lgrun's proxies (loopback answers every
	 * local user).
	 */
	char secret[33];
	struct lg_sources src; /* the loop: its epoll set, fds, deadlines */
	int efd; /* other threads wake the main one (an eventfd) */
	struct run_tree tree;
	struct run_notify notify;
	struct run_output out;
	struct run_observer observer;
	struct run_proxy proxy;
	struct run_egress egress;
	struct run_control ctl;
	struct run_store store;
	struct run_trip trip;
};

/* main.c's command line. */
struct opts {
	const char *config, *profile, *agent, *session, *state_dir;
	/* options that set config keys (lg_options), applied over the file */
	struct opt_set {
		const struct lg_option *opt;
		const char *arg;
	} sets[32];
	size_t nsets;
	int verbose;
	char **argv;
};

/* What main sets up, phase by phase, and tears down. */
struct run {
	struct opts o;
	struct lg_config cfg;
	struct lg_session_info info;
	struct loop l;
	struct lg_cgroup cg;
	struct lg_watchdog wd; /* kills the tree if lgrun dies */
	struct lg_spill *spill; /* the quarantine index's lines on their way */
	struct lg_spill *rec_spill; /* the recording's */
	struct lg_bpf filter;
	char state_dir[PATH_MAX], audit_path[PATH_MAX + 16];
	char metrics_path[PATH_MAX + 16], gen_id[96];
	char flow_id[33];
	char options_json[2048]; /* the options that set keys (recording) */
	char store_self[64], store_down[600];
	char shim_path[PATH_MAX + 32], sock_path[PATH_MAX + 32];
	const char *id, *agent;
	char **env; /* made, until the launch */
	size_t env_ours;
	bool cg_made;
	bool readers_left, egress_left; /* threads that may still use them */
};

/* The phases of main (setup.c, launch.c): 0, or the exit status. */
int configure(struct run *run);
int check_blocked(struct run *run);
int setup_loop_fds(struct run *run);
int setup_watchdog(struct run *run);
int prepare(struct run *run);
int setup_session(struct run *run);
int start_proxies(struct run *run);
int build_env(struct run *run);
int launch_tree(struct run *run);
int start_watching(struct run *run);

/* launch.c: an environment make_env made, ours from ours_from on. */
void free_env(char **env, size_t ours_from);

/* loop.c: the loop, until the session ends (its exit status, or -errno). */
int event_loop(struct loop *l);
/* Every part's source with deadlines or a finish, in the order they tick. */
void add_sources(struct loop *l);

/* proxy.c: the routes and the socket (0, or an exit status). */
int proxy_start(struct loop *l);
/* The agent's own settings that take it around the proxy, said. */
void proxy_check_agent_settings(struct loop *l);
void proxy_free(void *ctx);
extern const struct lg_loop_source proxy_source;

/* trip.c */
int run_trip(struct loop *l);
void print_trip(const struct loop *l, const char *id, const char *summary,
		const char *audit, const char *state_dir);
/* The session decided to kill (its on_kill hook, lg_session_bind): on the deciding thread. */
void kill_now(void *ctx);
/* The proxy answered the agent after a trip (its thread). */
void wake_main(void *ctx);
/* Until when the tree waits for the agent to hear why (0: it does not). */
uint64_t trip_grace(struct loop *l);
/* A pending kill is due now (the agent has heard why). */
bool trip_due(struct loop *l);
extern const struct lg_loop_source trip_source;

/* tree.c: signals watched, the process budget set. */
void tree_start(struct loop *l);
bool tree_alive(struct loop *l);
void reap_children(struct loop *l);
/* The session is over with its tree (the command exited, a grace ran out). */
bool tree_over(struct loop *l);
extern const struct lg_loop_source tree_source, procs_source;

/* notify.c */
int start_notify_thread(struct loop *l, struct lg_notifier *nt);
bool stop_notify_thread(struct loop *l);
extern const struct lg_loop_source notify_source;

/* output.c: the command's ends of its output, made before it starts. */
struct output_ends {
	int out[2], err[2], pty_slave;
};
int output_ends(struct loop *l, struct output_ends *e);
void output_ends_close(struct output_ends *e);
/* Our ends into the loop; the keyboard relayed (started: the command). */
void output_watch(struct loop *l, const struct output_ends *e, bool started);
void drain_output(struct loop *l);
void restore_terminal(struct loop *l);

/* observer.c */
int observer_start(struct loop *l, bool async, struct lg_error *err);
/* The observer loaded (or failed to): wired in, or why not said. */
void observer_ready(struct loop *l);
/* The command runs: --bpf=on's observer wired in, or --bpf=auto's planned. */
void observer_at_start(struct loop *l);
void observer_finish(struct loop *l);
void observer_free(void *ctx);
extern const struct lg_loop_source observer_source;
/* An exec's wish to trace syscalls, served on the main thread. */
void exec_watch_init(struct loop *l);
void exec_watch_serve(struct loop *l);

/* egress.c */
/* The session's secret for its proxies (random, hex) into l->secret. */
int make_secret(struct loop *l);
void ca_start(struct loop *l, const char *state_dir, const char *id);
void ca_wait(struct loop *l, bool make);
/* The egress proxy started (0, or an exit status). */
int egress_start(struct loop *l);

/* control.c: the socket at path (0, or an exit status). */
int control_start(struct loop *l, const char *path);
void record_shim_stats(struct loop *l);
void control_free(void *ctx);
extern const struct lg_loop_source control_source;

/* store.c: the channel watched, the session told about the store. */
void store_start(struct loop *l, const char *down);
/* The kill channel watched (again, after it was reopened). */
void store_watch(struct loop *l);
/* After a trip: every supervisor of the session stops. */
void store_tell_killed(struct loop *l);
void store_free(void *ctx);
extern const struct lg_loop_source store_source;

#endif
