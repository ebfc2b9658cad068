# A Node agent deleting "stale" files one by one with fs.rmSync.
NEEDS=node
EXPECT_REASON=volume_exceeded
setup() {
	mkfiles assets 15 img_ .png
	manifest assets assets
}
run() {
	node -e '
const fs = require("fs");
for (const f of fs.readdirSync("assets")) {
  console.log("removing", f);
  fs.rmSync("assets/" + f, { force: true });
}'
}
verify() {
	at_most_lost 2 assets
}
