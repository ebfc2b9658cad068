# An LSP-style client: JSON-RPC with Content-Length framing over a language
# server's stdio, asking for the same document's diagnostics again and
# again, as editors and agents' language tools poll.
NEEDS=python3
setup() {
	:
}
run() {
	python3 "$TOOLS/lsp_poll.py"
}
verify() {
	grep -q 'polled 6 times' "$OUT" || bad "the client did not finish"
}
