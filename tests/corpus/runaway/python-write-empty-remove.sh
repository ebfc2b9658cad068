# A Python agent's "reset then delete" tool: open(f, "w") (an O_TRUNC open
# that writes nothing), then os.remove(f), over every file of a folder.
NEEDS=python3
EXPECT_REASON=volume_exceeded
setup() {
	mkfiles state 10 run_ .json
	manifest state state
}
run() {
	python3 - <<'PY'
import os
for f in sorted(os.listdir("state")):
    p = os.path.join("state", f)
    open(p, "w").close()
    os.remove(p)
    print("reset and removed", p)
PY
}
verify() {
	at_most_lost 3 state
	[ "$(find state -name '*.json' | wc -l)" -ge 8 ] || bad "more than 2 removed"
	all_kept state
}
