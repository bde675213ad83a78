# SPDX-License-Identifier: GPL-2.0
#
# Developer loop for the Rust genirq overlay on Debian's linux-source-7.3.
# `make help` lists the targets.

TOP      := $(CURDIR)
BUILD    ?= $(TOP)/build
TREE     := $(BUILD)/linux
OUT      := $(BUILD)/out
ARCH     ?=
# Build targets: one kernel per architecture. A target T is configured from
# tests/kunit/common.kunitconfig, tests/kunit/ARCH.kunitconfig and, if present,
# tests/kunit/T.target.kunitconfig. Rust-or-C comparisons are boot-time switches of the same
# kernel (posted_msi=rust|c).
ARCHES   := $(if $(ARCH),$(ARCH),x86_64 arm64)
BOOT_ARCHES = $(ARCHES)
JOBS     ?= $(shell nproc)

# Toolchain pins: Debian's Rust 1.96 and LLVM 22 (the same LLVM as rustc 1.96, which
# CONFIG_RUST_INLINE_HELPERS needs), whatever rustup puts first in PATH.
LLVM_BIN := /usr/lib/llvm-22/bin
export PATH := $(TOP)/tests/qemu/bin:$(LLVM_BIN):/usr/bin:$(TOP)/tools/bin:$(PATH)
export LIBCLANG_PATH := /usr/lib/llvm-22/lib
# The C side goes through ccache (Debian's, installed by `make deps`): CC and HOSTCC are its
# clang-22 masquerade link, one word, since kbuild also hands HOSTCC to rustc as the linker of
# host Rust programs. `make KCC=clang` builds without it. The cache is ccache's own default
# (~/.cache/ccache, or $$CCACHE_DIR): shared by every clone and build directory and bounded by
# ccache's max_size. Paths under TOP are hashed relative to it, so a second clone hits too.
KCC      ?= $(firstword $(wildcard /usr/lib/ccache/clang-22) clang)
export CCACHE_BASEDIR := $(TOP)
export CCACHE_NOHASHDIR := 1
# Depend mode: hash the dependency list the compiler writes (-Wp,-MMD) instead of running the
# preprocessor once more on every miss (measured: a miss costs 26 % more without it, 3 % with).
export CCACHE_DEPEND := 1
KMAKE_VARS := LLVM=1 \
	RUSTC=/usr/bin/rustc HOSTRUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc \
	RUSTFMT=/usr/bin/rustfmt CLIPPY_DRIVER=/usr/bin/clippy-driver \
	BINDGEN=$(TOP)/tools/bin/bindgen
KMAKE = $(MAKE) -C $(TREE) $(KMAKE_VARS) CC=$(KCC) HOSTCC=$(KCC) -j$(JOBS)
KUNIT = cd $(TREE) && python3 tools/testing/kunit/kunit.py
KUNIT_MAKE_OPTS := $(foreach v,$(KMAKE_VARS),--make_options $(v)) \
	--make_options CC=$(KCC) --make_options HOSTCC=$(KCC)

.PHONY: help deps tree patches build config configcheck test kunit boot compile-fail bench kasan soak workload run clippy fmt fmtcheck doc series checkpatch build-each distro-build deb deb-test clean distclean kmake

help:
	@echo "make deps       install toolchain, QEMU 10 and bindgen (idempotent)"
	@echo "make build      assemble build/linux, build the kernels ([ARCH=x86_64|arm64])"
	@echo "make tree       assemble build/linux only;  make patches: write its commits back"
	@echo "                to patches/ and the overlay files (docs/testing.md)"
	@echo "make test       KUnit in QEMU plus boot tests, both architectures ([ARCH=...])"
	@echo "make kunit      KUnit only ([SUITES=GLOB]);  make boot: boot tests only"
	@echo "make compile-fail  modules that must not build (module ownership), x86_64"
	@echo "make run        boot into a busybox shell ([ARCH=arm64] [APPEND=...])"
	@echo "make bench      posted-MSI, IPI storm, GICv3 and interrupt balancer benchmarks"
	@echo "make kasan      the x86_64 tests on a KASAN kernel ([ARCH=arm64]: arm64's)"
	@echo "make workload   Debian's fio, iperf3, stress-ng, irqbalance on NVMe, virtio,"
	@echo "                AHCI, CPU hotplug, Rust vs C ([ARCH=...]; WL_* below)"
	@echo "make soak       the posted-MSI soak: 1,000,000 MSIs, 10 CPU hotplug cycles"
	@echo "make build-each [EACH=...]  build vmlinux at each commit of the series, both"
	@echo "                architectures ([ARCH=...]; needs make build first)"
	@echo "make distro-build  the series with Debian's own config + irq_rs.config: vmlinux"
	@echo "                and the directories it changes ([ARCH=...]; long, not in make test)"
	@echo "make deb [DEB_CONFIG=test|debian]  Debian packages of the kernel and the status"
	@echo "                tool in build/out/deb/ARCH-CONFIG/;  make deb-test: install them into"
	@echo "                the workload root filesystem with dpkg and boot them ([ARCH=x86_64|arm64])"
	@echo "make kmake T=...  kernel make targets in a configured build directory"
	@echo "make clippy | fmt | fmtcheck | doc | series | checkpatch | clean | distclean"
	@echo
	@echo "Environment (make VAR=VALUE, or exported) [default]:"
	@echo "  ARCH           x86_64 or arm64: one architecture [both]"
	@echo "  BUILD          build directory, an absolute path [build/ of this checkout]"
	@echo "  JOBS           parallel jobs of the kernel builds [nproc]"
	@echo "  KCC            the kernels' C compiler [/usr/lib/ccache/clang-22, or clang]"
	@echo "  EACH           make build-each: series positions [all]"
	@echo "  DEB_CONFIG     make deb: test or debian [test]"
	@echo "  T              make kmake: kernel make targets [vmlinux]"
	@echo "  SUITES         KUnit: kunit.py filter glob SUITE[.CASE]; only the expected"
	@echo "                 suites it selects must pass, e.g. 'rust_irq_balance*' [all]"
	@echo "  KUNIT_BOOTS    KUnit: the boots, each \"default\" or kernel arguments"
	@echo "                 [default threadirqs; arm64 also irqchip.gicv3=c]"
	@echo "  KUNIT_TIMEOUT  KUnit: seconds per kunit.py run [1500; make soak: 3600]"
	@echo "  BOOT_TIMEOUT   boot test: seconds per boot [600]"
	@echo "  GIC_NAMES      boot test, arm64: the GICv3 driver-choice boots"
	@echo "                 [pppart smallgicr badgicd nolpi]"
	@echo "  DTC            boot test, arm64: their dtc [the kernel build's, else dtc]"
	@echo "  APPEND         make run: extra kernel command-line words [none]"
	@echo "  MACHINE        make run, boot test: tests/qemu/MACHINE.args [ARCH]"
	@echo "  KERNEL         make run: the image in build/out/ARCH [bzImage, Image.gz]"
	@echo "  INITRD         make run: another initramfs [the busybox one, built]"
	@echo "  INITRAMFS_IRQBALANCE  1: Debian's irqbalance in the x86_64 initramfs [0]"
	@echo "  BENCH_TRIALS   make bench: boots per way, every bench [5]"
	@echo "  BENCH_TIMEOUT  make bench: seconds per boot [900]"
	@echo "  BENCH_MSIS     posted MSIs: MSIs per load point, SMP boots [10000]"
	@echo "  BENCH_IPI_CALLS  IPI storm: calls per round [10000]"
	@echo "  BENCH_ITS_N, BENCH_ITS_ROUNDS, BENCH_ITS_BOOTS  ITS bench: writes per loop,"
	@echo "                 rounds of the loops, boots per way [100, 30, 3]"
	@echo "  BENCH_IR_N, BENCH_IR_ROUNDS, BENCH_IR_BOOTS  VT-d remapping bench: the same"
	@echo "                 [100, 20, 3]"
	@echo "  BENCH_GIC_ITERS, BENCH_GIC_REPS  GICv3, icount boots: interrupts per"
	@echo "                 round, rounds [200, 16]"
	@echo "  BENCH_GIC_THREADED_ICOUNT_MS, BENCH_GIC_THREADED_MS  GICv3 threaded"
	@echo "                 benchmark, ms per round: icount, SMP boots [20, 200]"
	@echo "  BENCH_BALANCE_SECONDS  balancers: seconds of load [30]"
	@echo "  BENCH_BALANCE_WAYS     balancers compared [none oneshot daemon rust]"
	@echo "  BENCH_BALANCE_RUST_ARGS  more kernel arguments of the Rust way [none]"
	@echo "  BENCH_BALANCE_DELAY_MS   load start after boot, ms [8000]"
	@echo "  BENCH_BALANCE_STRETCH    balancers: rates divided, handler times multiplied [10]"
	@echo "  BENCH_BALANCE_CHECK_ONLY balancers, 1: read the last logs again, boot nothing"
	@echo "  SOAK_POSTS, SOAK_CYCLES  make soak: MSIs, CPU1 hotplug cycles [1000000, 10]"
	@echo "  WL_SECS        make workload: seconds of load per boot [60]"
	@echo "  WL_IOS         make workload: I/Os per disk in the icount boots [20000]"
	@echo "  WL_WAYS        make workload: the ways to boot, a subset [all]"
	@echo "  WL_TIMEOUT     make workload: seconds per boot [900]"
	@echo "  WL_CHECK_ONLY  make workload, 1: check the last logs again, boot nothing"
	@echo "Set by make and the scripts (give them to run a script by hand): BENCH_TARGET,"
	@echo "BENCH_GIC_TARGET, VMLINUX, KMAKE, KMAKE_VARS. In full: docs/testing.md."

deps:
	@bash scripts/deps.sh

tree:
	@bash scripts/assemble.sh

# Write build/linux's commits (base..HEAD) back to patches/ and the overlay files: the way an
# edit made in build/linux (a fixup, a new patch, a reworded message) comes home.
patches:
	@bash scripts/assemble.sh --export

# kunit.py writes .kunitconfig-derived .config and builds; `build` is the same step as the
# first half of `test`, so `make build && make test` builds once. Every target but ARCH-bench
# carries the debug options of tests/kunit/debug.kunitconfig (lockdep, atomic-sleep checks, Rust
# debug assertions); ARCH-workload adds tests/kunit/workload.kunitconfig, every other target
# tests/kunit/noblock.kunitconfig (no block layer).
# kunit.py's arguments for target $$t (architecture $$a): its kunitconfig fragments.
KUNITCONFIGS = extra=; [ ! -f $(TOP)/tests/kunit/$$t.target.kunitconfig ] || \
		extra=--kunitconfig=$(TOP)/tests/kunit/$$t.target.kunitconfig; \
	case $$t in *-bench) ;; *) extra="$$extra --kunitconfig=$(TOP)/tests/kunit/debug.kunitconfig";; esac; \
	case $$t in *-workload) extra="$$extra --kunitconfig=$(TOP)/tests/kunit/workload.kunitconfig";; \
		*) extra="$$extra --kunitconfig=$(TOP)/tests/kunit/noblock.kunitconfig";; esac; \
	kconfigs="--kunitconfig=$(TOP)/tests/kunit/common.kunitconfig \
		--kunitconfig=$(TOP)/tests/kunit/$$a.kunitconfig $$extra"

config build: tree
	@set -e; for t in $(ARCHES); do \
		a=$${t%%-*}; echo "== build $$t"; mkdir -p $(OUT); \
		$(KUNITCONFIGS); \
		$(KUNIT) build --arch=$$a --build_dir=$(OUT)/$$t --jobs=$(JOBS) $$kconfigs \
			--qemu_config=$(TOP)/tests/qemu/$$a.py $(KUNIT_MAKE_OPTS); \
	done

# Every kernel the README documents must at least configure: `make test` configures the bench and
# KASAN kernels too (kunit.py config: no build, seconds each), so that a kunitconfig change for the
# test kernels cannot leave `make bench` or `make kasan` refusing its configuration unnoticed; and
# each architecture's defconfig with the distribution fragment irq_rs.config, every option of the
# fragment kept.
CONFIG_TARGETS := $(foreach a,$(ARCHES),$(a)-bench $(a)-kasan)
configcheck: tree
	@set -e; for t in $(CONFIG_TARGETS); do \
		a=$${t%%-*}; echo "== configure $$t"; mkdir -p $(OUT); \
		$(KUNITCONFIGS); \
		$(KUNIT) config --arch=$$a --build_dir=$(OUT)/$$t $$kconfigs \
			--qemu_config=$(TOP)/tests/qemu/$$a.py $(KUNIT_MAKE_OPTS) >$(OUT)/$$t-config.log 2>&1 || \
			{ cat $(OUT)/$$t-config.log; echo "configcheck: $$t does not configure" >&2; exit 1; }; \
	done
	@set -e; for t in $(ARCHES); do \
		a=$${t%%-*}; s=$$a; [ $$a != x86_64 ] || s=x86; f=$(TREE)/arch/$$s/configs/irq_rs.config; \
		echo "== configure $$a defconfig + irq_rs.config"; \
		$(KMAKE) -s O=$(OUT)/$$a-distro ARCH=$$a defconfig irq_rs.config \
			>$(OUT)/$$a-distro-config.log 2>&1 || { cat $(OUT)/$$a-distro-config.log; \
			echo "configcheck: $$a defconfig + irq_rs.config does not configure" >&2; exit 1; }; \
		grep '^CONFIG_' $$f | while read -r o; do grep -qx "$$o" $(OUT)/$$a-distro/.config || \
			{ echo "configcheck: $$o of irq_rs.config lost on $$a defconfig" >&2; exit 1; }; done; \
	done

# The knobs of `make help`'s Environment (SUITES, KUNIT_BOOTS, BOOT_TIMEOUT, BENCH_*, WL_*, ...)
# reach the scripts through the environment: make exports variables given on its command line.
kunit: build
	@bash tests/run-kunit.sh $(ARCHES)

boot: build
	@bash tests/boot/boot-test.sh $(BOOT_ARCHES)

# Compile-fail tests (tests/compile-fail/): loadable modules built against the x86_64 test kernel
# that must not compile (a module naming the kernel image as the owner of its code), and a control
# that must. One rustc run per case, seconds in all; `make test` runs them with an x86_64 kernel.
COMPILE_FAIL = KMAKE="$(MAKE) $(KMAKE_VARS) CC=$(KCC) HOSTCC=$(KCC) -j$(JOBS)" \
	bash tests/compile-fail.sh $(OUT)/x86_64 x86_64
compile-fail: ARCHES := x86_64
compile-fail: build
	@$(COMPILE_FAIL)

test: configcheck build
	@bash tests/run-kunit.sh $(ARCHES); k=$$?; \
	 bash tests/boot/boot-test.sh $(BOOT_ARCHES); b=$$?; \
	 c=0; case " $(ARCHES) " in *" x86_64 "*) $(COMPILE_FAIL) || c=1;; esac; \
	 bash tests/check-gic-unsafe.sh || c=1; \
	 python3 scripts/subseries.py $(TREE) || c=1; \
	 echo "== make test: kunit rc=$$k boot rc=$$b compile-fail/unsafe rc=$$c"; \
	 test $$k -eq 0 -a $$b -eq 0 -a $$c -eq 0

# Benchmarks, Rust vs C, each a set of boots of one kernel: posted MSIs (posted_msi=rust|c, x86_64)
# and the GICv3 driver (irqchip.gicv3=rust|c, arm64); and the IPI storm (x86_64, halting idle vs
# idle=poll). The bench kernels are the test kernels
# without the debug options (build/out/ARCH-bench). `make bench ARCH=x86_64|arm64` runs one.
# The interrupt balancers' comparison (none, irqbalance --oneshot, the irqbalance daemon, the
# Rust balancer) boots the x86_64 test kernel, which has CONFIG_IRQ_TIME_ACCOUNTING.
bench: ARCHES := $(if $(ARCH),$(ARCH)-bench,x86_64-bench arm64-bench)
bench: build
	@rc=0; for t in $(ARCHES); do case $$t in \
		x86_64-bench) BENCH_TARGET=$$t bash tests/bench/posted-msi.sh || rc=1; \
			BENCH_TARGET=$$t bash tests/bench/ipistorm.sh || rc=1; \
			BENCH_TARGET=$$t bash tests/bench/intremap.sh || rc=1; \
			$(MAKE) --no-print-directory build ARCH=x86_64 && \
			BENCH_TARGET=x86_64 bash tests/bench/balance.sh || rc=1;; \
		arm64-bench) BENCH_GIC_TARGET=$$t bash tests/bench/gic.sh || rc=1; \
			BENCH_GIC_TARGET=$$t bash tests/bench/its.sh || rc=1;; \
	esac; done; exit $$rc

# The x86_64 test kernel with KASAN as well (build/out/x86_64-kasan): KUnit, plain and with
# threadirqs, and the boot test. Not part of `make test` (see the budget in docs/times.md).
kasan: ARCHES := $(if $(ARCH),$(ARCH)-kasan,x86_64-kasan)
kasan: build
	@bash tests/run-kunit.sh $(ARCHES); k=$$?; \
	 bash tests/boot/boot-test.sh $(ARCHES); b=$$?; \
	 echo "== make kasan: kunit rc=$$k boot rc=$$b"; \
	 test $$k -eq 0 -a $$b -eq 0

# The posted-MSI soak at full size on the x86_64 test kernel (make test runs it at 200,000 posts
# and 3 hotplug cycles): SOAK_POSTS, SOAK_CYCLES.
soak: ARCHES := x86_64
soak: build
	@bash tests/soak.sh

# Real workloads (tests/workload/run.sh): the workload kernels (build/out/ARCH-workload, the test
# kernel plus the block layer, NVMe, virtio-blk/net, IPv4 and namespaces: workload.kunitconfig)
# running Debian 12's own fio, iperf3, stress-ng and irqbalance from an initramfs. Not part of
# `make test` (two more kernels: see the budget in docs/times.md).
workload: ARCHES := $(if $(ARCH),$(ARCH)-workload,x86_64-workload arm64-workload)
workload: build
	@bash tests/workload/run.sh $(ARCHES)

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

# The whole series with its cover letter (patches/cover-letter.txt: first line the subject, then
# the text; git adds the shortlog, the diffstat and base-commit) in build/series/all/, and each
# sub-series of patches/subseries, checked to apply to the base with only its prerequisites, with
# its own cover letter (patches/covers/NAME.txt), in build/series/NAME/.
series: tree
	@rm -rf $(BUILD)/series
	@GIT_AUTHOR_NAME="IRQ-RS Developers" GIT_AUTHOR_EMAIL=irq-rs@localhost \
		GIT_COMMITTER_NAME="IRQ-RS Developers" GIT_COMMITTER_EMAIL=irq-rs@localhost \
		git -C $(TREE) format-patch -q --cover-letter --base=base -o $(BUILD)/series/all base..overlay
	@python3 scripts/cover-letter.py $(BUILD)/series/all/0000-cover-letter.patch patches/cover-letter.txt
	@python3 scripts/subseries.py $(TREE) --write $(BUILD)/series
	@ls -d $(BUILD)/series/*

# checkpatch --strict on every patch of the series; prints every finding and fails on errors
# (warnings and checks, e.g. "does MAINTAINERS need updating?", pass: docs/testing.md says which
# remain and why).
checkpatch: series
	@cd $(TREE) && for p in $(BUILD)/series/all/*.patch; do \
		case $$p in */0000-cover-letter.patch) continue;; esac; \
		perl scripts/checkpatch.pl -q --strict --terse $$p; done | tee $(BUILD)/checkpatch.log; \
	 ! grep -q ': ERROR:' $(BUILD)/checkpatch.log

clean:
	rm -rf $(OUT)

distclean:
	rm -rf $(BUILD)

# Build vmlinux at each commit of the series, on each architecture (ARCH=... for one): EACH lists
# series positions, by default all of them. Not part of `make test`: about an hour on the slow
# machine class (docs/times.md).
EACH ?=
build-each: tree
	@ARCHES="$(ARCHES)" KMAKE_VARS="$(KMAKE_VARS) CC=$(KCC) HOSTCC=$(KCC)" JOBS=$(JOBS) \
		bash scripts/build-each.sh $(EACH)

# The series with Debian's own kernel configuration (linux-config-7.3 at the base's version) and
# irq_rs.config: vmlinux and every directory the series changes (scripts/distro-build.sh), on
# both architectures (ARCH=... for one). Not part of `make test` (docs/times.md).
distro-build: tree
	@ARCHES="$(ARCHES)" KMAKE_VARS="$(KMAKE_VARS) CC=$(KCC) HOSTCC=$(KCC)" JOBS=$(JOBS) \
		bash scripts/distro-build.sh $(ARCHES)

# Debian packages of the kernel (`make bindeb-pkg`) and of the status tool, in
# build/out/deb/ARCH-CONFIG/
# (scripts/deb.sh): DEB_CONFIG=test, the test kernel with modules (x86_64 unless ARCH=...), or
# DEB_CONFIG=debian, Debian's configuration with irq_rs.config (after make distro-build).
# make deb-test installs the test packages (x86_64, or ARCH=arm64) into the workload root
# filesystem with dpkg and boots them (tests/deb/check.sh).
DEB_CONFIG ?= test
deb: ARCHES := $(if $(ARCH),$(ARCH),x86_64)
deb: $(if $(filter test,$(DEB_CONFIG)),build,tree)
	@for a in $(ARCHES); do KMAKE_VARS="$(KMAKE_VARS) CC=$(KCC) HOSTCC=$(KCC)" JOBS=$(JOBS) \
		bash scripts/deb.sh $$a $(DEB_CONFIG) || exit 1; done

deb-test: ARCHES := $(if $(ARCH),$(ARCH),x86_64)
deb-test:
	@for a in $(ARCHES); do bash tests/deb/check.sh $$a || exit 1; done

# Run kernel make targets in an already configured build directory, e.g.
# `make kmake ARCH=x86_64 T=prepare` (T defaults to vmlinux).
T ?= vmlinux
kmake: tree
	@for a in $(ARCHES); do $(KMAKE) ARCH=$$a O=$(OUT)/$$a $(T) || exit 1; done
