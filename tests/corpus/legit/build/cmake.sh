# A CMake project: configure, build with two jobs, run the tests (ctest),
# clean, reconfigure from scratch (rm -rf build) and build again.
NEEDS="cmake make cc"
TIMEOUT=120
setup() {
	mkdir -p proj/src proj/tests
	local i
	cat >proj/CMakeLists.txt <<'CM'
cmake_minimum_required(VERSION 3.13)
project(corpus C)
enable_testing()
file(GLOB LIBSRC src/lib*.c)
add_library(util STATIC ${LIBSRC})
target_include_directories(util PUBLIC src)
add_executable(tool src/main.c)
target_link_libraries(tool util)
add_executable(unit tests/unit.c)
target_link_libraries(unit util)
add_test(NAME unit COMMAND unit)
add_test(NAME tool COMMAND tool)
CM
	echo 'int lib_sum(int n);' >proj/src/util.h
	for i in 1 2 3 4 5 6; do
		printf 'int lib%d(int x) { return x + %d; }\n' "$i" "$i" >proj/src/lib$i.c
	done
	printf '#include "util.h"\nint lib_sum(int n) { int s = 0; for (int i = 1; i <= n; i++) s += i; return s; }\n' >proj/src/libsum.c
	printf '#include <stdio.h>\n#include "util.h"\nint main(void) { printf("%%d\\n", lib_sum(10)); return 0; }\n' >proj/src/main.c
	printf '#include "util.h"\nint main(void) { return lib_sum(4) == 10 ? 0 : 1; }\n' >proj/tests/unit.c
	manifest src proj/src proj/tests proj/CMakeLists.txt
}
run() {
	set -e
	cd proj
	cmake -S . -B build -DCMAKE_BUILD_TYPE=Debug >/dev/null
	cmake --build build -j2 >/dev/null
	(cd build && ctest --output-on-failure >/dev/null)
	cmake --build build --target clean
	cmake --build build -j2 >/dev/null
	rm -rf build
	cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build build -j2 >/dev/null
	(cd build && ctest >/dev/null)
}
verify() {
	[ "$(proj/build/tool)" = 55 ] || bad "tool prints '$(proj/build/tool)'"
	none_lost src
}
