// SPDX-License-Identifier: MIT
/*
 * Unit tests for supervisor/wiredec.c: frames the shim builds with
 * preload/wire.h decode back; every kind of malformed frame is refused.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "control/wiredec.h"

static char scratch[LG_WIRE_MAX];

static int decode(const struct lg_wire_buf *w, struct lg_wire_msg *m)
{
	return lg_wire_decode(w->b, w->n, m, scratch, sizeof(scratch));
}

static void test_round_trip(void **state)
{
	struct lg_wire_buf w;
	struct lg_wire_msg m;

	(void)state;
	lg_wire_start(&w, LG_W_GATE, 42);
	lg_wire_put_u32(&w, LG_T_PROTO, LG_P_JSONRPC);
	lg_wire_put_u64(&w, LG_T_CHAN, 0x1122334455667788ULL);
	lg_wire_put_u64(&w, LG_T_ENDPOINT, 0xabcdef0123456789ULL);
	lg_wire_put_str(&w, LG_T_TOOL, "delete_asset");
	lg_wire_put_str(&w, LG_T_TARGET, "asset_id=fact_sales");
	lg_wire_put(&w, LG_T_ARGS, "{\"a\":1}", 7);
	lg_wire_finish(&w);
	assert_int_equal(decode(&w, &m), 0);
	assert_int_equal(m.type, LG_W_GATE);
	assert_int_equal(m.seq, 42);
	assert_int_equal(m.proto, LG_P_JSONRPC);
	assert_true(m.chan == 0x1122334455667788ULL);
	assert_true(m.endpoint == 0xabcdef0123456789ULL);
	assert_string_equal(m.tool, "delete_asset");
	assert_string_equal(m.target, "asset_id=fact_sales");
	assert_int_equal(m.args_len, 7);
	assert_memory_equal(m.args, "{\"a\":1}", 7);
	assert_true(LG_WIRE_HAS(&m, LG_T_TOOL));
	assert_false(LG_WIRE_HAS(&m, LG_T_PATH));
	assert_string_equal(m.path, "");
}

static void test_truncation_by_builder(void **state)
{
	static char big[LG_WIRE_MAX * 2];
	struct lg_wire_buf w;
	struct lg_wire_msg m;

	(void)state;
	memset(big, 'x', sizeof(big) - 1);
	lg_wire_start(&w, LG_W_OP_RESULT, 0);
	lg_wire_put_u32(&w, LG_T_OP, 1);
	lg_wire_put_u32(&w, LG_T_RESULT, 13);
	lg_wire_put_str(&w, LG_T_PATH, big);
	lg_wire_finish(&w);
	assert_true(w.overflow);
	assert_true(w.n <= LG_WIRE_MAX);
	assert_int_equal(decode(&w, &m), 0); /* cut, still well-formed */
	assert_true(strlen(m.path) > 1000);
}

/* Each case corrupts a good frame in one way. */
static void test_malformed(void **state)
{
	struct lg_wire_buf good, w;
	struct lg_wire_msg m;
	struct lg_wire_hdr h;

	(void)state;
	lg_wire_start(&good, LG_W_OP_RESULT, 0);
	lg_wire_put_u32(&good, LG_T_OP, 1);
	lg_wire_put_str(&good, LG_T_PATH, "/x");
	lg_wire_put_u32(&good, LG_T_RESULT, 13);
	lg_wire_finish(&good);
	assert_int_equal(decode(&good, &m), 0);

	w = good; /* bad magic */
	w.b[0] ^= 0xff;
	assert_int_equal(decode(&w, &m), -EPROTO);
	w = good; /* bad version */
	w.b[2] = 9;
	assert_int_equal(decode(&w, &m), -EPROTO);
	w = good; /* unknown type */
	w.b[3] = 99;
	assert_int_equal(decode(&w, &m), -EPROTO);
	w = good; /* truncated: length disagrees with what arrived */
	w.n -= 1;
	assert_int_equal(decode(&w, &m), -EBADMSG);
	w = good; /* shorter than a header */
	w.n = 5;
	assert_int_equal(decode(&w, &m), -EBADMSG);
	w = good; /* a field running past the end */
	memcpy(&h, w.b, sizeof(h));
	w.b[LG_WIRE_HDR_SIZE + 1] = 0xff;
	w.b[LG_WIRE_HDR_SIZE + 2] = 0x7f;
	assert_int_equal(decode(&w, &m), -EBADMSG);
	w = good; /* a u32 field of the wrong size */
	w.b[LG_WIRE_HDR_SIZE + 1] = 3;
	assert_int_equal(decode(&w, &m), -EBADMSG);
	w = good; /* an unknown tag */
	w.b[LG_WIRE_HDR_SIZE] = 200;
	assert_int_equal(decode(&w, &m), -EBADMSG);
	/* oversized */
	assert_int_equal(lg_wire_decode(good.b, LG_WIRE_MAX + 1, &m, scratch,
					sizeof(scratch)),
			 -EMSGSIZE);
}

static void test_required_fields(void **state)
{
	struct lg_wire_buf w;
	struct lg_wire_msg m;

	(void)state;
	lg_wire_start(&w, LG_W_HELLO, 0); /* a hello without a pid */
	lg_wire_put_str(&w, LG_T_EXE, "/bin/sh");
	lg_wire_finish(&w);
	assert_int_equal(decode(&w, &m), -EBADMSG);
	lg_wire_start(&w, LG_W_OP_RESULT, 0); /* no path */
	lg_wire_put_u32(&w, LG_T_OP, 1);
	lg_wire_put_u32(&w, LG_T_RESULT, 0);
	lg_wire_finish(&w);
	assert_int_equal(decode(&w, &m), -EBADMSG);
	lg_wire_start(&w, LG_W_TOOL_RESULT, 0); /* no channel */
	lg_wire_put_u32(&w, LG_T_PROTO, LG_P_HTTP);
	lg_wire_finish(&w);
	assert_int_equal(decode(&w, &m), -EBADMSG);
	lg_wire_start(&w, LG_W_HELLO, 0);
	lg_wire_put_u32(&w, LG_T_PID, 77);
	lg_wire_put(&w, LG_T_EXE, "a\0b", 3); /* stops at an embedded NUL */
	lg_wire_finish(&w);
	assert_int_equal(decode(&w, &m), 0);
	assert_string_equal(m.exe, "a");
	assert_int_equal(m.pid, 77);
}

/* The one hello builder, as the shim and a nested lgrun send it. */
static void test_hello(void **state)
{
	struct lg_wire_buf w;
	struct lg_wire_msg m;
	size_t n;

	(void)state;
	n = lg_wire_hello(&w, 4242, 17, "/usr/bin/python3.11", 123456789ULL);
	assert_int_equal(n, w.n);
	assert_int_equal(decode(&w, &m), 0);
	assert_int_equal(m.type, LG_W_HELLO);
	assert_int_equal(m.pid, 4242);
	assert_int_equal(m.ppid, 17);
	assert_string_equal(m.exe, "/usr/bin/python3.11");
	assert_int_equal(m.time_ns, 123456789ULL);
	lg_wire_hello(&w, 4243, 1, "/usr/bin/lgrun", 0); /* no time: none */
	assert_int_equal(decode(&w, &m), 0);
	assert_int_equal(m.pid, 4243);
	assert_false(LG_WIRE_HAS(&m, LG_T_TIME));
}

/* A nested lgrun's registration; an A2A gate. */
static void test_enter_and_call_to(void **state)
{
	struct lg_wire_buf w;
	struct lg_wire_msg m;

	(void)state;
	lg_wire_start(&w, LG_W_ENTER, 1);
	lg_wire_put_str(&w, LG_T_FLOW, "0123abcd");
	lg_wire_put_str(&w, LG_T_NAME, "reviewer");
	lg_wire_finish(&w);
	assert_int_equal(decode(&w, &m), 0);
	assert_int_equal(m.type, LG_W_ENTER);
	assert_string_equal(m.flow, "0123abcd");
	assert_string_equal(m.name, "reviewer");
	/* no flow: decoded (the session refuses it, with its reason) */
	lg_wire_start(&w, LG_W_ENTER, 1);
	lg_wire_put_str(&w, LG_T_NAME, "reviewer");
	lg_wire_finish(&w);
	assert_int_equal(decode(&w, &m), 0);
	assert_string_equal(m.flow, "");
	/* no name, or an empty one: malformed */
	lg_wire_start(&w, LG_W_ENTER, 1);
	lg_wire_put_str(&w, LG_T_FLOW, "0123abcd");
	lg_wire_finish(&w);
	assert_int_equal(decode(&w, &m), -EBADMSG);
	lg_wire_start(&w, LG_W_ENTER, 1);
	lg_wire_put_str(&w, LG_T_NAME, "");
	lg_wire_finish(&w);
	assert_int_equal(decode(&w, &m), -EBADMSG);
	lg_wire_start(&w, LG_W_GATE, 9);
	lg_wire_put_u32(&w, LG_T_PROTO, LG_P_HTTP);
	lg_wire_put_str(&w, LG_T_TOOL, "a2a message/send");
	lg_wire_put_str(&w, LG_T_CALL_TO, "127.0.0.1:9000/");
	lg_wire_finish(&w);
	assert_int_equal(decode(&w, &m), 0);
	assert_string_equal(m.call_to, "127.0.0.1:9000/");
	assert_string_equal(m.name, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_truncation_by_builder),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_required_fields),
		cmocka_unit_test(test_hello),
		cmocka_unit_test(test_enter_and_call_to),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
