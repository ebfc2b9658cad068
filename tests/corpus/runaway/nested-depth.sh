# Agents delegating to agents to agents: six nested lgruns deep (a -> b ->
# c -> d -> e -> f); the sixth is refused and the flow is stopped.
EXPECT_REASON=flow_depth
setup() {
	cat >"$META/level.sh" <<'SH'
#!/bin/bash
echo "$LGRUN_AGENT" >>levels.log
[ $# -eq 0 ] && { touch innermost-ran; sleep 20; exit 0; }
name=$1; shift
"$LGRUN" --agent "$name" -- bash "$0" "$@"
SH
	export LEVEL=$META/level.sh
}
run() {
	"$LGRUN" --agent a -- bash "$LEVEL" b c d e f g
}
verify() {
	[ ! -e innermost-ran ] || bad "the innermost level ran"
}
