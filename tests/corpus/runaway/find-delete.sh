# A careless prune: find -delete over every *.log, not just the old ones.
EXPECT_REASON=volume_exceeded
setup() {
	local d
	for d in svc1 svc2 svc3; do mkfiles var/$d 10 app_ .log; done
	manifest var var
}
run() {
	find var -name '*.log' -delete
}
verify() {
	at_most_lost 2 var
}
