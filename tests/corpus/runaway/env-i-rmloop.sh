# A delete loop started with a cleared environment (env -i drops
# LD_PRELOAD and every LGRUN_ variable).
EXPECT_REASON=volume_exceeded
setup() {
	[ -x "$FIXBIN/rmloop" ] || skip "fixture not built: make fixtures"
	mkfiles data 8
	manifest data data
}
run() {
	env -i "$FIXBIN/rmloop" data/f*
	env -i PATH=/usr/bin:/bin sh -c 'for f in data/*; do rm "$f"; done'
}
verify() {
	at_most_lost 2 data
}
