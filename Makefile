# SPDX-License-Identifier: GPL-2.0
# coarse_stat_fs. Run "make help" for the targets.

KDIR ?= /lib/modules/$(shell uname -r)/build
B := build
SUITE ?=
# check-all: the oldest supported, the current stable and the newest Debian kernel.
SUITES ?= bookworm trixie trixie-backports

CFLAGS ?= -O2 -g
CSF_CFLAGS := -std=gnu11 -Wall -Wextra -pthread $(if $(WERROR),-Werror)
LDLIBS := -pthread -lm
ifeq ($(STATIC),1)
LDFLAGS += -static
endif
KBUILD_FLAGS := W=1 $(if $(WERROR),KCFLAGS=-Werror)

HEADERS := include/uapi/coarse_stat_fs.h lib/coarse_stat_fs.h
PROGS := tools/csfcat $(B)/eventloop

.DEFAULT_GOAL := all

include tests/Makefile

all: user ## Build the module (against KDIR) and all user-space programs
	@$(MAKE) --no-print-directory module

user: $(PROGS) $(TEST_BINS) ## Build the user-space programs only (no kernel headers needed)

tools/csfcat: tools/csfcat.c $(HEADERS)
	$(CC) $(CSF_CFLAGS) $(CFLAGS) $(CPPFLAGS) $(LDFLAGS) -o $@ $< $(LDLIBS)

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

test-modules: ## Build the harness self-test module (tests/selftest) against KDIR
	$(MAKE) -C $(KDIR) M=$(CURDIR)/tests/selftest $(KBUILD_FLAGS) modules

# Each compiler and language the library promises to build with, warning-free.
LIB_CHECKS := gcc:c11 clang:c11 g++:c++11 clang++:c++11 g++:c++17

lib-check: ## Compile the library as C11 and C++ with gcc and clang, -Wall -Wextra -Werror
	@tests/debian/deps.sh lib
	@for cl in $(LIB_CHECKS); do \
		cc=$${cl%%:*}; std=$${cl#*:}; lang=c; \
		case $$std in c++*) lang=c++ ;; esac; \
		echo "  $$cc -std=$$std"; \
		$$cc -x $$lang -std=$$std -Wall -Wextra -Werror -fsyntax-only tests/lib_compile.c \
			|| exit 1; \
	done

check: ## Run the tests in a VM: this kernel if possible, else Debian's (SUITE=...)
	@tests/check.sh $(SUITE)

check-all: ## Run the tests on every suite in SUITES (oldest, stable, newest kernel)
	@tests/check-all.sh $(SUITES)

debian: ## Run the tests on one Debian kernel: make debian SUITE=bookworm
	@[ -n "$(SUITE)" ] || { echo "make debian SUITE=<bookworm|trixie|trixie-backports|sid>"; exit 2; }
	tests/debian/run.sh $(SUITE)

selftest: ## Show that the harness catches a warning, a panic, a failed test and a hang
	tests/debian/selftest.sh $(or $(SUITE),trixie)

demo: ## Boot a kernel in a VM, load the module and show what it offers
	tests/demo.sh $(SUITE)

clean: ## Remove build output (the cached Debian environments stay)
	rm -rf $(B) tools/csfcat
	for d in kmod tests/selftest; do \
		rm -f $$d/*.o $$d/*.ko $$d/*.mod $$d/*.mod.c $$d/.*.cmd $$d/Module.symvers \
			$$d/modules.order; \
	done

help: ## List the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | \
		awk -F':.*## ' '{ printf "  %-14s %s\n", $$1, $$2 }'
	@echo "Variables: KDIR (kernel build dir), SUITE, SUITES, STATIC=1, WERROR=1"

.PHONY: all user module test-modules lib-check check check-all debian selftest demo clean help
