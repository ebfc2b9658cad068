# A perl one-liner unlinking a glob (one process, one call per file).
NEEDS=perl
EXPECT_REASON=volume_exceeded
setup() {
	mkfiles cfg 10 site_ .conf
	manifest cfg cfg
}
run() {
	perl -e 'unlink glob "cfg/*.conf" or die'
}
verify() {
	at_most_lost 2 cfg
}
