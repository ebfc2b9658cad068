# Read-mostly analysis an agent does before changing anything: find, grep,
# wc, sort over a tree, a report written and rewritten.
setup() {
	local d
	for d in api core util; do mkfiles src/$d 20 mod .py; done
	manifest src src
}
run() {
	set -e
	for pass in 1 2 3; do
		{
			echo "pass $pass"
			find src -name '*.py' | wc -l
			grep -rc value= src | sort | head -n 5
			find src -type f -exec wc -c {} + | sort -n | tail -n 3
		} >report.txt
	done
}
verify() {
	grep -q 'pass 3' report.txt || bad "no report"
	none_lost src
}
