// SPDX-License-Identifier: MIT
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
