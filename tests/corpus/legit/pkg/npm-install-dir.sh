# npm install of local directories (a monorepo's packages), offline: first
# linked, then installed as copies (--install-links), then one removed.
NEEDS="node npm"
TIMEOUT=90
setup() {
	local p
	for p in strutil mathutil; do
		mkdir -p libs/$p
		printf '{"name":"%s","version":"1.0.0","main":"index.js"}\n' $p >libs/$p/package.json
		printf 'module.exports = { name: "%s", twice: (x) => x + x };\n' $p >libs/$p/index.js
	done
	mkdir app
	printf '{"name":"app","version":"1.0.0","private":true}\n' >app/package.json
	manifest libs libs
}
run() {
	set -e
	cd app
	npm install --offline --no-audit ../libs/strutil ../libs/mathutil >/dev/null
	node -e 'console.log(require("strutil").twice(2), require("mathutil").name)'
	npm install --offline --no-audit --install-links ../libs/strutil ../libs/mathutil >/dev/null
	npm uninstall --offline mathutil >/dev/null
	node -e 'require("strutil")'
}
verify() {
	[ -f app/node_modules/strutil/index.js ] || bad "strutil not installed"
	[ ! -e app/node_modules/mathutil ] || bad "mathutil not uninstalled"
	none_lost libs
}
