// SPDX-License-Identifier: MIT
#include <errno.h>
#include <string.h>

#include "wiredec.h"

static int get_u32(const unsigned char *p, size_t len, uint32_t *out)
{
	if (len != sizeof(*out))
		return -EBADMSG;
	memcpy(out, p, sizeof(*out));
	return 0;
}

static int get_u64(const unsigned char *p, size_t len, uint64_t *out)
{
	if (len != sizeof(*out))
		return -EBADMSG;
	memcpy(out, p, sizeof(*out));
	return 0;
}

/* Copies a string field into scratch, up to an embedded NUL. */
static const char *get_str(const unsigned char *p, size_t len, char *scratch,
			   size_t *used, size_t size)
{
	const unsigned char *nul = memchr(p, '\0', len);
	char *s;

	if (nul)
		len = (size_t)(nul - p);
	if (*used + len + 1 > size)
		return NULL;
	s = scratch + *used;
	memcpy(s, p, len);
	s[len] = '\0';
	*used += len + 1;
	return s;
}

/* One field of a frame into m: 0, or -errno when it is malformed. */
static int decode_field(struct lg_wire_msg *m, uint8_t tag,
			const unsigned char *v, uint16_t len, char *scratch,
			size_t *used, size_t scratch_size)
{
	switch (tag) {
	case LG_T_PID:
		return get_u32(v, len, &m->pid);
	case LG_T_PPID:
		return get_u32(v, len, &m->ppid);
	case LG_T_OP:
		return get_u32(v, len, &m->op);
	case LG_T_RESULT:
		return get_u32(v, len, &m->result);
	case LG_T_PROTO:
		return get_u32(v, len, &m->proto);
	case LG_T_STATUS:
		return get_u32(v, len, &m->status);
	case LG_T_VERDICT:
		return get_u32(v, len, &m->verdict);
	case LG_T_DECISION:
		return get_u32(v, len, &m->decision);
	case LG_T_CHAN:
		return get_u64(v, len, &m->chan);
	case LG_T_DIGEST:
		return get_u64(v, len, &m->digest);
	case LG_T_COUNT:
		return get_u64(v, len, &m->count);
	case LG_T_ARGS_DIGEST:
		return get_u64(v, len, &m->args_digest);
	case LG_T_TIME:
		return get_u64(v, len, &m->time_ns);
	case LG_T_ENDPOINT:
		return get_u64(v, len, &m->endpoint);
	case LG_T_ARGS:
		m->args = v;
		m->args_len = len;
		return 0;
	case LG_T_EXE:
	case LG_T_PATH:
	case LG_T_TOOL:
	case LG_T_TARGET:
	case LG_T_FLOW:
	case LG_T_NAME:
	case LG_T_CALL_TO:
	case LG_T_SYSTEM:
	case LG_T_MADE:
	case LG_T_PREVIEW: {
		const char *s = get_str(v, len, scratch, used, scratch_size);

		if (!s)
			return -EMSGSIZE;
		if (tag == LG_T_EXE)
			m->exe = s;
		else if (tag == LG_T_PATH)
			m->path = s;
		else if (tag == LG_T_TOOL)
			m->tool = s;
		else if (tag == LG_T_TARGET)
			m->target = s;
		else if (tag == LG_T_FLOW)
			m->flow = s;
		else if (tag == LG_T_NAME)
			m->name = s;
		else if (tag == LG_T_CALL_TO)
			m->call_to = s;
		else if (tag == LG_T_SYSTEM)
			m->system = s;
		else if (tag == LG_T_MADE)
			m->made = s;
		else
			m->preview = s;
		return 0;
	}
	default:
		return -EBADMSG; /* unknown in this version */
	}
}

/* What each type cannot do without: 0, or -EBADMSG. */
static int check_required(const struct lg_wire_msg *m)
{
	switch (m->type) {
	case LG_W_HELLO:
		if (!LG_WIRE_HAS(m, LG_T_PID))
			return -EBADMSG;
		break;
	case LG_W_OP_RESULT:
		if (!LG_WIRE_HAS(m, LG_T_OP) || !LG_WIRE_HAS(m, LG_T_PATH) ||
		    !LG_WIRE_HAS(m, LG_T_RESULT))
			return -EBADMSG;
		break;
	case LG_W_TOOL_CALL:
	case LG_W_GATE:
		if (!LG_WIRE_HAS(m, LG_T_PROTO) || !LG_WIRE_HAS(m, LG_T_TOOL))
			return -EBADMSG;
		break;
	case LG_W_TOOL_RESULT:
		if (!LG_WIRE_HAS(m, LG_T_PROTO) || !LG_WIRE_HAS(m, LG_T_CHAN))
			return -EBADMSG;
		break;
	case LG_W_DROPS:
		if (!LG_WIRE_HAS(m, LG_T_COUNT))
			return -EBADMSG;
		break;
	case LG_W_ENTER: /* a missing flow is the session's to refuse */
		if (!LG_WIRE_HAS(m, LG_T_NAME) || !*m->name)
			return -EBADMSG;
		break;
	default:
		break;
	}
	return 0;
}

int lg_wire_decode(const void *frame, size_t n, struct lg_wire_msg *m,
		   char *scratch, size_t scratch_size)
{
	const unsigned char *b = frame, *end;
	struct lg_wire_hdr h;
	size_t used = 0;

	memset(m, 0, sizeof(*m));
	m->exe = m->path = m->tool = m->target = m->preview = m->flow =
		m->name = m->call_to = m->system = m->made = "";
	if (n > LG_WIRE_MAX)
		return -EMSGSIZE;
	if (n < LG_WIRE_HDR_SIZE)
		return -EBADMSG;
	memcpy(&h, b, sizeof(h));
	if (h.magic != LG_WIRE_MAGIC || h.version != LG_WIRE_VERSION)
		return -EPROTO;
	if (h.type < 1 || h.type > LG_W_TYPE_MAX)
		return -EPROTO;
	if (h.len != n - LG_WIRE_HDR_SIZE)
		return -EBADMSG;
	m->type = h.type;
	m->seq = h.seq;
	b += LG_WIRE_HDR_SIZE;
	end = b + h.len;
	while (b < end) {
		const unsigned char *v;
		uint16_t len;
		uint8_t tag;
		int r = 0;

		if ((size_t)(end - b) < 3)
			return -EBADMSG;
		tag = b[0];
		memcpy(&len, b + 1, 2);
		v = b + 3;
		if ((size_t)(end - v) < len)
			return -EBADMSG;
		r = decode_field(m, tag, v, len, scratch, &used, scratch_size);
		if (r < 0)
			return r;
		m->present |= 1u << tag;
		b = v + len;
	}
	/* What each type cannot do without. */
	return check_required(m);
}
