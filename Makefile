# SPDX-License-Identifier: MIT
# lgrun: make | make check | make test | make demo | make bench | make deps
#        make install PREFIX=... | make format | SANITIZE=1|thread | V=1
#        make docs (docs/configuration.md) | make docs-check (part of check)

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
SYSCONFDIR ?= $(PREFIX)/etc/lgrun
MANDIR ?= $(PREFIX)/share/man
# lgrun finds its libraries in <bindir>/../lib/lgrun, else <bindir>/../lib
LIBDIR ?= $(PREFIX)/lib
VERSION := 0.1.0

B := build
CC ?= cc
# The in-tree build reads conf/ from the source tree; `make install` rebuilds
# lgrun with the installed config directory.
LG_CONFDIR ?= $(CURDIR)/conf

WARN := -Wall -Wextra -Werror -Wshadow -Wmissing-prototypes -Wformat=2 \
	-Wno-format-nonliteral -Wno-format-truncation
CFLAGS ?= -O2 -g
# what the caller gave (a package build's dpkg-buildflags), for the install
# rebuild: the defines below are added anew there
CFLAGS_GIVEN := $(CFLAGS)
CFLAGS += -std=gnu11 $(WARN) -D_GNU_SOURCE -fvisibility=hidden -Isupervisor \
	-DLG_VERSION='"$(VERSION)"' -DLG_SYSCONFDIR='"$(LG_CONFDIR)"' -MMD -MP
# -lz -llzma -lbz2 -lzstd: provenance/archive.c reads the archives the
# session wrote (issue 41)
ARCHIVE_LIBS := -lz -llzma -lbz2 -lzstd
LDLIBS_SUP := -lseccomp -linih -ljansson -lhiredis -lm -lpthread $(ARCHIVE_LIBS)

ifeq ($(SANITIZE),1)
CFLAGS += -fsanitize=address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=undefined
LDFLAGS += -fsanitize=address,undefined
B := build-san
endif
# ThreadSanitizer: `make SANITIZE=thread check` runs the unit tests and the
# integration tests whose work crosses lgrun's threads (TSAN_TESTS); any
# report fails it (TSAN_OPTIONS below, reports in $(B)/tsan/).
ifeq ($(SANITIZE),thread)
CFLAGS += -fsanitize=thread -fno-omit-frame-pointer
LDFLAGS += -fsanitize=thread
B := build-tsan
endif

ifeq ($(V),1)
Q :=
else
Q := @
endif

# Debian packages the build, the tests and the demo need.
DEPS_PKGS := build-essential pkg-config libseccomp-dev libinih-dev clang \
	libclang-rt-14-dev libbpf-dev bpftool libhiredis-dev redis-server \
	libcmocka-dev libjansson-dev clang-format git sqlite3 python3 \
	python3-venv strace bubblewrap tar util-linux libmicrohttpd-dev \
	libcurl4-openssl-dev libssl-dev openssl curl libzstd-dev zstd libwslay-dev jq tmux \
	zlib1g-dev liblzma-dev libbz2-dev xz-utils bzip2 zip unzip \
	debhelper lintian chromium docker.io debootstrap postgresql mariadb-server mariadb-client
DEPS_HEADERS := /usr/include/seccomp.h /usr/include/ini.h /usr/include/cmocka.h \
	/usr/include/bpf/libbpf.h /usr/include/hiredis/hiredis.h \
	/usr/include/jansson.h /usr/include/microhttpd.h \
	/usr/include/openssl/ssl.h /usr/include/zstd.h /usr/include/wslay/wslay.h \
	/usr/include/zlib.h /usr/include/lzma.h /usr/include/bzlib.h \
	/usr/include/$(shell $(CC) -dumpmachine)/curl/curl.h
# Commands the tests use (clang for the fuzzer, the rest for workloads).
DEPS_CMDS := cc clang clang-format git python3 sqlite3 setpriv tar curl openssl zstd jq tmux dh chromium \
	lintian $(BPFTOOL) \
	redis-server dockerd debootstrap psql mariadb

# The supervisor's source, one folder per subsystem (HACKING.md draws the
# map). What each program links is named by folder below.
sup = $(sort $(wildcard $(addprefix supervisor/,$(addsuffix /*.c,$(1)))))
# the model APIs: llm.c and one file each (api.h)
LLM_SRC := $(call sup,llm)
# the configuration: loading, the keys and options, the values, the parsers
CONFIG_SRC := $(call sup,config)
# the pure guard: events, classes, and every detector a file (detectors.def)
GUARD_SRC := $(call sup,guard)
PURE_SRC := $(GUARD_SRC) $(CONFIG_SRC) $(LLM_SRC) supervisor/lib/termtext.c \
	supervisor/lib/glob.c supervisor/lib/text.c supervisor/lib/canon.c \
	supervisor/seccomp/pathres.c supervisor/seccomp/gitodb.c \
	supervisor/seccomp/gitodb_hash.c supervisor/lib/sha.c \
	supervisor/provenance/lineage.c supervisor/session/turns.c \
	supervisor/lib/tcp.c \
	supervisor/egress/head.c supervisor/proxy/routes.c supervisor/lib/json.c \
	supervisor/lib/error.c
# is this loss? what a file is made of and where its content went (issue
# 41, 42): archives, programs, lineage, build outputs, emptied files
PROVENANCE_SRC := $(call sup,provenance)
SYS_SRC := $(call sup,session quarantine tree store record) $(PROVENANCE_SRC) \
	supervisor/lib/log.c supervisor/lib/clock.c supervisor/lib/sources.c \
	supervisor/lib/spill.c supervisor/lib/procmem.c supervisor/lib/libdir.c \
	supervisor/lib/atomic.c \
	supervisor/lib/caps.c \
	supervisor/lib/fdpass.c \
	supervisor/seccomp/filter.c supervisor/seccomp/notify.c \
	supervisor/seccomp/notifier.c supervisor/seccomp/args.c \
	supervisor/seccomp/exec.c supervisor/seccomp/rename.c \
	supervisor/seccomp/where.c supervisor/seccomp/dirpath.c \
	supervisor/seccomp/blockdev.c supervisor/egress/egress.c \
	supervisor/egress/agentenv.c supervisor/control/control.c \
	supervisor/control/frames.c supervisor/control/flows.c \
	supervisor/control/nested.c supervisor/observer/observer.c \
	supervisor/observer/watch.c supervisor/observer/procs.c
SYS_SRC := $(filter-out $(PURE_SRC) supervisor/record/replay.c,$(SYS_SRC))
LGRUN_SRC := $(call sup,lgrun)
LGCTL_SRC := $(call sup,lgctl)
# the undo engine (restore, rewind): lgctl's alone
UNDO_SRC := $(call sup,undo)

obj = $(patsubst %.c,$(B)/obj/%.o,$(1))
WIRE_SRC := supervisor/control/wiredec.c preload/recog.c preload/sql.c preload/volatile.c
PURE_OBJ := $(call obj,$(PURE_SRC) $(WIRE_SRC))
SYS_OBJ := $(call obj,$(SYS_SRC))

BINS := $(B)/bin/lgrun $(B)/bin/lgctl

# The LLM proxy is a library lgrun loads when the agent first calls its
# model: libcurl and libmicrohttpd cost milliseconds to load, which a
# session that never talks to a model should not pay.
PROXYLIB := $(B)/lib/liblgproxy.so
# The session CA and TLS for the egress proxy: OpenSSL, loaded only when
# [llm] mode asks for the egress proxy (linked in, it costs every start).
TLSLIB := $(B)/lib/liblgtls.so
PROXY_SRC := supervisor/proxy/proxy.c supervisor/proxy/events.c supervisor/proxy/upstream.c \
	supervisor/proxy/ws.c $(LLM_SRC) supervisor/lib/canon.c supervisor/proxy/zbody.c \
	supervisor/proxy/wsframe.c \
	preload/volatile.c \
	supervisor/lib/text.c supervisor/lib/error.c

# The eBPF observer (bpf/): CO-RE programs compiled with clang against a
# vmlinux.h dumped from the running kernel's BTF at build time (nothing
# kernel-specific is checked in; the relocations make the object portable
# to kernels with BTF), a skeleton from bpftool, and liblgbpf.so, which
# lgrun loads only when the observer is wanted. x86_64 only (the syscall
# numbers); without BTF the library is not built and --bpf=on says so.
BPFTOOL ?= $(shell command -v bpftool 2>/dev/null || echo /usr/sbin/bpftool)
VMLINUX_BTF ?= /sys/kernel/btf/vmlinux
HAVE_BPF := $(if $(and $(wildcard $(VMLINUX_BTF)),$(filter x86_64,$(shell uname -m))),1)
BPFLIB := $(B)/lib/liblgbpf.so

$(B)/bpf/vmlinux.h: | deps-check
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  BTF     $@")
	$(Q)$(BPFTOOL) btf dump file $(VMLINUX_BTF) format c >$@.tmp && mv $@.tmp $@

$(B)/bpf/lgobserve.bpf.o: bpf/lgobserve.bpf.c bpf/lgobserve.h \
		supervisor/seccomp/syscalls.def $(B)/bpf/vmlinux.h
	@$(if $(Q),echo "  BPF     $@")
	$(Q)clang -g -O2 -target bpf -D__TARGET_ARCH_x86 -Wall -Werror \
		-I$(B)/bpf -Ibpf -c $< -o $@

$(B)/bpf/lgobserve.skel.h: $(B)/bpf/lgobserve.bpf.o
	@$(if $(Q),echo "  SKEL    $@")
	$(Q)$(BPFTOOL) gen skeleton $< name lgobserve >$@.tmp && mv $@.tmp $@

$(BPFLIB): supervisor/observer/bpfobs.c supervisor/observer/btfcache.c \
		$(B)/pic/supervisor/lib/error.o supervisor/observer/btfcache.h \
		supervisor/observer/bpfobs.h bpf/lgobserve.h supervisor/lib/cleanup.h \
		supervisor/lib/error.h $(B)/bpf/lgobserve.skel.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(CFLAGS) -fPIC -shared -I$(B)/bpf -Ibpf $(LDFLAGS) -o $@ $< \
		-DLGB_PROGS_DIGEST=\"$$(sha256sum $(B)/bpf/lgobserve.bpf.o | cut -c1-16)\" \
		supervisor/observer/btfcache.c $(B)/pic/supervisor/lib/error.o \
		-lbpf -lelf -lz

# The preload shim runs inside every agent process: never sanitized (an ASan
# runtime cannot be preloaded into arbitrary programs), hidden by default,
# only its hooks exported.
SHIM := $(B)/lib/liblgshim.so
SHIM_SRC := $(wildcard preload/*.c)
SHIM_CFLAGS := -std=gnu11 -O2 -g $(WARN) -D_GNU_SOURCE -fPIC \
	-fvisibility=hidden -MMD -MP

UNIT_TESTS := glob pathres classify config volumetric same_target budget \
	repeat failures text canon guard recog wiredec llm llm_steer output_repeat \
	greeting termtext flow volatile gitodb samples lineage audit egress tls \
	decrypt wsframe agentenv replay where clock spill fdpass filter peer sql cli sha \
	turns archive clean atomic
UNIT_BINS := $(patsubst %,$(B)/tests/test_%,$(UNIT_TESTS))

.DEFAULT_GOAL := all
.PHONY: layers docs docs-check deb all check test integration corpus corpus-observe demo agents bench deps deps-check format fuzz fuzz-long load \
	format-check install clean fixtures
.DELETE_ON_ERROR:

all: deps-check $(BINS) $(PROXYLIB) $(TLSLIB) $(if $(SHIM_SRC),$(SHIM)) \
	$(if $(HAVE_BPF),$(BPFLIB)) $(B)/man/lgrun.ini.5

# lgrun.ini(5), made from conf/lgrun.ini (which shows every key): one source.
$(B)/man/lgrun.ini.5: conf/lgrun.ini man/inikey.awk man/ini2man.awk
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  MAN     $@")
	$(Q)awk -v date=2026-11 -v version=$(VERSION) -f man/inikey.awk -f man/ini2man.awk conf/lgrun.ini >$@

# Called by check and demo: installs what is missing (as root) or says how.
# Every compile waits for it (an order-only prerequisite): on a fresh clone,
# make -j2 would otherwise compile beside apt-get (jansson.h: no such file).
deps-check:
	@missing=0; for h in $(DEPS_HEADERS); do [ -f $$h ] || missing=1; done; \
	for c in $(DEPS_CMDS); do command -v $$c >/dev/null || missing=1; done; \
	if [ $$missing = 1 ]; then $(MAKE) --no-print-directory deps; fi

deps:
	@if [ "$$(id -u)" = 0 ]; then \
		echo "lgrun: installing build and test dependencies"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -qq $(DEPS_PKGS) >/dev/null; \
	else \
		echo "lgrun: missing build dependencies; as root run:"; \
		echo "  apt-get install -y $(DEPS_PKGS)"; exit 1; \
	fi

$(B)/obj/%.o: %.c | deps-check
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS) -c -o $@ $<

$(B)/bin/lgrun: $(call obj,$(LGRUN_SRC)) $(SYS_OBJ) $(PURE_OBJ)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS_SUP)

# lgctl reads the config, the state dir, the audit and the store, and runs
# recordings through the pure guard (replay, suggest): it links those, never
# the session, the notify path or the supervisor's threads.
LGCTL_DEPS := record/audit record/record record/held record/replay quarantine/index quarantine/seal lib/spill lib/atomic \
	lib/procmem lib/libdir lib/caps \
	tree/watchdog tree/cgroup lib/log lib/clock lib/text lib/termtext lib/json \
	lib/canon lib/glob lib/error lib/sha store/state store/strict store/store proxy/routes
$(B)/bin/lgctl: $(call obj,$(LGCTL_SRC) $(UNDO_SRC) $(patsubst %,supervisor/%.c,$(LGCTL_DEPS)) \
		$(CONFIG_SRC) $(GUARD_SRC) \
		preload/recog.c preload/sql.c)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ -linih -ljansson -lhiredis -lm

$(B)/obj/preload/%.o: preload/%.c | deps-check
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(SHIM_CFLAGS) -c -o $@ $<

$(SHIM): $(patsubst %.c,$(B)/obj/preload/%.o,$(notdir $(SHIM_SRC)))
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -shared -Wl,-z,defs -o $@ $^ -ldl -lpthread

$(B)/pic/%.o: %.c | deps-check
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $< (pic)")
	$(Q)$(CC) $(CFLAGS) -fPIC -c -o $@ $<

$(PROXYLIB): $(patsubst %.c,$(B)/pic/%.o,$(PROXY_SRC))
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -shared -o $@ $^ -lmicrohttpd -lcurl -ljansson -lzstd -lwslay \
		-lpthread

$(TLSLIB): $(B)/pic/supervisor/egress/tls.o $(B)/pic/supervisor/lib/error.o \
		$(B)/pic/supervisor/lib/atomic.o
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -shared -o $@ $^ -lssl -lcrypto -lpthread

# Unit tests: one cmocka binary per module, linked with the pure objects.
$(B)/tests/test_audit: $(B)/obj/supervisor/record/audit.o
$(B)/tests/test_replay: $(B)/obj/supervisor/record/record.o $(B)/obj/supervisor/record/held.o \
	$(B)/obj/supervisor/record/replay.o \
	$(B)/obj/supervisor/record/audit.o $(B)/obj/supervisor/lib/spill.o $(B)/obj/supervisor/lib/clock.o
$(B)/tests/test_egress: $(B)/obj/supervisor/egress/egress.o $(B)/obj/supervisor/lib/clock.o
$(B)/tests/test_tls: $(B)/pic/supervisor/egress/tls.o $(B)/pic/supervisor/lib/atomic.o
$(B)/tests/test_wsframe: $(B)/obj/supervisor/proxy/wsframe.o
$(B)/tests/test_agentenv: $(B)/obj/supervisor/egress/agentenv.o
$(B)/tests/test_where: $(B)/obj/supervisor/seccomp/where.o \
	$(B)/obj/supervisor/seccomp/dirpath.o $(B)/obj/supervisor/lib/clock.o
$(B)/tests/test_clock: $(B)/obj/supervisor/lib/clock.o
$(B)/tests/test_spill: $(B)/obj/supervisor/lib/spill.o $(B)/obj/supervisor/lib/clock.o
$(B)/tests/test_fdpass: $(B)/obj/supervisor/lib/fdpass.o
$(B)/tests/test_filter: $(B)/obj/supervisor/seccomp/filter.o $(B)/obj/supervisor/lib/log.o
# the rewind's choice of entries
$(B)/tests/test_turns: $(B)/obj/supervisor/undo/rewind.o
$(B)/tests/test_atomic: $(B)/obj/supervisor/lib/atomic.o
# the archives' index, against archives the real tar and zip make
$(B)/tests/test_archive: $(B)/obj/supervisor/provenance/archive.o
$(B)/tests/test_archive: TEST_LIBS := $(ARCHIVE_LIBS)
$(B)/tests/test_wsframe: TEST_LIBS := -lwslay
$(B)/tests/test_filter: TEST_LIBS := -lseccomp
$(B)/tests/test_tls: TEST_LIBS := -lssl -lcrypto -lpthread
$(B)/tests/test_config: TEST_DEFS := -DLG_MANPAGE='"$(abspath $(B))/man/lgrun.ini.5"'
$(B)/tests/test_config: $(B)/man/lgrun.ini.5
$(B)/tests/test_%: tests/unit/test_%.c $(PURE_OBJ)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  TEST    $@")
	$(Q)$(CC) $(CFLAGS) $(TEST_DEFS) -Isupervisor $(LDFLAGS) -o $@ $(filter %.c %.o,$^) -lcmocka -linih \
		-ljansson -lm $(TEST_LIBS)

-include tests/fixtures/fixtures.mk

fixtures: $(FIXTURE_BINS)

test: deps-check $(UNIT_BINS)
	@fail=0; for t in $(UNIT_BINS); do $$t || fail=1; done; \
	if [ $$fail = 1 ]; then echo "unit tests FAILED"; exit 1; fi

# The shim frame decoder under libFuzzer (clang), briefly: it must not crash.
FUZZ_SECONDS ?= 10
$(B)/fuzz/fuzz_wire: tests/fuzz/fuzz_wire.c $(WIRE_SRC) preload/wire.h supervisor/control/wiredec.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  FUZZ    $@")
	$(Q)clang -std=gnu11 -g -O1 -D_GNU_SOURCE -Isupervisor \
		-fsanitize=fuzzer,address,undefined -o $@ tests/fuzz/fuzz_wire.c $(WIRE_SRC)

# The model API parsers, which read what any upstream sends.
$(B)/fuzz/fuzz_llm: tests/fuzz/fuzz_llm.c $(LLM_SRC) supervisor/llm/llm.h supervisor/llm/api.h \
		supervisor/llm/steer.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  FUZZ    $@")
	$(Q)clang -std=gnu11 -g -O1 -D_GNU_SOURCE -Isupervisor \
		-fsanitize=fuzzer,address,undefined -o $@ tests/fuzz/fuzz_llm.c \
		$(LLM_SRC) -ljansson

# What lgrun writes from names it does not choose: JSON and terminal text.
$(B)/fuzz/fuzz_text: tests/fuzz/fuzz_text.c supervisor/lib/json.c \
		supervisor/lib/termtext.c supervisor/lib/json.h supervisor/lib/termtext.h \
		supervisor/egress/head.c supervisor/egress/egress.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  FUZZ    $@")
	$(Q)clang -std=gnu11 -g -O1 -D_GNU_SOURCE -Isupervisor \
		-fsanitize=fuzzer,address,undefined -o $@ tests/fuzz/fuzz_text.c \
		supervisor/lib/json.c supervisor/lib/termtext.c supervisor/egress/head.c

# zstd request bodies (Codex), decoded and read by the parsers.
$(B)/fuzz/fuzz_zbody: tests/fuzz/fuzz_zbody.c supervisor/proxy/zbody.c \
		supervisor/proxy/zbody.h $(LLM_SRC) supervisor/llm/llm.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  FUZZ    $@")
	$(Q)clang -std=gnu11 -g -O1 -D_GNU_SOURCE -Isupervisor \
		-fsanitize=fuzzer,address,undefined -o $@ tests/fuzz/fuzz_zbody.c \
		supervisor/proxy/zbody.c $(LLM_SRC) -ljansson -lzstd

# Websocket frames (Codex), reassembled and read by the parsers.
$(B)/fuzz/fuzz_ws: tests/fuzz/fuzz_ws.c supervisor/proxy/wsframe.c \
		supervisor/proxy/wsframe.h $(LLM_SRC) supervisor/llm/llm.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  FUZZ    $@")
	$(Q)clang -std=gnu11 -g -O1 -D_GNU_SOURCE -Isupervisor \
		-fsanitize=fuzzer,address,undefined -o $@ tests/fuzz/fuzz_ws.c \
		supervisor/proxy/wsframe.c $(LLM_SRC) -ljansson -lwslay

# The path resolver and the path globs (any path a process passes).
$(B)/fuzz/fuzz_path: tests/fuzz/fuzz_path.c supervisor/seccomp/pathres.c supervisor/lib/glob.c \
		supervisor/seccomp/pathres.h supervisor/lib/glob.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  FUZZ    $@")
	$(Q)clang -std=gnu11 -g -O1 -D_GNU_SOURCE -Isupervisor \
		-fsanitize=fuzzer,address,undefined -o $@ tests/fuzz/fuzz_path.c \
		supervisor/seccomp/pathres.c supervisor/lib/glob.c

# The shim's HTTP, JSON-RPC and TLS recognisers, endpoint patterns, SQL.
$(B)/fuzz/fuzz_recog: tests/fuzz/fuzz_recog.c preload/recog.c preload/recog.h \
		preload/sql.c preload/sql.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  FUZZ    $@")
	$(Q)clang -std=gnu11 -g -O1 -D_GNU_SOURCE -Isupervisor -Ipreload \
		-fsanitize=fuzzer,address,undefined -o $@ tests/fuzz/fuzz_recog.c \
		preload/recog.c preload/sql.c

# The config loader (any file a user writes).
FUZZ_CONFIG_SRC := $(CONFIG_SRC) supervisor/lib/log.c supervisor/lib/clock.c supervisor/lib/text.c \
	supervisor/proxy/routes.c supervisor/lib/canon.c supervisor/lib/glob.c supervisor/guard/classify.c \
	supervisor/guard/event.c supervisor/lib/termtext.c preload/recog.c \
	supervisor/guard/verdict.c supervisor/lib/error.c supervisor/guard/cli.c preload/sql.c
$(B)/fuzz/fuzz_config: tests/fuzz/fuzz_config.c $(FUZZ_CONFIG_SRC) supervisor/config/config.h \
		supervisor/config/config_int.h supervisor/config/kinds.def supervisor/lib/error.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  FUZZ    $@")
	$(Q)clang -std=gnu11 -g -O1 -D_GNU_SOURCE -Isupervisor -Ipreload \
		-DLG_SYSCONFDIR='"$(LG_CONFDIR)"' -DLG_VERSION='"$(VERSION)"' \
		-fsanitize=fuzzer,address,undefined -o $@ tests/fuzz/fuzz_config.c \
		$(FUZZ_CONFIG_SRC) -linih -ljansson -lm

# The archives' index (any file the tree writes under an archive's name).
$(B)/fuzz/fuzz_archive: tests/fuzz/fuzz_archive.c supervisor/provenance/archive.c \
		supervisor/provenance/archive.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  FUZZ    $@")
	$(Q)clang -std=gnu11 -g -O1 -D_GNU_SOURCE -Isupervisor \
		-fsanitize=fuzzer,address,undefined -o $@ tests/fuzz/fuzz_archive.c \
		supervisor/provenance/archive.c $(ARCHIVE_LIBS)

FUZZERS := wire llm text zbody ws path recog config archive
FUZZ_BINS := $(addprefix $(B)/fuzz/fuzz_,$(FUZZERS))

# Each fuzzer for FUZZ_SECONDS (10) on its committed corpus
# (tests/fuzz/corpus/NAME) and seeds; make check runs this.
fuzz: $(FUZZ_BINS)
	@B=$(B) bash tests/fuzz/run.sh $(FUZZ_SECONDS) $(FUZZERS)

# An hour each (FUZZ_LONG_SECONDS), the new inputs merged into the
# committed corpora (minimized): commit tests/fuzz/corpus afterwards.
FUZZ_LONG_SECONDS ?= 3600
fuzz-long: $(FUZZ_BINS)
	@B=$(B) bash tests/fuzz/run.sh --merge $(FUZZ_LONG_SECONDS) $(FUZZERS)

integration: all fixtures
	@B=$(B) bash tests/integration/run.sh

# Every include crosses only into what HACKING.md's map lets its folder
# include from (tests/layers/check.py reads the map's table).
layers:
	@python3 tests/layers/check.py

# docs/configuration.md: docs/configuration.md.in with its @KEYS@ line
# replaced by the key reference man/ini2md.awk makes from conf/lgrun.ini
# (the source of lgrun.ini(5) too). `make docs` writes it; docs-check fails
# when the page checked in is not what it would write, and checks every
# relative link and #anchor of README.md, HACKING.md and docs/*.md.
DOCS_CONFIG = awk -f man/inikey.awk -f man/ini2md.awk conf/lgrun.ini | \
	awk 'NR == FNR { keys = keys $$0 "\n"; next } \
	     /^@KEYS@$$/ { printf "%s", keys; next } { print }' - docs/configuration.md.in

docs:
	@$(DOCS_CONFIG) >docs/configuration.md.tmp && mv docs/configuration.md.tmp docs/configuration.md
	@echo "docs: docs/configuration.md made from conf/lgrun.ini"

docs-check:
	@mkdir -p $(B)
	@$(DOCS_CONFIG) >$(B)/configuration.md
	@if ! cmp -s $(B)/configuration.md docs/configuration.md; then \
		diff -u docs/configuration.md $(B)/configuration.md | head -20; \
		echo "docs-check: docs/configuration.md is stale: run 'make docs'"; exit 1; fi
	@python3 tests/docs/links.py

# The regression corpus: legitimate workloads must pass, runaways must be
# stopped (tests/corpus/README.md).
corpus: all fixtures
	@B=$(B) bash tests/corpus/run.sh

# The runaways again in observe mode: each would-trip in its recording,
# replayed, is a stop with the expected reason (what-if = what happens).
corpus-observe: all fixtures
	@B=$(B) bash tests/corpus/run.sh --observe runaway/

# Integration tests whose work crosses lgrun's threads (notify thread and
# main loop, the proxy's and the egress proxy's threads, the observer's
# loader, the store used from the guard's thread, the control socket's
# kills; the observer's loader runs in every one of them). Not
# t_flow_nested: a ThreadSanitizer lgrun writes files of its own, which the
# no-work rule it checks counts as work; not t_bpf: its observer does not
# load before a short session ends at ThreadSanitizer's speed.
TSAN_TESTS := t_trip_at_3 t_parallel_deletes t_uffd_hang t_same_target \
	t_proxy t_proxy_concurrent t_proxy_detectors t_proxy_withhold \
	t_egress_proxy t_store_redis t_shim_mcp t_shim_catalog \
	t_flow_a2a t_budget_timeout t_budget_processes t_watch_output \
	t_stop_and_end t_agent_claude t_quarantine t_top t_replay \
	t_flood t_supervisor_death
TSAN_LOG := $(CURDIR)/$(B)/tsan

ifeq ($(SANITIZE),thread)
check: deps-check
	@$(MAKE) --no-print-directory all fixtures
	@$(MAKE) --no-print-directory test
	@rm -rf $(TSAN_LOG) && mkdir -p $(TSAN_LOG)
	@TSAN_OPTIONS="log_path=$(TSAN_LOG)/report second_deadlock_stack=1" \
		B=$(B) bash tests/integration/run.sh \
		$(addprefix tests/integration/,$(addsuffix .sh,$(TSAN_TESTS)))
	@if ls $(TSAN_LOG)/report* >/dev/null 2>&1; then \
		grep -h -A12 '^WARNING' $(TSAN_LOG)/report* | head -80; \
		echo "tsan: reports in $(TSAN_LOG)"; exit 1; fi
	@echo "tsan: no report from $(words $(TSAN_TESTS)) integration tests"
else
# Ends with its total time and every test that was skipped, with why.
check: export LG_SKIPS := $(CURDIR)/$(B)/check.skips
check: deps-check
	@mkdir -p $(B) && : >$(LG_SKIPS) && date +%s >$(B)/check.start
	@$(MAKE) --no-print-directory all fixtures
	@$(MAKE) --no-print-directory test
	@$(MAKE) --no-print-directory layers
	@$(MAKE) --no-print-directory docs-check
	@if command -v npm >/dev/null 2>&1; then $(MAKE) --no-print-directory agents || true; \
	else echo "agents: no npm: the real agent CLIs' tests skip"; fi
	@$(MAKE) --no-print-directory integration
	@$(MAKE) --no-print-directory corpus
	@$(MAKE) --no-print-directory corpus-observe
	@$(MAKE) --no-print-directory load
	@$(MAKE) --no-print-directory fuzz
	@$(MAKE) --no-print-directory format-check
	@t=$$(( $$(date +%s) - $$(cat $(B)/check.start) )); \
	n=$$(grep -c . $(LG_SKIPS)); \
	echo "make check: passed in $$((t / 60))m$$((t % 60))s; $$n test(s) skipped$$([ $$n = 0 ] || echo :)"; \
	sed 's/^/  skipped: /' $(LG_SKIPS)
endif

# LOAD_SESSIONS (100) sessions at once, mixed workloads, a summary line.
load: all
	@B=$(B) bash tests/load/run.sh

demo: deps-check all
	@bash tests/demo.sh

# The real agent CLIs (Claude Code, Codex, gemini-cli) from npm, pinned, in
# ${LGRUN_AGENTS_DIR:-~/.cache/lgrun/agents}; their integration tests skip
# without them. A failed install says why and does not fail (--strict would).
agents:
	@bash tests/agents/install.sh

bench: deps-check all fixtures
	@bash bench/run.sh

FORMAT_FILES = $(shell git ls-files '*.c' '*.h' 2>/dev/null)

format:
	clang-format -i $(FORMAT_FILES)

format-check:
	@out=$$(clang-format --dry-run $(FORMAT_FILES) 2>&1); \
	if [ -n "$$out" ]; then echo "$$out" | head -20; \
	echo "format-check: run 'make format'"; exit 1; fi; \
	echo "format-check: ok"

# Rebuilt every time: the config directory is compiled in.
install: $(BINS) $(SHIM) $(PROXYLIB) $(TLSLIB) $(if $(HAVE_BPF),$(BPFLIB)) \
		$(B)/man/lgrun.ini.5
	rm -rf $(B)/install
	env CFLAGS='$(CFLAGS_GIVEN)' $(MAKE) --no-print-directory B=$(B)/install \
		LG_CONFDIR=$(SYSCONFDIR) $(B)/install/bin/lgrun $(B)/install/bin/lgctl
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(SYSCONFDIR)/profiles \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(LIBDIR)
	install -m 755 $(SHIM) $(PROXYLIB) $(TLSLIB) $(if $(HAVE_BPF),$(BPFLIB)) \
		$(DESTDIR)$(LIBDIR)/
	install -m 755 $(B)/install/bin/lgrun $(B)/install/bin/lgctl $(DESTDIR)$(BINDIR)/
	install -m 644 conf/lgrun.ini $(DESTDIR)$(SYSCONFDIR)/lgrun.ini
	install -m 644 conf/profiles/*.ini $(DESTDIR)$(SYSCONFDIR)/profiles/
	install -m 644 man/lgrun.1 man/lgctl.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 644 $(B)/man/lgrun.ini.5 $(DESTDIR)$(MANDIR)/man5/

# A Debian package (debian/, debhelper), built from a copy of the source
# tree so the tree stays clean: $(B)/deb/lgrun_$(VERSION)-1_amd64.deb.
DEB_DIR = $(abspath $(B))/deb
deb:
	rm -rf $(DEB_DIR) && mkdir -p $(DEB_DIR)/src/lgrun-$(VERSION)
	git ls-files -z --cached --others --exclude-standard | \
		tar -cf - --null -T - | tar -xf - -C $(DEB_DIR)/src/lgrun-$(VERSION)
	cd $(DEB_DIR)/src/lgrun-$(VERSION) && \
		env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL dpkg-buildpackage -us -uc -b \
		>$(DEB_DIR)/src/build.log 2>&1 || { tail -30 $(DEB_DIR)/src/build.log; exit 1; }
	mv $(DEB_DIR)/src/lgrun_$(VERSION)-1_* $(DEB_DIR)/
	@echo "lgrun: $$(ls $(DEB_DIR)/*.deb)"

clean:
	rm -rf build build-san build-tsan build-dev

-include $(shell find $(B) -name '*.d' 2>/dev/null)
