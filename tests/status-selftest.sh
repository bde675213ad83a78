#!/bin/bash
# Self-test of scripts/irq-rs-status without a kernel: its verdicts on the console logs of the
# boot tests (tests/boot/boot-test.sh), fed through its test mode. From each log it extracts
# what the guest had: the kernel log (the console without the "@@@ ... begin/end" blocks of
# tests/boot/init and its other "@@@" lines), the last /proc/interrupts snapshot
# ("@@@ interrupts N begin/end", as check-boot.py's snapshot() reads them), /proc/cmdline
# (the "Kernel command line:" line) and, where the log has them, genirq's debugfs dumps
# ("@@@ irqdebug spi|lpi") and the balancer's debugfs state ("@@@ irqbalance state"). Each case
# runs under every shell at hand (dash, bash, busybox sh), which must agree, and with --json,
# which must parse and agree with the text. Then the tool runs on this host (no Rust kernel),
# and with bad usage.
#
# Usage: tests/status-selftest.sh (logs from build/out/{arm64,x86_64}; $BUILD as make's)
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
out=${BUILD:-$top/build}/out
tool=$top/scripts/irq-rs-status
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0 passes=0 skipped=0

shells=()
for s in dash bash "busybox sh"; do
	if command -v "${s%% *}" >/dev/null 2>&1; then
		shells+=("$s")
	fi
done

pass() { passes=$((passes + 1)); echo "status-selftest $1: PASS: $2"; }
fail() { fails=$((fails + 1)); echo "status-selftest $1: FAIL: $2"; }

# extract LOG DIR: the guest's kernel log, /proc and debugfs from a boot-test console log.
extract() {
	local log=$1 d=$2 n
	mkdir -p "$d/proc" "$d/debug"
	tr -d '\r' <"$log" >"$d/console"
	awk '
		/^@@@ .* begin$/ { skip = 1; next }
		skip && /^@@@ .* end$/ { skip = 0; next }
		skip || /^@@@/ { next }
		{ print }' "$d/console" >"$d/dmesg"
	n=$(sed -n 's/^@@@ interrupts \([0-9]*\) begin$/\1/p' "$d/console" | sort -n | tail -n 1)
	if [ -n "$n" ]; then
		sed -n "/^@@@ interrupts $n begin\$/,/^@@@ interrupts $n end\$/p" "$d/console" |
			sed '1d;$d' >"$d/proc/interrupts"
	fi
	sed -n 's/^Kernel command line: //p' "$d/console" | head -n 1 >"$d/proc/cmdline"
	for what in spi lpi; do
		if grep -q "^@@@ irqdebug $what begin\$" "$d/console"; then
			mkdir -p "$d/debug/irq/irqs"
			sed -n "/^@@@ irqdebug $what begin\$/,/^@@@ irqdebug $what end\$/p" \
				"$d/console" | sed '1d;$d' >"$d/debug/irq/irqs/$what"
		fi
	done
	if grep -q '^@@@ irqbalance state begin$' "$d/console"; then
		mkdir -p "$d/debug/irqbalance"
		sed -n '/^@@@ irqbalance state begin$/,/^@@@ irqbalance state end$/p' "$d/console" |
			sed '1d;$d' >"$d/debug/irqbalance/state"
	fi
}

# run CASE ARCH DIR [VAR=VALUE...]: the tool in test mode on DIR (from extract) under each
# shell; DIR/out.txt and DIR/out.json from the first. Checks that the shells agree and that the
# JSON parses and agrees with the text.
run() {
	local name=$1 arch=$2 d=$3 s first=1 o
	shift 3
	local env=(IRQRS_STATUS_ARCH="$arch" IRQRS_STATUS_DMESG="$d/dmesg"
		IRQRS_STATUS_PROC="$d/proc" IRQRS_STATUS_DEBUGFS="$d/debug" "$@")
	for s in "${shells[@]}"; do
		o=$d/out-${s%% *}
		env "${env[@]}" $s "$tool" >"$o.txt" 2>"$o.err"
		echo "rc $?" >>"$o.txt"
		env "${env[@]}" $s "$tool" --json >"$o.json" 2>>"$o.err"
		if [ $first = 1 ]; then
			cp "$o.txt" "$d/out.txt"
			cp "$o.json" "$d/out.json"
			first=0
		elif ! cmp -s "$o.txt" "$d/out.txt" || ! cmp -s "$o.json" "$d/out.json"; then
			fail "$name" "$s and ${shells[0]} disagree"
			diff "$d/out.txt" "$o.txt" | head -n 10
			diff "$d/out.json" "$o.json" | head -n 10
			continue
		fi
		[ ! -s "$o.err" ] || { fail "$name" "$s wrote to stderr"; head -n 5 "$o.err"; }
	done
	echo "--- $name"
	sed -e '$d' -e 's/^/    /' "$d/out.txt"
	if grep -qx 'rc 0' "$d/out.txt"; then
		pass "$name" "exit 0 under ${shells[*]}"
	else
		fail "$name" "$(tail -n 1 "$d/out.txt")"
	fi
	if python3 - "$d/out.txt" "$d/out.json" <<-'EOF'
		import json, re, sys
		text = open(sys.argv[1]).read()
		j = json.load(open(sys.argv[2]))
		verdicts = dict(re.findall(r"^([a-z0-9-]+): (\S+)", text, re.M))
		comps = j["components"]
		assert set(comps) == set(verdicts) - {"irq-rs-status"}, (set(comps), set(verdicts))
		for k, v in comps.items():
		    assert v["verdict"] == verdicts[k], (k, v["verdict"], verdicts[k])
		EOF
	then
		pass "$name" "--json parses and agrees with the text"
	else
		fail "$name" "--json does not parse or disagrees with the text"
	fi
}

# expect CASE DIR COMPONENT REGEX: COMPONENT's line of DIR/out.txt matches the extended regular
# expression REGEX (after "COMPONENT: ").
expect() {
	local name=$1 d=$2 comp=$3 re=$4 line
	line=$(grep "^$comp: " "$d/out.txt")
	if [ -n "$line" ] && printf '%s\n' "${line#"$comp: "}" | grep -qE -- "$re"; then
		pass "$name" "$comp: /$re/"
	else
		fail "$name" "$comp: /$re/ (${line:-no line})"
	fi
}

# case ARCH LOG: extract ARCH's LOG into $d, or skip the case when the log is missing.
d=
case_of() {
	local log=$out/$1/$2
	d=$tmp/$1-${2%.log}
	if [ ! -s "$log" ]; then
		echo "status-selftest $1/$2: SKIP: no $log (make boot writes it)"
		skipped=$((skipped + 1))
		return 1
	fi
	extract "$log" "$d"
}

if [ ${#shells[@]} -eq 0 ]; then
	echo "status-selftest: no shell to run the tool"
	exit 1
fi

# arm64, the Rust GICv3 driver on the device tree, with the ITS, booted with threadirqs.
if case_of arm64 boot.log; then
	c=arm64/boot.log
	run $c arm64 "$d"
	expect $c "$d" gicv3-root '^rust \(live\) -- "Root IRQ handler: gic_v3_rust_handle_irq"'
	expect $c "$d" gicv3-root 'firmware: device tree'
	expect $c "$d" gicv3-root 'flow: strict \("GICv3 \(Rust\): strict flow: ONESHOT'
	expect $c "$d" gicv3-root 'EOImode=1 \("GICv3 \(Rust\): using split EOI/Deactivate mode"\)'
	# The debugfs dumps of the log: the uart's SPI and virtio's LPI, both on the Rust flow, the
	# SPI masked by its active state.
	expect $c "$d" gicv3-root 'debugfs: 2 GICv3 interrupts on the Rust flows'
	expect $c "$d" gicv3-root 'debugfs: 1 GICv3 interrupts masked by their active state'
	expect $c "$d" its '^c \(live\) -- C ITS on the Rust root: ITS-PCI-MSIX: 2 interrupts on 1 chip'
	for x in apic-eoi kvm-pv-eoi posted-msi intr-remap; do
		expect $c "$d" $x '^n/a \(not x86\)$'
	done
	expect $c "$d" balancer '^off \(not running: off unless booted with irqbalance.rust=1\)'
	grep -q '"firmware":"devicetree","flow":"strict","eoimode":"1"' "$d/out.json" &&
		pass $c "JSON: firmware devicetree, flow strict, eoimode 1" ||
		fail $c "JSON: firmware devicetree, flow strict, eoimode 1"

	# Without debugfs: the same verdict, and the tool says debugfs is not there.
	c="arm64/boot.log without debugfs"
	rm -rf "$d/debug"
	run "$c" arm64 "$d"
	expect "$c" "$d" gicv3-root '^rust \(live\).*flow: strict.*EOImode=1'
	grep -q '^irq-rs-status: .* debugfs: not mounted' "$d/out.txt" &&
		pass "$c" "says debugfs is not mounted" || fail "$c" "says debugfs is not mounted"

	# The kernel log's end only (no "Linux version", no probe lines), but for a CPU's
	# redistributor line from the hotplug, which only the Rust driver prints.
	c="arm64/boot.log, kernel log without its start"
	grep -v GICv3 "$d/dmesg" | tail -n 3 >"$d/dmesg.tail"
	grep 'GICv3 (Rust): CPU1: found redistributor' "$d/dmesg" | tail -n 1 >>"$d/dmesg.tail"
	run "$c" arm64 "$d" IRQRS_STATUS_DMESG="$d/dmesg.tail"
	expect "$c" "$d" gicv3-root '^rust \(live\) -- "GICv3 \(Rust\): CPU1: found redistributor 1 @0x[0-9a-f]+"; firmware: unknown \(the kernel log no longer reaches back to boot\); flow: unknown \(.*\); EOImode unknown \(.*\)'
	grep -q '^irq-rs-status: .*kernel log: partial' "$d/out.txt" &&
		pass "$c" "says the kernel log is partial" || fail "$c" "says the kernel log is partial"
	# Without that line: what cannot be told is "unknown (why)".
	c="arm64/boot.log, kernel log without its start, no GICv3 line"
	grep -v GICv3 "$d/dmesg" | tail -n 3 >"$d/dmesg.tail"
	run "$c" arm64 "$d" IRQRS_STATUS_DMESG="$d/dmesg.tail"
	expect "$c" "$d" gicv3-root '^unknown \(no "Root IRQ handler:" line: the kernel log no longer reaches back to boot; no GICv3 interrupt in irq debugfs'
	expect "$c" "$d" its '^c \(live\) -- C ITS \(root driver unknown\): ITS-PCI-MSIX'

	# No kernel log at all (dmesg not readable).
	c="arm64/boot.log, kernel log not readable"
	run "$c" arm64 "$d" IRQRS_STATUS_DMESG="$d/no-such-file"
	expect "$c" "$d" gicv3-root '^unknown \(no "Root IRQ handler:" line: the kernel log is not readable'
fi

# arm64, the C GICv3 driver.
if case_of arm64 boot-c.log; then
	c=arm64/boot-c.log
	run $c arm64 "$d"
	expect $c "$d" gicv3-root '^c \(live\) -- "Root IRQ handler: gic_handle_irq"'
	expect $c "$d" gicv3-root 'firmware: device tree.*flow: C handle_fasteoi_irq.*EOImode=1 \("GICv3: GIC: Using split EOI/Deactivate mode"\)'
	expect $c "$d" gicv3-root 'irqchip.gicv3=c on the command line'
	expect $c "$d" its '^c \(live\) -- C ITS on the C root: ITS-PCI-MSIX'
fi

# arm64 on ACPI, each driver.
if case_of arm64 boot-acpi.log; then
	c=arm64/boot-acpi.log
	run $c arm64 "$d"
	expect $c "$d" gicv3-root '^rust \(live\) -- "Root IRQ handler: gic_v3_rust_handle_irq"'
	expect $c "$d" gicv3-root 'firmware: ACPI \("GICv3: Rust driver: the GIC of the ACPI MADT, 1 redistributor region\(s\) from its GICR entries"\)'
	expect $c "$d" its '^c \(live\) -- C ITS on the Rust root: ITS-PCI-MSIX'
	grep -q '"firmware":"acpi"' "$d/out.json" && pass $c "JSON: firmware acpi" ||
		fail $c "JSON: firmware acpi"
fi
if case_of arm64 boot-c-acpi.log; then
	c=arm64/boot-c-acpi.log
	run $c arm64 "$d"
	expect $c "$d" gicv3-root '^c \(live\) -- "Root IRQ handler: gic_handle_irq".*firmware: ACPI \("ACPI: Using GIC for interrupt routing"\)'
fi

# arm64 without the ITS: virtio's INTx on an SPI.
if case_of arm64 boot-itsoff.log; then
	c=arm64/boot-itsoff.log
	run $c arm64 "$d"
	expect $c "$d" gicv3-root '^rust \(live\)'
	expect $c "$d" its '^none \(no ITS\)'
fi

# arm64, the Rust probe's bounds error: the C driver, and the shim's line why.
if case_of arm64 boot-gic-smallgicr.log; then
	c=arm64/boot-gic-smallgicr.log
	run $c arm64 "$d"
	expect $c "$d" gicv3-root '^c \(live\) -- "Root IRQ handler: gic_handle_irq"; "GICv3: Rust driver: probe error -22 before programming the GIC; using the C driver"'
fi

# x86_64, posted_msi=rust (the software posting agent of the load sample; no IOMMU posts).
if case_of x86_64 boot.log; then
	c=x86_64/boot.log
	run $c x86_64 "$d"
	expect $c "$d" gicv3-root '^n/a \(not arm64\)$'
	expect $c "$d" its '^n/a \(not arm64\)$'
	expect $c "$d" posted-msi '^rust \(selected, not in use\) -- the posted-MSI load sample ran on impl=rust; posted_msi=rust on the command line; no PMN row'
	expect $c "$d" intr-remap '^c \(live;.*"DMAR-IR: Enabled IRQ remapping in x2apic mode"; IR-'
	# The Rust EOI prints nothing: without /proc/kallsyms its presence cannot be told.
	expect $c "$d" apic-eoi '^unknown \(the Rust EOI prints no line; .*kallsyms and .*config.gz are not readable: cannot tell whether CONFIG_X86_APIC_EOI_RUST is built in\) -- "APIC: Switched APIC routing to: cluster x2apic"'
	expect $c "$d" kvm-pv-eoi '^off \(not running: not a KVM guest\)'
	expect $c "$d" balancer '^off '

	# With the kernel's symbols (as the guest's /proc/kallsyms has them).
	c="x86_64/boot.log with kallsyms"
	printf '%s\n' "ffffffff81000000 T rust_apic_msr_eoi" "ffffffff81000100 T rust_apic_mem_eoi" \
		"ffffffff81000200 T rust_posted_msi_notification" >"$d/proc/kallsyms"
	run "$c" x86_64 "$d"
	expect "$c" "$d" apic-eoi '^rust \(live\) -- "cluster x2apic" installs rust_apic_msr_eoi; rust_apic_msr_eoi in'
	expect "$c" "$d" posted-msi '^rust \(selected, not in use\)'

	# Under a KVM host offering PV EOI (which QEMU's TCG does not): the kernel log with the
	# line apic_update_callback() prints for the Rust PV EOI added.
	c="x86_64/boot.log under KVM with PV EOI (line added)"
	rm -f "$d/proc/kallsyms"
	sed -e 's/^Hypervisor detected: .*//' -e '/^APIC: Static calls initialized/a\
Hypervisor detected: KVM\
kvm-guest: APIC: eoi() replaced with rust_kvm_guest_apic_eoi_write()' "$d/dmesg" >"$d/dmesg.kvm"
	run "$c" x86_64 "$d" IRQRS_STATUS_DMESG="$d/dmesg.kvm"
	expect "$c" "$d" kvm-pv-eoi '^rust \(live\) -- "APIC: eoi\(\) replaced with rust_kvm_guest_apic_eoi_write\(\)"; "Hypervisor detected: KVM"'
	expect "$c" "$d" apic-eoi '^rust \(live\) -- "cluster x2apic" installs rust_apic_msr_eoi; the Rust KVM PV EOI is installed, which needs CONFIG_X86_APIC_EOI_RUST;.*under KVM.s PV EOI'

	# Without /proc's files: the kernel log alone.
	c="x86_64/boot.log, no /proc files"
	run "$c" x86_64 "$d" IRQRS_STATUS_PROC="$d/no-such-dir"
	expect "$c" "$d" posted-msi '^rust \(in use: unknown\) -- the posted-MSI load sample ran on impl=rust; whether posted MSIs are in use: unknown'
	expect "$c" "$d" intr-remap '^c \(enabled; remapping is C\)'
	expect "$c" "$d" balancer '^off \(not running: no "irqbalance: Rust balancer every" line\)'

	# Nor the kernel log: the command line alone cannot tell whether the kernel has the Rust code.
	c="x86_64/boot.log, no kernel log, no kallsyms"
	run "$c" x86_64 "$d" IRQRS_STATUS_DMESG="$d/no-such-file"
	expect "$c" "$d" posted-msi '^unknown \(.*cannot tell whether CONFIG_X86_POSTED_MSI_RUST is built in\) -- posted_msi=rust on the command line'
	expect "$c" "$d" apic-eoi '^unknown \(which APIC driver is in use: the kernel log is not readable'
	expect "$c" "$d" kvm-pv-eoi '^unknown '
fi

# x86_64, posted_msi=c.
if case_of x86_64 boot-c.log; then
	c=x86_64/boot-c.log
	run $c x86_64 "$d"
	expect $c "$d" posted-msi '^c \(not in use\) -- the posted-MSI load sample ran on impl=c; posted_msi=c on the command line'
	expect $c "$d" intr-remap '^c '
fi

# x86_64, the Rust balancer's boot (its debugfs state in the log).
if case_of x86_64 boot-balance.log; then
	c=x86_64/boot-balance.log
	run $c x86_64 "$d"
	expect $c "$d" balancer '^rust \(live\) -- irqbalance.rust=1 on the command line; "irqbalance: Rust balancer every 500 ms \(gain 10%, dwell 2, 4 moves\)"; .*/irqbalance/state: passes [0-9]+ interval_ms 500 moves [0-9]+ failed 0'
	# No posted_msi=, no load sample, no kallsyms: whether the kernel has the Rust code is unknown.
	expect $c "$d" posted-msi '^unknown \(no posted_msi= on the command line, and .*cannot tell whether CONFIG_X86_POSTED_MSI_RUST is built in\)'
fi

# This host, as it is: whatever its kernel, every component has a line, and the tool exits 0.
c=host
d=$tmp/host
mkdir -p "$d"
for s in "${shells[@]}"; do
	o=$d/out-${s%% *}
	$s "$tool" >"$o.txt" 2>"$o.err"
	r=$?
	$s "$tool" --json >"$o.json" 2>>"$o.err"
	r2=$?
	n=$(grep -cE '^(gicv3-root|its|apic-eoi|kvm-pv-eoi|posted-msi|intr-remap|balancer): (rust|c|off|none|n/a|unknown)( |$)' "$o.txt")
	if [ $r -eq 0 ] && [ $r2 -eq 0 ] && [ "$n" -eq 7 ] && [ ! -s "$o.err" ] &&
	   python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$o.json"; then
		pass $c "$s: exit 0, 7 component lines, valid JSON"
	else
		fail $c "$s: exit $r/$r2, $n component lines, $(head -c 200 "$o.err")"
	fi
done
echo "--- host"
sed 's/^/    /' "$d/out-${shells[0]%% *}.txt"

# Bad usage: exit 2 and the usage on stderr; --help: exit 0.
for s in "${shells[@]}"; do
	$s "$tool" --bogus >/dev/null 2>"$tmp/err"
	r=$?
	$s "$tool" --json extra >/dev/null 2>>"$tmp/err"
	r2=$?
	$s "$tool" --help >"$tmp/help"
	r3=$?
	if [ $r -eq 2 ] && [ $r2 -eq 2 ] && [ $r3 -eq 0 ] && grep -q '^usage: irq-rs-status \[--json\]' "$tmp/err" &&
	   grep -q '^usage:' "$tmp/help"; then
		pass usage "$s: exit 2 with the usage for bad arguments, 0 for --help"
	else
		fail usage "$s: exit $r, $r2, --help $r3"
	fi
done

echo "status-selftest: $passes passed, $fails failed, $skipped skipped (shells: ${shells[*]})"
[ $fails -eq 0 ]
