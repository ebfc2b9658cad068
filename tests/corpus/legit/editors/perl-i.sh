# perl -pi -e over a tree (perl's in-place edit), with and without a
# backup extension, as an agent fixing licence headers does.
NEEDS=perl
setup() {
	mkdir -p lib
	local i
	for i in $(seq 1 20); do
		printf '# Copyright 2020 Old Corp\npackage M%d;\n1;\n' "$i" >lib/M$i.pm
	done
}
run() {
	set -e
	perl -pi -e 's/2020 Old Corp/2026 New Corp/' lib/*.pm
	perl -pi.orig -e 's/^package/package/' lib/*.pm
	rm -f lib/*.orig
	perl -ni -e 'print unless /^$/' lib/*.pm
}
verify() {
	[ "$(grep -l 'New Corp' lib/*.pm | wc -l)" = 20 ] || bad "not every file was edited"
}
