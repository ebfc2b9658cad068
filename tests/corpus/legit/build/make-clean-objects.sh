# A C project in git, built before the session: a static library, a shared
# one and three programs, none of them tracked (.gitignore: objects,
# libraries, the programs). Under lgrun `make clean` removes them, then
# `make -j2` builds again: the outputs of a build from before the session.
NEEDS="git make cc"
setup() {
	mkdir -p proj/src
	local i
	for i in 1 2 3 4; do
		printf 'int u%d(int x) { return x + %d; }\n' "$i" "$i" >proj/src/u$i.c
	done
	for p in alpha beta gamma; do
		printf '#include <stdio.h>\nint u1(int);\nint main(void) { printf("%%d\\n", u1(1)); return 0; }\n' >proj/src/$p.c
	done
	cat >proj/Makefile <<'MK'
LIBOBJS := src/u1.o src/u2.o src/u3.o src/u4.o
PROGS := alpha beta gamma
all: libutil.a libutil.so $(PROGS)
libutil.a: $(LIBOBJS)
	ar rcs $@ $^
libutil.so: $(LIBOBJS)
	$(CC) -shared -o $@ $^
$(PROGS): %: src/%.o libutil.a
	$(CC) -o $@ $< libutil.a
src/%.o: src/%.c
	$(CC) -O1 -fPIC -c -o $@ $<
clean:
	rm -f src/*.o libutil.a libutil.so $(PROGS)
.PHONY: all clean
MK
	printf '*.o\n*.a\n*.so\n/alpha\n/beta\n/gamma\n' >proj/.gitignore
	git -C proj init -q
	git -C proj add -A && git -C proj commit -qm init
	make -s -C proj -j2
	manifest src proj/src/*.c proj/Makefile proj/.gitignore
}
run() {
	set -e
	cd proj
	make -s clean
	test ! -e alpha
	make -s -j2
	test "$(./beta)" = 2
}
verify() {
	[ -x proj/gamma ] || bad "not rebuilt"
	none_lost src
}
