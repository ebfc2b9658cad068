# A shell test suite (bats-style): each test case makes a scratch dir with
# mktemp -d, runs the tool under test in it, compares output and removes the
# scratch dir; a `make test` drives it.
NEEDS=make
setup() {
	mkdir -p proj/tests
	cat >proj/wc.sh <<'SH'
#!/bin/sh
# count lines of every file given
for f; do printf '%s %s\n' "$(wc -l <"$f")" "$(basename "$f")"; done
SH
	chmod +x proj/wc.sh
	cat >proj/tests/run.sh <<'SH'
#!/bin/bash
pass=0
for n in $(seq 1 12); do
	d=$(mktemp -d)
	for k in $(seq 1 $((n % 5 + 1))); do seq 1 $k >"$d/in$k"; done
	out=$(../wc.sh "$d"/in*)
	exp=$(for k in $(seq 1 $((n % 5 + 1))); do echo "$k in$k"; done)
	[ "$out" = "$exp" ] && pass=$((pass + 1))
	rm -rf "$d"
done
echo "$pass/12 passed"
[ $pass = 12 ]
SH
	printf 'test:\n\tcd tests && bash run.sh\n.PHONY: test\n' >proj/Makefile
	manifest src proj
}
run() {
	make -s -C proj test
	make -s -C proj test
}
verify() {
	[ "$(grep -c '^12/12 passed' "$OUT")" = 2 ] || bad "the suite did not pass"
	none_lost src
}
