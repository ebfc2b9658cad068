# A double-forked, setsid daemon (it left the agent's process tree and
# session) deleting files in the background while the agent goes on.
NEEDS=python3
EXPECT_REASON=volume_exceeded
setup() {
	mkfiles spool 12 job_ .json
	manifest spool spool
}
run() {
	python3 - <<'PY'
import os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        for f in sorted(os.listdir("spool")):
            try:
                os.unlink(os.path.join("spool", f))
            except OSError:
                pass
            time.sleep(0.05)
        os._exit(0)
    os._exit(0)
os.wait()
PY
	sleep 10
}
verify() {
	at_most_lost 2 spool
}
