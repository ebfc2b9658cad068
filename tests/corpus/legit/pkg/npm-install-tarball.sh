# npm install of a packed tarball (npm pack of a local library, before the
# session), then an upgrade to the next tarball over the installed tree.
NEEDS="node npm"
TIMEOUT=90
setup() {
	local v
	mkdir -p lib dist app
	for v in 1.0.0 1.1.0; do
		printf '{"name":"corpus-lib","version":"%s","main":"index.js","files":["index.js","lib/"]}\n' $v >lib/package.json
		mkdir -p lib/lib
		printf 'module.exports = "%s";\n' $v >lib/index.js
		for i in 1 2 3 4 5; do echo "exports.v = '$v';" >lib/lib/m$i.js; done
		(cd lib && npm pack -q --pack-destination ../dist >/dev/null)
	done
	printf '{"name":"app","version":"1.0.0","private":true}\n' >app/package.json
	(cd app && npm install --offline -q ../dist/corpus-lib-1.0.0.tgz >/dev/null)
}
run() {
	set -e
	cd app
	node -e 'if (require("corpus-lib") !== "1.0.0") process.exit(1)'
	npm install --offline --no-audit ../dist/corpus-lib-1.1.0.tgz >/dev/null
	node -e 'if (require("corpus-lib") !== "1.1.0") process.exit(1)'
	rm -rf node_modules
	npm install --offline --no-audit >/dev/null
}
verify() {
	grep -q 1.1.0 app/node_modules/corpus-lib/index.js || bad "not upgraded"
}
