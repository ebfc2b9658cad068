# `rm -rf` of an output directory the session made itself (a report
# generator's out/, 200 files in 10 subdirectories), twice.
setup() {
	mkfiles src 5
	manifest src src
}
run() {
	set -e
	for r in 1 2; do
		for d in $(seq 1 10); do
			mkdir -p out/sec$d
			for i in $(seq 1 20); do echo "report $r $d $i" >out/sec$d/p$i.html; done
		done
		rm -rf out
	done
}
verify() {
	[ ! -e out ] || bad "out/ left"
	none_lost src
}
