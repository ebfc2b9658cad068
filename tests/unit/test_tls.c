// SPDX-License-Identifier: MIT
/* Unit tests for the session CA (tls.c): what the tree is told to trust. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "egress/tls.h"

static X509 *read_pem(const char *path)
{
	FILE *f = fopen(path, "r");
	X509 *x;

	assert_non_null(f);
	x = PEM_read_X509(f, NULL, NULL, NULL);
	fclose(f);
	return x;
}

/* The leaf a context serves verifies against the CA file for host. */
static void verify(const char *ca_path, SSL_CTX *ctx, const char *host, bool ip)
{
	X509_STORE *store = X509_STORE_new();
	X509_STORE_CTX *vc = X509_STORE_CTX_new();
	X509 *leaf = SSL_CTX_get0_certificate(ctx);
	X509_VERIFY_PARAM *vp;

	assert_non_null(leaf);
	assert_int_equal(X509_STORE_load_file(store, ca_path), 1);
	assert_int_equal(X509_STORE_CTX_init(vc, store, leaf, NULL), 1);
	vp = X509_STORE_CTX_get0_param(vc);
	if (ip)
		assert_int_equal(X509_VERIFY_PARAM_set1_ip_asc(vp, host), 1);
	else
		assert_int_equal(X509_VERIFY_PARAM_set1_host(vp, host, 0), 1);
	assert_int_equal(X509_verify_cert(vc), 1);
	X509_STORE_CTX_free(vc);
	X509_STORE_free(store);
}

static void test_ca_and_leaves(void **state)
{
	const struct lg_tls_ops *ops = lg_tls_ops();
	char dir[] = "/tmp/lgtls.XXXXXX", ca_path[128], bundle[128], sys[128];
	struct lg_error err;
	struct lg_ca *ca;
	struct stat st;
	SSL_CTX *a, *b, *ip;
	X509 *cert;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(ca_path, sizeof(ca_path), "%s/ca.pem", dir);
	snprintf(bundle, sizeof(bundle), "%s/bundle.pem", dir);
	snprintf(sys, sizeof(sys), "%s/system.pem", dir);
	f = fopen(sys, "w");
	fputs("# the system's CAs\n", f); /* no final newline on purpose */
	fputs("(no newline)", f);
	fclose(f);

	ca = ops->ca_new("test", &err);
	assert_non_null(ca);
	assert_int_equal(ops->ca_write(ca, ca_path, bundle,
				       (const char *const[]){ sys, NULL }),
			 0);
	assert_int_equal(stat(ca_path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644);
	/* a CA, and only a certificate: its key is nowhere on disk */
	cert = read_pem(ca_path);
	assert_non_null(cert);
	assert_int_equal(X509_check_ca(cert), 1);
	X509_free(cert);
	{
		char buf[8192];
		size_t n;

		f = fopen(bundle, "r");
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[n] = '\0';
		assert_non_null(strstr(
			buf,
			"# the system's CAs\n(no newline)\n-----BEGIN CERTIFICATE-----"));
		assert_null(strstr(buf, "PRIVATE KEY"));
		f = fopen(ca_path, "r");
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[n] = '\0';
		assert_null(strstr(buf, "PRIVATE KEY"));
	}
	/* leaves: verified for their host, cached, an IP SAN for addresses */
	a = ops->server_ctx(ca, "api.anthropic.com");
	b = ops->server_ctx(ca, "api.anthropic.com");
	assert_non_null(a);
	assert_ptr_equal(a, b);
	verify(ca_path, a, "api.anthropic.com", false);
	ip = ops->server_ctx(ca, "127.0.0.1");
	assert_non_null(ip);
	verify(ca_path, ip, "127.0.0.1", true);
	SSL_CTX_free(a);
	SSL_CTX_free(b);
	SSL_CTX_free(ip);
	ops->ca_free(ca);
	unlink(ca_path);
	unlink(bundle);
	unlink(sys);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ca_and_leaves),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
