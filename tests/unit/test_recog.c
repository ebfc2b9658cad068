// SPDX-License-Identifier: MIT
/* Unit tests for preload/recog.c: the shim's tool-traffic recognisers. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "../../preload/recog.h"

static void assert_span(struct lg_span s, const char *want)
{
	char got[512];

	snprintf(got, sizeof(got), "%.*s", (int)s.n, s.p ? s.p : "");
	assert_string_equal(got, want);
}

static bool http_req(const char *s, struct lg_http_req *r)
{
	return lg_recog_http_request(s, strlen(s), r);
}

static void test_http_request(void **state)
{
	struct lg_http_req r;

	(void)state;
	assert_true(http_req("DELETE /assets/fact_sales HTTP/1.1\r\nHost: x\r\n"
			     "Content-Length: 2\r\n\r\n{}",
			     &r));
	assert_span(r.method, "DELETE");
	assert_span(r.target, "/assets/fact_sales");
	assert_span(r.body, "{}");
	assert_false(r.chunked);

	assert_true(http_req("POST /tools/x HTTP/1.1\r\ntransfer-encoding: "
			     "Chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
			     &r));
	assert_true(r.chunked);
	assert_span(r.method, "POST");

	/* headers only: the body comes in a later write */
	assert_true(http_req("GET / HTTP/1.0\r\nHost: a\r\n", &r));
	assert_int_equal(r.body.n, 0);
}

static void test_http_request_rejects(void **state)
{
	static const char *const no[] = {
		"GETX / HTTP/1.1\r\n\r\n", /* not a method */
		"GET / FTP/1.1\r\n\r\n", /* not HTTP */
		"GET /no-newline HTTP/1.1", /* first line incomplete */
		"get / HTTP/1.1\r\n\r\n", /* methods are case-sensitive */
		/* no target (found by fuzz_recog), a space inside one */
		"DELETE  x HTTP/1.1\r\n\r\n",
		"GET /a b HTTP/1.1\r\n\r\n",
		"{\"jsonrpc\":\"2.0\"}",
		"",
	};
	struct lg_http_req r;

	(void)state;
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
		if (http_req(no[i], &r))
			fail_msg("accepted '%s'", no[i]);
	}
}

static void test_http_response(void **state)
{
	static const char ok[] = "HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\n"
				 "{\"a\":1}";
	static const char hdr[] =
		"HTTP/1.1 404 Not Found\r\nTransfer-Encoding: "
		"chunked\r\n\r\n";
	struct lg_http_resp r;

	(void)state;
	assert_true(lg_recog_http_response(ok, strlen(ok), &r));
	assert_int_equal(r.status, 200);
	assert_span(r.body, "{\"a\":1}");
	assert_true(lg_recog_http_response(hdr, strlen(hdr), &r));
	assert_int_equal(r.status, 404);
	assert_true(r.chunked);
	assert_int_equal(r.body.n, 0);
	assert_false(lg_recog_http_response("HTTP/1.1 2x0 OK\r\n", 17, &r));
	assert_false(lg_recog_http_response("HTTP/2 200\r\n\r\n", 14, &r));
	/* no minor version, a status below 100 (found by fuzz_recog), a
	 * fourth digit */
	assert_false(lg_recog_http_response("HTTP/1.  039 30 \r", 17, &r));
	assert_false(lg_recog_http_response("HTTP/1.1 039 X\r\n", 16, &r));
	assert_false(lg_recog_http_response("HTTP/1.1 2000 X\r\n", 17, &r));
	assert_true(lg_recog_http_response("HTTP/1.1 204\r\n\r\n", 16, &r));
	assert_int_equal(r.status, 204);
}

static bool jrpc(const char *s, struct lg_jrpc *j)
{
	return lg_recog_jsonrpc(s, strlen(s), j);
}

static void test_jsonrpc_tools_call(void **state)
{
	struct lg_jrpc j;

	(void)state;
	assert_true(
		jrpc("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\","
		     "\"params\":{\"name\":\"delete_asset\",\"arguments\":"
		     "{\"asset_id\":\"fact_sales\",\"why\":\"a } \\\" {\"}}}\n",
		     &j));
	assert_true(j.request);
	assert_span(j.method, "tools/call");
	assert_span(j.id, "7");
	assert_span(j.name, "delete_asset");
	assert_span(j.args,
		    "{\"asset_id\":\"fact_sales\",\"why\":\"a } \\\" {\"}");

	/* member order does not matter; nested "name" keys are not params.name */
	assert_true(jrpc(
		"{ \"params\" : { \"arguments\" : { \"name\" : \"x\" }, "
		"\"name\" : \"get_status\" }, \"method\" : "
		"\"tools/call\", \"id\" : \"a-1\", \"jsonrpc\" : \"2.0\" }",
		&j));
	assert_span(j.name, "get_status");
	assert_span(j.args, "{ \"name\" : \"x\" }");
	assert_span(j.id, "\"a-1\"");
}

static void test_jsonrpc_framing_and_responses(void **state)
{
	struct lg_jrpc j;

	(void)state;
	assert_true(
		jrpc("Content-Length: 52\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":3,"
		     "\"result\":{\"content\":[]}}",
		     &j));
	assert_false(j.request);
	assert_span(j.id, "3");
	assert_span(j.result, "{\"content\":[]}");
	assert_false(j.error);

	assert_true(jrpc(
		"{\"jsonrpc\":\"2.0\",\"id\":4,\"error\":{\"code\":-32601}}",
		&j));
	assert_true(j.error);

	/* a notification has no id: nothing will answer it */
	assert_true(jrpc("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/"
			 "initialized\"}",
			 &j));
	assert_int_equal(j.id.n, 0);
	assert_true(
		jrpc("{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"x\"}", &j));
	assert_int_equal(j.id.n, 0);
}

static void test_jsonrpc_rejects(void **state)
{
	static const char *const no[] = {
		"{\"id\":1,\"method\":\"tools/call\"}", /* no jsonrpc member */
		"{\"data\":\"\\\"jsonrpc\\\": 2\"}", /* only inside a string */
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\"", /* cut short */
		"[{\"jsonrpc\":\"2.0\"}]", /* batches are not recognised */
		"hello world",
		"Content-Length: 10\r\n", /* headers without a body */
		/* a method that is not a string (found by fuzz_recog) */
		"{\"jsonrpc\":\"2.0\",\"method\":]}",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":7}",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\"}",
	};
	struct lg_jrpc j;

	(void)state;
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
		if (jrpc(no[i], &j))
			fail_msg("accepted '%s'", no[i]);
	}
}

static void test_maybe_and_tls(void **state)
{
	static const char tls[] = { 22, 3, 1, 0, 5, 1 };
	static const char bin[] = { 0, 1, 2, 3, 4 };

	(void)state;
	assert_true(lg_recog_maybe("GET / HTTP/1.1", 14));
	assert_true(lg_recog_maybe("{\"a\":1}", 7));
	assert_true(lg_recog_maybe(tls, sizeof(tls)));
	assert_true(lg_recog_tls(tls, sizeof(tls)));
	assert_false(lg_recog_maybe(bin, sizeof(bin)));
	assert_false(lg_recog_maybe("make: *** Error", 15));
	assert_false(lg_recog_maybe("{}", 2)); /* too short to matter */
}

static void test_name_in(void **state)
{
	const char *g = "delete_*,drop_*,truncate_*,remove_*";

	(void)state;
	assert_true(lg_recog_name_in("delete_asset", 12, g));
	assert_true(lg_recog_name_in("drop_table", 10, g));
	assert_false(lg_recog_name_in("get_status", 10, g));
	assert_false(lg_recog_name_in("undelete_x", 10, g));
	assert_false(lg_recog_name_in("delete_asset", 12, NULL));
	assert_true(lg_recog_name_in("delete_asset-and-more", 6, "delete"));
	assert_true(lg_recog_name_in("drop_x", 6, " delete_* , drop_* "));
}

/* A declared tool endpoint: which requests are an agent's tool calls. */
static const struct {
	const char *patterns, *request, *peer;
	unsigned port;
	bool want;
} endpoint_cases[] = {
	/* path only: any host */
	{ "/assets/*", "DELETE /assets/fact_sales HTTP/1.1\r\nHost: x\r\n\r\n",
	  "127.0.0.1", 40000, true },
	{ "/assets/*", "DELETE /items/7 HTTP/1.1\r\nHost: x\r\n\r\n",
	  "127.0.0.1", 40000, false },
	{ "/assets", "GET /assets/a/b?x=1 HTTP/1.1\r\n\r\n", "10.0.0.1", 80,
	  true },
	{ "/assets", "GET /assetsx HTTP/1.1\r\n\r\n", "10.0.0.1", 80, false },
	{ "/api/*/run", "POST /api/v1/x/run?y HTTP/1.1\r\n\r\n", "1.2.3.4", 1,
	  true },
	/* host and port, from the Host header or the peer */
	{ "localhost:8080",
	  "GET /health HTTP/1.1\r\nHost: localhost:8080\r\n\r\n", "127.0.0.1",
	  8080, true },
	{ "localhost:8080",
	  "GET /health HTTP/1.1\r\nHost: localhost:9090\r\n\r\n", "127.0.0.1",
	  9090, false },
	{ "localhost", "GET / HTTP/1.1\r\n\r\n", "::1", 5000, true },
	{ ":9000", "GET / HTTP/1.1\r\nhost: a\r\n\r\n", "127.0.0.1", 9000,
	  true },
	{ ":9000", "GET / HTTP/1.1\r\n\r\n", "127.0.0.1", 9001, false },
	{ "tools.internal/v1/*",
	  "POST /v1/call HTTP/1.1\r\nHost: Tools.Internal\r\n\r\n", "10.1.1.1",
	  443, true },
	{ "tools.internal/v1/*",
	  "POST /v2/call HTTP/1.1\r\nHost: tools.internal\r\n\r\n", "10.1.1.1",
	  443, false },
	{ "http://127.0.0.1:7000/mcp", "POST /mcp HTTP/1.1\r\n\r\n",
	  "127.0.0.1", 7000, true },
	{ "[::1]:7000", "POST / HTTP/1.1\r\nHost: [::1]:7000\r\n\r\n", "::1",
	  7000, true },
	{ "*", "GET /anything HTTP/1.1\r\n\r\n", "8.8.8.8", 53, true },
	/* a list; garbage patterns never match */
	{ "/a/*, :1234", "GET /b HTTP/1.1\r\n\r\n", "127.0.0.1", 1234, true },
	{ "host:port", "GET / HTTP/1.1\r\nHost: host\r\n\r\n", "1.1.1.1", 1,
	  false },
	{ "", "GET / HTTP/1.1\r\n\r\n", "127.0.0.1", 1, false },
};

static void test_endpoint_in(void **state)
{
	(void)state;
	for (size_t i = 0;
	     i < sizeof(endpoint_cases) / sizeof(endpoint_cases[0]); i++) {
		struct lg_http_req r;

		assert_true(http_req(endpoint_cases[i].request, &r));
		if (lg_recog_endpoint_in(endpoint_cases[i].patterns, r.host,
					 endpoint_cases[i].peer,
					 endpoint_cases[i].port,
					 r.target) != endpoint_cases[i].want)
			fail_msg("case %zu: %s on %s", i,
				 endpoint_cases[i].patterns,
				 endpoint_cases[i].request);
	}
	assert_false(lg_recog_endpoints_need_peer("/assets/*, /x"));
	assert_true(lg_recog_endpoints_need_peer("/assets/*, :9000"));
	assert_true(lg_recog_endpoints_need_peer("localhost"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_http_request),
		cmocka_unit_test(test_http_request_rejects),
		cmocka_unit_test(test_http_response),
		cmocka_unit_test(test_jsonrpc_tools_call),
		cmocka_unit_test(test_jsonrpc_framing_and_responses),
		cmocka_unit_test(test_jsonrpc_rejects),
		cmocka_unit_test(test_maybe_and_tls),
		cmocka_unit_test(test_name_in),
		cmocka_unit_test(test_endpoint_in),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
