# SPDX-License-Identifier: GPL-2.0
# coarse_stat_fs. Run "make help" for the targets.

VERSION := 0.1.0
KDIR ?= /lib/modules/$(shell uname -r)/build
B := build
# A cross build of the user-space programs, as the kernel names it: make user
# CROSS_COMPILE=aarch64-linux-gnu- STATIC=1 (Debian: gcc-aarch64-linux-gnu, libc6-dev-arm64-cross)
# builds with aarch64-linux-gnu-gcc. Into build/ and tools/csfcat, as the guest's staging
# (tests/harness/stage-guest.sh) expects; B=build/aarch64-linux-gnu puts it, csfcat included,
# in a folder of its own and leaves this machine's build alone.
CROSS_COMPILE ?=
ifneq ($(CROSS_COMPILE),)
CC := $(CROSS_COMPILE)gcc
endif
# csfcat: in tools/ for this machine's build (host-check, lint, install use it there), in $(B)
# for any other.
CSFCAT := $(if $(filter build,$(B)),tools/csfcat,$(B)/csfcat)
SUITE ?=
# check-all: the oldest supported, the current stable (and its PREEMPT_RT flavour) and the
# newest Debian kernel.
SUITES ?= bookworm trixie trixie-rt trixie-backports

CFLAGS ?= -O2 -g
CSF_CFLAGS := -std=gnu11 -Wall -Wextra -pthread $(if $(WERROR),-Werror)
LDLIBS := -pthread -lm
ifeq ($(STATIC),1)
LDFLAGS += -static
endif
KBUILD_FLAGS := W=1 $(if $(WERROR),KCFLAGS=-Werror)

HEADERS := include/uapi/coarse_stat_fs.h lib/coarse_stat_fs.h
PROGS := $(CSFCAT) $(B)/eventloop

# Installation (make install): DESTDIR is a staging root, PREFIX where things live in it.
PREFIX ?= /usr/local
BINDIR := $(PREFIX)/bin
INCLUDEDIR := $(PREFIX)/include
MANDIR := $(PREFIX)/share/man
PKGCONFIGDIR := $(PREFIX)/share/pkgconfig
UNITDIR := $(PREFIX)/lib/systemd/system
MODLOADDIR := $(PREFIX)/lib/modules-load.d
SYSCONFDIR := /etc
UNITS := csfcat-slices.service csfcat-mem.service
DKMS_SRC := /usr/src/coarse_stat_fs-$(VERSION)
KVER = $(shell sed -n 's/^\#define UTS_RELEASE "\(.*\)"/\1/p' $(KDIR)/include/generated/utsrelease.h)

.DEFAULT_GOAL := all

include tests/Makefile

all: user ## Build the module (against KDIR) and all user-space programs
	@$(MAKE) --no-print-directory module

user: $(PROGS) $(TEST_BINS) ## Build the user-space programs only (no kernel headers needed)

# csfcat: csfcat.c dispatches, each capability has a csfcat_NAME.c, json.c writes --json, prom.c
# --prometheus; util.c holds what it shares with the tests (TOOLS_SRCS, tests/Makefile).
CSFCAT_SRCS := $(sort $(wildcard tools/csfcat*.c)) tools/json.c tools/prom.c $(TOOLS_SRCS)

$(CSFCAT): $(CSFCAT_SRCS) $(wildcard tools/*.h) $(HEADERS) | $(B)
	$(CC) $(CSF_CFLAGS) $(CFLAGS) $(CPPFLAGS) $(LDFLAGS) -o $@ $(CSFCAT_SRCS) $(LDLIBS)

$(B)/eventloop: examples/eventloop.c $(HEADERS) | $(B)
	$(CC) $(CSF_CFLAGS) $(CFLAGS) $(CPPFLAGS) $(LDFLAGS) -o $@ $< $(LDLIBS)

$(B):
	mkdir -p $@

module: ## Build kmod/coarse_stat_fs.ko against KDIR
	@if [ ! -f "$(KDIR)/Makefile" ]; then \
		echo "No kernel headers in $(KDIR)."; \
		echo "  Debian/Ubuntu: sudo apt-get install linux-headers-$$(uname -r)" \
			"(Debian's linux-headers-amd64 tracks the current kernel)"; \
		echo "  Another kernel: make KDIR=/path/to/its/build/directory"; \
		echo "'make check' does not need them: it builds and tests in a Debian VM."; \
		exit 1; \
	fi
	$(MAKE) -C $(KDIR) M=$(CURDIR)/kmod $(KBUILD_FLAGS) modules

test-modules: ## Build the harness self-test module (tests/harness/selftest) against KDIR
	$(MAKE) -C $(KDIR) M=$(CURDIR)/tests/harness/selftest $(KBUILD_FLAGS) modules

# Each compiler and language the library promises to build with, warning-free.
LIB_CHECKS := gcc:c11 clang:c11 g++:c++11 clang++:c++11 g++:c++17

# Then for arm64 (scripts/lib-check-arm64.sh): the cross compilers, the counter read's isb, and
# the host tests under qemu-aarch64.
lib-check: ## Compile the library as C11 and C++ with gcc and clang, -Werror; no CPUID in it; arm64 too
	@tests/debian/deps.sh lib
	@fails=0; for cl in $(LIB_CHECKS); do \
		cc=$${cl%%:*}; std=$${cl#*:}; lang=c; \
		case $$std in c++*) lang=c++ ;; esac; \
		if $$cc -x $$lang -std=$$std -Wall -Wextra -Werror -fsyntax-only tests/user/lib_compile.c; \
		then echo "PASS lib-$$cc-$$std"; else echo "FAIL lib-$$cc-$$std"; fails=1; fi; \
	done; \
	mkdir -p $(B); \
	for cc in gcc clang; do for o in -O0 -O2; do \
		obj=$(B)/lib-check$$o-$$cc.o; \
		if ! $$cc $$o -c tests/user/lib_compile.c -o $$obj; then \
			echo "FAIL lib-no-cpuid-$$cc$$o (does not compile)"; fails=1; \
		elif objdump -d $$obj | grep -qE "\scpuid(\s|$$)"; then \
			echo "FAIL lib-no-cpuid-$$cc$$o (CPUID faults under rr, ARCH_SET_CPUID)"; fails=1; \
		else echo "PASS lib-no-cpuid-$$cc$$o"; fi; \
	done; done; \
	scripts/lib-check-arm64.sh || fails=1; exit $$fails

host-btf: ## Test the module's BTF reader here: this machine's BTF, broken blobs
	@tests/harness/host-check.sh btf_host

lint: ## Run every static check (scripts/lint.sh); fails on any finding
	@tests/debian/deps.sh lint host deb
	@scripts/lint.sh

lint-selftest: ## Show that lint fails on a planted style, clang-tidy and shellcheck finding
	@tests/debian/deps.sh lint
	@scripts/lint-selftest.sh

format: ## Reformat all C code in place with clang-format (.clang-format)
	git ls-files '*.c' '*.h' | xargs clang-format -i

compdb: ## Write compile_commands.json and kmod/compile_commands.json for clangd
	@tests/debian/deps.sh compdb
	@scripts/compdb.sh

host-check: ## Run the host tests natively (no VM, no root): tests/harness/host-check.sh
	@tests/harness/host-check.sh

# The host tests first: a broken formatter or parser fails in seconds, before any guest boots.
check: host-check ## Run the host tests, then the tests in a VM: this kernel if possible, else Debian's (SUITE=..., T=...)
	@T='$(T)' tests/harness/check.sh $(SUITE)

check-all: host-check ## Run the host tests, then the tests on every suite in SUITES (oldest, stable, newest kernel)
	@tests/harness/check-all.sh $(SUITES)

debian: ## Run the tests on one Debian kernel: make debian SUITE=bookworm
	@[ -n "$(SUITE)" ] || { echo "make debian SUITE=<bookworm|trixie|trixie-rt|trixie-backports|trixie-arm64|trixie-backports-arm64|sid|debug>"; exit 2; }
	tests/debian/run.sh $(SUITE)

# The reliability suite (docs/reliability.md): the debug kernel, the fuzzer, the soak.
DURATION ?= 600
SEED ?=

check-debug: ## All tests, 60 s of fuzzing and a 60 s soak on a KASAN/lockdep/kmemleak kernel
	tests/debian/run.sh debug

fuzz: ## Fuzz the module for DURATION s (default 600; SUITE=debug, SEED= replays a seed)
	CSF_FUZZ=$(DURATION) CSF_SEED=$(SEED) tests/debian/run.sh $(or $(SUITE),debug) fuzz

soak: ## Mixed load for DURATION s (default 600; SUITE=debug), checking every snapshot
	CSF_SOAK=$(DURATION) tests/debian/run.sh $(or $(SUITE),debug) soak

selftest: ## Show that the harness catches a warning, a panic, a failed test and a hang
	tests/debian/selftest.sh $(or $(SUITE),trixie)

demo: ## Boot a kernel in a VM, load the module and show what it offers
	@SUITE=$(SUITE) tests/harness/show.sh demo

bench: ## Benchmarks in a VM without memory debugging: costs per call, per switch, memory, FPU, kdamond
	@VM_DEBUG=0 VM_TCG_THREAD=$(or $(VM_TCG_THREAD),multi) VM_TIMEOUT=$(or $(VM_TIMEOUT),3000) \
		SUITE=$(SUITE) tests/harness/show.sh bench
	@# Single-threaded TCG: enabling events patches text another vCPU runs (docs/cost.md, FPU).
	@VM_DEBUG=0 VM_TCG_THREAD=$(or $(VM_TCG_THREAD),single) VM_TIMEOUT=$(or $(VM_TIMEOUT),3000) \
		SUITE=$(SUITE) tests/harness/show.sh fpu-bench
	@$(MAKE) --no-print-directory tools/csfcat && tests/bench/fpu-report-bench.sh
	@# The always-on kdamond: tuned by csfcat against DAMON_STAT, which 7.3 has (docs/mem.md).
	@VM_DEBUG=0 VM_TCG_THREAD=$(or $(VM_TCG_THREAD),multi) VM_TIMEOUT=$(or $(VM_TIMEOUT),3000) \
		SUITE=$(or $(SUITE),trixie-backports) tests/harness/show.sh mem:agree

bench-reader: user ## The library's reader on an ordinary page, on this CPU (no module needed)
	$(B)/tests/bench --reader

install: install-user module ## Install module, csfcat, man page, headers, pkg-config file, systemd units
	# Unsigned: the key the kernel was signed with is not in its headers package.
	$(MAKE) -C $(KDIR) M=$(CURDIR)/kmod INSTALL_MOD_PATH=$(DESTDIR) INSTALL_MOD_DIR=updates \
		CONFIG_MODULE_SIG_ALL= $(if $(DESTDIR),DEPMOD=true) modules_install

# Everything but the module (make deb packages the module's sources for DKMS instead). The
# services' settings are installed once: a second install keeps what an administrator changed.
install-user: tools/csfcat ## Install all but the module: csfcat, man page, headers, pkg-config, units
	install -D -m 0755 tools/csfcat $(DESTDIR)$(BINDIR)/csfcat
	install -D -m 0644 tools/csfcat.1 $(DESTDIR)$(MANDIR)/man1/csfcat.1
	install -D -m 0644 lib/coarse_stat_fs.h $(DESTDIR)$(INCLUDEDIR)/coarse_stat_fs.h
	install -D -m 0644 include/uapi/coarse_stat_fs.h \
		$(DESTDIR)$(INCLUDEDIR)/linux/coarse_stat_fs.h
	mkdir -p $(DESTDIR)$(PKGCONFIGDIR)
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' \
		-e 's|@VERSION@|$(VERSION)|' packaging/coarse_stat_fs.pc.in \
		>$(DESTDIR)$(PKGCONFIGDIR)/coarse_stat_fs.pc
	install -D -m 0644 packaging/sys-kernel-coarse_stat_fs.mount \
		$(DESTDIR)$(UNITDIR)/sys-kernel-coarse_stat_fs.mount
	for u in $(UNITS); do \
		sed 's|@BINDIR@|$(BINDIR)|g' packaging/$$u >$(DESTDIR)$(UNITDIR)/$$u || exit 1; \
	done
	[ -e $(DESTDIR)$(SYSCONFDIR)/default/csfcat ] || \
		install -D -m 0644 packaging/csfcat.default $(DESTDIR)$(SYSCONFDIR)/default/csfcat
	install -D -m 0644 packaging/coarse_stat_fs.conf $(DESTDIR)$(MODLOADDIR)/coarse_stat_fs.conf

uninstall: ## Remove what make install installed (same DESTDIR, PREFIX and KDIR)
	rm -f $(DESTDIR)$(BINDIR)/csfcat $(DESTDIR)$(MANDIR)/man1/csfcat.1 \
		$(DESTDIR)$(INCLUDEDIR)/coarse_stat_fs.h $(DESTDIR)$(INCLUDEDIR)/linux/coarse_stat_fs.h \
		$(DESTDIR)$(PKGCONFIGDIR)/coarse_stat_fs.pc \
		$(DESTDIR)$(UNITDIR)/sys-kernel-coarse_stat_fs.mount \
		$(addprefix $(DESTDIR)$(UNITDIR)/,$(UNITS)) $(DESTDIR)$(SYSCONFDIR)/default/csfcat \
		$(DESTDIR)$(MODLOADDIR)/coarse_stat_fs.conf
	rm -f $(DESTDIR)/lib/modules/$(KVER)/updates/coarse_stat_fs.ko*
	$(if $(DESTDIR),,depmod -a $(KVER))

deb: ## Debian packages (DKMS module, csfcat with its services, headers) in build/deb, lintian-clean
	scripts/deb.sh

dkms-install: ## Copy the module's sources to /usr/src, dkms add/build/install (DKMS_KERNEL=ver)
	rm -rf $(DESTDIR)$(DKMS_SRC)
	mkdir -p $(DESTDIR)$(DKMS_SRC)/kmod $(DESTDIR)$(DKMS_SRC)/include/uapi
	install -m 0644 dkms.conf $(DESTDIR)$(DKMS_SRC)/
	install -m 0644 kmod/Kbuild kmod/Makefile kmod/*.c kmod/*.h $(DESTDIR)$(DKMS_SRC)/kmod/
	install -m 0644 include/uapi/coarse_stat_fs.h $(DESTDIR)$(DKMS_SRC)/include/uapi/
	$(if $(DESTDIR),,dkms add -m coarse_stat_fs -v $(VERSION))
	$(if $(DESTDIR),,dkms install -m coarse_stat_fs -v $(VERSION) \
		$(if $(DKMS_KERNEL),-k $(DKMS_KERNEL)))

dkms-uninstall: ## Remove the module from DKMS, for every kernel, and its sources
	-$(if $(DESTDIR),,dkms remove -m coarse_stat_fs -v $(VERSION) --all)
	rm -rf $(DESTDIR)$(DKMS_SRC)

clean: ## Remove build output (the cached Debian environments stay)
	rm -rf $(B) $(CSFCAT)
	for d in kmod tests/harness/selftest; do \
		rm -f $$d/*.o $$d/*.ko $$d/*.mod $$d/*.mod.c $$d/.*.cmd $$d/Module.symvers \
			$$d/modules.order; \
	done

help: ## List the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | \
		awk -F':.*## ' '{ printf "  %-14s %s\n", $$1, $$2 }'
	@echo "Variables: KDIR (kernel build dir), SUITE, SUITES, T (tests, TEST:SCENARIO), STATIC=1, WERROR=1, DURATION, SEED,"
	@echo "  CROSS_COMPILE (make user CROSS_COMPILE=aarch64-linux-gnu-), B (build dir: B=build/aarch64-linux-gnu)"


.PHONY: all user module test-modules lib-check host-btf host-check lint lint-selftest format compdb install install-user uninstall deb dkms-install dkms-uninstall check check-all check-debug fuzz soak debian selftest demo bench bench-reader clean help
