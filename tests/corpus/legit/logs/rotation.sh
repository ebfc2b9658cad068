# A service's log rotation (the logrotate recipe, as a script): drop the
# oldest archive, shift app.log.N.gz up, move app.log to app.log.1 and
# compress it, start a new app.log; then the app logs on.
NEEDS=gzip
setup() {
	mkdir -p logs
	local i
	seq 1 2000 | sed 's/^/INFO request /' >logs/app.log
	for i in 1 2 3 4 5; do seq 1 500 | sed "s/^/old $i /" | gzip >logs/app.log.$i.gz; done
}
run() {
	set -e
	cd logs
	rm -f app.log.5.gz
	for i in 4 3 2 1; do mv app.log.$i.gz app.log.$((i + 1)).gz; done
	mv app.log app.log.1
	: >app.log
	gzip -9 app.log.1
	for i in $(seq 1 100); do echo "INFO after rotation $i" >>app.log; done
}
verify() {
	[ "$(ls logs | wc -l)" = 6 ] || bad "expected 6 files: $(ls logs)"
	[ "$(zcat logs/app.log.1.gz | wc -l)" = 2000 ] || bad "the rotated log lost lines"
	zcat logs/app.log.5.gz | grep -q '^old 4 ' || bad "archives not shifted"
}
