// SPDX-License-Identifier: MIT
/* Unit tests for [llm] decrypt: the hosts the egress proxy reads, routed. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "proxy/proxy.h"

static void test_defaults(void **state)
{
	struct lg_proxy_route routes[16];
	struct lg_proxy_decrypt hosts[LG_PROXY_DECRYPT_MAX];
	size_t nr = 3, nh = 0; /* after three base-URL routes */
	const char *bad = NULL;

	(void)state;
	assert_int_equal(lg_proxy_decrypt_routes(NULL, routes, &nr, 16, hosts,
						 &nh, &bad),
			 1);
	assert_int_equal(nh, 5);
	assert_int_equal(nr, 8);
	assert_string_equal(hosts[0].host, "api.anthropic.com");
	assert_string_equal(hosts[0].route, "tls-0");
	assert_string_equal(routes[3].name, "tls-0");
	assert_string_equal(routes[3].format, "anthropic");
	assert_string_equal(routes[3].upstream, "https://api.anthropic.com");
	assert_string_equal(routes[4].format, "openai");
	assert_string_equal(routes[5].format, "gemini");
	assert_string_equal(routes[5].upstream,
			    "https://generativelanguage.googleapis.com");
	/* Codex's ChatGPT login, gemini-cli's Google login (Code Assist) */
	assert_string_equal(hosts[3].host, "chatgpt.com");
	assert_string_equal(routes[6].format, "openai");
	assert_string_equal(hosts[4].host, "cloudcode-pa.googleapis.com");
	assert_string_equal(routes[7].format, "gemini");
	assert_string_equal(routes[7].upstream,
			    "https://cloudcode-pa.googleapis.com");
}

/* A gateway the user's base-URL variable names is decrypted as well. */
static void test_upstreams(void **state)
{
	struct lg_proxy_route routes[16] = {
		{ "anthropic", "anthropic", "ANTHROPIC_BASE_URL",
		  "https://gw.corp.example/anthropic" },
		{ "openai", "openai", "OPENAI_BASE_URL",
		  "https://api.openai.com/v1" },
		{ "gemini", "gemini", "GOOGLE_GEMINI_BASE_URL",
		  "http://127.0.0.1:9000" },
		{ "MY_URL", "openai", "MY_URL", "https://gw2.example:8443/v1" },
		{ "OTHER", "gemini", "OTHER", "https://GW3.example:443" },
	};
	struct lg_proxy_decrypt hosts[LG_PROXY_DECRYPT_MAX];
	size_t nr = 5, nh = 0;
	const char *bad = NULL;

	(void)state;
	assert_int_equal(lg_proxy_decrypt_routes(NULL, routes, &nr, 16, hosts,
						 &nh, &bad),
			 1);
	assert_int_equal(nh, 5);
	/* api.openai.com is there; plain HTTP and port 8443 are not read */
	assert_int_equal(
		lg_proxy_decrypt_upstreams(routes, 5, &nr, 16, hosts, &nh), 2);
	assert_int_equal(nh, 7);
	assert_int_equal(nr, 12);
	assert_string_equal(hosts[5].host, "gw.corp.example");
	assert_string_equal(hosts[5].route, "tls-5");
	assert_string_equal(routes[10].name, "tls-5");
	assert_string_equal(routes[10].format, "anthropic");
	assert_string_equal(routes[10].upstream, "https://gw.corp.example");
	assert_string_equal(hosts[6].host, "GW3.example");
	assert_string_equal(routes[11].format, "gemini");
	/* again: nothing new */
	assert_int_equal(
		lg_proxy_decrypt_upstreams(routes, 5, &nr, 16, hosts, &nh), 0);
}

static void test_given(void **state)
{
	struct lg_proxy_route routes[16];
	struct lg_proxy_decrypt hosts[LG_PROXY_DECRYPT_MAX];
	size_t nr = 0, nh = 0;
	const char *bad = NULL;

	(void)state;
	assert_int_equal(
		lg_proxy_decrypt_routes(
			"api.openai.com=http://127.0.0.1:9000/, llm.corp:openai=https://gw.corp/v1",
			routes, &nr, 16, hosts, &nh, &bad),
		0);
	assert_int_equal(nh, 2);
	assert_string_equal(routes[0].upstream, "http://127.0.0.1:9000");
	assert_string_equal(routes[0].format, "openai");
	assert_string_equal(hosts[1].host, "llm.corp");
	assert_string_equal(routes[1].upstream, "https://gw.corp/v1");
	/* wrong: an unknown host without its format, a bad format, a bad URL */
	nr = nh = 0;
	assert_int_equal(lg_proxy_decrypt_routes("ok.example, x.example",
						 routes, &nr, 16, hosts, &nh,
						 &bad),
			 -EINVAL);
	assert_string_equal(bad, "ok.example, x.example");
	nr = nh = 0;
	assert_int_equal(lg_proxy_decrypt_routes("h:cobol", routes, &nr, 16,
						 hosts, &nh, &bad),
			 -EINVAL);
	nr = nh = 0;
	assert_int_equal(lg_proxy_decrypt_routes("api.openai.com=ftp://x",
						 routes, &nr, 16, hosts, &nh,
						 &bad),
			 -EINVAL);
	/* no more than the table holds */
	nr = 15;
	nh = 0;
	assert_int_equal(
		lg_proxy_decrypt_routes("api.openai.com, api.anthropic.com",
					routes, &nr, 16, hosts, &nh, &bad),
		-EINVAL);
	assert_string_equal(bad, "api.anthropic.com");
}

/*
 * "default" keeps the model hosts next to the user's own; a host the list
 * names itself goes where the list says; a host twice is an error.
 */
static void test_default_word(void **state)
{
	struct lg_proxy_route routes[16];
	struct lg_proxy_decrypt hosts[LG_PROXY_DECRYPT_MAX];
	size_t nr = 0, nh = 0;
	const char *bad = NULL;

	(void)state;
	assert_int_equal(
		lg_proxy_decrypt_routes(
			"llm.corp:openai, default, API.openai.com=http://127.0.0.1:9/",
			routes, &nr, 16, hosts, &nh, &bad),
		1);
	assert_int_equal(nh, 6);
	assert_string_equal(hosts[0].host, "llm.corp");
	assert_string_equal(hosts[1].host, "api.anthropic.com");
	assert_string_equal(hosts[2].host, "generativelanguage.googleapis.com");
	assert_string_equal(hosts[3].host, "chatgpt.com");
	assert_string_equal(hosts[4].host, "cloudcode-pa.googleapis.com");
	assert_string_equal(hosts[5].host, "API.openai.com");
	assert_string_equal(routes[5].upstream, "http://127.0.0.1:9");
	assert_string_equal(routes[5].format, "openai");
	/* without the word: only what is written */
	nr = nh = 0;
	assert_int_equal(lg_proxy_decrypt_routes("llm.corp:openai", routes, &nr,
						 16, hosts, &nh, &bad),
			 0);
	assert_int_equal(nh, 1);
	/* twice */
	nr = nh = 0;
	assert_int_equal(lg_proxy_decrypt_routes(
				 "api.openai.com, Api.OpenAI.com=http://x",
				 routes, &nr, 16, hosts, &nh, &bad),
			 -EINVAL);
	assert_string_equal(bad, "Api.OpenAI.com=http://x");
	nr = nh = 0;
	assert_int_equal(lg_proxy_decrypt_routes("default, default", routes,
						 &nr, 16, hosts, &nh, &bad),
			 -EINVAL);
	/* a default host beside the list's own, twice over */
	nr = nh = 0;
	assert_int_equal(
		lg_proxy_decrypt_routes("default, chatgpt.com, x:gemini",
					routes, &nr, 16, hosts, &nh, &bad),
		1);
	assert_int_equal(nh, 6);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_default_word),
		cmocka_unit_test(test_given),
		cmocka_unit_test(test_upstreams),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
