# A Node project's `npm run build`: the script wipes dist/ (left by the
# previous build, before the session), bundles src/ into dist/, writes a
# manifest; built twice, as an agent iterating on it does.
NEEDS="node npm"
setup() {
	mkdir -p app/src app/scripts
	cat >app/package.json <<'JSON'
{ "name": "corpus-app", "version": "1.0.0", "private": true,
  "scripts": { "build": "node scripts/build.mjs", "test": "node dist/bundle.js" } }
JSON
	local i
	for i in $(seq 1 12); do
		printf 'export const part%d = () => %d;\n' "$i" "$i" >app/src/part$i.js
	done
	cat >app/scripts/build.mjs <<'JS'
import fs from "node:fs";
import path from "node:path";
const dist = "dist";
fs.rmSync(dist, { recursive: true, force: true });
fs.mkdirSync(path.join(dist, "parts"), { recursive: true });
const files = fs.readdirSync("src").filter((f) => f.endsWith(".js")).sort();
let bundle = "let total = 0;\n";
for (const f of files) {
  const src = fs.readFileSync(path.join("src", f), "utf8");
  fs.writeFileSync(path.join(dist, "parts", f), src.replace(/\s+/g, " "));
  bundle += src.replace(/export const (\w+) = \(\) => (\d+);/, "total += $2;") ;
}
bundle += "console.log('total', total);\n";
fs.writeFileSync(path.join(dist, "bundle.js"), bundle);
fs.writeFileSync(path.join(dist, "manifest.json"), JSON.stringify({ files, built: Date.now() }));
console.log(`built ${files.length} modules`);
JS
	(cd app && npm run -s build >/dev/null)
	manifest src app/src app/package.json app/scripts
}
run() {
	set -e
	cd app
	npm run -s build
	echo 'export const part13 = () => 13;' >src/part13.js
	npm run -s build
	npm test -s | grep -qx 'total 91'
}
verify() {
	[ -f app/dist/parts/part13.js ] || bad "the second build is missing"
	none_lost src
}
