# npm ci over a node_modules installed before the session, from a lock file
# whose dependency is a local tarball (npm pack of a sibling library): the
# whole node_modules is removed and installed again, offline, twice, as a CI
# job reinstalling from its lock file does (issue 29, item 2: package
# managers' recreate steps stay untouched).
NEEDS="node npm"
TIMEOUT=90
setup() {
	mkdir -p lib/lib dist app
	printf '{"name":"corpus-lib","version":"1.0.0","main":"index.js"}\n' >lib/package.json
	printf 'module.exports = require("./lib/m1.js");\n' >lib/index.js
	for i in 1 2 3 4 5 6; do echo "module.exports = 'm$i';" >lib/lib/m$i.js; done
	(cd lib && npm pack -q --pack-destination ../dist >/dev/null 2>&1) || skip "npm pack fails here"
	printf '{"name":"app","version":"1.0.0","private":true}\n' >app/package.json
	(cd app && npm install --offline --no-audit -q ../dist/corpus-lib-1.0.0.tgz >/dev/null 2>&1) ||
		skip "npm install of a local tarball fails here"
	[ -f app/package-lock.json ] || skip "npm wrote no lock file"
}
run() {
	set -e
	cd app
	npm ci --offline --no-audit >/dev/null
	node -e 'if (require("corpus-lib") !== "m1") process.exit(1)'
	npm ci --offline --no-audit >/dev/null
}
verify() {
	[ -f app/node_modules/corpus-lib/lib/m6.js ] || bad "corpus-lib not installed"
}
