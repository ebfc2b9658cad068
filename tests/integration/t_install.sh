#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# make install PREFIX=... installs binaries that find their installed config
# and profiles, and the man pages.
source "$(dirname "$0")/lib.sh"
need_cmd make

make -C "$LG_ROOT" --no-print-directory install PREFIX="$T/prefix" >"$T/log" 2>&1 ||
	fail "make install: $(tail -5 "$T/log")"
for f in bin/lgrun bin/lgctl lib/liblgshim.so lib/liblgproxy.so etc/lgrun/lgrun.ini etc/lgrun/profiles/ci.ini \
	etc/lgrun/profiles/bulk-cleanup.ini share/man/man1/lgrun.1 share/man/man1/lgctl.1 share/man/man5/lgrun.ini.5; do
	[ -e "$T/prefix/$f" ] || fail "not installed: $f"
done
"$T/prefix/bin/lgrun" --help | grep -q "$T/prefix/etc/lgrun/lgrun.ini" ||
	fail "the installed lgrun does not look for its installed config"
mkfiles "$T/data" 20
"$T/prefix/bin/lgrun" --state-dir "$STATE" --profile bulk-cleanup -- rm -r "$T/data"
assert_rc 0 "$?" "the installed lgrun with an installed profile"
"$T/prefix/bin/lgctl" --state-dir "$STATE" status | grep -q exited || fail "installed lgctl status"
pass
