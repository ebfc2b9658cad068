/* SPDX-License-Identifier: MIT */
/*
 * lgrun's run: the state of one supervised session (struct loop) shared by
 * lgrun.c (the command line, the set-up, main) and its parts: run_notify.c
 * (the notify threads and signals), run_egress.c (the session CA and the
 * egress proxy's hooks), run_trip.c (the kill and its record), run_output.c
 * (--watch-output), run_observer.c (the eBPF observer's life), run_loop.c
 * (the event loop and its sources). Internal to lgrun.
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
#include "egress/agentenv.h"
#include "tree/cgroup.h"
#include "tree/watchdog.h"
#include "lib/cleanup.h"
#include "egress/egress.h"
#include "egress/tls.h"
#include "config/config.h"
#include "control/control.h"
#include "proxy/proxy.h"
#include "tree/pty.h"
#include "seccomp/filter.h"
#include "tree/launch.h"
#include "lib/log.h"
#include "control/nested.h"
#include "seccomp/notify.h"
#include "observer/observer.h"
#include "seccomp/pathres.h"
#include "session/session.h"
#include "lib/sources.h"
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
 * watchdog is a process, forked before any thread. The session and the
 * store lock themselves; of struct loop the other threads read what was
 * set before they started, atomics, and what exec_mu guards (but for the
 * LLM proxy's fd, which egress_decrypt reads and the main thread sets to
 * -1 when the proxy's library cannot load), and they wake the main
 * thread through efd.
 */
struct loop {
	struct lg_session *s;
	struct lg_notifier *nt;
	struct lg_cgroup *cg;
	struct lg_child child;
	const struct lg_config *cfg;
	struct lg_control *ctl;
	int ctl_epfd; /* the control module's own epoll set */
	/*
	 * The session's secret: in the proxy URL and the base URLs the tree
	 * gets, so only the tree uses lgrun's proxies (loopback answers every
	 * local user); egress_auth is what the egress proxy asks for.
	 */
	char secret[33];
	char egress_auth[128];
	/* the route of plain-HTTP model requests, behind the secret */
	char model_prefix[48];
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
	int store_fd; /* its kill channel, as watched (main thread) */
	const char *id;
	struct termios saved_tty;
	struct lg_termtext term[2];
	/* A trip answered through the proxy: the agent may end its turn first. */
	uint64_t linger_until; /* a refused nested lgrun says why first */
	atomic_uint_fast64_t grace_until;
	int sfd, efd;
	struct lg_sources src; /* the loop: its epoll set, fds, deadlines */
	pthread_t thread;
	bool thread_started;
	atomic_int readers; /* notify threads running, abandoned ones too */
	int survivors; /* after the trip's kill */
	unsigned escaped; /* processes that had left the cgroup, killed */
	int marker_err; /* the killed marker could not be written: -errno */
	int audit_err; /* the trip record could not be written: -errno */
	uint64_t watched_id; /* the notification watch_reader acted on */
	atomic_bool stop;
	/*
	 * An exec of a static or setuid image waits (run_observer.c, on_exec) until the
	 * main thread has the observer trace syscalls (exec_watch_serve).
	 */
	pthread_mutex_t exec_mu;
	pthread_cond_t exec_cv;
	bool exec_asked; /* under exec_mu */
	char exec_why[200];
	atomic_bool exec_traced; /* traced now, or it will not be: no more asks */
	bool main_exited, draining;
	int status;
	uint64_t kill_at; /* grace period end after a forwarded signal / drain */
	int got_signal;
};

/* lgrun.c's command line. */
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
	struct lg_bpf filter;
	char state_dir[PATH_MAX], audit_path[PATH_MAX + 16];
	char metrics_path[PATH_MAX + 16], gen_id[96];
	char flow_id[33];
	char options_json[2048]; /* the options that set keys (recording) */
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

/* The phases of main (run_setup.c, run_launch.c): 0, or the exit status. */
int configure(struct run *run);

int check_blocked(struct run *run);

int prepare(struct run *run);

int setup_loop_fds(struct run *run);

int setup_session(struct run *run);

int start_proxies(struct run *run);

int build_env(struct run *run);

int launch_tree(struct run *run);

int start_watching(struct run *run);

/* Shared between the parts (see each file). */

/* run_launch.c: an environment make_env made, ours from ours_from on. */
void free_env(char **env, size_t ours_from);

/* libdir.c: a file next to lgrun's own (../lib/NAME). */
bool libdir_file(const char *name, char *out, size_t size);

int start_notify_thread(struct loop *l, struct lg_notifier *nt);

bool stop_notify_thread(struct loop *l);

void watch_reader(struct loop *l);

uint64_t trip_grace(struct loop *l);

bool tree_alive(struct loop *l);

void reap_children(struct loop *l);

void on_signal(struct loop *l);

void ca_start(struct loop *l, const char *state_dir, const char *id);

void ca_wait(struct loop *l, bool make);

const char *egress_decrypt(void *ctx, const char *host, uint16_t port);

int egress_mitm(void *ctx, int fd, const struct lg_egress_req *r,
		const char *route, uint64_t *up, uint64_t *down,
		const char **why);

void agentenv_say(void *ctx, const char *file, const char *key);

void egress_flow(void *ctx, const struct lg_egress_flow *f);
/* A connection to the egress proxy from outside the tree, refused. */
void egress_refused(void *ctx, const struct sockaddr_in *peer, const char *why);
/* The session's secret for its proxies (random, hex) into l->secret. */
int make_secret(struct loop *l);

void wake_main(void *ctx);

void kill_now(void *ctx);

void record_shim_stats(struct loop *l);

void restore_terminal(struct loop *l);

int run_trip(struct loop *l);

void load_proxy(struct loop *l);

bool pass_output(struct loop *l, int which);

void relay_input(struct loop *l);

void drain_output(struct loop *l);

void count_processes(struct loop *l);

void store_state(void *ctx, bool up, const char *what);

void store_watch(struct loop *l);

bool store_is_up(void *ctx);

void observer_ready(struct loop *l);

bool may_load_bpf(void);
/* An exec's wish to trace syscalls, served on the main thread. */
void exec_watch_serve(struct loop *l);
void exec_watch_init(struct loop *l);

int observer_start(struct loop *l, const struct lg_config *cfg, bool async,
		   char *why, size_t why_size);

void observer_auto(struct loop *l);

void observer_finish(struct loop *l);

int event_loop(struct loop *l);

void observer_free(void *ctx);

void store_free(void *ctx);

void proxy_free(void *ctx);

void control_free(void *ctx);

void add_sources(struct loop *l);

extern const struct lg_loop_source signals_source, output_source,
	observer_source, store_source, proxy_source, control_source,
	wake_source;

void print_trip(const struct loop *l, const char *id, const char *summary,
		const char *audit, const char *state_dir);

#endif
