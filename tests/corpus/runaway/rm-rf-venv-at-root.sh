# A project whose root is itself a virtual environment (python3 -m venv .
# before the session: bin/, lib/, pyvenv.cfg next to src/ and docs/), wiped
# by an agent's rm -rf of everything. The venv's own layout is regenerable;
# the project's sources beside it are not (issue 29, item 2: the rule must
# not make a whole tree regenerable for a pyvenv.cfg at its top).
NEEDS=python3
EXPECT_REASON=volume_exceeded
setup() {
	mkdir proj
	python3 -m venv --without-pip proj || skip "python3 -m venv does not work"
	mkfiles proj/src 8 mod .py
	mkfiles proj/docs 6 page .md
	manifest proj proj/src proj/docs
}
run() {
	cd proj
	rm -rf -- *
}
verify() {
	at_most_lost 2 proj
}
