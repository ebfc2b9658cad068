#!/bin/bash
# SPDX-License-Identifier: MIT
# gen_project.sh DIR NFILES NFUNCS: a C project for the build row. NFILES
# modules of NFUNCS non-trivial functions each (loops, switches, inlined
# helpers: -O2 has real work to do), a main.c that calls every module, and a
# Makefile in the usual style (objects next to sources, -MMD dependency
# files, `clean` with rm -f).
set -eu
d=$1 nfiles=$2 nfuncs=$3
mkdir -p "$d/src" "$d/include"
printf '#ifndef COMMON_H\n#define COMMON_H\n#include <stdint.h>\n#define SCALE 3\n#endif\n' \
	>"$d/include/common.h"

for ((i = 1; i <= nfiles; i++)); do
	printf '#ifndef M%d_H\n#define M%d_H\n#include <stdint.h>\nuint64_t m%d(void);\n#endif\n' \
		"$i" "$i" "$i" >"$d/include/m$i.h"
	{
		printf '#include <stdint.h>\n#include <string.h>\n#include "common.h"\n#include "m%d.h"\n\n' "$i"
		for ((f = 0; f < nfuncs; f++)); do
			cat <<EOF
static uint64_t m${i}_mix$f(const uint8_t *p, size_t n, uint64_t seed)
{
	uint64_t h = seed ^ (0x9e3779b97f4a7c15ULL * ($f + 1));

	for (size_t k = 0; k < n; k++) {
		h ^= p[k];
		h *= 0x100000001b3ULL;
		h ^= h >> ($f % 13 + 7);
	}
	return h;
}

uint64_t m${i}_f$f(uint64_t x, int op);
uint64_t m${i}_f$f(uint64_t x, int op)
{
	uint8_t buf[64];
	uint64_t acc = x;

	for (int r = 0; r < 8; r++) {
		memset(buf, (int)(acc & 0xff), sizeof(buf));
		switch ((op + r) % 6) {
		case 0:
			acc += m${i}_mix$f(buf, sizeof(buf), acc);
			break;
		case 1:
			acc ^= acc << 13;
			acc ^= acc >> 7;
			acc ^= acc << 17;
			break;
		case 2:
			for (int j = 0; j < 16; j++)
				acc = acc * 6364136223846793005ULL + 1442695040888963407ULL;
			break;
		case 3:
			acc = (acc >> 3) | (acc << 61);
			acc += (uint64_t)r * SCALE;
			break;
		case 4: {
			double v = (double)(acc % 1000) / 7.0;

			for (int j = 0; j < 4; j++)
				v = v * 1.5 - j;
			acc += (uint64_t)v;
			break;
		}
		default:
			acc -= m${i}_mix$f((const uint8_t *)&acc, sizeof(acc), (uint64_t)r);
			break;
		}
	}
	return acc;
}

EOF
		done
		printf 'uint64_t m%d(void)\n{\n\tuint64_t s = %d;\n\n' "$i" "$i"
		for ((f = 0; f < nfuncs; f++)); do
			printf '\ts += m%d_f%d(s, %d);\n' "$i" "$f" "$f"
		done
		printf '\treturn s;\n}\n'
	} >"$d/src/m$i.c"
done

{
	echo '#include <stdio.h>'
	echo '#include <stdint.h>'
	for ((i = 1; i <= nfiles; i++)); do echo "#include \"m$i.h\""; done
	echo 'int main(void)'
	echo '{'
	echo '	uint64_t sum = 0;'
	echo
	for ((i = 1; i <= nfiles; i++)); do echo "	sum += m$i();"; done
	echo '	printf("sum=%llu\n", (unsigned long long)sum);'
	echo '	return 0;'
	echo '}'
} >"$d/src/main.c"

{
	printf 'CC = cc\n'
	printf 'CFLAGS = -O2 -Wall\n'
	printf 'SRCS := $(wildcard src/*.c)\n'
	printf 'OBJS := $(SRCS:.c=.o)\n'
	printf 'DEPS := $(OBJS:.o=.d)\n'
	printf 'app: $(OBJS)\n\t$(CC) -o $@ $(OBJS)\n'
	printf 'src/%%.o: src/%%.c\n\t$(CC) $(CFLAGS) -Iinclude -MMD -MP -c -o $@ $<\n'
	printf 'clean:\n\trm -f $(OBJS) $(DEPS) app\n'
	printf '.PHONY: clean\n'
	printf -- '-include $(DEPS)\n'
} >"$d/Makefile"
