# Unpacking a release zip over the previous release's files (unzip -o), then
# a second release that drops nothing; both over a tree made before.
NEEDS="unzip zip"
setup() {
	mkdir -p rel/lib rel/doc
	local i
	for i in $(seq 1 15); do echo "v1 $i" >rel/lib/m$i.js; echo "doc v1 $i" >rel/doc/d$i.md; done
	zip -qr v1.zip rel
	for i in $(seq 1 15); do echo "v2 $i" >rel/lib/m$i.js; done
	zip -qr v2.zip rel
	rm -rf rel
	unzip -q v1.zip
}
run() {
	set -e
	unzip -qo v2.zip
	unzip -qo v2.zip 'rel/doc/*'
}
verify() {
	[ "$(cat rel/lib/m9.js)" = "v2 9" ] || bad "not upgraded"
	[ "$(find rel -type f | wc -l)" = 30 ] || bad "files missing"
}
