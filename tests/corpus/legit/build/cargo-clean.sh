# A Rust crate (no dependencies: offline) built before the session; under
# lgrun `cargo clean`, then `cargo build` again. Rustup's proxy on PATH
# execs the toolchain's cargo, which removes target/.
NEEDS=cargo
TIMEOUT=120
setup() {
	# the private HOME has no toolchain: point at the machine's
	export CARGO_HOME=${CARGO_HOME:-$REAL_HOME/.cargo}
	export RUSTUP_HOME=${RUSTUP_HOME:-$REAL_HOME/.rustup}
	cargo --version >/dev/null 2>&1 || skip "cargo cannot run here (no toolchain under $RUSTUP_HOME)"
	cargo new --offline -q --vcs git hello
	cat >hello/src/main.rs <<'RS'
fn main() {
    println!("{}", (1..=10).sum::<u32>());
}
RS
	(cd hello && git add -A && git commit -qm init && cargo build --offline -q)
	[ -x hello/target/debug/hello ] || skip "cargo build made no binary"
	manifest src hello/src hello/Cargo.toml
}
run() {
	set -e
	cd hello
	cargo clean -q
	test ! -e target
	cargo build --offline -q
	test "$(./target/debug/hello)" = 55
}
verify() {
	none_lost src
}
