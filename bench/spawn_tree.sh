#!/bin/bash
# SPDX-License-Identifier: MIT
# The process tree of the kill row, used both under lgrun and in the
# baseline cgroup:  spawn_tree.sh NSUB NPER READY_FILE [FILE...]
# Starts NSUB subshells that each fork NPER `sleep 1000`, waits until all
# NSUB*NPER sleeps exist in this script's own cgroup (v2), touches READY_FILE,
# then either deletes the FILEs (under lgrun: the trip) or, without FILEs,
# waits to be killed. Exit 3 when the sleeps did not all show up in 60 s.
set -u
nsub=$1 nper=$2 ready=$3
shift 3
want=$((nsub * nper))
cg=$(sed -n 's/^0:://p' /proc/self/cgroup)

for ((s = 0; s < nsub; s++)); do
	(
		for ((j = 0; j < nper; j++)); do
			sleep 1000 &
		done
		wait
	) &
done

# Count them: the exec'd sleeps of this cgroup. Polls without forking a
# sleep of our own (read -t on a pipe that never delivers).
exec 9< <(exec tail -f /dev/null)
for ((i = 0; i < 6000; i++)); do
	n=$(pgrep -c -f '^sleep 1000$' --cgroup "$cg")
	[ "$n" -ge "$want" ] && break
	read -r -t 0.01 -u 9 _
done
[ "$n" -ge "$want" ] || {
	echo "spawn_tree: only $n of $want sleeps started" >&2
	exit 3
}
: >"$ready"
if [ $# -gt 0 ]; then
	rm -f -- "$@"
	exit 0 # not reached under lgrun: the third delete trips the guard
fi
wait
