#!/bin/bash
# Boot test: boot each ARCH's kernel to userspace with 2 CPUs and check, from the console log,
# that both CPUs are online and that interrupts flow: /proc/interrupts is read twice around some
# load, and the timer, IPI and (x86_64) virtio MSI-X counts must be non-zero and rising. On x86_64
# it also checks x2APIC and interrupt remapping in x2APIC mode, the Rust EOI's machine code, and
# runs the posted-MSI load generator (samples/rust/rust_posted_msi_load.rs) at boot, once with
# each posted-MSI implementation (posted_msi=rust and posted_msi=c).
#
# Usage: tests/boot/boot-test.sh TARGET... (an ARCH, or ARCH-VARIANT built in build/out/TARGET)
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
out=${BUILD:-$top/build}/out
rc=0

for target in "$@"; do
	arch=${target%%-*}
	# x86_64 boots twice, with each posted-MSI implementation (posted_msi=rust, the default, and
	# posted_msi=c); the posted-MSI load generator runs during boot, checked by check-boot.py.
	impls=-
	[ "$arch" != x86_64 ] || impls="rust c"
	for impl in $impls; do
		log=$out/$target/boot.log
		append="irqrs.boottest=1"
		# KASAN kernels run with 4-level paging: see tests/run-kunit.sh.
		case $target in *-kasan) append="$append no5lvl";; esac
		if [ "$impl" != - ]; then
			[ "$impl" = rust ] || log=$out/$target/boot-$impl.log
			append="$append posted_msi=$impl rust_posted_msi_load.run=1 rust_posted_msi_load.msis=5000 rust_posted_msi_load.reps=4"
		fi
		label=$target; [ "$impl" = - ] || label="$target posted_msi=$impl"
		echo "== boot $label"
		APPEND="$append" timeout "${BOOT_TIMEOUT:-600}" \
			bash "$top/tests/boot/qemu.sh" "$target" </dev/null >"$log" 2>&1
		r=$?
		[ $r -eq 0 ] || { echo "boot-test: QEMU exited $r (log: $log)"; rc=1; }
		python3 "$top/tests/boot/check-boot.py" "$target" "$log" "$impl" || rc=1
	done
	if [ "$arch" = x86_64 ]; then
		VMLINUX=$out/$target/vmlinux bash "$top/tests/eoi-disasm.sh" || rc=1
	fi
done
exit $rc
