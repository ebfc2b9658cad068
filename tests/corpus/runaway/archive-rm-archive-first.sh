# Archives made, then gone or emptied before the originals are removed:
# data.tgz is removed, data.zip is overwritten with a line of text, then
# `rm -rf data`. No archive left holds the files: each removal loses data
# (issue 41).
NEEDS="tar gzip zip"
EXPECT_REASON=volume_exceeded
setup() {
	local f
	mkfiles data 10 log .txt
	for f in data/*; do seq 1 500 >>"$f"; done
	manifest data data
}
run() {
	tar czf data.tgz data
	zip -qr data.zip data
	rm data.tgz
	echo "see the backup server" >data.zip
	rm -rf data
}
verify() {
	at_most_lost 2 data
}
