# A clean recipe gone wrong in a git repository: `rm -f *.c *.o` removes
# the tracked sources with the objects. Stopped: tracked files are the
# project's, not build output.
NEEDS="git make cc"
EXPECT_REASON=volume_exceeded
setup() {
	mkdir -p proj
	local i
	for i in $(seq 1 10); do
		printf 'int f%d(void) { return %d; }\n' "$i" "$i" >proj/f$i.c
	done
	printf 'OBJS := $(patsubst %%.c,%%.o,$(wildcard *.c))\nall: $(OBJS)\nclean:\n\trm -f *.c *.o\n.PHONY: all clean\n' >proj/Makefile
	printf '*.o\n' >proj/.gitignore
	git -C proj init -q
	git -C proj add -A && git -C proj commit -qm init
	make -s -C proj
	manifest src proj/*.c
}
run() {
	make -s -C proj clean
}
verify() {
	at_most_lost 2 src
}
