# An agent "clearing" data files and leaving them so: each one emptied with
# a redirect (: > f, an O_TRUNC open) and never written again. Each emptying
# could be the start of an overwrite, so none counts at its open; a file
# still empty when the tree is over counts then as destroyed pre-existing
# data, as its removal would have (issue 27: emptying is destroying). The
# session trips at its end, is blocked, and every file's content is kept.
EXPECT_REASON=volume_exceeded
setup() {
	mkfiles data 10 part_ .csv
	manifest data data
}
run() {
	for f in data/*.csv; do
		: >"$f"
	done
}
verify() {
	all_kept data
}
