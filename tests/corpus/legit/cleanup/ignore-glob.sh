# A configured ignore glob: the project's config says scratch/ is
# disposable, so emptying 60 pre-existing files there is not counted.
setup() {
	printf '[ignore]\npath = scratch/\npath = *.bak\n' >"$META/lgrun.ini"
	mkfiles scratch/a 30
	mkfiles scratch/b 30
	mkfiles src 10 mod .c
	local i
	for i in $(seq 1 10); do cp src/mod$i.c src/mod$i.c.bak; done
	LGRUN_ARGS=(--config "$META/lgrun.ini")
	manifest src src/*.c
}
run() {
	set -e
	rm -rf scratch/*
	rm -f src/*.bak
}
verify() {
	[ -z "$(ls scratch)" ] || bad "scratch not emptied"
	none_lost src
}
