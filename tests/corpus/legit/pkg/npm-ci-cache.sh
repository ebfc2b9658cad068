# npm ci against a cache warmed before the session (the registry's small
# packages ms and semver, fetched once in setup): offline, twice, as a CI
# job that reinstalls from the lock file does.
NEEDS="node npm"
TIMEOUT=90
setup() {
	mkdir app
	printf '{"name":"app","version":"1.0.0","private":true}\n' >app/package.json
	(cd app && timeout 60 npm install -q --no-audit ms@2.1.3 semver@7.6.3 >/dev/null 2>&1) ||
		skip "the npm registry cannot be reached to warm the cache"
	[ -f app/package-lock.json ] || skip "npm wrote no lock file"
}
run() {
	set -e
	cd app
	npm ci --offline --no-audit >/dev/null
	node -e 'const semver = require("semver"), ms = require("ms"); if (!semver.gt("1.2.3", "1.2.2") || ms("1m") !== 60000) process.exit(1)'
	npm ci --offline --no-audit >/dev/null
	npm ls --offline >/dev/null
}
verify() {
	[ -f app/node_modules/semver/package.json ] || bad "semver not installed"
}
