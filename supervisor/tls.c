// SPDX-License-Identifier: MIT
#include <arpa/inet.h>
#include <errno.h>
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

static void say(char *err, size_t errsz, const char *what)
{
	unsigned long e = ERR_get_error();
	char buf[160] = "";

	if (e)
		ERR_error_string_n(e, buf, sizeof(buf));
	snprintf(err, errsz, "%s%s%s", what, buf[0] ? ": " : "", buf);
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

static struct lg_ca *ca_new(const char *name, char *err, size_t errsz)
{
	struct lg_ca *ca = calloc(1, sizeof(*ca));
	char cn[200];

	if (!ca) {
		snprintf(err, errsz, "out of memory");
		return NULL;
	}
	pthread_mutex_init(&ca->mu, NULL);
	snprintf(cn, sizeof(cn), "lgrun session CA (%s)", name ? name : "");
	ca->key = ec_key();
	ca->leaf_key = ec_key();
	if (!ca->key || !ca->leaf_key) {
		say(err, errsz, "cannot make a key");
		goto fail;
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
		say(err, errsz, "cannot make the CA certificate");
		goto fail;
	}
	return ca;
fail:
	ca_free(ca);
	return NULL;
}

/* Writes data to path by a temporary file and a rename, mode 0644. */
static int write_file(const char *path, const char *data, size_t n,
		      const char *prefix_file)
{
	char tmp[4200];
	int fd, r = 0;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp%d", path, getpid()) >=
	    (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	fchmod(fd, 0644); /* whatever the umask: the tree only reads it */
	if (prefix_file) {
		int in = open(prefix_file, O_RDONLY | O_CLOEXEC);
		char buf[65536];
		ssize_t k;
		char last = '\n';

		if (in < 0) {
			r = -errno;
		} else {
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
		}
	}
	if (!r && write(fd, data, n) != (ssize_t)n)
		r = -EIO;
	if (close(fd) < 0 && !r)
		r = -errno;
	if (!r && rename(tmp, path) < 0)
		r = -errno;
	if (r)
		unlink(tmp);
	return r;
}

static int ca_write(struct lg_ca *ca, const char *ca_path,
		    const char *bundle_path, const char *system_bundle)
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
		r = write_file(bundle_path, pem, (size_t)n, system_bundle);
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
	X509 *x = new_cert(ca->leaf_key, host, -DAY, 7 * DAY);
	SSL_CTX *ctx = NULL;

	snprintf(san, sizeof(san), "%s:%s", ip ? "IP" : "DNS", host);
	if (!x || !X509_set_issuer_name(x, X509_get_subject_name(ca->cert)) ||
	    !add_ext(ca->cert, x, NID_subject_alt_name, san) ||
	    !add_ext(ca->cert, x, NID_basic_constraints, "critical,CA:FALSE") ||
	    !add_ext(ca->cert, x, NID_key_usage,
		     "critical,digitalSignature") ||
	    !add_ext(ca->cert, x, NID_ext_key_usage, "serverAuth") ||
	    !add_ext(ca->cert, x, NID_authority_key_identifier, "keyid") ||
	    !X509_sign(x, ca->key, EVP_sha256()))
		goto out;
	ctx = SSL_CTX_new(TLS_server_method());
	if (!ctx || !SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) ||
	    SSL_CTX_use_certificate(ctx, x) != 1 ||
	    SSL_CTX_use_PrivateKey(ctx, ca->leaf_key) != 1 ||
	    SSL_CTX_add1_chain_cert(ctx, ca->cert) != 1) {
		SSL_CTX_free(ctx);
		ctx = NULL;
		goto out;
	}
	SSL_CTX_set_alpn_select_cb(ctx, alpn_http11, NULL);
out:
	X509_free(x);
	return ctx;
}

static void *server_ctx(struct lg_ca *ca, const char *host)
{
	SSL_CTX *ctx = NULL;

	pthread_mutex_lock(&ca->mu);
	for (size_t i = 0; i < ca->nleaves && !ctx; i++)
		if (strcmp(ca->leaves[i].host, host) == 0) {
			ctx = ca->leaves[i].ctx;
			SSL_CTX_up_ref(ctx); /* the caller frees its reference */
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

static const char *default_bundle(void)
{
	return X509_get_default_cert_file();
}

static const struct lg_tls_ops ops = {
	.ca_new = ca_new,
	.ca_write = ca_write,
	.server_ctx = server_ctx,
	.default_bundle = default_bundle,
	.ca_free = ca_free,
};

const struct lg_tls_ops *lg_tls_ops(void)
{
	return &ops;
}
