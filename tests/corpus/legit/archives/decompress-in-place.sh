# Unpacking compressed files that predate the session in place, as an agent
# reading old logs or a data drop does: gzip -d (and gunzip), unxz, bunzip2
# and zstd -d --rm each write the plain file, then remove the compressed one
# (issue 29, item 1: the decompress direction).
NEEDS="gzip xz bzip2 zstd"
setup() {
	local d
	for d in gz xz bz zs; do
		mkfiles $d 4 part .txt
		for f in $d/*; do seq 1 1000 >>"$f"; done
		mkdir -p "$META/orig/$d" && cp $d/* "$META/orig/$d/"
	done
	gzip gz/*.txt
	xz xz/*.txt
	bzip2 bz/*.txt
	zstd -q --rm zs/*.txt
}
run() {
	set -e
	gzip -d gz/part1.txt.gz gz/part2.txt.gz
	gunzip gz/part3.txt.gz gz/part4.txt.gz
	unxz xz/*.xz
	bunzip2 bz/*.bz2
	zstd -q -d --rm zs/*.zst
}
verify() {
	local d f
	for d in gz xz bz zs; do
		for f in "$META/orig/$d"/*; do
			cmp -s "$f" "$d/${f##*/}" || bad "$d/${f##*/} not unpacked" || return 1
		done
	done
}
