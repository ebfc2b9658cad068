// SPDX-License-Identifier: MIT
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "lib/atomic.h"
#include "lib/cleanup.h"
#include "tls.h"

#define MAX_LEAVES 64 /* hosts with a minted certificate, cached */
#define DAY (24L * 3600)

struct leaf {
	char host[256];
	SSL_CTX *ctx;
};

struct lg_ca {
	EVP_PKEY *key; /* the CA's: in memory only */
	X509 *cert;
	EVP_PKEY *leaf_key; /* one key for every leaf of the session */
	pthread_mutex_t mu;
	struct leaf leaves[MAX_LEAVES];
	size_t nleaves;
};

LG_DEFINE_CLEANUP(x509_freep, X509 *, X509_free)
LG_DEFINE_CLEANUP(ssl_ctx_freep, SSL_CTX *, SSL_CTX_free)
LG_DEFINE_CLEANUP(ssl_freep, SSL *, SSL_free)
#define LG_X509_AUTO LG_AUTO(x509_freep)
#define LG_SSL_CTX_AUTO LG_AUTO(ssl_ctx_freep)
#define LG_SSL_AUTO LG_AUTO(ssl_freep)

static EVP_PKEY *ec_key(void)
{
	return EVP_EC_gen("P-256");
}

static int set_serial(X509 *x)
{
	unsigned char b[16];
	BIGNUM *bn;
	int ok;

	if (RAND_bytes(b, sizeof(b)) != 1)
		return 0;
	b[0] &= 0x7f; /* positive */
	bn = BN_bin2bn(b, sizeof(b), NULL);
	ok = bn && BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x)) != NULL;
	BN_free(bn);
	return ok;
}

static int add_ext(X509 *issuer, X509 *x, int nid, const char *value)
{
	X509V3_CTX v3;
	X509_EXTENSION *ext;
	int ok;

	X509V3_set_ctx_nodb(&v3);
	X509V3_set_ctx(&v3, issuer, x, NULL, NULL, 0);
	ext = X509V3_EXT_conf_nid(NULL, &v3, nid, value);
	if (!ext)
		return 0;
	ok = X509_add_ext(x, ext, -1);
	X509_EXTENSION_free(ext);
	return ok;
}

static X509 *new_cert(EVP_PKEY *pub, const char *cn, long from, long to)
{
	X509 *x = X509_new();
	X509_NAME *name;

	if (!x)
		return NULL;
	name = X509_get_subject_name(x);
	if (!X509_set_version(x, 2) || !set_serial(x) ||
	    !X509_gmtime_adj(X509_getm_notBefore(x), from) ||
	    !X509_gmtime_adj(X509_getm_notAfter(x), to) ||
	    !X509_set_pubkey(x, pub) ||
	    !X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
					(const unsigned char *)cn, -1, -1, 0)) {
		X509_free(x);
		return NULL;
	}
	return x;
}

/* what, and OpenSSL's first error, into err */
static void say(struct lg_error *err, const char *what)
{
	unsigned long e = ERR_get_error();
	char buf[160] = "";

	if (e)
		ERR_error_string_n(e, buf, sizeof(buf));
	lg_error_set(err, 0, "%s%s%s", what, buf[0] ? ": " : "", buf);
}

static void ca_free(struct lg_ca *ca)
{
	if (!ca)
		return;
	for (size_t i = 0; i < ca->nleaves; i++)
		SSL_CTX_free(ca->leaves[i].ctx);
	EVP_PKEY_free(ca->key);
	EVP_PKEY_free(ca->leaf_key);
	X509_free(ca->cert);
	pthread_mutex_destroy(&ca->mu);
	free(ca);
}

LG_DEFINE_CLEANUP(ca_freep, struct lg_ca *, ca_free)

static struct lg_ca *ca_new(const char *name, struct lg_error *err)
{
	LG_AUTO(ca_freep) struct lg_ca *ca = calloc(1, sizeof(*ca));
	char cn[200];

	if (!ca) {
		lg_error_set(err, ENOMEM, "out of memory");
		return NULL;
	}
	pthread_mutex_init(&ca->mu, NULL);
	snprintf(cn, sizeof(cn), "lgrun session CA (%s)", name ? name : "");
	ca->key = ec_key();
	ca->leaf_key = ec_key();
	if (!ca->key || !ca->leaf_key) {
		say(err, "cannot make a key");
		return NULL;
	}
	ca->cert = new_cert(ca->key, cn, -DAY, 7 * DAY);
	if (!ca->cert ||
	    !X509_set_issuer_name(ca->cert, X509_get_subject_name(ca->cert)) ||
	    !add_ext(ca->cert, ca->cert, NID_basic_constraints,
		     "critical,CA:TRUE,pathlen:0") ||
	    !add_ext(ca->cert, ca->cert, NID_key_usage,
		     "critical,keyCertSign,cRLSign") ||
	    !add_ext(ca->cert, ca->cert, NID_subject_key_identifier, "hash") ||
	    !X509_sign(ca->cert, ca->key, EVP_sha256())) {
		say(err, "cannot make the CA certificate");
		return NULL;
	}
	return lg_steal_ptr(&ca);
}

/* Appends the file at path to fd, ending it with a newline. */
static int append_file(int fd, const char *path)
{
	int in = open(path, O_RDONLY | O_CLOEXEC), r = 0;
	char buf[65536], last = '\n';
	ssize_t k;

	if (in < 0)
		return -errno;
	while ((k = read(in, buf, sizeof(buf))) > 0) {
		if (write(fd, buf, (size_t)k) != k) {
			r = -EIO;
			break;
		}
		last = buf[k - 1];
	}
	close(in);
	if (!r && last != '\n' && write(fd, "\n", 1) != 1)
		r = -EIO;
	return r;
}

struct file_parts {
	const char *const *prefix;
	const char *data;
	size_t n;
};
/* lg_write_atomic's fill: the files of prefix, then data. */
static int fill_parts(int fd, void *ctx)
{
	const struct file_parts *p = ctx;
	int r = 0;

	for (size_t i = 0; p->prefix && p->prefix[i] && !r; i++)
		r = append_file(fd, p->prefix[i]);
	return r ? r : lg_write_all(fd, p->data, p->n);
}
/*
 * Writes the files of prefix (NULL-terminated, or NULL), then data, to
 * path all or nothing (lg_write_atomic), mode 0644 whatever the umask:
 * the tree only reads it.
 */
static int write_file(const char *path, const char *data, size_t n,
		      const char *const *prefix)
{
	return lg_write_atomic(path, 0644, false, fill_parts,
			       &(struct file_parts){ prefix, data, n });
}

static int ca_write(struct lg_ca *ca, const char *ca_path,
		    const char *bundle_path, const char *const *bundles)
{
	BIO *b = BIO_new(BIO_s_mem());
	char *pem;
	long n;
	int r;

	if (!b || !PEM_write_bio_X509(b, ca->cert)) {
		BIO_free(b);
		return -ENOMEM;
	}
	n = BIO_get_mem_data(b, &pem);
	r = write_file(ca_path, pem, (size_t)n, NULL);
	if (!r && bundle_path)
		r = write_file(bundle_path, pem, (size_t)n, bundles);
	BIO_free(b);
	return r;
}

static int alpn_http11(SSL *ssl, const unsigned char **out,
		       unsigned char *outlen, const unsigned char *in,
		       unsigned int inlen, void *arg)
{
	static const unsigned char h11[] = "\x08http/1.1";

	(void)ssl;
	(void)arg;
	if (SSL_select_next_proto((unsigned char **)out, outlen, h11,
				  sizeof(h11) - 1, in,
				  inlen) != OPENSSL_NPN_NEGOTIATED)
		return SSL_TLSEXT_ERR_ALERT_FATAL; /* http/1.1 or nothing */
	return SSL_TLSEXT_ERR_OK;
}

static SSL_CTX *mint(struct lg_ca *ca, const char *host)
{
	unsigned char addr[16];
	char san[300];
	bool ip = inet_pton(AF_INET, host, addr) == 1 ||
		  inet_pton(AF_INET6, host, addr) == 1;
	LG_X509_AUTO X509 *x = new_cert(ca->leaf_key, host, -DAY, 7 * DAY);
	LG_SSL_CTX_AUTO SSL_CTX *ctx = NULL;

	snprintf(san, sizeof(san), "%s:%s", ip ? "IP" : "DNS", host);
	if (!x || !X509_set_issuer_name(x, X509_get_subject_name(ca->cert)) ||
	    !add_ext(ca->cert, x, NID_subject_alt_name, san) ||
	    !add_ext(ca->cert, x, NID_basic_constraints, "critical,CA:FALSE") ||
	    !add_ext(ca->cert, x, NID_key_usage, "critical,digitalSignature") ||
	    !add_ext(ca->cert, x, NID_ext_key_usage, "serverAuth") ||
	    !add_ext(ca->cert, x, NID_authority_key_identifier, "keyid") ||
	    !X509_sign(x, ca->key, EVP_sha256()))
		return NULL;
	ctx = SSL_CTX_new(TLS_server_method());
	if (!ctx || !SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) ||
	    SSL_CTX_use_certificate(ctx, x) != 1 ||
	    SSL_CTX_use_PrivateKey(ctx, ca->leaf_key) != 1 ||
	    SSL_CTX_add1_chain_cert(ctx, ca->cert) != 1)
		return NULL;
	SSL_CTX_set_alpn_select_cb(ctx, alpn_http11, NULL);
	return lg_steal_ptr(&ctx);
}

static void *server_ctx(struct lg_ca *ca, const char *host)
{
	SSL_CTX *ctx = NULL;

	pthread_mutex_lock(&ca->mu);
	for (size_t i = 0; i < ca->nleaves && !ctx; i++)
		if (strcmp(ca->leaves[i].host, host) == 0) {
			ctx = ca->leaves[i].ctx;
			SSL_CTX_up_ref(
				ctx); /* the caller frees its reference */
		}
	if (!ctx && strlen(host) < sizeof(ca->leaves[0].host)) {
		ctx = mint(ca, host);
		if (ctx && ca->nleaves < MAX_LEAVES) {
			snprintf(ca->leaves[ca->nleaves].host,
				 sizeof(ca->leaves[0].host), "%s", host);
			ca->leaves[ca->nleaves++].ctx = ctx;
			SSL_CTX_up_ref(ctx); /* one for the cache */
		} /* else the cache is full: the caller has the only one */
	}
	pthread_mutex_unlock(&ca->mu);
	return ctx;
}

/* ---- decryption of a CONNECT (the egress proxy's model hosts) ---- */

#define HEAD_MAX 65536
#define IO_TIMEOUT_S 120 /* a model may think for a while: generous */

/* One side of a relay: a plain socket, or TLS on one. */
struct end {
	int fd;
	SSL *ssl;
	bool eof;
};

static void timeouts(int fd, int secs)
{
	struct timeval tv = { secs, 0 };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

/* > 0 bytes, 0 at the end, < 0 on an error. */
static ssize_t end_read(struct end *e, char *buf, size_t n)
{
	if (!e->ssl) {
		ssize_t r;

		do
			r = recv(e->fd, buf, n, 0);
		while (r < 0 && errno == EINTR);
		return r;
	}
	{
		int r = SSL_read(e->ssl, buf,
				 (int)(n > INT32_MAX ? INT32_MAX : n));

		if (r > 0)
			return r;
		switch (SSL_get_error(e->ssl, r)) {
		case SSL_ERROR_ZERO_RETURN:
			return 0;
		case SSL_ERROR_SYSCALL:
			/* a peer that closes without close_notify: an end */
			return ERR_peek_error() ? -1 : 0;
		default:
			return -1;
		}
	}
}

static int end_write(struct end *e, const char *buf, size_t n)
{
	while (n) {
		ssize_t w;

		if (e->ssl) {
			int r = SSL_write(e->ssl, buf, (int)n);

			if (r <= 0)
				return -EIO;
			w = r;
		} else {
			w = send(e->fd, buf, n, MSG_NOSIGNAL);
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				return -EIO;
		}
		buf += w;
		n -= (size_t)w;
	}
	return 0;
}

static void end_close_write(struct end *e)
{
	if (e->ssl)
		SSL_shutdown(e->ssl); /* close_notify: the TLS way to say it */
	else
		shutdown(e->fd, SHUT_WR);
}

/*
 * Both ways until both ends are done, or nothing moved for idle_ms (-1: a
 * websocket, which waits for its next turn as long as it likes); the bytes
 * are counted.
 */
static void relay_ends(struct end *a, struct end *b, int idle_ms,
		       unsigned long long *up, unsigned long long *down)
{
	char *buf = malloc(65536);

	if (!buf)
		return;
	while (!(a->eof && b->eof)) {
		struct pollfd p[2] = { { a->eof ? -1 : a->fd, POLLIN, 0 },
				       { b->eof ? -1 : b->fd, POLLIN, 0 } };
		bool ready[2];

		/* TLS may hold a decrypted record already: no poll for it */
		ready[0] = !a->eof && a->ssl && SSL_pending(a->ssl) > 0;
		ready[1] = !b->eof && b->ssl && SSL_pending(b->ssl) > 0;
		if (!ready[0] && !ready[1] && poll(p, 2, idle_ms) <= 0)
			break;
		for (int i = 0; i < 2; i++) {
			struct end *from = i ? b : a, *to = i ? a : b;
			ssize_t r;

			if (!ready[i] &&
			    !(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			r = end_read(from, buf, 65536);
			if (r < 0) {
				a->eof = b->eof = true;
				break;
			}
			if (r == 0) {
				from->eof = true;
				end_close_write(to);
				continue;
			}
			if (end_write(to, buf, (size_t)r) < 0) {
				a->eof = b->eof = true;
				break;
			}
			*(i ? down : up) += (unsigned long long)r;
		}
	}
	free(buf);
}

/* The request head from the client, up to its blank line. */
static ssize_t read_head(struct end *c, char *buf, size_t size, size_t *got)
{
	size_t n = 0;

	while (n < size) {
		ssize_t r = end_read(c, buf + n, size - n);

		if (r <= 0)
			return r < 0 ? -EIO : -ECONNRESET;
		for (size_t i = n >= 3 ? n - 3 : 0; i + 3 < n + (size_t)r; i++)
			if (!memcmp(buf + i, "\r\n\r\n", 4)) {
				*got = n + (size_t)r;
				return (ssize_t)(i + 4);
			}
		n += (size_t)r;
	}
	return -E2BIG;
}

static bool name_is(const char *p, size_t n, const char *lit)
{
	return strlen(lit) == n && strncasecmp(p, lit, n) == 0;
}

static bool upgrading(const char *head, size_t n)
{
	for (const char *p = head; p < head + n;) {
		const char *le = memmem(p, (size_t)(head + n - p), "\r\n", 2);
		const char *colon;

		if (!le || le == p)
			break;
		colon = memchr(p, ':', (size_t)(le - p));
		if (colon && name_is(p, (size_t)(colon - p), "upgrade"))
			return true;
		p = le + 2;
	}
	return false;
}

/*
 * The head for lgrun's LLM proxy: the path under /route, our connection
 * rules (one request, then close; or the upgrade), the rest as the client
 * wrote it.
 */
static int rewrite_head(const char *head, size_t n, const char *route,
			bool upgrade, char *out, size_t size)
{
	const char *eol = memmem(head, n, "\r\n", 2), *sp1, *sp2, *p;
	size_t o;
	int k;

	if (!eol)
		return -EINVAL;
	sp1 = memchr(head, ' ', (size_t)(eol - head));
	sp2 = sp1 ? memchr(sp1 + 1, ' ', (size_t)(eol - sp1 - 1)) : NULL;
	if (!sp1 || !sp2 || sp1[1] != '/')
		return -EINVAL;
	k = snprintf(out, size, "%.*s /%s%.*s HTTP/1.1\r\n", (int)(sp1 - head),
		     head, route, (int)(sp2 - sp1 - 1), sp1 + 1);
	if (k < 0 || (size_t)k >= size)
		return -E2BIG;
	o = (size_t)k;
	for (p = eol + 2; p < head + n;) {
		const char *le = memmem(p, (size_t)(head + n - p), "\r\n", 2);
		const char *colon;
		size_t kn, ln;

		if (!le || le == p)
			break;
		colon = memchr(p, ':', (size_t)(le - p));
		kn = colon ? (size_t)(colon - p) : 0;
		ln = (size_t)(le - p) + 2;
		if (!(colon && (name_is(p, kn, "connection") ||
				name_is(p, kn, "keep-alive") ||
				name_is(p, kn, "proxy-connection") ||
				name_is(p, kn, "proxy-authorization")))) {
			if (o + ln >= size)
				return -E2BIG;
			memcpy(out + o, p, ln);
			o += ln;
		}
		p = le + 2;
	}
	k = snprintf(out + o, size - o, "Connection: %s\r\n\r\n",
		     upgrade ? "Upgrade" : "close");
	if (k < 0 || (size_t)k >= size - o)
		return -E2BIG;
	return (int)(o + (size_t)k);
}

/* lgrun's LLM proxy, on our loopback. */
static int dial_proxy(unsigned port)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		int e = -errno;

		close(fd);
		return e;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	timeouts(fd, IO_TIMEOUT_S);
	return fd;
}

/* An end's own TLS and socket (not the client's: its caller closes that). */
static void end_release(struct end *e)
{
	ssl_freep(&e->ssl);
	lg_closep(&e->fd);
}
#define LG_END_AUTO LG_AUTO(end_release)

/*
 * The decrypted client c's request, rewritten, to lgrun's LLM proxy on u,
 * then both ways. *why says what failed, for the client to hear.
 */
static int forward(struct end *c, struct end *u, char *head, char *out,
		   const char *route, unsigned proxy_port,
		   unsigned long long *up, unsigned long long *down,
		   const char **why)
{
	size_t got = 0;
	ssize_t hl = read_head(c, head, HEAD_MAX, &got);
	bool ws;
	int n;

	if (hl == -ECONNRESET)
		return 0;
	if (hl < 0) {
		*why = "no request head from the client";
		return (int)hl;
	}
	ws = upgrading(head, (size_t)hl);
	/* a websocket upgrade too: the LLM proxy reads its frames */
	n = rewrite_head(head, (size_t)hl, route, ws, out, HEAD_MAX + 512);
	if (n < 0) {
		*why = "a request line lgrun cannot read";
		return -EIO;
	}
	u->fd = dial_proxy(proxy_port);
	if (u->fd < 0) {
		*why = "lgrun's LLM proxy does not answer";
		return -EIO;
	}
	if (end_write(u, out, (size_t)n) < 0 ||
	    ((size_t)hl < got && end_write(u, head + hl, got - (size_t)hl) < 0))
		return -EIO;
	*up += got;
	if (ws) { /* a turn may be minutes away: no idle limit */
		timeouts(c->fd, 0);
		timeouts(u->fd, 0);
	}
	relay_ends(c, u, ws ? -1 : IO_TIMEOUT_S * 1000, up, down);
	return 0;
}

static int mitm(struct lg_ca *ca, int client_fd, const char *host,
		unsigned port, const char *route, unsigned proxy_port,
		unsigned long long *up, unsigned long long *down,
		const char **why)
{
	LG_AUTOFREE char *out = malloc(HEAD_MAX + 512);
	LG_AUTOFREE char *head = malloc(HEAD_MAX);
	LG_SSL_CTX_AUTO SSL_CTX *ctx = server_ctx(ca, host);
	LG_END_AUTO struct end u = { -1, NULL, false };
	LG_SSL_AUTO SSL *ssl = NULL; /* the client's: its fd is not ours */
	struct end c = { client_fd, NULL, false };
	int r;

	(void)port; /* the LLM proxy's route knows the upstream */
	*why = NULL;
	if (!ctx || !head || !out) {
		*why = "cannot make a certificate for the host";
		return -EIO;
	}
	timeouts(client_fd, IO_TIMEOUT_S);
	c.ssl = ssl = SSL_new(ctx);
	if (!ssl || SSL_set_fd(ssl, client_fd) != 1 || SSL_accept(ssl) != 1) {
		/* a client that does not trust the session CA ends here */
		*why = "the client's TLS handshake with lgrun failed";
		return -EIO;
	}
	r = forward(&c, &u, head, out, route, proxy_port, up, down, why);
	if (!*why) /* close_notify, unless *why says it failed */
		SSL_shutdown(ssl);
	return r;
}

static const char *default_bundle(void)
{
	return X509_get_default_cert_file();
}

static const struct lg_tls_ops ops = {
	.ca_new = ca_new,
	.ca_write = ca_write,
	.server_ctx = server_ctx,
	.mitm = mitm,
	.default_bundle = default_bundle,
	.ca_free = ca_free,
};

const struct lg_tls_ops *lg_tls_ops(void)
{
	return &ops;
}
