# A program merely named make: a script in the project (./make) that, given
# `clean`, removes the objects and the data next to them. Not the installed
# make: its removals count, stopped.
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
