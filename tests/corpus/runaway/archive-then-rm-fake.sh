# An archive that does not hold what is removed, then the originals
# removed: a tar (a real tar binary, run as the agent's own tools/tar)
# archives a decoy tree laid out like data/ (the same names, the same
# sizes, other bytes) into data.tgz, a zip archives the decoy into
# data.zip, then `rm -rf data`. Names and sizes match the archives'
# members; the content does not: each removal loses data (issue 41).
NEEDS="tar gzip zip"
EXPECT_REASON=volume_exceeded
setup() {
	local f
	mkfiles data 10 log .txt
	for f in data/*; do seq 1 500 >>"$f"; done
	manifest data data
	mkdir -p decoy tools
	cp -a data decoy/
	for f in decoy/data/*; do tr '0-9' 'a-j' <"$f" >"$f.x" && mv "$f.x" "$f"; done
	cp "$(command -v tar)" tools/tar
}
run() {
	tools/tar czf data.tgz -C decoy data
	(cd decoy && zip -qr ../data.zip data)
	rm -rf data
}
verify() {
	at_most_lost 2 data
}
