#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Where agents run (issue 37): lgrun's .deb installed in Debian 12 (made here
# with debootstrap), run in a default `docker run` (no capability added,
# Docker's default seccomp profile, which refuses process_vm_readv and
# pidfd_getfd; read-only cgroups), as root, as a plain user (uid 1000) and
# as a uid the image has no user for (HOME=/):
#  1. ordinary work runs untouched (tests/container/ordinary.sh);
#  2. a delete loop is stopped at #3 and lgctl restore puts it back (loop.sh);
#  3. lgctl doctor exits 0 and names each layer, what is degraded and why;
#  4. the CI recipe's container job: ci/lgrun-job.sh stops a delete loop;
#  5. Claude Code (pinned, from npm) against the mock model: its delete loop
#     is stopped at #3 (claude.sh; skipped without the CLI: make agents);
#  6. the devcontainer recipe (ci/devcontainer) built and run as written;
#  7. lgrun as the container's command (PID 1): a loop stopped.
# lgctl doctor on the host too. Needs root and Docker (docker.io): skips,
# saying why, where dockerd cannot run.
source "$(dirname "$0")/lib.sh"
source "$LG_ROOT/tests/container/lib.sh"
docker_start

make -C "$LG_ROOT" --no-print-directory deb B="$T/b" >"$T/deb.log" 2>&1 || fail "make deb: $(tail -20 "$T/deb.log")"
deb=$(ls "$T"/b/deb/lgrun_*_amd64.deb 2>/dev/null | head -n1)
[ -f "$deb" ] || fail "no package"
docker_base_image "$deb"
docker_lgrun_image "$deb"
CT_MOUNTS=(-v "$LG_ROOT/tests/container:/lgtests:ro" -v "$LG_ROOT/tests/fixtures/llm:/llm:ro" -v "$LG_ROOT/ci:/ci:ro")
AGENT=$(agent_bin claude) && CT_MOUNTS+=(-v "$(cd "$(dirname "$AGENT")/../.." && pwd):/agent:ro")

# 0. The premise: the container's profile refuses process_vm_readv.
in_container 'python3 -c "
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
buf = ctypes.create_string_buffer(8)
class iov(ctypes.Structure): _fields_ = [(\"b\", ctypes.c_void_p), (\"n\", ctypes.c_size_t)]
l = iov(ctypes.cast(buf, ctypes.c_void_p), 8); r = iov(ctypes.cast(buf, ctypes.c_void_p), 8)
n = libc.syscall(310, os.getpid(), ctypes.byref(l), 1, ctypes.byref(r), 1, 0)
print(\"process_vm_readv\", n, os.strerror(ctypes.get_errno()) if n < 0 else \"ok\")"'
grep -q "process_vm_readv -1 Operation not permitted" "$T/ct.out" ||
	fail "the premise: a default container refuses process_vm_readv, but: $(cat "$T/ct.out")"

# root, a plain user of the image (dev), and a uid with no user in the image
# (docker run -u 4242: HOME=/, the state in /tmp/lgrun-4242)
for who in root dev 4242; do
	u=()
	[ $who = root ] || u=(-u $who)
	in_container "${u[@]}" 'bash /lgtests/ordinary.sh'
	[ "$RC" = 0 ] || fail "as $who, ordinary work: $(tail -n 25 "$T/ct.out")"
	grep -q "read through /proc/PID/mem (process_vm_readv was refused: Operation not permitted)" "$T/ct.out" ||
		fail "as $who, lgrun -v did not say how it reads arguments: $(grep '^lgrun:' "$T/ct.out")"

	in_container "${u[@]}" 'bash /lgtests/loop.sh'
	[ "$RC" = 0 ] || fail "as $who, the delete loop: $(tail -n 25 "$T/ct.out")"

	in_container "${u[@]}" 'lgctl doctor'
	[ "$RC" = 0 ] || fail "as $who, lgctl doctor exited $RC: $(cat "$T/ct.out")"
	for layer in "seccomp user notification" "reading the syscalls' arguments" \
		"the calls' directories" "killing the tree" "eBPF observer" "mount namespace" \
		"user namespaces" "LD_PRELOAD shim" "model proxy" "egress proxy and its CA" \
		"state dir" "canary session"; do
		grep -q "^  [a-z]* *$layer: " "$T/ct.out" || fail "as $who, lgctl doctor does not name '$layer': $(cat "$T/ct.out")"
	done
	grep -q "^  degraded  reading the syscalls' arguments: through /proc/PID/mem.*--cap-add SYS_PTRACE" "$T/ct.out" ||
		fail "as $who, doctor does not say the arguments' way is degraded and what fixes it: $(cat "$T/ct.out")"
	grep -q "^  degraded  killing the tree: no cgroup" "$T/ct.out" || fail "as $who, doctor: the tree's kill: $(cat "$T/ct.out")"
	grep -q "^  ok        canary session: " "$T/ct.out" || fail "as $who, the canary: $(cat "$T/ct.out")"
	grep -q "^verdict: lgrun protects here (degraded: " "$T/ct.out" || fail "as $who, doctor's verdict: $(cat "$T/ct.out")"

	# The CI recipe's container job: ci/lgrun-job.sh around a delete loop.
	in_container "${u[@]}" 'cd; [ -w . ] || cd /tmp; mkdir -p job/d && cd job && for i in 1 2 3 4 5; do echo $i >d/f$i; done &&
		sleep 0.05 && /ci/lgrun-job.sh -- sh -c "for f in d/*; do rm \$f; done"; echo "job=$?";
		ls d | wc -l; cat lgrun-artifacts/alerts.txt'
	grep -q "^job=86" "$T/ct.out" || fail "as $who, ci/lgrun-job.sh in the container: $(cat "$T/ct.out")"
	grep -q "^3$" "$T/ct.out" || fail "as $who, ci/lgrun-job.sh: the loop was not stopped at #3: $(cat "$T/ct.out")"
	grep -q "volume_exceeded" "$T/ct.out" || fail "as $who, no alert in lgrun-artifacts/alerts.txt: $(cat "$T/ct.out")"

	if [ -n "$AGENT" ]; then
		in_container "${u[@]}" 'bash /lgtests/claude.sh'
		[ "$RC" = 0 ] || fail "as $who, Claude Code in the container: $(tail -n 25 "$T/ct.out")"
	fi
done
[ -n "$AGENT" ] || echo "SKIP-PART: Claude Code in the container (no pinned CLI: make agents)"

# lgrun as the container's own command (PID 1, as `docker run IMAGE lgrun --
# ./agent` in a CI job, every orphan re-parented to it): the loop stopped at
# #3 with a background job and a setsid'd one in the tree.
mkfiles "$T/p1/d" 5
"${DOCKER[@]}" run --rm --network none -v "$T/p1:/w" -w /w "$LG_IMAGE" \
	lgrun --state-dir /w/s -- sh -c 'sleep 60 & setsid sleep 60 & for f in d/*; do rm "$f"; done' \
	>"$T/ct.out" 2>&1
RC=$?
assert_rc 86 "$RC" "lgrun as PID 1: $(cat "$T/ct.out")"
n=$(ls "$T/p1/d" | wc -l)
[ "$n" = 3 ] || fail "lgrun as PID 1: $n of 5 files left, expected 3"

# 6. The devcontainer recipe (ci/devcontainer), built as written, from an
#    image like its node:20-bookworm made here; its apt and npm steps reach
#    the package registries through the host's network. Run as
#    devcontainer.json says: its user, its state volume, its
#    postCreateCommand; then its `claude` (lgrun's wrapper) is stopped at #3.
python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$LG_ROOT/ci/devcontainer/devcontainer.json" ||
	fail "devcontainer.json is not JSON"
if [ -z "${LGRUN_SKIP_DEVCONTAINER:-}" ] && docker_node_image; then
	mkdir -p "$T/devc"
	cp "$LG_ROOT"/ci/devcontainer/* "$deb" "$T/devc/"
	DEVC_IMAGE=lgrun-test-devc:$$
	"${DOCKER[@]}" build --network host --build-arg BASE="$NODE_IMAGE" -t "$DEVC_IMAGE" "$T/devc" \
		>"$T/devc.log" 2>&1 || fail "the devcontainer's Dockerfile did not build: $(tail -n 15 "$T/devc.log")"
	user=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["remoteUser"])' "$LG_ROOT/ci/devcontainer/devcontainer.json")
	post=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["postCreateCommand"])' "$LG_ROOT/ci/devcontainer/devcontainer.json")
	vol=lgrun-state-test-$$
	"${DOCKER[@]}" run --rm --network none -u "$user" -v "$vol:/home/node/.local/state/lgrun" \
		"$DEVC_IMAGE" bash -c "$post" >"$T/post.out" 2>&1 ||
		fail "the devcontainer's postCreateCommand ($post) failed: $(cat "$T/post.out")"
	grep -q "^verdict: lgrun protects here" "$T/post.out" || fail "postCreateCommand: $(cat "$T/post.out")"
	"${DOCKER[@]}" run --rm --network none -u "$user" -v "$vol:/home/node/.local/state/lgrun" \
		-v "$LG_ROOT/tests/container:/lgtests:ro" -v "$LG_ROOT/tests/fixtures/llm:/llm:ro" \
		"$DEVC_IMAGE" bash /lgtests/claude.sh --wrapped >"$T/ct.out" 2>&1 ||
		fail "the devcontainer's claude: $(tail -n 25 "$T/ct.out")"
	"${DOCKER[@]}" volume rm "$vol" >/dev/null 2>&1
	"${DOCKER[@]}" rmi -f "$DEVC_IMAGE" >/dev/null 2>&1
else
	echo "SKIP-PART: the devcontainer recipe (no Node.js here, or LGRUN_SKIP_DEVCONTAINER)"
fi

# The host: the doctor names the same layers, and protects.
"$LGCTL" doctor >"$T/host.out" 2>&1 || fail "lgctl doctor on the host exited $?: $(cat "$T/host.out")"
grep -q "^verdict: lgrun protects here" "$T/host.out" || fail "doctor on the host: $(cat "$T/host.out")"
pass
