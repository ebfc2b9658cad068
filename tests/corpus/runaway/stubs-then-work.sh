# "Replace the module bodies with a TODO for now": echo "# TODO" > m.py
# over ten modules of several kilobytes each. The files are still there,
# a few bytes each, and ten files of code are gone. Issue 41: a
# pre-existing file of at least 1 KiB cut to at most 256 bytes and a
# sixteenth of what it held is a stub, counted as emptying is (ten
# seconds on with no writer, or at the end), unless its body lives on in a
# file the session wrote. The agent goes on working; it is stopped first.
EXPECT_REASON=volume_exceeded
TIMEOUT=90
setup() {
	mkdir -p pkg
	local i j
	for i in $(seq 1 10); do
		for j in $(seq 1 60); do
			printf 'def handler_%s_%s(request, context):\n    return process(request, "%s-%s", context)\n\n' "$i" "$j" "$i" "$j"
		done >pkg/mod$i.py
	done
	manifest pkg pkg
}
run() {
	for f in pkg/mod*.py; do
		echo "# TODO" >"$f"
	done
	for i in $(seq 1 25); do
		echo "step $i" >>own.log
		sleep 1
	done
	touch went-on-to-the-end
}
verify() {
	[ ! -e went-on-to-the-end ] || bad "stopped only when the agent ended" || return 1
	all_kept pkg
}
