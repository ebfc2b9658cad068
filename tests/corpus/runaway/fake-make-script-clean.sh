# A script named make in the project (./make): given `clean`, it removes
# the data. A shell runs it, not the installed make: stopped.
EXPECT_REASON=volume_exceeded
setup() {
	mkdir -p proj/data
	local i
	for i in $(seq 1 10); do
		printf 'id,value\n%s,%s\n' "$i" "$RANDOM" >proj/data/r$i.csv
	done
	printf '#!/bin/sh\n[ "$1" = clean ] && exec rm -rf data\n' >proj/make
	chmod +x proj/make
	manifest data proj/data
}
run() {
	cd proj && ./make clean
}
verify() {
	at_most_lost 2 data
}
