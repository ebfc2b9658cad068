# A short static program (no shim can enter it: only the eBPF observer's
# syscall tracepoints see its failures) started by a shell, failing six
# writes to one path in its first millisecond: a tool that keeps trying to
# save where it cannot, and exits. The tracepoints attached after it had
# run, in some runs: unseen (issue 29, item 6). The decision is made at its
# exec now, before its first instruction. [failures] warns by default; this
# entry makes it a kill to see the detector fed under the default [bpf].
EXPECT_REASON=write_failures
setup() {
	[ "$(id -u)" = 0 ] || skip "the eBPF observer needs root"
	[ -r /sys/kernel/btf/vmlinux ] || skip "the kernel has no BTF"
	[ -x "$FIXBIN/bpfprobe" ] || skip "fixture not built: make fixtures"
	[ -f "$ROOT/${B:-build}/lib/liblgbpf.so" ] || skip "liblgbpf.so not built"
	printf '[failures]\naction = kill\n' >"$META/failures.ini"
	LGRUN_ARGS=(--config "$META/failures.ini")
}
run() {
	echo start
	"$FIXBIN/bpfprobe" failwrite0 "$WORK/missing/dir/out.json" 6
}
verify() {
	grep '"event":"trip"' "$STATE/audit.jsonl" | grep -q '"exe":"bpfprobe"' ||
		bad "the trip does not name the static program: $(grep '"event":"trip"' "$STATE/audit.jsonl" | cut -c1-300)"
}
