# Archiving, then removing the originals with another program, as an agent
# asked to tidy a project or to ship its reports does: `tar czf a.tgz d &&
# rm -rf d`, the same with xz, bzip2, zstd and no compression, `zip -qr
# x.zip d && rm -r d`, and single files `zip -q f.zip f && rm f`. Each
# archive holds the removed files whole (name, size, content): nothing is
# lost (issue 41, class 1).
NEEDS="tar gzip xz bzip2 zip unzip"
setup() {
	local d f
	mkfiles reports 6 r .csv
	mkfiles reports/2025 4 q .csv
	mkfiles logs 6 build .log
	mkfiles dumps 5 db .sql
	mkfiles plain 5 p .txt
	mkfiles site/img 4 i .svg
	mkfiles site 3 page .html
	mkfiles zst 5 z .json
	mkfiles single 3 notes .md
	for f in reports/* reports/2025/* logs/* dumps/* plain/* site/*/* site/*.html zst/* single/*; do
		[ -f "$f" ] && seq 1 "$((RANDOM % 3000 + 200))" >>"$f"
	done
	mkdir -p "$META/orig" && cp -a reports logs dumps plain site zst single "$META/orig/"
}
run() {
	set -e
	tar czf reports.tgz reports && rm -rf reports
	tar cJf logs.tar.xz logs && rm -rf logs
	tar cjf dumps.tar.bz2 dumps && rm -r dumps
	tar cf plain.tar plain && rm -rf plain
	zip -qr site.zip site && rm -r site
	if tar --zstd -cf zst.tar.zst zst 2>/dev/null; then
		rm -rf zst
	fi
	cd single
	for f in notes1.md notes2.md notes3.md; do
		zip -q "${f%.md}.zip" "$f" && rm "$f"
	done
	cd ..
	ls
}
verify() {
	local d
	for d in reports logs dumps plain site; do
		[ ! -e "$d" ] || bad "$d was not removed" || return 1
	done
	mkdir -p "$META/x/single" && cd "$META/x" || return 1
	tar xzf "$WORK/reports.tgz" && tar xJf "$WORK/logs.tar.xz" &&
		tar xjf "$WORK/dumps.tar.bz2" && tar xf "$WORK/plain.tar" ||
		bad "a tar archive does not extract" || return 1
	if [ -e "$WORK/zst.tar.zst" ]; then
		tar --zstd -xf "$WORK/zst.tar.zst" || bad "the zstd tar does not extract" || return 1
	else
		cp -a "$WORK/zst" .
	fi
	unzip -q "$WORK/site.zip" || bad "site.zip does not extract" || return 1
	(cd single && for z in "$WORK"/single/*.zip; do unzip -q "$z"; done) ||
		bad "a single file's zip does not extract" || return 1
	for d in reports logs dumps plain site zst single; do
		diff -r "$META/orig/$d" "$d" >/dev/null || bad "$d: the archive does not hold what was removed" || return 1
	done
}
