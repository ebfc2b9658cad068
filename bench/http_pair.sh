#!/bin/bash
# SPDX-License-Identifier: MIT
# The "both under lgrun" variant of the http-loop row, run as lgrun's
# command so server and client are in the same session:
#   http_pair.sh HTTP_LOOP N PORTFILE
# Starts `HTTP_LOOP serve PORTFILE` in the background, waits for its port,
# runs `HTTP_LOOP client PORT N` in front (its "us=..." line is the output),
# then stops the server. Exit: the client's status, 3 when the server did
# not start.
set -u
bin=$1 n=$2 pf=$3

rm -f "$pf"
"$bin" serve "$pf" &
srv=$!
for ((i = 0; i < 2000; i++)); do
	[ -s "$pf" ] && break
	kill -0 "$srv" 2>/dev/null || break
	sleep 0.005
done
if [ ! -s "$pf" ]; then
	echo "http_pair: the server did not start" >&2
	kill -KILL "$srv" 2>/dev/null
	wait "$srv" 2>/dev/null
	exit 3
fi
"$bin" client "$(cat "$pf")" "$n"
rc=$?
kill -TERM "$srv" 2>/dev/null
wait "$srv" 2>/dev/null
exit "$rc"
