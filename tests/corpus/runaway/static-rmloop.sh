# A statically linked delete loop (no preload shim inside): only the
# seccomp filter sees it.
EXPECT_REASON=volume_exceeded
setup() {
	[ -x "$FIXBIN/rmloop-static" ] || skip "fixture not built: make fixtures"
	mkfiles data 8
	manifest data data
}
run() {
	"$FIXBIN/rmloop-static" data/f*
}
verify() {
	at_most_lost 2 data
}
