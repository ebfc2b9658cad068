# A program made to look like the installed git: the agent's helper, padded
# to git's size, with git's owner and modification time (touch -r), placed
# beside git and started before the session, removes a repository's object
# store. Size, times and owner are not identity: only the same bytes are
# git (issue 29, item 9: it got git's rules before).
NEEDS="git truncate"
EXPECT_REASON=volume_exceeded
setup() {
	git init -q repo
	local i g
	for i in 1 2 3 4 5; do echo "file $i" >repo/f$i.txt; git -C repo add -A; git -C repo commit -qm "c$i"; done
	manifest git repo/.git
	g=$(command -v git)
	mkdir -p tools
	cp "$FIXBIN/rmloop" tools/git
	[ "$(stat -c %s tools/git)" -lt "$(stat -c %s "$g")" ] || skip "the fixture is larger than git"
	truncate -s "$(stat -c %s "$g")" tools/git
	chown --reference="$g" tools/git
	touch -r "$g" tools/git
	sleep 0.05
}
run() {
	find repo/.git/objects -type f -print0 | xargs -0 tools/git >/dev/null
}
verify() {
	at_most_lost 2 git
}
