# Heavy temp-file churn, all of it the session's own: a data job writes 300
# intermediate files under a scratch dir and in $TMPDIR, merges them and
# deletes them (rm, find -delete, shutil.rmtree), a lock file taken and
# released 50 times.
NEEDS=python3
setup() {
	mkdir -p data
	mkfiles data 5 input_ .csv
	manifest data data
}
run() {
	set -e
	mkdir -p scratch
	for i in $(seq 1 100); do echo "$i" >scratch/part$i.tmp; done
	cat scratch/part*.tmp >merged.txt
	rm scratch/part*.tmp
	for i in $(seq 1 100); do echo "$i" >scratch/chunk$i; done
	find scratch -name 'chunk*' -delete
	python3 - <<'PY'
import os, shutil, tempfile
d = tempfile.mkdtemp()
for i in range(100):
    open(os.path.join(d, f"x{i}"), "w").write("y")
shutil.rmtree(d)
for i in range(50):
    fd = os.open("job.lock", os.O_CREAT | os.O_EXCL | os.O_WRONLY); os.close(fd); os.unlink("job.lock")
PY
	rmdir scratch
}
verify() {
	[ ! -e scratch ] && [ ! -e job.lock ] || bad "scratch left"
	[ "$(wc -l <merged.txt)" = 100 ] || bad "merge wrong"
	none_lost data
}
