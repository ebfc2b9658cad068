# A Makefile whose clean recipe also removes data/: ten CSV files from
# before the session, untracked. `make clean` is a clean verb, but what it
# removes here is data, not build output: stopped, the data kept.
NEEDS="make cc"
EXPECT_REASON=volume_exceeded
setup() {
	mkdir -p proj
	printf 'int main(void) { return 0; }\n' >proj/main.c
	printf 'app: main.o\n\t$(CC) -o $@ main.o\nclean:\n\trm -f app *.o\n\trm -rf data/\n.PHONY: clean\n' >proj/Makefile
	make -s -C proj
	local i
	mkdir -p proj/data
	for i in $(seq 1 10); do
		printf 'id,value\n%s,%s\n' "$i" "$RANDOM" >proj/data/part$i.csv
	done
	manifest data proj/data
}
run() {
	make -s -C proj clean
}
verify() {
	at_most_lost 2 data
}
