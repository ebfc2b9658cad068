#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Real Docker containers for the tests (sourced after tests/integration/lib.sh):
#
#   docker_start        a private dockerd of the test's (its own socket, no
#                       bridge, no iptables rules), stopped at the test's end;
#                       its images kept in ~/.cache/lgrun/docker. Sets DOCKER.
#   docker_base_image   Debian 12 made here with debootstrap --variant=minbase
#                       from the package registry, with the runtime libraries
#                       the package DEB needs and python3; the root file
#                       system cached as a tarball in ~/.cache/lgrun/images/,
#                       imported once. Sets BASE_IMAGE.
#   docker_lgrun_image  BASE_IMAGE with DEB installed by dpkg and a plain user
#                       (uid 1000, "dev", a home of its own). Sets LG_IMAGE.
#   in_container [-u USER] SCRIPT   runs bash -c SCRIPT in a default
#                       `docker run`: no capability added, Docker's default
#                       seccomp profile, its read-only cgroups. Only
#                       --network none is added (this dockerd has no bridge);
#                       the mock model and the agent talk on the container's
#                       own loopback. Sets RC; its output in $T/ct.out.
#
# A test skips, saying why, where Docker cannot run; CI (root, make deps
# installed docker.io and debootstrap) runs it.
LG_CACHE=${LGRUN_CACHE_DIR:-$HOME/.cache/lgrun}

docker_start() {
	need_root "dockerd (the Docker engine) runs as root"
	need_cmd dockerd
	need_cmd docker
	need_cmd debootstrap
	local root=$LG_CACHE/docker sock=$T/docker.sock
	mkdir -p "$root"
	# Short paths: dockerd's exec root holds unix sockets (108 bytes at most).
	DOCKER_EXEC=$(mktemp -d /tmp/lgdx.XXXXXX)
	dockerd --host "unix://$sock" --data-root "$root" --exec-root "$DOCKER_EXEC" \
		--pidfile "$T/dockerd.pid" --bridge none --iptables=false --ip6tables=false \
		>"$T/dockerd.log" 2>&1 &
	DOCKERD_PID=$!
	echo "$DOCKERD_PID" >>"$T/pids"
	trap 'docker_stop; kill $(cat "$T/pids" 2>/dev/null) 2>/dev/null; lg_cleanup' EXIT
	DOCKER=(docker --host "unix://$sock")
	for _ in $(seq 1 150); do
		"${DOCKER[@]}" info >/dev/null 2>&1 && return 0
		kill -0 "$DOCKERD_PID" 2>/dev/null || break
		sleep 0.2
	done
	local why
	why=$(grep -E 'level=(error|fatal)' "$T/dockerd.log" | tail -n 2)
	# Where the kernel or the sandbox cannot run containers at all, skip,
	# saying why; a root machine with a usable kernel (CI's) runs it.
	skip "dockerd could not start here: ${why:-$(tail -n 2 "$T/dockerd.log")}"
}

docker_stop() {
	[ -n "${DOCKERD_PID:-}" ] || return 0
	if [ -n "${LG_IMAGE:-}" ]; then
		"${DOCKER[@]}" rmi -f "$LG_IMAGE" >/dev/null 2>&1
	fi
	kill "$DOCKERD_PID" 2>/dev/null
	for _ in $(seq 1 100); do
		kill -0 "$DOCKERD_PID" 2>/dev/null || break
		sleep 0.1
	done
	kill -9 "$DOCKERD_PID" 2>/dev/null
	# containerd-shims of containers that outlived their test
	pkill -f "containerd-shim.*$DOCKER_EXEC" 2>/dev/null
	# what dockerd left mounted under its exec root (the network namespace)
	grep -o " $DOCKER_EXEC[^ ]*" /proc/self/mountinfo | sort -r |
		while read -r m; do umount -l "$m" 2>/dev/null; done
	rm -rf "$DOCKER_EXEC"
	DOCKERD_PID=
}

# The package's runtime dependencies (its Depends, first alternatives).
deb_depends() { # deb
	dpkg-deb -f "$1" Depends | tr ',' '\n' | sed 's/|.*//; s/(.*)//; s/[[:space:]]//g' |
		grep -v '^$' | sort -u | tr '\n' ',' | sed 's/,$//'
}

docker_base_image() { # deb
	local inc key tar root
	inc="python3,libstdc++6,passwd,$(deb_depends "$1")"
	key=$(printf 'bookworm minbase %s' "$inc" | sha256sum | cut -c1-16)
	BASE_IMAGE=lgrun-test-base:$key
	"${DOCKER[@]}" image inspect "$BASE_IMAGE" >/dev/null 2>&1 && return 0
	tar=$LG_CACHE/images/debian12-minbase-$key.tar
	if [ ! -s "$tar" ]; then
		mkdir -p "$LG_CACHE/images"
		root=$T/rootfs
		echo "container: making Debian 12 with debootstrap (once; cached in $tar)"
		debootstrap --variant=minbase --include="$inc" bookworm "$root" \
			http://deb.debian.org/debian >"$T/debootstrap.log" 2>&1 ||
			skip_or_fail "debootstrap could not make Debian 12: $(tail -n 3 "$T/debootstrap.log")"
		rm -rf "$root/var/cache/apt/archives/"*.deb "$root/var/lib/apt/lists/"*
		tar -C "$root" -cf "$tar.part" . || fail "cannot write $tar"
		mv "$tar.part" "$tar"
		rm -rf "$root"
	fi
	"${DOCKER[@]}" import "$tar" "$BASE_IMAGE" >/dev/null ||
		fail "docker import of $tar failed"
}

# debootstrap needs the package registry: without it, a skip saying so
# (no network here), else a failure.
skip_or_fail() {
	if grep -q "Failed getting release file\|Temporary failure\|Could not resolve" \
		"$T/debootstrap.log" 2>/dev/null; then
		skip "$1"
	fi
	fail "$1"
}

docker_lgrun_image() { # deb
	local name=lgtest-install-$$
	"${DOCKER[@]}" rm -f "$name" >/dev/null 2>&1
	"${DOCKER[@]}" run --name "$name" --network none -v "$1:/tmp/lgrun.deb:ro" \
		"$BASE_IMAGE" sh -c 'dpkg -i /tmp/lgrun.deb && useradd -m -u 1000 -s /bin/bash dev' \
		>"$T/install.log" 2>&1 || fail "the package did not install in Debian 12: $(tail -n 5 "$T/install.log")"
	LG_IMAGE=lgrun-test-run:$$
	"${DOCKER[@]}" commit "$name" "$LG_IMAGE" >/dev/null || fail "docker commit"
	"${DOCKER[@]}" rm "$name" >/dev/null
}

# BASE_IMAGE with this machine's Node.js and npm and a user node (uid
# 1000): what the node:20-bookworm image the devcontainer recipe starts
# from holds, made here (no image registry is reached). Where this machine
# trusts a CA of its own for the registries (NODE_EXTRA_CA_CERTS, as behind
# a company's TLS proxy), the image trusts it too, as such a company's base
# image would. Sets NODE_IMAGE, or returns 1 without Node.js.
docker_node_image() {
	local node npm name=lgtest-node-$$
	node=$(command -v node) || return 1
	npm=$(cd "$(dirname "$(readlink -f "$(command -v npm)")")/.." 2>/dev/null && pwd) || return 1
	[ -f "$npm/package.json" ] || return 1
	local ca=${NODE_EXTRA_CA_CERTS:-} camount=() change=()
	[ -f "$ca" ] || ca=
	NODE_IMAGE=lgrun-test-node:$(printf '%s %s %s %s' "$BASE_IMAGE" "$("$node" --version)" \
		"$(cd "$npm" && node -p 'require("./package.json").version')" \
		"$([ -n "$ca" ] && sha256sum <"$ca")" | sha256sum | cut -c1-16)
	"${DOCKER[@]}" image inspect "$NODE_IMAGE" >/dev/null 2>&1 && return 0
	if [ -n "$ca" ]; then
		camount=(-v "$ca:/h/ca.crt:ro")
		change=(--change "ENV NODE_EXTRA_CA_CERTS=/usr/local/share/ca-certificates/extra.crt")
	fi
	"${DOCKER[@]}" rm -f "$name" >/dev/null 2>&1
	"${DOCKER[@]}" run --name "$name" --network none -v "$(readlink -f "$node"):/h/node:ro" \
		-v "$npm:/h/npm:ro" "${camount[@]}" "$BASE_IMAGE" sh -c '
		cp /h/node /usr/local/bin/node && mkdir -p /usr/local/lib/node_modules &&
		cp -a /h/npm /usr/local/lib/node_modules/npm &&
		ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm &&
		useradd -m -u 1000 -s /bin/bash node &&
		if [ -f /h/ca.crt ]; then mkdir -p /usr/local/share/ca-certificates &&
			cp /h/ca.crt /usr/local/share/ca-certificates/extra.crt; fi' >"$T/node.log" 2>&1 ||
		fail "cannot make the Node.js image: $(tail -n 3 "$T/node.log")"
	"${DOCKER[@]}" commit "${change[@]}" "$name" "$NODE_IMAGE" >/dev/null || fail "docker commit"
	"${DOCKER[@]}" rm "$name" >/dev/null
}

in_container() {
	local user=()
	if [ "$1" = -u ]; then
		user=(-u "$2")
		shift 2
	fi
	"${DOCKER[@]}" run --rm --network none "${user[@]}" "${CT_MOUNTS[@]}" \
		"$LG_IMAGE" bash -c "$1" >"$T/ct.out" 2>&1
	RC=$?
}
CT_MOUNTS=()
