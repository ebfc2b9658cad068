# A refactor: 30 modules moved into packages with mv and git mv (renames),
# imports rewritten with sed, old empty directories removed.
NEEDS=git
setup() {
	git init -q repo
	mkdir -p repo/legacy
	local i
	for i in $(seq 1 30); do printf 'import legacy.m%d\n' "$i" >repo/legacy/m$i.py; done
	git -C repo add -A && git -C repo commit -qm legacy
	manifest repo repo/legacy
}
run() {
	set -e
	cd repo
	mkdir -p pkg/core pkg/extra
	for i in $(seq 1 15); do git mv legacy/m$i.py pkg/core/; done
	for i in $(seq 16 30); do mv legacy/m$i.py pkg/extra/; done
	rmdir legacy
	sed -i 's/import legacy\./import pkg./' pkg/*/*.py
	git add -A && git commit -qm "move to pkg"
}
verify() {
	[ "$(find repo/pkg -name '*.py' | wc -l)" = 30 ] || bad "modules missing"
	[ ! -e repo/legacy ] || bad "legacy left"
}
