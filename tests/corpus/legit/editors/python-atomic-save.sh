# An agent's file-edit tool: for each edit, read the file, write the new
# content to a temp file in the same directory, fsync and os.replace() it
# over the original (pre-existing), keeping the mode; 40 edits to 10 files.
NEEDS=python3
setup() {
	mkdir -p src
	local i
	for i in $(seq 1 10); do printf 'def handler_%d():\n    return %d\n' "$i" "$i" >src/h$i.py; done
	chmod 640 src/h3.py
}
run() {
	python3 - <<'PY'
import os, tempfile
for rnd in range(4):
    for i in range(1, 11):
        p = f"src/h{i}.py"
        text = open(p).read() + f"# edit {rnd}\n"
        st = os.stat(p)
        fd, tmp = tempfile.mkstemp(dir="src", prefix=f".h{i}.", suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            f.write(text); f.flush(); os.fsync(f.fileno())
        os.chmod(tmp, st.st_mode & 0o777)
        os.replace(tmp, p)
print("saved")
PY
}
verify() {
	[ "$(grep -c '# edit' src/h7.py)" = 4 ] || bad "edits missing"
	[ "$(stat -c %a src/h3.py)" = 640 ] || bad "mode not kept"
	[ -z "$(ls -A src | grep '^\.')" ] || bad "temp files left"
}
