#!/bin/bash
# Boot test: boot each ARCH's kernel to userspace with 2 CPUs and check, from the console log,
# that both CPUs are online and that interrupts flow: /proc/interrupts is read twice around some
# load, and the timer, IPI and (x86_64) virtio MSI-X counts must be non-zero and rising. On x86_64
# it also checks x2APIC and interrupt remapping in x2APIC mode (xAPIC in the idle=poll boot), the
# VT-d remapping domain that runs (intel_ir=rust or c: the chips of the virtio MSI-X and of the
# serial's IO-APIC line, an MSI-X moved to CPU1 and back under I/O, no remapping fault reported by
# QEMU or the guest), the Rust EOI's machine code, and
# runs the posted-MSI load generator (samples/rust/rust_posted_msi_load.rs) at boot, once with
# each posted-MSI implementation (posted_msi=rust and posted_msi=c), and the IPI storm
# (samples/rust/rust_ipi_storm.rs, 3 x 2000 cross-CPU calls CPU0 -> CPU1, 50 us apart) in those
# two boots, where CPU1 idles with HLT (at least 95 % of the calls must take the function-call
# IPI), and in a third boot with idle=poll (at least 95 % of the calls that found CPU1 idle must
# go without one, CPU1's CAL count agreeing).
#
# arm64 boots eight times: with each GICv3 driver of the one kernel (irqchip.gicv3=rust, the
# default, and irqchip.gicv3=c), each on the virt machine with the GIC's ITS (tests/qemu/arm64.args;
# on the Rust root the Rust ITS, and once more the C ITS with irqchip.gicv3_its=c), the Rust root
# without it (its=off, tests/qemu/arm64-itsoff.args), on a GICv4 (gic-version=4,
# tests/qemu/arm64-gicv4.args: the redistributors' four frames, the C ITS's vPE table and GICv4
# support on the driver's root), and on ACPI
# (tests/qemu/arm64-acpi.args: Debian's AAVMF UEFI firmware boots the uncompressed Image with
# acpi=force; the GIC, its redistributors and the ITS come from the MADT, the ITS's device IDs
# from the IORT; no pl061 power key, which is ACPI's Generic Event Device there). Each boot checks, for the driver asked
# for: the root handler it installed and its split EOI/Deactivate mode (the kernel enters at EL2);
# the arch timer and IPIs rising, also on CPU1 after it went offline and back; virtio-rng's
# interrupt non-zero and rising (MSI-X through the ITS, or with its=off INTx on a GIC SPI) and
# /dev/hwrng still delivering; an SPI (uart-pl011) moved to CPU1 and to CPU0 with smp_affinity,
# injected through debugfs and counted on the target CPU only, effective_affinity following; the
# pl061 GPIO's chained handler: QEMU's power key (GPIO 3) pressed from the host over QMP
# (tests/boot/qmp-powerkey.py, system_powerdown) when the guest asks, its GPIO interrupt counted;
# a short round of the GICv3 benchmark sample (samples/rust/rust_gic_bench.rs: SGIs to self,
# a spare SPI injected 100 times, each counted); and no kernel splat. tests/boot/init runs the guest side, tests/boot/check-boot.py checks.
#
# arm64 then boots four more times, briefly (irqrs.gicselect=1 in tests/boot/init: /proc/interrupts
# around a short load), for the choice of the GICv3 driver (irq-gic-v3-select.c), each on the
# default irqchip.gicv3=rust and checked by check-boot.py's check_gic_select(), three of them on the
# virt machine's device tree edited by tests/boot/gic-dtb.py (dumped with QEMU's dumpdtb, compiled
# with dtc: $DTC, else the kernel build's scripts/dtc/dtc, else dtc from PATH):
# - gic-pppart: a "ppi-partitions" node and 4-cell specifiers, the timer's PPIs naming the
#   partition: the C driver with the shim's line why, the timer, IPIs and virtio MSI-X rising;
# - gic-smallgicr: a redistributor region 32 KiB short of the last redistributor: the Rust probe's
#   bounds error (EINVAL) before it programmed the GIC, then the C driver, which boots;
# - gic-badgicd: the distributor's reg on the PCIe ECAM (GICD_PIDR2 all ones): the Rust probe's
#   ENODEV, then the C driver's probe (which fails too: the machine has no GIC there, and the boot
#   is stopped once that is logged);
# - gic-nolpi: irqchip.gicv3_nolpi=1 on the Rust driver: no ITS, virtio's INTx on a GIC SPI.
#
# Logs: build/out/TARGET/boot.log (x86_64 posted_msi=rust; arm64 irqchip.gicv3=rust with the ITS),
# boot-c.log (posted_msi=c; irqchip.gicv3=c), on x86_64 boot-idlepoll.log, and on arm64
# boot-itsoff.log, boot-itsc.log, boot-acpi.log, boot-c-acpi.log, boot-gicv4.log,
# boot-c-gicv4.log and boot-gic-NAME.log (beside its gic-NAME.dtb);
# beside each arm64 log its QMP transcript, NAME-qmp.log. Before the first boot of a TARGET,
# every log that its boots will write is removed: no log of an earlier run is read as this one's.
#
# Usage: tests/boot/boot-test.sh TARGET... (an ARCH, or ARCH-VARIANT built in build/out/TARGET)
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
out=${BUILD:-$top/build}/out
rc=0
qmpdir=$(mktemp -d)
trap 'rm -rf "$qmpdir"' EXIT
gic_names=${GIC_NAMES:-pppart smallgicr badgicd nolpi}

# The boots of an ARCH: IMPL[:VARIANT] (see below).
boots_of() {
	case $1 in
	x86_64) echo "rust c rust:idlepoll" ;;
	arm64) echo "rust c rust:itsoff rust:itsc rust:acpi c:acpi rust:gicv4 c:gicv4" ;;
	*) echo - ;;
	esac
}

# The console log of boot IMPL[:VARIANT] of TARGET: boot[-IMPL unless rust][-VARIANT].log.
boot_log() {
	local impl=${2%%:*} variant=- log=$out/$1/boot
	[ "$2" = "${2#*:}" ] || variant=${2#*:}
	[ "$impl" = - ] || [ "$impl" = rust ] || log=$log-$impl
	[ "$variant" = - ] || log=$log-$variant
	echo "$log.log"
}

# Remove the logs that the boots of TARGET will write (only those), before the first.
remove_logs() {
	local target=$1 arch=${1%%-*} boot log name
	for boot in $(boots_of "$arch"); do
		log=$(boot_log "$target" "$boot")
		rm -f "$log" "${log%.log}-qmp.log"
	done
	case $arch in
	arm64) for name in $gic_names; do rm -f "$out/$target/boot-gic-$name.log"; done ;;
	x86_64) rm -f "$out/$target/boot-balance.log" ;;
	esac
}

# The GICv3 driver-selection boots of arm64 TARGET (see above).
gic_select_boots() {
	local target=$1 r=0 name mode append log dtb pid dtc=${DTC:-}
	local machine=() args=()
	# The kernel build's own dtc first (CONFIG_DTC, selected by OF_FLATTREE), so that no host
	# package is needed; then the host's (device-tree-compiler).
	[ -n "$dtc" ] || [ ! -x "$out/$target/scripts/dtc/dtc" ] || dtc=$out/$target/scripts/dtc/dtc
	[ -n "$dtc" ] || dtc=$(command -v dtc || echo dtc)
	mapfile -t machine < <(grep -v '^$' "$top/tests/qemu/arm64.args")
	for name in $gic_names; do
		log=$out/$target/boot-gic-$name.log
		append="irqrs.gicselect=1 irqchip.gicv3=rust"
		case $target in *-kasan) append="$append no5lvl";; esac
		case $name in
		pppart) mode=ppi-partitions ;;
		smallgicr) mode=small-gicr ;;
		badgicd) mode=bad-gicd ;;
		*) mode= append="$append irqchip.gicv3_nolpi=1" ;;
		esac
		echo "== boot $target irqchip.gicv3=rust gic-$name"
		args=()
		if [ -n "$mode" ]; then
			dtb=$out/$target/gic-$name.dtb
			if ! /usr/bin/qemu-system-aarch64 "${machine[@]}" -machine dumpdtb="$dtb.base" \
				-nographic -nodefaults >/dev/null 2>&1 ||
			   ! DTC=$dtc python3 "$top/tests/boot/gic-dtb.py" "$mode" "$dtb.base" "$dtb"; then
				echo "boot-test: gic-$name: cannot make the device tree (dtc: $dtc)"
				r=1
				continue
			fi
			args=(-dtb "$dtb")
		fi
		if [ "$name" = badgicd ]; then
			# Neither driver finds a distributor: the kernel goes on without interrupts and
			# never reaches user space. Stop it once the C driver's probe has said so.
			# earlycon: the console driver never probes without interrupts, so the probe
			# lines come out only through the early console (the device tree's stdout-path).
			MACHINE=arm64 APPEND="$append earlycon" timeout 180 \
				bash "$top/tests/boot/qemu.sh" "$target" "${args[@]}" </dev/null >"$log" 2>&1 &
			pid=$!
			# (Or once the timer is probed, after the interrupt controllers: C never came.)
			while kill -0 "$pid" 2>/dev/null &&
			      ! grep -qE 'GICv3: [^ ]+: no distributor detected|arch_timer:' "$log"; do
				sleep 0.5
			done
			sleep 2
			kill "$pid" 2>/dev/null
			wait "$pid" 2>/dev/null
		else
			MACHINE=arm64 APPEND="$append" timeout "${BOOT_TIMEOUT:-600}" \
				bash "$top/tests/boot/qemu.sh" "$target" "${args[@]}" </dev/null >"$log" 2>&1 ||
				{ echo "boot-test: QEMU exited $? (log: $log)"; r=1; }
		fi
		python3 "$top/tests/boot/check-boot.py" "$target" "$log" rust "gic-$name" || r=1
	done
	return $r
}

for target in "$@"; do
	arch=${target%%-*}
	remove_logs "$target"
	# x86_64 boots three times: with the Rust and with the C posted-MSI handling and VT-d
	# interrupt remapping (posted_msi=rust intel_ir=rust, the defaults; posted_msi=c intel_ir=c),
	# in x2APIC mode, and once more with Rust's, idle=poll, in xAPIC mode; the posted-MSI load
	# generator and the IPI storm run during boot, checked by check-boot.py.
	# arm64 boots eight times: each GICv3 driver (irqchip.gicv3=rust, the default, and c), with
	# the ITS (on the Rust root each ITS driver), without it (its=off), on ACPI (UEFI,
	# acpi=force), and on a GICv4.
	for boot in $(boots_of "$arch"); do
		impl=${boot%%:*} variant=-
		[ "$boot" = "${boot#*:}" ] || variant=${boot#*:}
		log=$(boot_log "$target" "$boot")
		append="irqrs.boottest=1"
		machine=${MACHINE:-$arch}
		qemu_args=()
		helper=
		# KASAN kernels run with 4-level paging: see tests/run-kunit.sh.
		case $target in *-kasan) append="$append no5lvl";; esac
		case $arch in
		x86_64)
			# The Rust or the C implementation of both posted MSIs and VT-d interrupt
			# remapping (posted_msi=, intel_ir=).
			label="$target posted_msi=$impl intel_ir=$impl"
			append="$append posted_msi=$impl intel_ir=$impl rust_posted_msi_load.run=1 rust_posted_msi_load.msis=5000 rust_posted_msi_load.reps=4"
			# The IPI storm, CPU0 -> CPU1, 50 us between calls so that CPU1 is back in its idle
			# loop for each: with the halting idle nearly every call takes an IPI, with
			# idle=poll nearly none does.
			append="$append rust_ipi_storm.run=1 rust_ipi_storm.calls=2000 rust_ipi_storm.rounds=3 rust_ipi_storm.delay_us=50"
			# idle=poll boots the xAPIC machine (interrupt remapping's 8-bit destinations)
			# with pci=nomsi: virtio-rng's INTx, a level-triggered IO-APIC line remapped;
			# and with threadirqs: the device handlers in threads (ONESHOT).
			if [ "$variant" = idlepoll ]; then
				append="$append idle=poll pci=nomsi threadirqs"
				label="$label idle=poll xAPIC pci=nomsi threadirqs"
				machine=x86_64-xapic
			fi
			;;
		arm64)
			label="$target irqchip.gicv3=$impl"
			# A short round of the GICv3 benchmark sample: SGIs to self and injected SPIs,
			# every SPI counted by its handler.
			append="$append irqchip.gicv3=$impl rust_gic_bench.run=1 rust_gic_bench.iters=50 rust_gic_bench.reps=2"
			# And its threaded benchmark: a ONESHOT threaded SPI on CPU1, 2 rounds of 50 ms,
			# every interrupt handled once by its thread (the strict flow on the Rust driver).
			append="$append rust_gic_bench.threaded_ms=50"
			# The Rust driver boots with threadirqs: every device handler is then a ONESHOT
			# thread, the SPIs' ones on the strict flow (masked by their active state).
			if [ "$impl" = rust ]; then
				append="$append threadirqs"
				label="$label threadirqs"
			fi
			if [ "$variant" = itsoff ]; then
				machine=arm64-itsoff
				label="$label its=off"
			fi
			# The C ITS on the Rust root, by the switch.
			if [ "$variant" = itsc ]; then
				append="$append irqchip.gicv3_its=c"
				label="$label irqchip.gicv3_its=c"
			fi
			# QEMU's gic-version=4, a GICv4.0: the ITS driver's vPEs on the driver's root.
			if [ "$variant" = gicv4 ]; then
				machine=arm64-gicv4
				label="$label GICv4"
			fi
			# UEFI (Debian's AAVMF) loads the uncompressed Image and hands it the ACPI
			# tables; acpi=force makes the kernel take them over the device tree. The power
			# key is then the Generic Event Device's, not the pl061's; the GICv3 benchmark
			# sample finds its spare SPIs through the device tree, so it does not run.
			if [ "$variant" = acpi ]; then
				machine=arm64-acpi
				label="$label ACPI"
				append="${append/rust_gic_bench.run=1/} acpi=force irqrs.nopowerkey=1"
			fi
			# The host presses the power key over QMP when the guest asks for it.
			sock=$qmpdir/qmp.sock
			rm -f "$sock"
			qemu_args=(-qmp "unix:$sock,server=on,wait=off")
			# The ITS's MOVI commands, traced by QEMU into the console log (stderr): each
			# smp_affinity move of an LPI must be one (check-boot.py).
			[ "$variant" = itsoff ] || qemu_args+=(-trace gicv3_its_cmd_movi)
			: >"$log"
			python3 "$top/tests/boot/qmp-powerkey.py" "$log" "$sock" \
				"${log%.log}-qmp.log" "${BOOT_TIMEOUT:-600}" &
			helper=$!
			;;
		*) label=$target ;;
		esac
		echo "== boot $label"
		kernel=
		[ "$variant" != acpi ] || kernel=arch/arm64/boot/Image
		KERNEL=$kernel MACHINE=$machine APPEND="$append" timeout "${BOOT_TIMEOUT:-600}" \
			bash "$top/tests/boot/qemu.sh" "$target" "${qemu_args[@]}" \
			</dev/null >"$log" 2>&1
		r=$?
		if [ -n "$helper" ]; then
			# It leaves by itself once it sees the end of the test (not if the guest died).
			for _ in 1 2 3 4 5 6 7 8 9 10; do
				kill -0 "$helper" 2>/dev/null && sleep 0.1
			done
			kill "$helper" 2>/dev/null
			wait "$helper" 2>/dev/null
		fi
		[ $r -eq 0 ] || { echo "boot-test: QEMU exited $r (log: $log)"; rc=1; }
		python3 "$top/tests/boot/check-boot.py" "$target" "$log" "$impl" "$variant" || rc=1
	done
	if [ "$arch" = arm64 ]; then
		gic_select_boots "$target" || rc=1
	fi
	if [ "$arch" = x86_64 ]; then
		VMLINUX=$out/$target/vmlinux bash "$top/tests/eoi-disasm.sh" || rc=1
		# The Rust balancer on 4 CPUs (two packages of one core with two SMT threads) of 6, the
		# third package isolated (isolcpus=4-5: the housekeeping checks run) and CPU4 posting
		# the load, every 500 ms, with the balancer load sample: 16 s, heavy and light swapped
		# at 8 s.
		log=$out/$target/boot-balance.log
		echo "== boot $target balance (4 CPUs of 6, irqbalance.rust=1)"
		# tsc=reliable: TCG's vCPUs fail the TSC sync check, and an unstable TSC turns off the
		# interrupt time accounting that the balancer weighs loads by.
		append="irqrs.balancetest=1 irqrs.balancer=rust irqbalance.rust=1 irqbalance.interval_ms=500"
		append="$append tsc=reliable"
		append="$append rust_irq_balance_load.run=1 rust_irq_balance_load.background=1"
		append="$append rust_irq_balance_load.seconds=16"
		append="$append isolcpus=4-5 rust_irq_balance_load.agent_cpu=4"
		case $target in *-kasan) append="$append no5lvl";; esac
		MACHINE=x86_64-smp6 APPEND="$append" timeout "${BOOT_TIMEOUT:-600}" \
			bash "$top/tests/boot/qemu.sh" "$target" </dev/null >"$log" 2>&1 ||
			{ echo "boot-test: QEMU exited $? (log: $log)"; rc=1; }
		timing=
		case $target in *-kasan) timing=notiming;; esac
		python3 "$top/tests/boot/check-balance.py" "$target balance" "$log" $timing || rc=1
	fi
done
exit $rc
