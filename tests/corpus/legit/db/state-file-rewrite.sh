# A job's state and progress files rewritten in place (seek, truncate,
# write) step after step, and a Python sqlite3 database with its WAL held
# open by another process from before the session, checkpointed repeatedly.
NEEDS=python3
setup() {
	echo '{"step": 0}' >state.json
	echo 'progress 0%' >progress.txt
	python3 - <<'PY'
import sqlite3
c = sqlite3.connect("jobs.db"); c.execute("pragma journal_mode=wal")
c.execute("create table t(x)"); c.executemany("insert into t values (?)", [(i,) for i in range(2000)])
c.commit(); c.close()
PY
	bg python3 -c '
import sqlite3, sys, time
c = sqlite3.connect("jobs.db"); c.execute("insert into t values (-1)"); c.commit()
open(sys.argv[1], "w").close(); time.sleep(60)' "$META/held"
	local i
	for i in $(seq 1 100); do [ -e "$META/held" ] && break; sleep 0.05; done
	[ -e jobs.db-wal ] || skip "sqlite kept no WAL file open"
}
run() {
	python3 - <<'PY'
import json, sqlite3
with open("state.json", "r+") as st, open("progress.txt", "r+") as pr:
    for step in range(1, 11):
        st.seek(0); st.truncate(); st.write(json.dumps({"step": step})); st.flush()
        pr.seek(0); pr.truncate(); pr.write(f"progress {step * 10}%\n"); pr.flush()
c = sqlite3.connect("jobs.db")
for i in range(5):
    c.execute("delete from t where x % 10 = ?", (i,)); c.commit()
    c.execute("pragma wal_checkpoint(TRUNCATE)").fetchone()
c.close()
print("done")
PY
}
verify() {
	grep -q '"step": 10' state.json || bad "state not rewritten"
	grep -q 'progress 100%' progress.txt || bad "progress not rewritten"
}
