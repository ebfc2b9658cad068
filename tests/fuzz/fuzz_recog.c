// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the shim's recognisers (preload/recog.c): the
 * first bytes of any write or read of any program in the tree. HTTP
 * requests and responses, JSON-RPC (bare or behind Content-Length), TLS
 * records, and the declared-endpoint patterns. Every span a recogniser
 * returns lies inside the buffer it was given. The first byte cuts the
 * input: what comes before a NUL in the rest is also used as the
 * endpoint patterns and the tool-name globs. The SQL statements and
 * PostgreSQL's messages of the same bytes (preload/sql.c).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "recog.h"
#include "sql.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *lo, *hi;

static void inside(struct lg_span s)
{
	if (s.n && (!s.p || s.p < lo || s.p + s.n > hi))
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* an exact-size copy: a read past it is ASan's to see */
	char *p = malloc(size ? size : 1);
	struct lg_http_req rq = { 0 };
	struct lg_http_resp rs;
	struct lg_jrpc j;
	char *pat, bad[128];

	if (!p)
		return 0;
	memcpy(p, data, size);
	lo = p;
	hi = p + size;
	lg_recog_maybe(p, size);
	lg_recog_tls(p, size);
	if (lg_recog_http_request(p, size, &rq)) {
		inside(rq.method);
		inside(rq.target);
		inside(rq.body);
		inside(rq.host);
		if (!rq.method.n || !rq.target.n)
			__builtin_trap();
	}
	{
		const char *q = p;
		struct lg_sql_stmt st;
		struct lg_span a, b;
		size_t len;

		while (lg_sql_next(&q, hi, &st)) {
			inside(st.text);
			if (q < lo || q > hi || st.n > LG_SQL_NAMES)
				__builtin_trap();
			for (unsigned i = 0; i < st.n; i++) {
				if (strlen(st.names[i]) >= LG_SQL_NAME_MAX)
					__builtin_trap();
				inside(st.raw[i]);
			}
		}
		{
			char probe[256], names[4][LG_SQL_NAME_MAX];
			unsigned cols = lg_pg_probe(p, size, 4, names, probe,
						    sizeof(probe));

			if (cols > 4 || strlen(probe) >= sizeof(probe) ||
			    (cols && !strstr(probe, "EXISTS")))
				__builtin_trap();
		}
		if (lg_pg_startup(p, size, &a, &b)) {
			inside(a);
			inside(b);
		}
		if (lg_pg_query(p, size, &a, &len))
			inside(a);
		if (lg_my_handshake(p, size, &a, &b)) {
			inside(a);
			inside(b);
		}
		{
			unsigned long long aff;
			unsigned warn;
			int cmd;

			if (lg_my_command(p, size, &cmd, &a))
				inside(a);
			lg_my_answer(p, size, &aff, &warn);
			lg_recog_my_packet(p, size);
		}
	}
	if (lg_recog_http_response(p, size, &rs)) {
		inside(rs.body);
		inside(rs.location);
		if (rs.status < 100 || rs.status > 999)
			__builtin_trap();
	}
	if (lg_recog_jsonrpc(p, size, &j)) {
		inside(j.method);
		inside(j.id);
		inside(j.name);
		inside(j.args);
		inside(j.result);
		if (j.request && !j.method.n)
			__builtin_trap();
	}
	/* the patterns: the text before the first NUL, as a string */
	pat = strndup(p, size);
	if (pat) {
		struct lg_span none = { NULL, 0 };

		if (lg_recog_endpoints_valid(pat, bad, sizeof(bad))) {
			lg_recog_endpoints_need_peer(pat);
			lg_recog_endpoint_in(pat, rq.host.n ? rq.host : none,
					     "127.0.0.1", 8080,
					     (struct lg_span){ "/a/b?x", 6 });
			lg_recog_endpoint_in(pat, none, "::1", 0,
					     (struct lg_span){ pat,
							       strlen(pat) });
		} else if (strlen(bad) >= sizeof(bad)) {
			__builtin_trap();
		}
		lg_recog_name_in(p, size, pat);
		lg_recog_name_in("delete_all", 10, pat);
		free(pat);
	}
	free(p);
	return 0;
}
