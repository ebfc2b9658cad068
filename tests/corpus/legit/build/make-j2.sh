# A generated 30-module C project: make -j2, make clean, make -j2 again
# (what an agent does after editing a header), then a test run.
NEEDS="make cc"
setup() {
	mkdir -p proj/src proj/include
	local i
	printf '#ifndef COMMON_H\n#define COMMON_H\n#define SCALE 3\n#endif\n' >proj/include/common.h
	{
		echo '#include <stdio.h>'
		for i in $(seq 1 30); do echo "int m$i(void);"; done
		echo 'int main(void) { long s = 0;'
		for i in $(seq 1 30); do echo "	s += m$i();"; done
		echo '	printf("sum=%ld\n", s); return 0; }'
	} >proj/src/main.c
	for i in $(seq 1 30); do
		printf '#include "common.h"\nint m%d(void) { return %d * SCALE; }\n' "$i" "$i" >proj/src/m$i.c
	done
	{
		printf 'CFLAGS ?= -O1 -Wall\n'
		printf 'OBJS := $(patsubst %%.c,%%.o,$(wildcard src/*.c))\n'
		printf 'app: $(OBJS)\n\t$(CC) -o $@ $(OBJS)\n'
		printf 'src/%%.o: src/%%.c\n\t$(CC) $(CFLAGS) -Iinclude -MMD -MP -c -o $@ $<\n'
		printf 'check: app\n\t./app | grep -qx sum=1395\n'
		printf 'clean:\n\trm -f $(OBJS) $(OBJS:.o=.d) app\n'
		printf '.PHONY: check clean\n-include $(OBJS:.o=.d)\n'
	} >proj/Makefile
	manifest src proj/src proj/include proj/Makefile
}
run() {
	set -e
	cd proj
	make -s -j2
	make -s clean
	touch include/common.h
	make -s -j2
	make -s check
}
verify() {
	[ "$(proj/app)" = sum=1395 ] || bad "the binary prints '$(proj/app)'"
	none_lost src
}
