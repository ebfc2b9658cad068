// SPDX-License-Identifier: MIT
/* Unit tests for the egress proxy's request head parser. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "egress/egress.h"

static int parse(const char *head, struct lg_egress_req *r)
{
	const char *why = NULL;
	int rc = lg_egress_parse_head(head, strlen(head), r, &why);

	if (rc)
		assert_non_null(why);
	return rc;
}

static void test_connect(void **state)
{
	struct lg_egress_req r;

	(void)state;
	assert_int_equal(parse("CONNECT api.openai.com:443 HTTP/1.1\r\n"
			       "Host: api.openai.com:443\r\n\r\n",
			       &r),
			 0);
	assert_int_equal(r.kind, LG_EGRESS_CONNECT);
	assert_string_equal(r.host, "api.openai.com");
	assert_int_equal(r.port, 443);
	assert_int_equal(parse("CONNECT [::1]:8443 HTTP/1.1\r\n\r\n", &r), 0);
	assert_string_equal(r.host, "::1");
	assert_int_equal(r.port, 8443);
	/* no port, port 0, a port too big, junk in the name */
	assert_int_equal(parse("CONNECT host HTTP/1.1\r\n\r\n", &r), -EINVAL);
	assert_int_equal(parse("CONNECT host:0 HTTP/1.1\r\n\r\n", &r), -EINVAL);
	assert_int_equal(parse("CONNECT host:65536 HTTP/1.1\r\n\r\n", &r),
			 -EINVAL);
	assert_int_equal(parse("CONNECT h%0a:443 HTTP/1.1\r\n\r\n", &r),
			 -EINVAL);
}

static void test_absolute_http(void **state)
{
	struct lg_egress_req r;

	(void)state;
	assert_int_equal(
		parse("GET http://deb.debian.org/debian/?q=1 HTTP/1.1\r\n"
		      "Host: deb.debian.org\r\nProxy-Connection: keep-alive\r\n\r\n",
		      &r),
		0);
	assert_int_equal(r.kind, LG_EGRESS_HTTP);
	assert_string_equal(r.host, "deb.debian.org");
	assert_int_equal(r.port, 80);
	assert_int_equal(r.path_len, strlen("/debian/?q=1"));
	assert_memory_equal(r.path, "/debian/?q=1", r.path_len);
	assert_false(r.upgrade);
	assert_int_equal(
		parse("POST HTTP://127.0.0.1:8080 HTTP/1.0\r\n\r\n", &r), 0);
	assert_int_equal(r.port, 8080);
	assert_memory_equal(r.path, "/", r.path_len);
	/* a websocket keeps its Connection: upgrade */
	assert_int_equal(
		parse("GET http://h/ws HTTP/1.1\r\nConnection: keep-alive, Upgrade\r\n"
		      "Upgrade: websocket\r\n\r\n",
		      &r),
		0);
	assert_true(r.upgrade);
	/* origin form and https in absolute form are not for us */
	assert_int_equal(parse("GET /x HTTP/1.1\r\nHost: h\r\n\r\n", &r),
			 -EINVAL);
	assert_int_equal(parse("GET https://h/ HTTP/1.1\r\n\r\n", &r), -EINVAL);
	assert_int_equal(parse("get http://h/ HTTP/1.1\r\n\r\n", &r), -EINVAL);
	assert_int_equal(parse("GET http://h/ HTTP/2.0\r\n\r\n", &r), -EINVAL);
	assert_int_equal(parse("GET http://a b/ HTTP/1.1\r\n\r\n", &r),
			 -EINVAL);
	assert_int_equal(parse("GARBAGE\r\n\r\n", &r), -EINVAL);
}

static void test_auth(void **state)
{
	char want[128], head[512];

	(void)state;
	/* what curl sends for http://lgrun:0123abcd@127.0.0.1:PORT */
	assert_true(lg_egress_basic_auth("0123abcd", want, sizeof(want)));
	assert_string_equal(want, "Basic bGdydW46MDEyM2FiY2Q=");
	assert_false(lg_egress_basic_auth("0123abcd", want, 20));
	snprintf(head, sizeof(head),
		 "CONNECT h:443 HTTP/1.1\r\nHost: h:443\r\n"
		 "Proxy-Authorization: %s\r\n\r\n",
		 want);
	assert_true(lg_egress_authorized(head, strlen(head), want));
	/* the header name and the scheme in any case, spaces around */
	snprintf(head, sizeof(head),
		 "GET http://h/ HTTP/1.1\r\nproxy-authorization:   basic "
		 "bGdydW46MDEyM2FiY2Q=  \r\n\r\n");
	assert_true(lg_egress_authorized(head, strlen(head), want));
	/* none, another secret, a prefix of it, in the request line only */
	snprintf(head, sizeof(head), "CONNECT h:443 HTTP/1.1\r\n\r\n");
	assert_false(lg_egress_authorized(head, strlen(head), want));
	snprintf(head, sizeof(head),
		 "CONNECT h:443 HTTP/1.1\r\n"
		 "Proxy-Authorization: Basic bGdydW46MDEyM2FiY2U=\r\n\r\n");
	assert_false(lg_egress_authorized(head, strlen(head), want));
	snprintf(head, sizeof(head),
		 "CONNECT h:443 HTTP/1.1\r\n"
		 "Proxy-Authorization: Basic bGdydW46MDEy\r\n\r\n");
	assert_false(lg_egress_authorized(head, strlen(head), want));
	snprintf(head, sizeof(head),
		 "GET http://h/Proxy-Authorization:%s HTTP/1.1\r\n\r\n", want);
	assert_false(lg_egress_authorized(head, strlen(head), want));
	/* a header past the blank line is a body's, not the head's */
	snprintf(head, sizeof(head),
		 "POST http://h/ HTTP/1.1\r\n\r\nProxy-Authorization: %s\r\n",
		 want);
	assert_false(lg_egress_authorized(head, strlen(head), want));
}

/* A plain-HTTP request that a model gateway answers (issue 29, item 7). */
static void test_is_model(void **state)
{
	static const struct {
		const char *head;
		bool model;
	} cases[] = {
		{ "POST http://127.0.0.1:8000/v1/responses HTTP/1.1\r\n\r\n",
		  true },
		{ "POST http://gw:4000/v1/chat/completions?x=1 HTTP/1.1\r\n\r\n",
		  true },
		{ "POST http://gw/openai/deployments/d/chat/completions HTTP/1.1\r\n\r\n",
		  true },
		{ "POST http://gw/v1/messages HTTP/1.1\r\n\r\n", true },
		{ "POST http://gw/v1beta/models/g:streamGenerateContent?alt=sse HTTP/1.1\r\n\r\n",
		  true },
		{ "POST http://gw/backend-api/codex/responses HTTP/1.1\r\n\r\n",
		  true },
		{ "GET http://gw/v1/responses HTTP/1.1\r\nConnection: Upgrade\r\n"
		  "Upgrade: websocket\r\n\r\n",
		  true },
		/* not a model request: the method, another path, a prefix */
		{ "GET http://gw/v1/responses HTTP/1.1\r\n\r\n", false },
		{ "GET http://gw/v1/models HTTP/1.1\r\n\r\n", false },
		{ "POST http://gw/api/messages HTTP/1.1\r\n\r\n", false },
		{ "POST http://gw/v1/responses/x HTTP/1.1\r\n\r\n", false },
		{ "POST http://gw/?q=/v1/responses HTTP/1.1\r\n\r\n", false },
		{ "CONNECT gw:443 HTTP/1.1\r\n\r\n", false },
	};
	struct lg_egress_req r;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(parse(cases[i].head, &r), 0);
		if (lg_egress_is_model(&r) != cases[i].model)
			fail_msg("%s: %s", cases[i].head,
				 cases[i].model ? "not read" : "read");
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_connect),
		cmocka_unit_test(test_absolute_http),
		cmocka_unit_test(test_auth),
		cmocka_unit_test(test_is_model),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
