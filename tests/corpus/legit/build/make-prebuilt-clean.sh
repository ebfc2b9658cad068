# The same kind of project built before the session (objects, dependency
# files and the binary predate it): `make clean && make -j2` removes ~60
# pre-existing build outputs and writes them again.
NEEDS="make cc"
setup() {
	mkdir -p proj/src
	local i
	for i in $(seq 1 30); do
		printf 'int m%d(void) { return %d; }\n' "$i" "$i" >proj/src/m$i.c
	done
	{
		echo '#include <stdio.h>'
		for i in $(seq 1 30); do echo "int m$i(void);"; done
		echo 'int main(void) { long s = 0;'
		for i in $(seq 1 30); do echo "	s += m$i();"; done
		echo '	printf("%ld\n", s); return 0; }'
	} >proj/src/main.c
	{
		printf 'OBJS := $(patsubst %%.c,%%.o,$(wildcard src/*.c))\n'
		printf 'app: $(OBJS)\n\t$(CC) -o $@ $(OBJS)\n'
		printf 'src/%%.o: src/%%.c\n\t$(CC) -O1 -MMD -MP -c -o $@ $<\n'
		printf 'clean:\n\trm -f $(OBJS) $(OBJS:.o=.d) app\n'
		printf '.PHONY: clean\n-include $(OBJS:.o=.d)\n'
	} >proj/Makefile
	make -s -C proj -j2
	manifest src proj/src/*.c proj/Makefile
}
run() {
	set -e
	make -s -C proj clean
	make -s -C proj -j2
	test "$(proj/app)" = 465
}
verify() {
	[ "$(find proj/src -name '*.o' -newer proj/Makefile | wc -l)" = 31 ] || bad "not rebuilt"
	none_lost src
}
