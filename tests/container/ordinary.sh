#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# In the container: ordinary work under lgrun runs untouched. A build (its
# objects made, then removed: the session's own), temporary files, an
# `echo > f; rm f`, an overwrite of a file of one's own, a tar round trip,
# Python's tempfile. Exits non-zero with what went wrong.
set -u
fail() { echo "FAIL: $*"; exit 1; }
# a user with no home of its own (HOME=/) works in /tmp
W=$HOME
[ -w "$W" ] || W=/tmp/w-$(id -u)
mkdir -p "$W" && cd "$W" || fail "no folder to work in"
mkdir -p proj/src && cd proj || fail "mkdir"
for i in 1 2 3 4 5 6; do echo "int f$i(void) { return $i; }" >"src/m$i.c"; done
lgrun -v --session "ordinary-$(id -u)" -- bash -c '
	set -e
	echo hi >new.txt; cat new.txt >/dev/null; rm new.txt
	echo "draft" >notes.txt; echo "final" >notes.txt
	mkdir -p build
	for f in src/*.c; do o=build/$(basename "$f" .c).o; cp "$f" "$o"; done
	ls build/*.o | wc -l >build/count
	rm -rf build
	python3 -c "import tempfile, os
d = tempfile.gettempdir()
with tempfile.NamedTemporaryFile(dir=d) as f:
    f.write(b\"x\" * 4096)
t = tempfile.mkdtemp(); open(os.path.join(t, \"a\"), \"w\").write(\"a\"); os.remove(os.path.join(t, \"a\")); os.rmdir(t)
print(\"tempdir\", d)"
	tar cf /tmp/src.tar src && mkdir -p /tmp/x && tar xf /tmp/src.tar -C /tmp/x && rm -rf /tmp/x /tmp/src.tar
' >out 2>&1
rc=$?
cat out
[ $rc = 0 ] || fail "ordinary work under lgrun: exit status $rc"
grep -q "^lgrun: refused\|session_killed" out && fail "lgrun refused or stopped ordinary work"
grep -q "^tempdir /tmp" out || fail "Python found no temporary directory"
[ "$(cat notes.txt)" = final ] || fail "the overwrite did not happen"
[ ! -e build ] || fail "the build's objects were not removed"
lgctl status "ordinary-$(id -u)" | grep -q "exited .* exit status 0" || fail "the session did not end with status 0: $(lgctl status "ordinary-$(id -u)")"
echo "ordinary: ok"
