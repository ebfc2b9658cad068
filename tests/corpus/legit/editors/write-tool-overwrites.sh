# An agent's write tool in place: open(path, "w") over 20 pre-existing
# files, several times each, plus a formatter rewriting files with r+ and
# truncate(), a log appended to and a sqlite-like r+b header update. Every
# overwrite of pre-existing data is kept in the quarantine (keep_writes)
# and never counted: nothing may trip, and one restore would undo it all.
NEEDS=python3
setup() {
	mkdir -p src
	local i
	for i in $(seq 1 20); do printf 'def f%d():\n    return %d\n' "$i" "$i" >src/m$i.py; done
	head -c 8192 /dev/urandom >data.db
	printf 'start\n' >run.log
}
run() {
	python3 - <<'PY'
for rnd in range(3):
    for i in range(1, 21):
        p = f"src/m{i}.py"
        text = open(p).read()
        with open(p, "w") as f:
            f.write(text.replace("return", "return 1 +") if rnd == 0 else text + f"# pass {rnd}\n")
for i in range(1, 21, 2):  # a formatter: read, rewrite from the start, cut
    with open(f"src/m{i}.py", "r+") as f:
        t = f.read().replace("    ", "  ")
        f.seek(0); f.write(t); f.truncate()
with open("data.db", "r+b") as f:
    f.seek(100); f.write(b"\x01\x02\x03\x04")
with open("run.log", "a") as f:
    f.write("done\n")
print("written")
PY
}
verify() {
	[ "$(grep -c '# pass' src/m7.py)" = 2 ] || bad "writes missing"
	grep -q "return 1 +" src/m20.py || bad "first pass missing"
	[ "$(ls "$STATE"/quarantine/*/0 2>/dev/null | wc -l)" -ge 21 ] || bad "the overwritten files were not kept: $(ls -R "$STATE/quarantine" 2>&1 | head)"
}
