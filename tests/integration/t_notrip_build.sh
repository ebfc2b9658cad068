#!/bin/bash
# SPDX-License-Identifier: MIT
# Ordinary C builds must not trip the guard with the default config.
# Phase A: a 30-module project that was never built: `make -j2`, then
# `make clean && make -j2` (everything clean removes was born in the session).
# Phase B: the same project already built BEFORE the session, so `make clean`
# removes ~60 pre-existing objects/dependency files and the binary: the case
# where a naive "deleted old files" counter would fire.
source "$(dirname "$0")/lib.sh"
need_cmd make
need_cmd cc

NMOD=30

# gen_project DIR: 30 module .c files with one header each, a shared header,
# main.c, and a Makefile in the usual style (objects next to sources, -MMD
# dependency files, a `clean` target using rm -f).
gen_project() {
	local d=$1 i
	mkdir -p "$d/src" "$d/include" || fail "fixture: mkdir $d"
	cat >"$d/include/common.h" <<-'EOF'
		#ifndef COMMON_H
		#define COMMON_H
		#define SCALE 3
		#endif
	EOF
	{
		echo '#include <stdio.h>'
		for i in $(seq 1 $NMOD); do echo "#include \"m$i.h\""; done
		echo 'int main(void)'
		echo '{'
		echo '	long sum = 0;'
		for i in $(seq 1 $NMOD); do echo "	sum += m$i();"; done
		echo '	printf("sum=%ld\n", sum);'
		echo '	return 0;'
		echo '}'
	} >"$d/src/main.c"
	for i in $(seq 1 $NMOD); do
		printf '#ifndef M%d_H\n#define M%d_H\nint m%d(void);\n#endif\n' \
			"$i" "$i" "$i" >"$d/include/m$i.h"
		printf '#include "common.h"\n#include "m%d.h"\nint m%d(void)\n{\n\treturn %d * SCALE;\n}\n' \
			"$i" "$i" "$i" >"$d/src/m$i.c"
	done
	# Recipe lines need real tabs: printf them rather than rely on heredoc
	# indentation.
	{
		printf 'CC ?= cc\n'
		printf 'CFLAGS ?= -O0 -Wall\n'
		printf 'SRCS := $(wildcard src/*.c)\n'
		printf 'OBJS := $(SRCS:.c=.o)\n'
		printf 'DEPS := $(OBJS:.o=.d)\n'
		printf 'app: $(OBJS)\n\t$(CC) -o $@ $(OBJS)\n'
		printf 'src/%%.o: src/%%.c\n\t$(CC) $(CFLAGS) -Iinclude -MMD -MP -c -o $@ $<\n'
		printf 'clean:\n\trm -f $(OBJS) $(DEPS) app\n'
		printf '.PHONY: clean\n'
		printf -- '-include $(DEPS)\n'
	} >"$d/Makefile"
}

# sum of i*3 for i=1..30
EXPECT="sum=$((3 * NMOD * (NMOD + 1) / 2))"

check_built() { # dir what
	local n
	[ -x "$1/app" ] || fail "$2: no binary"
	[ "$("$1/app")" = "$EXPECT" ] || fail "$2: binary printed '$("$1/app")', expected '$EXPECT'"
	n=$(find "$1/src" -name '*.o' | wc -l)
	[ "$n" = $((NMOD + 1)) ] || fail "$2: $n objects, expected $((NMOD + 1))"
}

gen_project "$T/fresh"
gen_project "$T/prebuilt"
make -s -C "$T/prebuilt" -j2 >/dev/null || fail "fixture: pre-session build"
check_built "$T/prebuilt" "fixture"

# Birth times must be strictly older than the session start, even with a
# coarse timestamp clock.
sleep 1
# make would not rebuild up-to-date objects, so outputs newer than this stamp
# prove that `make clean` really removed the pre-built ones.
touch "$T/stamp"

# Phase A: never-built project.
run_lg -- bash -c 'set -e; cd "$1"; make -s -j2; make -s clean; make -s -j2' phaseA "$T/fresh"
assert_no_trip "make in a fresh tree"
assert_rc 0 "$RC" "make in a fresh tree"
check_built "$T/fresh" "phase A"

# Phase B: project built before the session; clean removes pre-existing files.
run_lg -- bash -c 'set -e; cd "$1"; make -s clean; make -s -j2' phaseB "$T/prebuilt"
assert_no_trip "make clean && make in a pre-built tree"
assert_rc 0 "$RC" "make clean && make in a pre-built tree"
check_built "$T/prebuilt" "phase B"
stale=$(find "$T/prebuilt/src" "$T/prebuilt/app" \( -name '*.o' -o -name '*.d' -o -name app \) ! -newer "$T/stamp")
[ -z "$stale" ] || fail "phase B: not rebuilt after clean: $stale"

pass
