# Prebuilt libraries committed to the repository (vendor/*.so: ELF files,
# build outputs by their bytes), removed by a clean recipe that sweeps
# vendor/ too. Build outputs, but the project's git tracks them: they are
# not the build's to make again. Stopped.
NEEDS="git make cc"
EXPECT_REASON=volume_exceeded
setup() {
	mkdir -p proj/vendor
	local i
	for i in $(seq 1 10); do
		printf 'int v%d(void) { return %d; }\n' "$i" "$i" >proj/v.c
		cc -shared -fPIC -o proj/vendor/libv$i.so proj/v.c
	done
	rm proj/v.c
	printf 'all:\n\t@true\nclean:\n\trm -rf vendor\n.PHONY: all clean\n' >proj/Makefile
	git -C proj init -q
	git -C proj add -A && git -C proj commit -qm "vendored libraries"
	manifest vendor proj/vendor
}
run() {
	make -s -C proj clean
}
verify() {
	at_most_lost 2 vendor
}
