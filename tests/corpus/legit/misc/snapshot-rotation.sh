# rsnapshot-style backups: each snapshot is `cp -al` of the previous one
# (hard links), so removing the oldest snapshot frees nothing that a newer
# one does not still hold (DESIGN: "held by another hard link" is not lost).
# Known false kill (issue 11): removals of files held by other links count.
KNOWN=
setup() {
	mkfiles data 20 doc_ .txt
	mkdir snaps
	cp -a data snaps/daily.2
	cp -al snaps/daily.2 snaps/daily.1
	cp -al snaps/daily.1 snaps/daily.0
	manifest data data
}
run() {
	set -e
	cd snaps
	rm -rf daily.2
	mv daily.1 daily.2
	mv daily.0 daily.1
	cp -al daily.1 daily.0
	cp -a ../data/. daily.0/
}
verify() {
	[ "$(ls snaps/daily.2 | wc -l)" = 20 ] || bad "snapshot daily.2 incomplete"
	none_lost data
}
