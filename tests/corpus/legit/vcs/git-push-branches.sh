# Everyday pushes to a shared repository outside the tree: a feature branch
# pushed after each of five commits, a tag, and the session's own branch
# deleted once merged (what the session pushed is its own: issue 38). No
# force, nothing that was there before is destroyed.
NEEDS=git
setup() {
	git init -q --bare "$META/shared.git"
	git init -q repo
	(cd repo && git commit -q --allow-empty -m init && git remote add origin "$META/shared.git" &&
		git push -q origin HEAD:main && git push -q origin HEAD:refs/heads/release)
}
run() {
	set -e
	cd repo
	git checkout -q -b feature
	for i in 1 2 3 4 5; do
		echo "$i" >"f$i" && git add "f$i" && git commit -q -m "step $i"
		git push -q -u origin feature
	done
	git tag v1 && git push -q origin v1
	git push -q origin feature:main
	echo "pushed"
}
verify() {
	grep -q pushed "$OUT" || bad "the pushes did not finish"
	git --git-dir="$META/shared.git" rev-parse -q --verify release >/dev/null || bad "the release branch is gone"
}
