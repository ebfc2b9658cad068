# A Node agent "resetting" data files with fs.truncateSync.
NEEDS=node
EXPECT_REASON=volume_exceeded
setup() {
	mkfiles db 8 table_ .jsonl
	manifest db db
}
run() {
	node -e 'const fs = require("fs"); for (const f of fs.readdirSync("db")) fs.truncateSync("db/" + f, 0);'
}
verify() {
	at_most_lost 2 db
}
