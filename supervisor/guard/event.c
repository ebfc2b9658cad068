// SPDX-License-Identifier: MIT
#include <string.h>

#include "event.h"

const char *lg_op_name(enum lg_op op)
{
	switch (op) {
	case LG_OP_NONE:
		return "none";
	case LG_OP_UNLINK:
		return "unlink";
	case LG_OP_RMDIR:
		return "rmdir";
	case LG_OP_TRUNCATE:
		return "truncate";
	case LG_OP_SHRINK:
		return "shrink";
	case LG_OP_OPEN_TRUNC:
		return "open_trunc";
	case LG_OP_TOOL_DELETE:
		return "tool_delete";
	case LG_OP_WRITE:
		return "write";
	case LG_OP_RENAME:
		return "rename";
	case LG_OP_AGENT_CALL:
		return "agent_call";
	case LG_OP_OPEN_WRITE:
		return "open_write";
	case LG_OP_REMOTE_DELETE:
		return "remote_delete";
	case LG_OP_LINK:
		return "link";
	case LG_OP_MAKE:
		return "make";
	case LG_OP_CHMOD:
		return "chmod";
	case LG_OP_DEVICE_WRITE:
		return "device_write";
	case LG_OP_COUNT:
		break;
	}
	return "?";
}

const char *lg_class_name(enum lg_class cls)
{
	switch (cls) {
	case LG_CLASS_DESTROY:
		return "destroy";
	case LG_CLASS_MISSING:
		return "missing";
	case LG_CLASS_SESSION:
		return "session_owned";
	case LG_CLASS_IGNORED:
		return "ignored";
	case LG_CLASS_HARMLESS:
		return "harmless";
	case LG_CLASS_RECOVERABLE:
		return "recoverable";
	case LG_CLASS_LINKED:
		return "linked";
	case LG_CLASS_MOVED:
		return "moved";
	case LG_CLASS_SUPERSEDED:
		return "superseded";
	case LG_CLASS_NO_DATA:
		return "no_data";
	case LG_CLASS_TRANSFORMED:
		return "transformed";
	case LG_CLASS_TOOL_DELETED:
		return "tool_deleted";
	case LG_CLASS_REGENERABLE:
		return "regenerable";
	}
	return "?";
}

const char *lg_source_name(enum lg_source src)
{
	switch (src) {
	case LG_SRC_SECCOMP:
		return "seccomp";
	case LG_SRC_SHIM:
		return "shim";
	case LG_SRC_PROXY:
		return "proxy";
	case LG_SRC_BPF:
		return "bpf";
	case LG_SRC_OUTPUT:
		return "output";
	case LG_SRC_TIMER:
		return "timer";
	}
	return "?";
}

const char *lg_kind_name(enum lg_event_kind k)
{
	static const char *const names[LG_EV_KINDS] = {
		[LG_EV_DESTRUCTIVE] = "destructive",
		[LG_EV_TICK] = "tick",
		[LG_EV_OP_RESULT] = "op_result",
		[LG_EV_TOOL_DONE] = "tool_done",
		[LG_EV_TURN] = "turn",
		[LG_EV_TEXT] = "text",
		[LG_EV_PROCESSES] = "processes",
		[LG_EV_CALL] = "call",
		[LG_EV_RETURN] = "return",
		[LG_EV_WORK] = "work",
		[LG_EV_RENAME] = "rename",
		[LG_EV_UNREADABLE] = "unreadable",
		[LG_EV_OBSERVED] = "observed",
		[LG_EV_EGRESS] = "egress",
		[LG_EV_WARN] = "warn",
		[LG_EV_REFUSED] = "refused",
		[LG_EV_STOP] = "stop",
		[LG_EV_COUNTERS] = "counters",
		[LG_EV_TREE_OVER] = "tree_over",
	};

	return (unsigned)k < LG_EV_KINDS && names[k] ? names[k] : "?";
}

/* The value whose name is s among 0..n-1, or -1. */
static int parse_name(const char *s, int n, const char *(*name)(int))
{
	for (int i = 0; s && i < n; i++)
		if (strcmp(s, name(i)) == 0)
			return i;
	return -1;
}
static const char *kind_i(int i)
{
	return lg_kind_name((enum lg_event_kind)i);
}
static const char *op_i(int i)
{
	return lg_op_name((enum lg_op)i);
}
static const char *class_i(int i)
{
	return lg_class_name((enum lg_class)i);
}
static const char *source_i(int i)
{
	return lg_source_name((enum lg_source)i);
}

int lg_kind_parse(const char *s)
{
	return parse_name(s, LG_EV_KINDS, kind_i);
}
int lg_op_parse(const char *s)
{
	return parse_name(s, LG_OP_COUNT, op_i);
}
int lg_class_parse(const char *s)
{
	return parse_name(s, LG_CLASS_REGENERABLE + 1, class_i);
}
int lg_source_parse(const char *s)
{
	return parse_name(s, LG_SRC_TIMER + 1, source_i);
}
