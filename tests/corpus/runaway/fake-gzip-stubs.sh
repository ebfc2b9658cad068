# A program called gzip that is not one: it writes a tiny stub (no gzip
# header, nothing of the content) at f.gz, then removes f. The remover's
# name alone must not make a loss a transform (issue 29, item 1).
NEEDS=python3
EXPECT_REASON=volume_exceeded
setup() {
	mkfiles data 12 log .txt
	manifest data data
	mkdir -p "$META/bin"
	cp "$(python3 -c 'import sys, os; print(os.path.realpath(sys.executable))')" "$META/bin/gzip"
	"$META/bin/gzip" -c 'print(1)' >/dev/null 2>&1 || skip "python3 does not run under another name"
	export FAKEGZ="$META/bin/gzip"
}
run() {
	"$FAKEGZ" - data <<'PY'
import os, sys
d = sys.argv[1]
for n in sorted(os.listdir(d)):
    p = os.path.join(d, n)
    with open(p + ".gz", "w") as f:
        f.write("x\n")
    os.unlink(p)
PY
}
verify() {
	at_most_lost 2 data
}
