# "Clear the logs": truncate -s 0 of every pre-existing log file.
EXPECT_REASON=volume_exceeded
setup() {
	mkfiles logs 10 service_ .log
	manifest logs logs
}
run() {
	for f in logs/*.log; do truncate -s 0 "$f"; done
}
verify() {
	at_most_lost 2 logs
}
