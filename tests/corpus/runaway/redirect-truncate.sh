# "Reset" data files by redirecting nothing into them (: > f), an O_TRUNC
# open. Counted with the open_trunc syscalls this entry's config adds.
EXPECT_REASON=volume_exceeded
setup() {
	printf '[guard]\nsyscalls = unlink, unlinkat, rmdir, truncate, ftruncate, rename, open_trunc\n' >"$META/trunc.ini"
	LGRUN_ARGS=(--config "$META/trunc.ini")
	mkfiles tables 10 t_ .csv
	manifest tables tables
}
run() {
	for f in tables/*.csv; do : >"$f"; done
}
verify() {
	at_most_lost 2 tables
}
