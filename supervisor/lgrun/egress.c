// SPDX-License-Identifier: MIT
/*
 * The egress proxy's side in lgrun ([llm] mode = proxy or both, or a
 * sealed network): the session CA (made on its own thread while the
 * session is set up), the proxy's hooks (they run on its threads), its
 * start; and the secret both proxies ask for.
 */
#include <arpa/inet.h>
#include <dirent.h>

#include "run.h"
#include "lib/tcp.h"

/*
 * The session CA for the egress proxy: liblgtls.so (OpenSSL) loaded now,
 * the CA made in memory, its certificate and a bundle (the system's CAs
 * with it) written to the run dir for the tree to trust. False, said why,
 * when it cannot be: the proxy then tunnels without them.
 */
static bool make_ca(struct loop *l, const char *run_dir, const char *id)
{
	const char *sys = getenv("SSL_CERT_FILE");
	char path[PATH_MAX];
	struct lg_error err;
	void *h;
	const struct lg_tls_ops *(*get)(void);
	int r;

	if (!lg_libdir_file("liblgtls.so", path, sizeof(path)) ||
	    !(h = dlopen(path, RTLD_NOW | RTLD_LOCAL))) {
		const char *e = dlerror();

		lg_warn("egress proxy: no session CA: cannot load %s: %s", path,
			e ? e : "not found");
		return false;
	}
	get = (const struct lg_tls_ops *(*)(void))dlsym(h, "lg_tls_ops");
	l->egress.tls = get ? get() : NULL;
	if (!l->egress.tls) {
		lg_warn("egress proxy: no session CA: %s lacks lg_tls_ops",
			path);
		return false;
	}
	l->egress.ca = l->egress.tls->ca_new(id, &err);
	if (!l->egress.ca) {
		lg_warn("egress proxy: no session CA: %s", err.msg);
		return false;
	}
	if (!sys || access(sys, R_OK) < 0)
		sys = l->egress.tls->default_bundle();
	snprintf(l->egress.ca_path, sizeof(l->egress.ca_path), "%s/%d.ca.pem",
		 run_dir, getpid());
	snprintf(l->egress.bundle_path, sizeof(l->egress.bundle_path),
		 "%s/%d.bundle.pem", run_dir, getpid());
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
		r = l->egress.tls->ca_write(l->egress.ca, l->egress.ca_path,
					    l->egress.bundle_path, files);
	}
	if (r < 0) {
		lg_warn("egress proxy: no session CA: cannot write %s: %s",
			l->egress.ca_path, strerror(-r));
		unlink(l->egress.ca_path);
		unlink(l->egress.bundle_path);
		l->egress.ca_path[0] = l->egress.bundle_path[0] = '\0';
		l->egress.tls->ca_free(l->egress.ca);
		l->egress.ca = NULL;
		return false;
	}
	lg_info("session CA: %s (bundle %s)", l->egress.ca_path,
		l->egress.bundle_path);
	return true;
}

static void *ca_job(void *arg)
{
	struct loop *l = arg;

	mkdir(l->egress.ca_run_dir, 0700);
	make_ca(l, l->egress.ca_run_dir, l->egress.ca_id);
	atomic_store(&l->egress.ca_ready, l->egress.ca != NULL);
	return NULL;
}

/* The session CA: started on its thread (or made now), then waited for. */
void ca_start(struct loop *l, const char *state_dir, const char *id)
{
	snprintf(l->egress.ca_run_dir, sizeof(l->egress.ca_run_dir), "%s/run",
		 state_dir);
	l->egress.ca_id = id;
	l->egress.ca_started =
		pthread_create(&l->egress.ca_thread, NULL, ca_job, l) == 0;
}

/* make: if its thread could not start, made now (not at an error's exit) */
void ca_wait(struct loop *l, bool make)
{
	if (l->egress.ca_started)
		pthread_join(l->egress.ca_thread, NULL);
	else if (make && l->egress.ca_id)
		ca_job(l);
	l->egress.ca_started = false;
	l->egress.ca_id = NULL;
}

/* The egress proxy asks: is host:port one lgrun reads? */
static const char *egress_decrypt(void *ctx, const char *host, uint16_t port)
{
	struct loop *l = ctx;

	/* a connection may come before the CA is made: not decrypted */
	if (!atomic_load(&l->egress.ca_ready) || !atomic_load(&l->proxy.up) ||
	    port != 443)
		return NULL;
	for (size_t i = 0; i < l->egress.ndecrypt; i++)
		if (strcasecmp(l->egress.decrypt[i].host, host) == 0)
			return l->egress.decrypt[i].route;
	return NULL;
}

static int egress_mitm(void *ctx, int fd, const struct lg_egress_req *r,
		       const char *route, uint64_t *up, uint64_t *down,
		       const char **why)
{
	struct loop *l = ctx;
	unsigned long long u = 0, d = 0;
	char path[sizeof(l->secret) + 32];
	int rc;

	/* under the route, behind the secret the LLM proxy asks for */
	snprintf(path, sizeof(path), "%s/%s", l->secret, route);
	rc = l->egress.tls->mitm(l->egress.ca, fd, r->host, r->port, path,
				 l->proxy.port, &u, &d, why);

	*up += u;
	*down += d;
	return rc;
}

/* An egress proxy connection ended (its own thread). */
static void egress_flow(void *ctx, const struct lg_egress_flow *f)
{
	struct loop *l = ctx;

	struct lg_event ev = { .kind = LG_EV_EGRESS,
			       .source = LG_SRC_PROXY,
			       .pid = f->pid,
			       .target = f->host,
			       .egress = f };

	lg_session_feed(l->s, &ev, NULL);
}

/* The inode of the peer's socket (lg_tcp_peer); or 0. */
static unsigned long peer_inode(const struct sockaddr_in *peer)
{
	unsigned long uid, ino;

	return lg_tcp_peer(peer, &uid, &ino) == 0 ? ino : 0;
}

/* Does a process of the tree (lgrun's descendants) hold socket ino? */
static bool tree_holds(unsigned long ino)
{
	pid_t pids[4096];
	int n = lg_descendants(pids, 4096);
	char want[40], got[40], dir[40];

	snprintf(want, sizeof(want), "socket:[%lu]", ino);
	for (int i = 0; i < n; i++) {
		struct dirent *de;
		bool found = false;
		DIR *d;

		snprintf(dir, sizeof(dir), "/proc/%d/fd", pids[i]);
		d = opendir(dir);
		if (!d)
			continue;
		while (!found && (de = readdir(d))) {
			ssize_t k = readlinkat(dirfd(d), de->d_name, got,
					       sizeof(got) - 1);

			if (k > 0) {
				got[k] = '\0';
				found = strcmp(got, want) == 0;
			}
		}
		closedir(d);
		if (found)
			return true;
	}
	return false;
}

static void egress_refused(void *ctx, const struct sockaddr_in *peer,
			   const char *why)
{
	struct loop *l = ctx;
	unsigned long ino = peer ? peer_inode(peer) : 0;

	/*
	 * A client of the tree that asks before it sends its credentials
	 * (git: libcurl's CURLAUTH_ANY) gets its 407 challenge and comes
	 * again with them: not an outsider.
	 */
	if (ino && tree_holds(ino)) {
		lg_dbg("egress proxy: a client of the tree asked without its credentials first: 407, it comes again with them");
		return;
	}
	lg_session_notice(l->s, LG_EV_REFUSED,
			  &(struct lg_notice){ .rule = "egress",
					       .summary = why,
					       .peer = peer });
}

int make_secret(struct loop *l)
{
	unsigned char b[16];
	ssize_t n = getrandom(b, sizeof(b), 0);

	if (n != (ssize_t)sizeof(b))
		return n < 0 ? -errno : -EIO;
	for (size_t i = 0; i < sizeof(b); i++)
		snprintf(l->secret + 2 * i, 3, "%02x", b[i]);
	if (!lg_egress_basic_auth(l->secret, l->egress.auth,
				  sizeof(l->egress.auth)))
		return -E2BIG;
	return 0;
}

/*
 * The egress proxy on 127.0.0.1 (HTTP_PROXY, HTTPS_PROXY), its hooks
 * above; the CA it decrypts with, waited for. 0, or an exit status.
 */
int egress_start(struct loop *l)
{
	LG_AUTOCLOSE int fd = lg_proxy_listen(&l->egress.port);
	struct lg_egress_cfg ec = {
		.flow = egress_flow,
		.decrypt = egress_decrypt,
		.mitm = egress_mitm,
		.auth = l->egress.auth,
		.refused = egress_refused,
		/* plain-HTTP model requests: to the LLM proxy, if on */
		.model_port = l->proxy.fd >= 0 ? l->proxy.port : 0,
		.model_prefix = l->proxy.model_prefix,
		.ctx = l
	};

	l->egress.egress = fd >= 0 ? lg_egress_start(fd, &ec) : NULL;
	if (!l->egress.egress) {
		lg_err("llm.mode: cannot start the egress proxy on 127.0.0.1: %s",
		       strerror(fd < 0 ? -fd : errno));
		return LG_EXIT_ERROR;
	}
	lg_steal_fd(&fd); /* the egress proxy's now */
	lg_info("egress proxy on 127.0.0.1:%u (HTTP_PROXY, HTTPS_PROXY)",
		l->egress.port);
	ca_wait(l, true);
	return 0;
}
