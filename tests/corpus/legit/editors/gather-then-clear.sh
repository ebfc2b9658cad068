# Logs gathered into one before the parts are cleared: an agent asked to
# "merge the per-worker logs into all.log and reset them" appends each part
# to all.log, then empties the part with : > part. Each part is left empty
# (issue 27 counts that), but its lines live on in all.log, which the
# session wrote: issue 41 looks for an emptied file's distinctive lines in
# the files the session wrote before counting it, and finds them. Nothing
# is lost; nothing may trip.
setup() {
	mkdir -p logs
	local i
	for i in 1 2 3 4 5 6; do
		seq 1 400 | sed "s/^/worker $i handled request id=/" >logs/worker$i.log
	done
	echo "start of the merged log" >logs/all.log
	mkdir -p "$META/orig" && cp -a logs "$META/orig/"
}
run() {
	set -e
	cd logs
	for f in worker*.log; do
		cat "$f" >>all.log
		: >"$f"
	done
	sleep 12 # the quiet time passes while the agent goes on
	wc -l all.log
}
verify() {
	local i
	for i in 1 2 3 4 5 6; do
		grep -qx "worker $i handled request id=400" logs/all.log || bad "worker $i's lines are not in all.log" || return 1
		[ ! -s logs/worker$i.log ] || bad "worker $i's log was not cleared" || return 1
	done
}
