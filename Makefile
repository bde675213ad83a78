# SPDX-License-Identifier: GPL-2.0
#
# Developer loop for the Rust genirq overlay on Debian's linux-source-7.3.
# `make help` lists the targets.

TOP      := $(CURDIR)
BUILD    ?= $(TOP)/build
TREE     := $(BUILD)/linux
OUT      := $(BUILD)/out
ARCH     ?=
# Build targets: an architecture, or an architecture variant ARCH-VARIANT (x86_64-cmsi: the C
# posted-MSI handler). A target T is configured from tests/kunit/common.kunitconfig,
# tests/kunit/ARCH.kunitconfig and, if present, tests/kunit/T.target.kunitconfig.
ARCHES   := $(if $(ARCH),$(ARCH),x86_64 arm64 x86_64-cmsi)
BOOT_ARCHES = $(filter-out %-cmsi,$(ARCHES))
JOBS     ?= $(shell nproc)

# Toolchain pins: Debian's Rust 1.96 and LLVM 19, whatever rustup puts first in PATH.
LLVM_BIN := /usr/lib/llvm-19/bin
export PATH := $(TOP)/tests/qemu/bin:$(LLVM_BIN):/usr/bin:$(TOP)/tools/bin:$(PATH)
export LIBCLANG_PATH := /usr/lib/llvm-19/lib
KMAKE_VARS := LLVM=1 \
	RUSTC=/usr/bin/rustc HOSTRUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc \
	RUSTFMT=/usr/bin/rustfmt CLIPPY_DRIVER=/usr/bin/clippy-driver \
	BINDGEN=$(TOP)/tools/bin/bindgen
KMAKE = $(MAKE) -C $(TREE) $(KMAKE_VARS) -j$(JOBS)
KUNIT = cd $(TREE) && python3 tools/testing/kunit/kunit.py
KUNIT_MAKE_OPTS := $(foreach v,$(KMAKE_VARS),--make_options $(v))

.PHONY: help deps tree build config test kunit boot bench run clippy fmt fmtcheck doc series checkpatch clean distclean kmake

help:
	@echo "make deps       install toolchain, QEMU 10 and bindgen (idempotent)"
	@echo "make build      assemble build/linux and build the kernels ([ARCH=x86_64|arm64])"
	@echo "make test       KUnit in QEMU plus boot tests, both architectures ([ARCH=...])"
	@echo "make kunit      KUnit only;  make boot: boot tests only"
	@echo "make run        boot into a busybox shell ([ARCH=arm64])"
	@echo "make bench      posted-MSI benchmarks, Rust vs C, under QEMU -icount"
	@echo "make clippy | fmt | fmtcheck | doc | series | checkpatch | clean | distclean"

deps:
	@bash scripts/deps.sh

tree:
	@bash scripts/assemble.sh

# kunit.py writes .kunitconfig-derived .config and builds; `build` is the same step as the
# first half of `test`, so `make build && make test` builds once.
config build: tree
	@set -e; for t in $(ARCHES); do \
		a=$${t%%-*}; echo "== build $$t"; mkdir -p $(OUT); \
		extra=; [ ! -f $(TOP)/tests/kunit/$$t.target.kunitconfig ] || \
			extra=--kunitconfig=$(TOP)/tests/kunit/$$t.target.kunitconfig; \
		$(KUNIT) build --arch=$$a --build_dir=$(OUT)/$$t --jobs=$(JOBS) \
			--kunitconfig=$(TOP)/tests/kunit/common.kunitconfig \
			--kunitconfig=$(TOP)/tests/kunit/$$a.kunitconfig $$extra \
			--qemu_config=$(TOP)/tests/qemu/$$a.py $(KUNIT_MAKE_OPTS); \
	done

kunit: build
	@bash tests/run-kunit.sh $(ARCHES)

boot: build
	@bash tests/boot/boot-test.sh $(BOOT_ARCHES)

test: build
	@bash tests/run-kunit.sh $(ARCHES); k=$$?; \
	 bash tests/boot/boot-test.sh $(BOOT_ARCHES); b=$$?; \
	 echo "== make test: kunit rc=$$k boot rc=$$b"; \
	 test $$k -eq 0 -a $$b -eq 0

# Posted-MSI benchmarks, Rust vs C, under -icount (needs the x86_64 and x86_64-cmsi builds).
bench: ARCHES := x86_64 x86_64-cmsi
bench: build
	@bash tests/bench/posted-msi.sh

run: ARCHES := $(if $(ARCH),$(ARCH),x86_64)
run: build
	@bash tests/boot/run.sh $(ARCHES)

clippy: tree
	@for a in $(BOOT_ARCHES); do $(KMAKE) ARCH=$$a O=$(OUT)/$$a CLIPPY=1 vmlinux || exit 1; done

fmt: tree
	@bash scripts/rustfmt.sh fix

fmtcheck: tree
	@bash scripts/rustfmt.sh check

doc: tree
	@for a in $(BOOT_ARCHES); do $(KMAKE) ARCH=$$a O=$(OUT)/$$a rustdoc || exit 1; \
		echo "rustdoc: $(OUT)/$$a/Documentation/output/rust/rustdoc/kernel/index.html"; done

series: tree
	@rm -rf $(BUILD)/series
	@git -C $(TREE) format-patch -q --base=base -o $(BUILD)/series base..overlay
	@ls $(BUILD)/series

# Prints every finding; fails on errors (warnings, e.g. "does MAINTAINERS need updating?", pass).
checkpatch: series
	@cd $(TREE) && for p in $(BUILD)/series/*.patch; do \
		perl scripts/checkpatch.pl -q --terse $$p; done | tee $(BUILD)/checkpatch.log; \
	 ! grep -q ': ERROR:' $(BUILD)/checkpatch.log

clean:
	rm -rf $(OUT)

distclean:
	rm -rf $(BUILD)

# Run kernel make targets in an already configured build directory, e.g.
# `make kmake ARCH=x86_64 T=prepare` (T defaults to vmlinux).
T ?= vmlinux
kmake: tree
	@for a in $(ARCHES); do $(KMAKE) ARCH=$$a O=$(OUT)/$$a $(T) || exit 1; done
