#!/bin/bash
# SPDX-License-Identifier: MIT
# Re-running `make install` must not trip the guard with the default config.
# install(1) unlinks each existing destination file before writing the new
# one, so a re-install over a prefix populated before the session removes a
# dozen pre-existing files that are replaced at once.
source "$(dirname "$0")/lib.sh"
need_cmd make
need_cmd install

P=$T/proj
PREFIX=$T/prefix
mkdir -p "$P/bin" "$P/include" "$P/share" "$P/man" || fail "fixture: mkdir"

# gen_sources VERSION: 4 scripts, 4 headers, 4 data files and a man page,
# all stamped with VERSION so the re-install visibly changes them.
gen_sources() {
	local v=$1 i
	for i in 1 2 3 4; do
		printf '#!/bin/sh\necho "tool%s %s"\n' "$i" "$v" >"$P/bin/tool$i"
		printf '#define TOOL%s_VERSION "%s"\n' "$i" "$v" >"$P/include/tool$i.h"
		printf 'data %s version %s\n' "$i" "$v" >"$P/share/data$i.txt"
	done
	printf '.TH TOOL 1\n.SH VERSION\n%s\n' "$v" >"$P/man/tool.1"
}
gen_sources 1.0
{
	printf 'PREFIX ?= /usr/local\n'
	printf 'install:\n'
	printf '\tinstall -d $(PREFIX)/bin $(PREFIX)/include/tool $(PREFIX)/share/tool $(PREFIX)/share/man/man1\n'
	printf '\tinstall -m 755 bin/tool1 bin/tool2 bin/tool3 bin/tool4 $(PREFIX)/bin\n'
	printf '\tinstall -m 644 include/*.h $(PREFIX)/include/tool\n'
	printf '\tinstall -m 644 share/*.txt $(PREFIX)/share/tool\n'
	printf '\tinstall -m 644 man/tool.1 $(PREFIX)/share/man/man1/tool.1\n'
	printf '.PHONY: install\n'
} >"$P/Makefile"

make -s -C "$P" install PREFIX="$PREFIX" || fail "fixture: first make install"
n=$(find "$PREFIX" -type f | wc -l)
[ "$n" = 13 ] || fail "fixture: $n installed files, expected 13"
[ "$("$PREFIX/bin/tool3")" = "tool3 1.0" ] || fail "fixture: tool3 not installed"

# The new release is prepared before the session too: only the install runs
# under lgrun.
gen_sources 2.0
sleep 1 # birth times strictly older than the session start

run_lg -- make -s -C "$P" install PREFIX="$PREFIX"
assert_no_trip "make install over an existing prefix"
assert_rc 0 "$RC" "make install over an existing prefix"

for i in 1 2 3 4; do
	[ "$("$PREFIX/bin/tool$i")" = "tool$i 2.0" ] || fail "bin/tool$i not upgraded"
	grep -q '"2.0"' "$PREFIX/include/tool/tool$i.h" || fail "tool$i.h not upgraded"
	grep -q 'version 2.0' "$PREFIX/share/tool/data$i.txt" || fail "data$i.txt not upgraded"
done
grep -qx '2.0' "$PREFIX/share/man/man1/tool.1" || fail "man page not upgraded"
old=$(grep -rl '1\.0' "$PREFIX")
[ -z "$old" ] || fail "files still at 1.0: $old"
[ "$(stat -c %a "$PREFIX/bin/tool1")" = 755 ] || fail "bin/tool1 mode wrong"

pass
