/* SPDX-License-Identifier: MIT */
/*
 * The session's certificate authority, for the egress proxy's decryption
 * of model hosts (issue 13). It lives in liblgtls.so with OpenSSL, which
 * lgrun loads only when [llm] mode is proxy or both: linking OpenSSL into
 * lgrun costs every session ~0.8 ms at start.
 *
 * The CA's key is made in memory at start and never written anywhere; its
 * certificate goes to a file the tree is told to trust, and a bundle file
 * holds the system's CAs with it appended (tools that only tunnel keep
 * verifying their origins). Leaf certificates are minted per host on first
 * use and cached, with an IP SAN when the host is an address; the contexts
 * offer only http/1.1 in ALPN.
 */
#ifndef LG_TLS_H
#define LG_TLS_H

#include <stddef.h>

#include "lib/error.h"

#define LG_TLS_EXPORT __attribute__((visibility("default")))

struct lg_ca;

struct lg_tls_ops {
	/*
	 * A new CA (EC P-256, valid from a day ago to a week ahead), or NULL
	 * with err.
	 */
	struct lg_ca *(*ca_new)(const char *name, struct lg_error *err);
	/*
	 * Writes the CA certificate to ca_path (0644) and the bundle (the
	 * PEM files of bundles, NULL-terminated: the system's and any the
	 * user named, then the CA) to bundle_path (0644), each by a rename
	 * of a file written first. 0 or -errno.
	 */
	int (*ca_write)(struct lg_ca *ca, const char *ca_path,
			const char *bundle_path, const char *const *bundles);
	/* An SSL_CTX (as void *) serving host with a leaf of ours; cached. */
	void *(*server_ctx)(struct lg_ca *ca, const char *host);
	/*
	 * A CONNECT to host that lgrun decrypts, after the 200: TLS with the
	 * client as host (a leaf of ours), then each request goes in plain
	 * HTTP to lgrun's LLM proxy at 127.0.0.1:proxy_port under /route
	 * (one request per connection: "Connection: close"; a websocket
	 * upgrade goes as an upgrade, read by the LLM proxy, with no idle
	 * limit). Runs in the connection's thread
	 * until both sides are done. 0, or -errno with *why.
	 */
	int (*mitm)(struct lg_ca *ca, int client_fd, const char *host,
		    unsigned port, const char *route, unsigned proxy_port,
		    unsigned long long *up, unsigned long long *down,
		    const char **why);
	/* The system's default CA file, as OpenSSL knows it. */
	const char *(*default_bundle)(void);
	void (*ca_free)(struct lg_ca *ca);
};

/* liblgtls.so's one entry point (dlsym "lg_tls_ops"). */
LG_TLS_EXPORT const struct lg_tls_ops *lg_tls_ops(void);

#endif
