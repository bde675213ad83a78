#!/bin/bash
# Self-test of scripts/irq-rs-status without a kernel: its verdicts on the console logs of the
# boot tests (tests/boot/boot-test.sh), fed through its test mode. From each log it extracts
# what the guest had: the kernel log (the console without the "@@@ ... begin/end" blocks of
# tests/boot/init and its other "@@@" lines), the last /proc/interrupts snapshot
# ("@@@ interrupts N begin/end", as check-boot.py's snapshot() reads them), /proc/cmdline
# (the "Kernel command line:" line) and, where the log has them, genirq's debugfs dumps
# ("@@@ irqdebug spi|lpi") and the balancer's debugfs state ("@@@ irqbalance state"). Each case
# runs under every shell at hand (dash, bash, busybox sh, and busybox sh with nothing but
# busybox's applets in PATH, as in the boot test's initramfs), which must agree, and with
# --json, which must parse and agree with the text. Cases edit the logs to show what the boots
# do not (a GICv2, a kernel without kallsyms, posted MSIs in use, odd bytes in the log, ...),
# and feed the tool's report back into tests/boot/check-boot.py. Then the tool runs on this
# host (no Rust kernel), and with bad usage.
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
# Busybox's sh with its applets only (od, awk, sed, grep, tr, ...), as tests/boot/init runs the
# tool.
if command -v busybox >/dev/null 2>&1; then
	mkdir -p "$tmp/bb"
	for a in $(busybox --list); do
		ln -s "$(command -v busybox)" "$tmp/bb/$a"
	done
	shells+=(busybox-applets)
fi
# The command line of shell $1.
shcmd() {
	case $1 in
	busybox-applets) echo "env PATH=$tmp/bb $tmp/bb/sh" ;;
	*) echo "$1" ;;
	esac
}

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
		env "${env[@]}" $(shcmd "$s") "$tool" >"$o.txt" 2>"$o.err"
		echo "rc $?" >>"$o.txt"
		env "${env[@]}" $(shcmd "$s") "$tool" --json >"$o.json" 2>>"$o.err"
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
		text = open(sys.argv[1], errors="replace").read()
		raw = open(sys.argv[2], "rb").read()
		assert all(0x20 <= b <= 0x7e for b in raw.rstrip(b"\n")), "JSON not printable ASCII"
		j = json.loads(raw)
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

# expect_json CASE DIR COMPONENT FIELD VALUE: the JSON's components.COMPONENT.FIELD is VALUE.
expect_json() {
	local name=$1 d=$2 comp=$3 field=$4 want=$5 got
	got=$(python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))["components"][sys.argv[2]].get(sys.argv[3], "<none>"))' \
		"$d/out.json" "$comp" "$field" 2>&1)
	if [ "$got" = "$want" ]; then
		pass "$name" "JSON: $comp $field \"$want\""
	else
		fail "$name" "JSON: $comp $field \"$want\" (\"$got\")"
	fi
}

# same CASE DIR REF: DIR/out.txt and DIR/out.json are REF.txt and REF.json.
same() {
	if cmp -s "$2/out.txt" "$3.txt" && cmp -s "$2/out.json" "$3.json"; then
		pass "$1" "the same report as from the plain log"
	else
		fail "$1" "not the same report as from the plain log"
		diff "$3.txt" "$2/out.txt" | head -n 6
	fi
}

# checkboot CASE DIR LOG TARGET IMPL VARIANT [WANT...]: tests/boot/check-boot.py's checks of the
# status tool on LOG, a boot test's console log, with the status blocks of tests/boot/init (text
# and JSON) holding the tool's reports on DIR (from extract), put where init prints them (before
# "@@@ boot test done" or "@@@ gic select test done") if the log has none. Each WANT, an
# extended regular expression, must match one of check-boot.py's "status tool" lines; those
# that FAIL must be those WANT asks for; without WANT there must be none.
checkboot() {
	local name=$1 d=$2 log=$3 target=$4 impl=$5 variant=$6 w n r nf=0
	shift 6
	local env=(IRQRS_STATUS_ARCH="${target%%-*}" IRQRS_STATUS_DMESG="$d/dmesg"
		IRQRS_STATUS_PROC="$d/proc" IRQRS_STATUS_DEBUGFS="$d/debug")
	{
		echo "@@@ status begin"
		env "${env[@]}" sh "$tool"
		r=$?
		echo "@@@ status end"
		echo "@@@ status rc $r"
		echo "@@@ status json begin"
		env "${env[@]}" sh "$tool" --json
		r=$?
		echo "@@@ status json end"
		echo "@@@ status json rc $r"
	} >"$d/status.txt"
	python3 - "$log" "$d/status.txt" "$d/checked.log" <<-'EOF'
		import re, sys
		log = open(sys.argv[1], errors="replace").read().replace("\r", "")
		status = open(sys.argv[2]).read()
		log = re.sub(r"@@@ status (json )?begin\n.*?@@@ status (json )?end\n"
		             r"(@@@ status (json )?rc \d+\n)?", "", log, flags=re.S)
		m = re.search(r"^@@@ (boot test|gic select test) done$", log, re.M)
		at = m.start() if m else len(log)
		open(sys.argv[3], "w").write(log[:at] + status + log[at:])
		EOF
	python3 "$top/tests/boot/check-boot.py" "$target" "$d/checked.log" "$impl" "$variant" |
		grep 'status tool' >"$d/checkboot.txt"
	for w in "$@"; do
		case $w in *FAIL*) nf=$((nf + 1)) ;; esac
		if grep -qE -- "$w" "$d/checkboot.txt"; then
			pass "$name" "check-boot.py: /$w/"
		else
			fail "$name" "check-boot.py: /$w/ ($(cat "$d/checkboot.txt"))"
		fi
	done
	n=$(grep -c 'FAIL: status tool' "$d/checkboot.txt")
	if [ $# -eq 0 ] && [ -s "$d/checkboot.txt" ]; then
		fail "$name" "check-boot.py checks the status tool: $(cat "$d/checkboot.txt")"
	elif [ $# -eq 0 ]; then
		pass "$name" "check-boot.py: no status tool check"
	elif [ "$n" -ne $nf ]; then
		fail "$name" "check-boot.py: $n status checks FAIL, $nf expected: $(cat "$d/checkboot.txt")"
	fi
}

# A debugfs irq file (genirq's CONFIG_GENERIC_IRQ_DEBUGFS) of an interrupt with handler $1,
# dstate flags $2 (space-separated), and chips "NAME[|FLAG,...]" from the top of the hierarchy
# down ($3...).
dbgfile() {
	local h=$1 st=$2 c ind="" f
	shift 2
	printf 'handler:  %s\ndevice:   (null)\nstatus:   0x00000000\ndstate:   0x00000000\n' "$h"
	for f in $st; do printf '            %s\n' "$f"; done
	printf 'node:     0\naffinity: 0-1\neffectiv: 0\n'
	for c in "$@"; do
		printf '%sdomain:  test-domain\n%s hwirq:   0x1\n%s chip:    %s\n%s  flags:   0x0\n' \
			"$ind" "$ind" "$ind" "${c%%|*}" "$ind"
		case $c in
		*"|"*) for f in $(echo "${c#*|}" | tr , ' '); do printf '%s             %s\n' "$ind" "$f"; done ;;
		esac
		printf '%s parent:\n' "$ind"
		ind="$ind    "
	done
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
	log=$out/arm64/boot.log
	run $c arm64 "$d"
	expect $c "$d" gicv3-root '^rust \(live\) -- "Root IRQ handler: gic_v3_rust_handle_irq"'
	expect $c "$d" gicv3-root 'firmware: device tree'
	expect $c "$d" gicv3-root 'flow: strict \("GICv3 \(Rust\): strict flow: ONESHOT'
	expect $c "$d" gicv3-root 'EOImode=1 \("GICv3 \(Rust\): using split EOI/Deactivate mode"\)'
	# The debugfs dumps of the log: the uart's SPI and virtio's LPI, both on the Rust flow, the
	# SPI masked by its active state.
	expect $c "$d" gicv3-root 'debugfs: 2 GICv3 interrupts on the Rust flows'
	expect $c "$d" gicv3-root 'debugfs: 1 GICv3 interrupts masked by their active state'
	expect $c "$d" its '^rust \(live\) -- Rust ITS: ITS-RS-PCI-MSIX: [0-9]+ interrupts on [0-9]+ chips?'
	for x in apic-eoi kvm-pv-eoi posted-msi intr-remap; do
		expect $c "$d" $x '^n/a \(not x86\)$'
	done
	expect $c "$d" balancer '^off \(not running: off unless booted with irqbalance.rust=1\)'
	grep -q '"firmware":"devicetree","flow":"strict","eoimode":"1"' "$d/out.json" &&
		pass $c "JSON: firmware devicetree, flow strict, eoimode 1" ||
		fail $c "JSON: firmware devicetree, flow strict, eoimode 1"
	cp "$d/out.txt" "$d/plain.txt"
	cp "$d/out.json" "$d/plain.json"
	# check-boot.py on the report: the Rust root, the Rust ITS on ITS-RS-* chips.
	checkboot $c "$d" "$log" arm64 rust - \
		'PASS: status tool \(irq-rs-status\): gicv3-root rust' \
		'PASS: status tool \(irq-rs-status\): its rust, live on ITS-RS-\* chips'

	# printk's caller ids (CONFIG_PRINTK_CALLER): "[    1.234567][    T1] " before each line,
	# or, from util-linux's dmesg, "[    1.234567] [    T1] "; or the caller alone. The same
	# report.
	c="arm64/boot.log, CONFIG_PRINTK_CALLER prefixes"
	awk '{ printf "[%12.6f][%6s] %s\n", NR / 1000, (NR % 3 ? "T" NR % 7 : "C1"), $0 }' \
		"$d/dmesg" >"$d/dmesg.caller"
	run "$c" arm64 "$d" IRQRS_STATUS_DMESG="$d/dmesg.caller"
	same "$c" "$d" "$d/plain"
	c="arm64/boot.log, util-linux dmesg's caller prefixes"
	awk '{ printf "[%12.6f] [%6s] %s\n", NR / 1000, "T" NR % 7, $0 }' "$d/dmesg" >"$d/dmesg.caller"
	run "$c" arm64 "$d" IRQRS_STATUS_DMESG="$d/dmesg.caller"
	same "$c" "$d" "$d/plain"
	c="arm64/boot.log, caller prefixes without timestamps"
	awk '{ printf "[%6s] %s\n", "T" NR % 7, $0 }' "$d/dmesg" >"$d/dmesg.caller"
	run "$c" arm64 "$d" IRQRS_STATUS_DMESG="$d/dmesg.caller"
	same "$c" "$d" "$d/plain"

	# Without CONFIG_KALLSYMS "Root IRQ handler: %ps" prints an address: the debugfs flows
	# tell the Rust driver.
	c="arm64/boot.log, the root handler an address (no kallsyms)"
	sed 's/^Root IRQ handler: .*/Root IRQ handler: 0xffff800080010a40/' "$d/dmesg" >"$d/dmesg.addr"
	run "$c" arm64 "$d" IRQRS_STATUS_DMESG="$d/dmesg.addr"
	expect "$c" "$d" gicv3-root '^rust \(live\) -- "Root IRQ handler: 0xffff800080010a40" \(an address: no kernel symbols\); debugfs: 2 GICv3 interrupts on the Rust flows \(rust_handle_\*\);.*flow: strict.*EOImode=1'
	expect_json "$c" "$d" gicv3-root root_handler 0xffff800080010a40

	# Chips are read by their labels: a chip named "GICv3 mux" (a name with a space) is not the
	# GICv3, and the flags under "dstate:" and "flags:" are theirs. The log's SPI dump, and one
	# of an interrupt on such a chip, on the Rust flow and masked by its active state; no root
	# handler line, so that debugfs decides.
	c="arm64/boot.log, debugfs: a chip name with a space"
	mkdir -p "$d/dbg8/irq/irqs"
	cp "$d/debug/irq/irqs/spi" "$d/dbg8/irq/irqs/1"
	dbgfile rust_handle_fasteoi_irq "IRQD_LEVEL IRQD_MASKED_BY_ACTIVE" \
		"GICv3 mux|IRQCHIP_IMMUTABLE" "PCI MSI|IRQCHIP_IMMUTABLE" >"$d/dbg8/irq/irqs/2"
	grep -v '^Root IRQ handler' "$d/dmesg" >"$d/dmesg.noroot"
	run "$c" arm64 "$d" IRQRS_STATUS_DMESG="$d/dmesg.noroot" IRQRS_STATUS_DEBUGFS="$d/dbg8"
	expect "$c" "$d" gicv3-root '^rust \(live\) -- debugfs: 1 GICv3 interrupts on the Rust flows \(rust_handle_\*\);.*debugfs: 1 GICv3 interrupts masked by their active state'

	# Without debugfs: the same verdict, and the tool says debugfs is not there.
	c="arm64/boot.log without debugfs"
	rm -rf "$d/debug"
	run "$c" arm64 "$d"
	expect "$c" "$d" gicv3-root '^rust \(live\).*flow: strict.*EOImode=1'
	grep -q '^irq-rs-status: .* debugfs: not mounted' "$d/out.txt" &&
		pass "$c" "says debugfs is not mounted" || fail "$c" "says debugfs is not mounted"

	# The root handler an address, no debugfs: the Rust driver's redistributor lines.
	c="arm64/boot.log, the root handler an address, no debugfs"
	run "$c" arm64 "$d" IRQRS_STATUS_DMESG="$d/dmesg.addr"
	expect "$c" "$d" gicv3-root '^rust \(live\) -- "Root IRQ handler: 0xffff800080010a40" \(an address: no kernel symbols\); "GICv3 \(Rust\): CPU1: found redistributor 1 @0x[0-9a-f]+";.*EOImode=1'

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
	expect "$c" "$d" its '^rust \(live\) -- Rust ITS: ITS-RS-PCI-MSIX'

	# No kernel log at all (dmesg not readable).
	c="arm64/boot.log, kernel log not readable"
	run "$c" arm64 "$d" IRQRS_STATUS_DMESG="$d/no-such-file"
	expect "$c" "$d" gicv3-root '^unknown \(no "Root IRQ handler:" line: the kernel log is not readable'

	# A kernel log that is not text: NUL bytes, control characters, bytes of no UTF-8, quotes
	# and backslashes in a line the tool quotes. The text shows the control characters as "?";
	# the JSON is ASCII, those bytes as \u00XX, and says the same.
	c="arm64/boot.log, odd bytes in the kernel log"
	{
		cat "$d/dmesg"
		printf 'a line with a NUL \000 byte\n'
		printf 'GICv3 (Rust): strict flow: odd \377\376\001\t"q" \\b \177 \303\251\n'
	} >"$d/dmesg.odd"
	run "$c" arm64 "$d" IRQRS_STATUS_DMESG="$d/dmesg.odd"
	if grep -aqF "$(printf 'flow: strict ("GICv3 (Rust): strict flow: odd \377\376??"q" \\b ? \303\251")')" \
		"$d/out.txt"; then
		pass "$c" "text: control characters as ?, other bytes as they are"
	else
		fail "$c" "text: control characters as ?, other bytes as they are ($(grep -a '^gicv3-root' "$d/out.txt"))"
	fi
	if python3 -c 'import json, sys
e = json.loads(open(sys.argv[1], "rb").read())["components"]["gicv3-root"]["evidence"]
want = "strict flow: odd \u00ff\u00fe\u0001\t\"q\" \\b \u007f \u00c3\u00a9\")"
assert want in e, e' "$d/out.json"; then
		pass "$c" "JSON: every byte outside 0x20-0x7e as \\u00XX"
	else
		fail "$c" "JSON: every byte outside 0x20-0x7e as \\u00XX"
	fi
fi

# arm64, the C GICv3 driver.
if case_of arm64 boot-c.log; then
	c=arm64/boot-c.log
	log=$out/arm64/boot-c.log
	run $c arm64 "$d"
	expect $c "$d" gicv3-root '^c \(live\) -- "Root IRQ handler: gic_handle_irq"; the C GICv3 driver.s probe: "GICv3: 256 SPIs implemented"'
	expect $c "$d" gicv3-root 'firmware: device tree.*flow: C handle_fasteoi_irq.*EOImode=1 \("GICv3: GIC: Using split EOI/Deactivate mode"\)'
	expect $c "$d" gicv3-root 'irqchip.gicv3=c on the command line'
	expect $c "$d" its '^c \(live\) -- C ITS on the C root: ITS-PCI-MSIX'
	checkboot $c "$d" "$log" arm64 c - \
		'PASS: status tool \(irq-rs-status\): gicv3-root c' \
		'PASS: status tool \(irq-rs-status\): its c, live on ITS-\* chips'
	# The kernel takes the last valid irqchip.gicv3= (irq-gic-v3-select.c refuses others).
	c="arm64/boot-c.log, irqchip.gicv3=c irqchip.gicv3=bogus irqchip.gicv3"
	sed -i 's/irqchip.gicv3=c/& irqchip.gicv3=bogus irqchip.gicv3/' "$d/proc/cmdline"
	run "$c" arm64 "$d"
	expect "$c" "$d" gicv3-root 'irqchip.gicv3=c on the command line$'

	# The root handler an address, no debugfs: the C driver's probe lines.
	c="arm64/boot-c.log, the root handler an address, no debugfs"
	sed 's/^Root IRQ handler: .*/Root IRQ handler: 0xffff800080010a40/' "$d/dmesg" >"$d/dmesg.addr"
	run "$c" arm64 "$d" IRQRS_STATUS_DMESG="$d/dmesg.addr" IRQRS_STATUS_DEBUGFS="$d/none"
	expect "$c" "$d" gicv3-root '^c \(live\) -- "Root IRQ handler: 0xffff800080010a40" \(an address: no kernel symbols\); the C GICv3 driver.s probe: "GICv3: 256 SPIs implemented";.*EOImode=1'

	# A GICv2 (made from the log: no GICv3 line, GIC-0 chips, no ITS): its root handler is
	# gic_handle_irq too, but it is not a GICv3.
	c="arm64/boot-c.log made a GICv2"
	mkdir -p "$d/v2/proc"
	grep -v -e GICv3 -e '^ITS' "$d/dmesg" >"$d/v2/dmesg"
	sed -e 's/ GICv3 / GIC-0 /' -e '/ITS-/d' "$d/proc/interrupts" >"$d/v2/proc/interrupts"
	sed 's/ irqchip.gicv3=[^ ]*//g' "$d/proc/cmdline" >"$d/v2/proc/cmdline"
	run "$c" arm64 "$d/v2"
	expect "$c" "$d/v2" gicv3-root '^none \(not a GICv3: gic_handle_irq is also the GICv2 driver.s\) -- "Root IRQ handler: gic_handle_irq"; no C GICv3 probe line .*; [0-9]+ interrupts on GICv2.s GIC-N chips'
	expect "$c" "$d/v2" its '^none \(no ITS\)'
	c="arm64/boot-c.log made a GICv2, the root handler an address"
	sed 's/^Root IRQ handler: .*/Root IRQ handler: 0xffff800080010a40/' "$d/v2/dmesg" >"$d/v2/dmesg.addr"
	run "$c" arm64 "$d/v2" IRQRS_STATUS_DMESG="$d/v2/dmesg.addr"
	expect "$c" "$d/v2" gicv3-root '^none \(not a GICv3: root handler 0xffff800080010a40, and no GICv3 driver.s probe line\)'
	c="arm64/boot-c.log made a GICv2, kernel log without its start"
	grep -v 'Linux version' "$d/v2/dmesg" >"$d/v2/dmesg.partial"
	run "$c" arm64 "$d/v2" IRQRS_STATUS_DMESG="$d/v2/dmesg.partial"
	expect "$c" "$d/v2" gicv3-root '^unknown \(gic_handle_irq, the C GICv3 or the GICv2 driver.s: no C GICv3 probe line: the kernel log no longer reaches back to boot'
fi

# arm64 on ACPI, each driver.
if case_of arm64 boot-acpi.log; then
	c=arm64/boot-acpi.log
	run $c arm64 "$d"
	expect $c "$d" gicv3-root '^rust \(live\) -- "Root IRQ handler: gic_v3_rust_handle_irq"'
	expect $c "$d" gicv3-root 'firmware: ACPI \("GICv3: Rust driver: the GIC of the ACPI MADT, 1 redistributor region\(s\) from its GICR entries"\)'
	expect $c "$d" its '^rust \(live\) -- Rust ITS: ITS-RS-PCI-MSIX'
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
	checkboot $c "$d" "$out/arm64/boot-itsoff.log" arm64 rust itsoff \
		'PASS: status tool \(irq-rs-status\): gicv3-root rust' \
		'PASS: status tool \(irq-rs-status\): its none'
fi

# arm64's GICv3 driver-selection boots (tests/boot/init's "irqrs.gicselect=1"), each with
# irqchip.gicv3=rust; check-boot.py checks the tool's verdicts there: the C driver where the
# Rust probe declined (PPI partitions) or fell back (its bounds error on the redistributor
# region), the Rust one with irqchip.gicv3_nolpi (and no ITS); gic-badgicd, which never reaches
# user space, has no report.
if case_of arm64 boot-gic-pppart.log; then
	c=arm64/boot-gic-pppart.log
	run $c arm64 "$d"
	expect $c "$d" gicv3-root '^c \(live\) -- "Root IRQ handler: gic_handle_irq"; "GICv3: Rust driver: PPI partitions in /intc@8000000; using the C driver"; the C GICv3 driver.s probe'
	expect $c "$d" its '^c \(live\) -- C ITS on the C root: ITS-PCI-MSIX'
	checkboot $c "$d" "$out/arm64/boot-gic-pppart.log" arm64 rust gic-pppart \
		'PASS: status tool \(irq-rs-status\): gicv3-root c' \
		'PASS: status tool \(irq-rs-status\): its c, live on ITS-\* chips'
	# The report of another driver fails the check.
	sed -i 's/^Root IRQ handler: .*/Root IRQ handler: gic_v3_rust_handle_irq/' "$d/dmesg"
	checkboot "$c, the Rust root reported" "$d" "$out/arm64/boot-gic-pppart.log" arm64 rust \
		gic-pppart 'FAIL: status tool \(irq-rs-status\): gicv3-root c \(gicv3-root: rust \(live\)'
fi
if case_of arm64 boot-gic-smallgicr.log; then
	c=arm64/boot-gic-smallgicr.log
	run $c arm64 "$d"
	expect $c "$d" gicv3-root '^c \(live\) -- "Root IRQ handler: gic_handle_irq"; "GICv3: Rust driver: probe error -22 before programming the GIC; using the C driver"; the C GICv3 driver.s probe: "GICv3: 256 SPIs implemented"'
	checkboot $c "$d" "$out/arm64/boot-gic-smallgicr.log" arm64 rust gic-smallgicr \
		'PASS: status tool \(irq-rs-status\): gicv3-root c' \
		'PASS: status tool \(irq-rs-status\): its c, live on ITS-\* chips'
fi
if case_of arm64 boot-gic-nolpi.log; then
	c=arm64/boot-gic-nolpi.log
	run $c arm64 "$d"
	expect $c "$d" gicv3-root '^rust \(live\) -- "Root IRQ handler: gic_v3_rust_handle_irq"'
	expect $c "$d" its '^none \(LPIs off\) -- "GICv3 \(Rust\): LPIs disabled by irqchip.gicv3_nolpi"'
	checkboot $c "$d" "$out/arm64/boot-gic-nolpi.log" arm64 rust gic-nolpi \
		'PASS: status tool \(irq-rs-status\): gicv3-root rust' \
		'PASS: status tool \(irq-rs-status\): its none'
fi
if case_of arm64 boot-gic-badgicd.log; then
	c=arm64/boot-gic-badgicd.log
	checkboot $c "$d" "$out/arm64/boot-gic-badgicd.log" arm64 rust gic-badgicd
fi
# tests/boot/init runs the tool in the driver-selection boots, between the same markers, before
# it says the test is done.
if awk '/^if grep -q .irqrs.gicselect=1/ { g = 1 } g && /^\tstatus_report$/ { s = 1 }
	g && /@@@ gic select test done/ { exit !s } END { if (!g) exit 1 }' "$top/tests/boot/init" &&
   grep -q '^	echo "@@@ status begin"$' "$top/tests/boot/init"; then
	pass tests/boot/init "the driver-selection boots run the status tool"
else
	fail tests/boot/init "the driver-selection boots run the status tool"
fi

# x86_64, posted_msi=rust (the software posting agent of the load sample; no IOMMU posts).
if case_of x86_64 boot.log; then
	c=x86_64/boot.log
	log=$out/x86_64/boot.log
	run $c x86_64 "$d"
	expect $c "$d" gicv3-root '^n/a \(not arm64\)$'
	expect $c "$d" its '^n/a \(not arm64\)$'
	# No posted MSI in use: "off", whichever implementation is selected; "impl" says which.
	expect $c "$d" posted-msi '^off \(not in use; impl=rust\) -- the posted-MSI load sample ran on impl=rust; posted_msi=rust on the command line; no PMN row'
	expect_json $c "$d" posted-msi impl rust
	expect_json $c "$d" posted-msi in_use no
	expect $c "$d" intr-remap '^rust \(live\) -- "DMAR-IR: Enabled IRQ remapping in x2apic mode"; "DMAR-IR: Rust interrupt remapping domain, x2apic mode"; Rust domain: IR-RS-'
	# The Rust EOI prints nothing: without /proc/kallsyms its presence cannot be told.
	expect $c "$d" apic-eoi '^unknown \(the Rust EOI prints no line; .*kallsyms and .*config.gz are not readable: cannot tell whether CONFIG_X86_APIC_EOI_RUST is built in\) -- "APIC: Switched APIC routing to: cluster x2apic"'
	expect $c "$d" kvm-pv-eoi '^off \(not running: not a KVM guest\)'
	expect $c "$d" balancer '^off '
	cp "$d/out.txt" "$d/plain.txt"
	cp "$d/out.json" "$d/plain.json"
	# check-boot.py compares the JSON's impl with posted_msi=: rust passes, c fails.
	checkboot $c "$d" "$log" x86_64 rust - \
		'PASS: status tool \(irq-rs-status --json\): posted-msi impl=rust, verdict off'
	checkboot "$c, checked as posted_msi=c" "$d" "$log" x86_64 c - \
		'FAIL: status tool \(irq-rs-status --json\): posted-msi impl=c, verdict off \(impl=rust verdict off'

	# The kernel log read once, and searched once: padded with 300000 lines of no interest,
	# the same report, and the CPU time the padding costs the tool within three times what one
	# pass of grep over the padded log costs.
	c="x86_64/boot.log, padded with 300000 lines"
	awk '{ print } NR == 5 { for (i = 0; i < 300000; i++)
		print "[    1.234567] some driver: a line of no interest, number " i }' \
		"$d/dmesg" >"$d/dmesg.pad"
	run "$c" x86_64 "$d" IRQRS_STATUS_DMESG="$d/dmesg.pad"
	same "$c" "$d" "$d/plain"
	# The CPU time of a command and its children, in ms.
	cputime() {
		local TIMEFORMAT='%3U %3S'
		{ time "$@" >/dev/null 2>&1; } 2>&1 | awk '{ printf "%d\n", ($1 + $2) * 1000 }'
	}
	tenv=(IRQRS_STATUS_ARCH=x86_64 IRQRS_STATUS_PROC="$d/proc" IRQRS_STATUS_DEBUGFS="$d/debug")
	tplain=$(cputime env "${tenv[@]}" IRQRS_STATUS_DMESG="$d/dmesg" dash "$tool")
	tpad=$(cputime env "${tenv[@]}" IRQRS_STATUS_DMESG="$d/dmesg.pad" dash "$tool")
	tgrep=$(cputime sh -c 'tr -d "\000\r" <"$1" | sed "s/^\[[ 0-9.]*\] //" | grep -E "GICv3|irqbalance: "' \
		- "$d/dmesg.pad")
	if [ $((tpad - tplain)) -le $((3 * tgrep + 20)) ]; then
		pass "$c" "the padding costs $((tpad - tplain)) ms of CPU time, one grep pass $tgrep ms"
	else
		fail "$c" "the padding costs $((tpad - tplain)) ms of CPU time, one grep pass $tgrep ms"
	fi

	# With the kernel's symbols (as the guest's /proc/kallsyms has them).
	c="x86_64/boot.log with kallsyms"
	printf '%s\n' "ffffffff81000000 T rust_apic_msr_eoi" "ffffffff81000100 T rust_apic_mem_eoi" \
		"ffffffff81000200 T rust_posted_msi_notification" >"$d/proc/kallsyms"
	run "$c" x86_64 "$d"
	expect "$c" "$d" apic-eoi '^rust \(live\) -- "cluster x2apic" installs rust_apic_msr_eoi; rust_apic_msr_eoi in'
	expect "$c" "$d" posted-msi '^off \(not in use; impl=rust\)'

	# The last valid posted_msi= counts (the early parameter refuses other values, keeping
	# the one before): without the load sample's line, from the command line and kallsyms.
	grep -v 'rust_posted_msi_load' "$d/dmesg" >"$d/dmesg.nosample"
	echo "Malformed early option 'posted_msi'" >>"$d/dmesg.nosample"
	cp "$d/proc/cmdline" "$d/cmdline.orig"
	for p in "posted_msi=c posted_msi=x:c" "posted_msi=c posted_msi:c" \
		 "posted_msi=c posted_msi=rust posted_msi=:rust" "posted_msi=x:rust"; do
		c="x86_64/boot.log, ${p%:*}"
		sed "s/posted_msi=rust/${p%:*}/" "$d/cmdline.orig" >"$d/proc/cmdline"
		run "$c" x86_64 "$d" IRQRS_STATUS_DMESG="$d/dmesg.nosample"
		expect "$c" "$d" posted-msi "^off \\(not in use; impl=${p##*:}\\)"
		expect_json "$c" "$d" posted-msi impl "${p##*:}"
	done
	expect "$c" "$d" posted-msi 'no posted_msi=rust\|c on the command line: rust is the default'

	# irqbalance.rust, a Rust bool module parameter: kstrtobool()'s values, the last valid one
	# counting; a bare one is refused. (No balancer line in this log: with a true value, the
	# tool says the kernel has no balancer.)
	for p in "irqbalance.rust:off" "irqbalance.rust=1 irqbalance.rust:on" \
		 "irqbalance.rust=on:on" "irqbalance.rust=Y:on" "irqbalance.rust=t:on" \
		 "irqbalance.rust=enable:on" "irqbalance.rust=1 irqbalance.rust=maybe:on" \
		 "irqbalance.rust=1 irqbalance.rust=Off:off" "irqbalance.rust=N:off" \
		 "irqbalance.rust=0:off" "irqbalance.rust=:off" "irqbalance.rust=2:off"; do
		c="x86_64/boot.log, ${p%:*}"
		sed "s/\$/ ${p%:*}/" "$d/cmdline.orig" >"$d/proc/cmdline"
		run "$c" x86_64 "$d"
		case ${p##*:} in
		on) expect "$c" "$d" balancer '^off \(not running: no "irqbalance: Rust balancer every" line \(no CONFIG_IRQ_BALANCE_RUST\?\)\)' ;;
		off) expect "$c" "$d" balancer '^off \(not running: off unless booted with irqbalance.rust=1\)' ;;
		esac
	done
	cp "$d/cmdline.orig" "$d/proc/cmdline"

	# Posted MSIs in use (a PMN row; INTEL-IR-POST in the hierarchy of two interrupts in
	# debugfs, one with a chip name with spaces): the verdict is the implementation, the Rust
	# chip (IRQCHIP_IMMUTABLE) or C's.
	c="x86_64/boot.log, posted MSIs in use on the Rust chip (PMN row, debugfs added)"
	cp "$d/proc/interrupts" "$d/interrupts.orig"
	printf ' PMN:         12         34   Posted MSI notification event\n' >>"$d/proc/interrupts"
	mkdir -p "$d/dbgpost/irq/irqs"
	dbgfile handle_edge_irq "IRQD_ACTIVATED" "IR-PCI-MSIX-0000:00:02.0" \
		"INTEL-IR-POST|IRQCHIP_SKIP_SET_WAKE,IRQCHIP_IMMUTABLE" VECTOR >"$d/dbgpost/irq/irqs/30"
	dbgfile handle_edge_irq "IRQD_ACTIVATED" "IR PCI MSI test chip" \
		"INTEL-IR-POST|IRQCHIP_IMMUTABLE" "VECTOR" >"$d/dbgpost/irq/irqs/31"
	run "$c" x86_64 "$d" IRQRS_STATUS_DEBUGFS="$d/dbgpost"
	expect "$c" "$d" posted-msi '^rust \(live\) -- the posted-MSI load sample ran on impl=rust; posted_msi=rust on the command line; PMN row: 46 posted-MSI notifications; debugfs: 2 interrupts on INTEL-IR-POST, the Rust chip \(IRQCHIP_IMMUTABLE\)'
	expect_json "$c" "$d" posted-msi impl rust
	expect_json "$c" "$d" posted-msi in_use yes
	c="x86_64/boot.log, posted MSIs in use on the C chip (PMN row, debugfs added)"
	for f in 30 31; do
		sed -i '/IRQCHIP_IMMUTABLE/d' "$d/dbgpost/irq/irqs/$f"
	done
	run "$c" x86_64 "$d" IRQRS_STATUS_DEBUGFS="$d/dbgpost"
	expect "$c" "$d" posted-msi '^c \(live\) -- .*debugfs: 2 interrupts on INTEL-IR-POST, the C chip'
	expect_json "$c" "$d" posted-msi impl c
	cp "$d/interrupts.orig" "$d/proc/interrupts"

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
	expect "$c" "$d" posted-msi '^unknown \(in use: unknown \(.*/interrupts not readable\); impl=rust\) -- the posted-MSI load sample ran on impl=rust; whether posted MSIs are in use: unknown'
	expect "$c" "$d" intr-remap '^rust \(enabled, no PCI/MSI interrupt uses it\)'
	expect "$c" "$d" balancer '^off \(not running: no "irqbalance: Rust balancer every" line\)'

	# Nor the kernel log: the command line alone cannot tell whether the kernel has the Rust
	# code; but no posted MSI is in use.
	c="x86_64/boot.log, no kernel log, no kallsyms"
	run "$c" x86_64 "$d" IRQRS_STATUS_DMESG="$d/no-such-file"
	expect "$c" "$d" posted-msi '^off \(not in use; impl=unknown\) -- posted_msi=rust on the command line; .*; the implementation selected: unknown \(.*cannot tell whether CONFIG_X86_POSTED_MSI_RUST is built in\)'
	expect "$c" "$d" apic-eoi '^unknown \(which APIC driver is in use: the kernel log is not readable'
	expect "$c" "$d" kvm-pv-eoi '^unknown '
fi

# x86_64, posted_msi=c.
if case_of x86_64 boot-c.log; then
	c=x86_64/boot-c.log
	run $c x86_64 "$d"
	expect $c "$d" posted-msi '^off \(not in use; impl=c\) -- the posted-MSI load sample ran on impl=c; posted_msi=c on the command line'
	expect_json $c "$d" posted-msi impl c
	expect $c "$d" intr-remap '^c \(live\) -- "DMAR-IR: Enabled IRQ remapping in x2apic mode"; IR-'
	checkboot $c "$d" "$out/x86_64/boot-c.log" x86_64 c - \
		'PASS: status tool \(irq-rs-status --json\): posted-msi impl=c, verdict off'
fi

# x86_64, the Rust balancer's boot (its debugfs state in the log).
if case_of x86_64 boot-balance.log; then
	c=x86_64/boot-balance.log
	run $c x86_64 "$d"
	expect $c "$d" balancer '^rust \(live\) -- irqbalance.rust=1 on the command line; "irqbalance: Rust balancer every 500 ms \(gain 10%, dwell 2, [0-9]+ moves\)"; .*/irqbalance/state: passes [0-9]+ interval_ms 500 moves [0-9]+ failed 0'
	# No posted_msi=, no load sample, no kallsyms: whether the kernel has the Rust code is
	# unknown, but no posted MSI is in use.
	expect $c "$d" posted-msi '^off \(not in use; impl=unknown\) -- .*the implementation selected: unknown \(no posted_msi=rust\|c on the command line, and .*cannot tell whether CONFIG_X86_POSTED_MSI_RUST is built in\)'
fi

# The comments name files, not the patches of patches/ (which are renumbered).
if grep -nE 'patch [0-9]{4}' "$tool"; then
	fail comments "the tool names patches by number"
else
	pass comments "the tool names no patch by number"
fi

# This host, as it is: whatever its kernel, every component has a line, and the tool exits 0.
c=host
d=$tmp/host
mkdir -p "$d"
for s in "${shells[@]}"; do
	o=$d/out-${s%% *}
	$(shcmd "$s") "$tool" >"$o.txt" 2>"$o.err"
	r=$?
	$(shcmd "$s") "$tool" --json >"$o.json" 2>>"$o.err"
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
	$(shcmd "$s") "$tool" --bogus >/dev/null 2>"$tmp/err"
	r=$?
	$(shcmd "$s") "$tool" --json extra >/dev/null 2>>"$tmp/err"
	r2=$?
	$(shcmd "$s") "$tool" --help >"$tmp/help"
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
