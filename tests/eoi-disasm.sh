#!/bin/bash
# Compare the machine code of the Rust x2APIC EOI (rust_apic_msr_eoi) with C's
# native_apic_msr_eoi() compiled out of line (apic_eoi_c_reference_msr) in the same vmlinux.
# Fails unless both are the same instruction sequence. Prints both disassemblies. Then the
# same for KVM's paravirtual EOI: Rust (rust_kvm_guest_apic_eoi_write) beside C's.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
vmlinux=${VMLINUX:-${BUILD:-$top/build}/out/x86_64/vmlinux}
objdump=/usr/lib/llvm-22/bin/llvm-objdump

syms=$("$objdump" -t "$vmlinux")
# Instructions of one symbol, by its address and size: mnemonic and operands, without addresses.
insns() {
	local addr size
	read -r addr size < <(awk -v s="$1" '$NF == s { print $1, $(NF-1); exit }' <<<"$syms") || true
	[ -n "$addr" ] || return 0
	"$objdump" -d --no-show-raw-insn --no-leading-addr \
		--start-address=0x$addr --stop-address="$(printf '0x%x' $((16#$addr + 16#$size)))" \
		"$vmlinux" |
		sed -n '/^<'"$1"'>:/,/^$/p' | sed '1d;/^$/d' |
		sed 's/^[[:space:]]*//; s/[[:space:]]\+/ /g; s/0x[0-9a-f]\{16\} //' |
		awk '!/^(int3|nop)/'
}

rust=$(insns rust_apic_msr_eoi)
c=$(insns apic_eoi_c_reference_msr)
echo "== rust_apic_msr_eoi ($(echo "$rust" | wc -l) instructions)"
echo "$rust"
echo "== native_apic_msr_eoi, out of line ($(echo "$c" | wc -l) instructions)"
echo "$c"
if [ -z "$rust" ] || [ "$rust" != "$c" ]; then
	echo "eoi-disasm: FAIL: the Rust x2APIC EOI differs from C's"
	exit 1
fi
echo "eoi-disasm: PASS: same $(echo "$rust" | wc -l) instructions"

# KVM's paravirtual EOI (with CONFIG_KVM_GUEST): the Rust one beside C's, compiled out of line
# (kvm_guest_apic_eoi_write_c_reference). The test and clear must stay one non-LOCK btr on the
# per-CPU word; Rust may take one jmp more than C (below).
if grep -q ' rust_kvm_guest_apic_eoi_write$' <<<"$syms"; then
	rust=$(insns rust_kvm_guest_apic_eoi_write)
	c=$(insns kvm_guest_apic_eoi_write_c_reference)
	echo "== rust_kvm_guest_apic_eoi_write ($(echo "$rust" | wc -l) instructions)"
	echo "$rust"
	echo "== kvm_guest_apic_eoi_write, out of line ($(echo "$c" | wc -l) instructions)"
	echo "$c"
	btr=$(echo "$rust" | grep -c '^btr' || true)
	if [ "$btr" -ne 1 ] || echo "$rust" | grep -q '^lock'; then
		echo "eoi-disasm: FAIL: the Rust PV EOI is not one non-LOCK btr ($btr)"
		exit 1
	fi
	# C branches on the carry straight into the native EOI's static call (a conditional tail
	# call); rustc does not fold a tail call into an asm goto label, so Rust has one jmp more
	# on the path that does the APIC EOI (the path that then exits to the host anyway), the
	# same count on the path that skips it. More than that fails.
	if [ "$(echo "$rust" | wc -l)" -gt $(($(echo "$c" | wc -l) + 1)) ]; then
		echo "eoi-disasm: FAIL: the Rust PV EOI takes more than one instruction more than C's"
		exit 1
	fi
	echo "eoi-disasm: PASS: PV EOI, one btr, $(echo "$rust" | wc -l) instructions (C: $(echo "$c" | wc -l))"
else
	echo "eoi-disasm: FAIL: no rust_kvm_guest_apic_eoi_write (CONFIG_KVM_GUEST off?)"
	exit 1
fi
