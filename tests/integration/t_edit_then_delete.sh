#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Edit, then delete (issue 12): sed -i, perl -i, an editor's atomic save and
# write-temp-then-rename each give a file a new inode born in the session.
# Its content still predates the session: the rename over the pre-existing
# file carries that status on, so deleting the edited files is stopped at
# the third, as deleting the originals would be.
source "$(dirname "$0")/lib.sh"
need_cmd perl
need_cmd python3

SAVE='
import os, sys, tempfile
for p in sys.argv[1:]:
    d = os.path.dirname(p)
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".save.")
    with os.fdopen(fd, "w") as f:
        f.write(open(p).read().upper())
    os.replace(tmp, p)
'
for how in sed perl save mv; do
	rm -rf "$T/data" "$STATE"
	mkfiles "$T/data" 10
	case $how in
	sed) edit='sed -i s/data/DATA/ "$0"/f*' ;;
	perl) edit='perl -pi -e s/data/DATA/ "$0"/f*' ;;
	save) edit='python3 -c "$SAVE" "$0"/f*' ;;
	mv) edit='for f in "$0"/f*; do tr a-z A-Z <"$f" >"$f.new" && mv -f "$f.new" "$f"; done' ;;
	esac
	SAVE=$SAVE run_lg -- bash -c "$edit"'; for f in "$0"/f*; do rm -f "$f"; done' "$T/data" 2>"$T/err"
	assert_rc 86 "$RC" "$how then rm"
	left=$(find "$T/data" -type f | wc -l)
	[ "$left" -ge 8 ] || fail "$how then rm: lost $((10 - left)) of 10 (at most 2)"
	grep -q '"summary":"session_killed: volume_exceeded, 3 deletes of pre-existing files' "$STATE/audit.jsonl" ||
		fail "$how then rm: the trip does not say pre-existing files were deleted"
	# The edits themselves were not losses.
	grep -q DATA "$T/data/f10" || grep -q DATA "$T/data/f9" || fail "$how: the edit did not happen"
done

# With a backup (sed -i.bak, perl -i.orig): removing the backups loses
# nothing while the edited files are there; removing the edited files too is
# stopped.
for how in sed perl; do
	case $how in
	sed) edit='sed -i.bak s/data/DATA/ "$0"/f*' ; bak=bak ;;
	perl) edit='perl -pi.orig -e s/data/DATA/ "$0"/f*' ; bak=orig ;;
	esac
	rm -rf "$T/data" "$STATE"
	mkfiles "$T/data" 10
	run_lg -- bash -c "$edit"'; rm -f "$0"/*.'$bak "$T/data" 2>"$T/err"
	assert_rc 0 "$RC" "$how with a backup, backups removed"
	assert_no_trip "$how with a backup, backups removed"
	rm -rf "$T/data" "$STATE"
	mkfiles "$T/data" 10
	run_lg -- bash -c "$edit"'; rm -f "$0"/*.'$bak'; for f in "$0"/f*; do rm -f "$f"; done' "$T/data" 2>"$T/err"
	assert_rc 86 "$RC" "$how with a backup, then everything removed"
	left=$(find "$T/data" -type f ! -name "*.$bak" | wc -l)
	[ "$left" -ge 8 ] || fail "$how with a backup, then rm: lost $((10 - left)) of 10 (at most 2)"
done

# Editing alone, however many files, is not a loss; nor is removing a file
# the session wrote from scratch after its edit.
rm -rf "$T/data" "$STATE"
mkfiles "$T/data" 10
run_lg -- bash -c 'sed -i s/data/DATA/ "$0"/f*; perl -pi -e s/DATA/Data/ "$0"/f*
	for f in "$0"/f*; do echo new >"$f.tmp"; rm "$f.tmp"; done' "$T/data" 2>"$T/err"
assert_rc 0 "$RC" "edits only"
assert_no_trip "edits only"
pass
