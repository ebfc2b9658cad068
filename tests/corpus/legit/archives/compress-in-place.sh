# Compressing old logs and dumps in place, as an agent asked to free disk
# space does: gzip *.log, xz -T0, bzip2, zstd --rm, lz4 --rm and lzip each
# write the compressed file, then remove the original. The content lives on,
# transformed, next to where it was (issue 29, item 1). Debian installs
# lzip as an alternative (/usr/bin/lzip -> lzip.plzip or lzip.lzip): the
# program that runs is named lzip.plzip, and its originals predate the
# session too.
NEEDS="gzip xz bzip2 zstd lz4"
setup() {
	mkfiles logs 6 app .log
	mkfiles dumps 4 db .sql
	mkfiles traces 4 t .json
	mkfiles csv 4 c .csv
	mkfiles bin 4 b .dat
	mkfiles lz 4 l .txt
	for f in logs/* dumps/* traces/* csv/* bin/* lz/*; do
		seq 1 2000 >>"$f"
	done
	mkdir -p "$META/orig" && cp -a logs dumps traces csv bin lz "$META/orig/"
}
run() {
	set -e
	gzip logs/*.log
	xz -T0 dumps/*.sql
	bzip2 traces/*.json
	zstd -q --rm csv/*.csv
	lz4 -q -m --rm bin/*.dat
	if command -v lzip >/dev/null; then
		lzip lz/*.txt
		mkdir more && seq 1 500 >more/a.txt && lzip more/a.txt
	fi
	ls logs dumps traces csv bin
}
verify() {
	local f
	for f in "$META"/orig/logs/*; do
		cmp -s "$f" <(gzip -dc "logs/${f##*/}.gz") || bad "logs/${f##*/} not in its .gz" || return 1
	done
	for f in "$META"/orig/dumps/*; do
		cmp -s "$f" <(xz -dc "dumps/${f##*/}.xz") || bad "dumps/${f##*/} not in its .xz" || return 1
	done
	for f in "$META"/orig/traces/*; do
		cmp -s "$f" <(bzip2 -dc "traces/${f##*/}.bz2") || bad "traces/${f##*/}" || return 1
	done
	for f in "$META"/orig/csv/*; do
		cmp -s "$f" <(zstd -qdc "csv/${f##*/}.zst") || bad "csv/${f##*/}" || return 1
	done
	for f in "$META"/orig/bin/*; do
		cmp -s "$f" <(lz4 -qdc "bin/${f##*/}.lz4") || bad "bin/${f##*/}" || return 1
	done
	command -v lzip >/dev/null || return 0
	for f in "$META"/orig/lz/*; do
		cmp -s "$f" <(lzip -dc "lz/${f##*/}.lz") || bad "lz/${f##*/}" || return 1
	done
}
