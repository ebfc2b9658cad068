#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# An LSP-style client: JSON-RPC with Content-Length framing over a language
# server's stdio, asking for the same document's diagnostics again and
# again (editors and agents' language tools poll). Other methods than MCP's
# tools/call are a program's routine: observed, never judged. Its twin,
# an MCP tools/call loop with the same answer, is stopped at the third.
source "$(dirname "$0")/lib.sh"
need_cmd python3
run_lg --session lsp -- python3 "$TOOLS/lsp_poll.py" >"$T/out" 2>&1
assert_rc 0 "$RC" "an LSP client polling diagnostics: $(cat "$T/out")"
grep -q 'polled 6 times' "$T/out" || fail "the client did not run: $(cat "$T/out")"
assert_no_trip "an LSP client"

# The twin: an MCP tools/call loop, same call, same answer.
run_lg --session mcp -- python3 "$TOOLS/mcp_agent.py" --framing content-length \
	--tool get_status --args '{"asset_id": "fact_sales"}' --times 6 >"$T/out" 2>&1
assert_rc 86 "$RC" "an MCP tools/call loop"
grep -q '"reason":"repeat"' "$STATE/audit.jsonl" || fail "not stopped by the repeat rule"
pass
