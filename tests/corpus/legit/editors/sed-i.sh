# A rename across a code base with sed -i (GNU sed writes a temp file and
# renames it over each original), then a second pass with a backup suffix
# whose backups are removed afterwards.
NEEDS="sed grep"
setup() {
	mkdir -p src
	local i
	for i in $(seq 1 25); do
		printf '#include "old_api.h"\nint f%d(void) { return old_call(%d); }\n' "$i" "$i" >src/f$i.c
	done
}
run() {
	set -e
	grep -rl old_call src | xargs sed -i 's/old_call/new_call/g'
	sed -i.bak 's/old_api\.h/new_api.h/' src/*.c
	rm -f src/*.bak
}
verify() {
	! grep -rq 'old_' src || bad "not every file was edited"
	[ "$(ls src | wc -l)" = 25 ] || bad "files missing"
}
