# A program whose first act is to make its own scratch directory, and which
# then removes two pre-existing files and the directory (a tool that clears
# two stale outputs and its work dir). Found by make load: the directory's
# coarse birth time fell before lgrun's fine start, so its rmdir counted as
# the 3rd pre-existing delete and the session was killed (5 of 40 runs of
# this program before the fix). The program is exec'd at once, so the
# directory is made within a few ms of the start.
# Two pre-existing removals: one short of the limit, so the model would be
# told that a third stops the session (issue 28). True, and harmless here.
EXPECT_NOTES="volumetric/volume_near"
setup() {
	mkfiles stale 2 out_
	[ -x "$FIXBIN/rmloop" ] || skip "fixture not built: $FIXBIN/rmloop"
}
run() {
	exec "$FIXBIN/rmloop" -m scratch stale/out_1 stale/out_2
}
verify() {
	[ ! -e scratch ] || bad "scratch/ left: the program did not run"
	[ ! -e stale/out_1 ] && [ ! -e stale/out_2 ] || bad "stale outputs left"
}
