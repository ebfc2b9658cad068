# Previewing generated docs: python -m http.server over the docs tree (in
# the session) and a link checker fetching every page, the index several
# times, with curl and urllib.
NEEDS="python3 curl"
setup() {
	mkdir -p site/api
	local i
	echo '<html><body>' >site/index.html
	for i in $(seq 1 10); do
		echo "<a href=\"api/p$i.html\">p$i</a>" >>site/index.html
		echo "<html><body>page $i <a href=\"../index.html\">home</a></body></html>" >site/api/p$i.html
	done
	echo '</body></html>' >>site/index.html
	manifest site site
}
run() {
	set -e
	python3 -m http.server 0 --bind 127.0.0.1 --directory site >srv.log 2>&1 &
	srv=$!
	port=
	for _ in $(seq 1 100); do
		port=$(sed -n 's/.*port \([0-9]*\).*/\1/p' srv.log | head -n1)
		[ -n "$port" ] && break
		sleep 0.05
	done
	test -n "$port"
	for _ in 1 2 3; do curl -sf "http://127.0.0.1:$port/index.html" >/dev/null; done
	python3 - "$port" <<'PY'
import re, sys, urllib.request
base = f"http://127.0.0.1:{sys.argv[1]}/"
seen, todo = set(), ["index.html"]
while todo:
    p = todo.pop()
    if p in seen: continue
    seen.add(p)
    html = urllib.request.urlopen(base + p, timeout=5).read().decode()
    d = p.rsplit("/", 1)[0] + "/" if "/" in p else ""
    for href in re.findall(r'href="([^"]+)"', html):
        todo.append(re.sub(r"[^/]+/\.\./", "", d + href))
print(f"checked {len(seen)} pages")
PY
	kill $srv
}
verify() {
	grep -q 'checked 11 pages' "$OUT" || bad "the link check did not finish: $(cat "$OUT")"
	none_lost site
}
