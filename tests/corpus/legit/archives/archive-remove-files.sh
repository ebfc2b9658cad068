# Archiving old files and removing them, as an agent asked to tidy a
# project or free disk space does: tar --remove-files (plain, gzip, xz),
# zip -m of a tree and of single files, 7z a -sdel when 7z is installed.
# Each archiver writes the archive, then removes what it put in it: the
# content lives on in the archive (issue 29, item 1: the compressors'
# class is wider than gzip f).
NEEDS="tar gzip xz zip unzip"
setup() {
	mkfiles old/plain 6 run .log
	mkfiles old/gz 6 build .log
	mkfiles old/xz 6 dump .sql
	mkfiles reports 6 r .csv
	mkfiles snaps 6 s .json
	mkfiles seven 6 n .txt
	mkfiles small 4 t .log # a few lines each: tar -z removes after gzip ended
	local f
	for f in old/*/* reports/* snaps/* seven/*; do
		seq 1 3000 >>"$f"
	done
	mkdir -p "$META/orig" && cp -a old reports snaps seven small "$META/orig/"
}
run() {
	set -e
	tar cf plain.tar --remove-files old/plain
	tar czf gz.tgz --remove-files old/gz
	tar -cJf xz.txz --remove-files old/xz
	tar czf small.tgz --remove-files small
	zip -q -m -r reports.zip reports
	(cd snaps && zip -q -m ../snaps.zip s1.json s2.json s3.json s4.json s5.json s6.json)
	if command -v 7z >/dev/null; then
		7z a -bd -sdel seven.7z seven >/dev/null
	fi
	ls
}
verify() {
	local d
	[ ! -e old/plain ] && [ ! -e old/gz ] && [ ! -e old/xz ] || bad "tar left its input" || return 1
	mkdir -p "$META/x" && cd "$META/x" || return 1
	tar xf "$WORK/plain.tar" && tar xzf "$WORK/gz.tgz" && tar xJf "$WORK/xz.txz" &&
		tar xzf "$WORK/small.tgz" || bad "a tar archive does not extract" || return 1
	unzip -q "$WORK/reports.zip" && (mkdir snaps && cd snaps && unzip -q "$WORK/snaps.zip") || bad "a zip archive does not extract" || return 1
	if command -v 7z >/dev/null; then
		7z x -bd "$WORK/seven.7z" >/dev/null || bad "the 7z archive does not extract" || return 1
	else
		cp -a "$WORK/seven" .
	fi
	for d in old reports snaps seven small; do
		diff -r "$META/orig/$d" "$d" >/dev/null || bad "$d: the archive does not hold what was removed" || return 1
	done
}
