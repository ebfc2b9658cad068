#!/bin/bash
# SPDX-License-Identifier: MIT
# Saving files from an editor must not trip the guard with the default
# config. vim (backupcopy=no, writebackup) and emacs save by renaming the
# original to `name~`, writing a new `name`, then unlinking `name~` -- the
# unlinked inode is the pre-existing file, now under a backup name. They
# also create and drop swap/lock files next to it. A second round saves the
# way many GUI editors do: write a temp file and rename it over the original.
source "$(dirname "$0")/lib.sh"

D=$T/src
mkdir -p "$D" || fail "fixture: mkdir"
for n in main.c util.c util.h README.md Makefile; do
	printf 'original %s\n' "$n" >"$D/$n"
done
sleep 1 # birth times strictly older than the session start

run_lg -- bash -c '
set -e
cd "$1"
for n in main.c util.c util.h README.md Makefile; do
	# Opening the file: vim swap file and emacs lock symlink.
	printf "swap\n" >".$n.swp"
	ln -s "user@host.1234:1700000000" ".#$n"
	# Save with backup: rename, write new, drop the backup.
	mv -- "$n" "$n~"
	printf "edited %s\n" "$n" >"$n"
	rm -f -- "$n~"
	# Closing the file.
	rm -f -- ".$n.swp" ".#$n"
done
# Second save of each file, atomic style: temp file renamed over the original.
for n in main.c util.c util.h README.md Makefile; do
	tmp=$(mktemp ".$n.XXXXXX")
	printf "edited %s\nsaved twice\n" "$n" >"$tmp"
	mv -f -- "$tmp" "$n"
done
' editor "$D"
assert_no_trip "editor saves"
assert_rc 0 "$RC" "editor saves"

for n in main.c util.c util.h README.md Makefile; do
	[ "$(printf 'edited %s\nsaved twice' "$n")" = "$(cat "$D/$n")" ] || fail "$n has '$(cat "$D/$n")'"
done
left=$(find "$D" -mindepth 1 \( -name '*~' -o -name '.*' \))
[ -z "$left" ] || fail "backup, swap or temp files left: $left"
n=$(find "$D" -type f | wc -l)
[ "$n" = 5 ] || fail "$n files in the tree, expected 5"

pass
