# An orchestrator that delegates to a planner, which delegates to a coder
# (nested lgruns, three sessions deep, each doing a little work), twice.
setup() {
	cat >"$META/level.sh" <<'SH'
#!/bin/bash
echo "$LGRUN_AGENT did work" >>work.log
[ $# -eq 0 ] && exit 0
name=$1; shift
exec "$LGRUN" --agent "$name" -- bash "$0" "$@"
SH
	export LEVEL=$META/level.sh
}
run() {
	set -e
	"$LGRUN" --agent orchestrator -- bash "$LEVEL" planner coder
	"$LGRUN" --agent orchestrator -- bash "$LEVEL" reviewer
}
verify() {
	[ "$(wc -l <work.log)" = 5 ] || bad "not every level ran: $(cat work.log)"
}
