# ls | xargs rm: one rm process with many pre-existing targets.
EXPECT_REASON=volume_exceeded
setup() {
	mkfiles reports 20 r_ .pdf
	manifest reports reports
}
run() {
	ls reports/*.pdf | xargs rm -f
}
verify() {
	at_most_lost 2 reports
}
