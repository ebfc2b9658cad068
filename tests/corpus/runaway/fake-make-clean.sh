# A program merely named make: a copy of rm in the project (./make), run
# as `./make clean data/*.csv`, removing the data next to the objects. Its
# executable is not the installed make: its removals count, stopped.
EXPECT_REASON=volume_exceeded
setup() {
	mkdir -p proj/data
	local i
	for i in $(seq 1 10); do
		printf 'id,value\n%s,%s\n' "$i" "$RANDOM" >proj/data/r$i.csv
	done
	cp "$(command -v rm)" proj/make
	manifest data proj/data
}
run() {
	cd proj && ./make clean data/*.csv
}
verify() {
	at_most_lost 2 data
}
