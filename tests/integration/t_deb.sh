#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# make deb: a Debian package from debian/ (debhelper) with the binaries,
# the libraries in /usr/lib/lgrun, the config in /etc/lgrun and the man
# pages; lintian-clean (debian/lgrun.lintian-overrides says why for what is
# left); apt would install it; the packaged lgrun runs and finds its shim.
source "$(dirname "$0")/lib.sh"
need_cmd dpkg-buildpackage
need_cmd dh
need_cmd lintian

make -C "$LG_ROOT" --no-print-directory deb B="$T/b" >"$T/log" 2>&1 || fail "make deb: $(tail -20 "$T/log")"
deb=$(ls "$T"/b/deb/lgrun_*_amd64.deb 2>/dev/null | head -n1)
[ -f "$deb" ] || fail "no package: $(tail -5 "$T/log")"
dpkg -c "$deb" | awk '{print $6}' >"$T/contents"
for f in ./usr/bin/lgrun ./usr/bin/lgctl ./usr/lib/lgrun/liblgshim.so ./usr/lib/lgrun/liblgproxy.so \
	./usr/lib/lgrun/liblgtls.so ./etc/lgrun/lgrun.ini ./etc/lgrun/profiles/ci.ini \
	./usr/share/man/man1/lgrun.1.gz ./usr/share/man/man1/lgctl.1.gz ./usr/share/man/man5/lgrun.ini.5.gz \
	./usr/share/doc/lgrun/copyright; do
	grep -qxF "$f" "$T/contents" || fail "not in the package: $f"
done
lintian "$deb" >"$T/lintian" 2>&1
grep -E '^[EW]: ' "$T/lintian" && fail "lintian: $(grep -E '^[EW]: ' "$T/lintian")"
# apt resolves its dependencies on this system (a simulation changes nothing)
apt-get install -s "$deb" >"$T/apt" 2>&1 || fail "apt would not install it: $(tail -5 "$T/apt")"
grep -q "^Inst lgrun \|lgrun is already the newest" "$T/apt" || fail "apt: $(tail -5 "$T/apt")"
# the packaged binaries, unpacked into a throwaway root, run
dpkg -x "$deb" "$T/root"
"$T/root/usr/bin/lgrun" --state-dir "$T/s" -- true || fail "the packaged lgrun -- true failed"
out=$("$T/root/usr/bin/lgrun" --state-dir "$T/s" -- sh -c 'echo "$LD_PRELOAD"')
[ "$out" = "$T/root/usr/bin/../lib/lgrun/liblgshim.so" ] || fail "the shim is not the packaged one: $out"
"$T/root/usr/bin/lgrun" --help | grep -q "/etc/lgrun/lgrun.ini" || fail "the packaged lgrun does not read /etc/lgrun"
mkfiles "$T/d" 5
"$T/root/usr/bin/lgrun" --state-dir "$T/s" --config "$T/root/etc/lgrun/lgrun.ini" -- sh -c 'rm "$0"/f*' "$T/d" 2>/dev/null
[ $? = 86 ] || fail "the packaged lgrun did not stop a delete loop"
pass
