#!/bin/bash
# `make workload`: Debian's fio, iperf3, stress-ng and irqbalance (tests/workload/mkroot.sh) on
# the workload kernel of each ARCH (build/out/ARCH-workload), on a 4-CPU machine with a virtio-blk
# disk (4 queues), an NVMe disk (one I/O queue per CPU: managed MSI-X), two virtio-net NICs joined
# by a QEMU hub (no host networking), and on x86_64 the q35 AHCI disk, every interrupt remapped
# (intel-iommu,intremap=on); on arm64 the GICv3 with its ITS (MSI-X as LPIs).
#
# The ways: arm64 boots with irqchip.gicv3=c, with the Rust driver on the Rust fasteoi
# (irqchip.gicv3=rust irqchip.gicv3_flow=fasteoi) and on the strict flow (irqchip.gicv3=rust);
# x86_64 boots once (no boot switch changes a real device's interrupt path there yet), then twice
# more for the balancers: the irqbalance daemon, and the kernel's (irqbalance.rust=1), without CPU
# hotplug so that the spread is the balancer's. Each full way has a second boot on one vCPU under
# -icount shift=0,sleep=off with WL_IOS I/Os of fio per disk: guest instructions per I/O. arm64
# then runs a nested guest on each GIC driver: this kernel, under Debian's QEMU with KVM in the
# workload guest (tests/workload/l2-init), its timer and IPIs checked, and the host's forwarding of
# the virtual timer to the vCPU (IRQD_FORWARDED_TO_VCPU) seen in genirq's debugfs.
#
# Environment: WL_SECS (seconds of load per boot, default 60), WL_IOS (I/Os per disk in the
# icount boots, default 20000), WL_WAYS (a subset of the way names below), WL_TIMEOUT (seconds
# per boot, default 900), WL_CHECK_ONLY=1 (check the logs of the last run again, boot nothing).
# Logs: build/out/TARGET/workload-WAY.log, figures beside them (.json), and a nested way's QEMU
# trace (.trace). Before the first boot of a TARGET, those of every way it will boot are removed:
# no log of an earlier run is read as this one's (WL_CHECK_ONLY=1 removes nothing).
#
# Usage: tests/workload/run.sh TARGET...
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$top/build}
out=$build/out
secs=${WL_SECS:-60}
ios=${WL_IOS:-20000}
rc=0
results=()

# Does this run boot WAY (WL_WAYS: a way, or the full way of an -icount one)?
selected() {
	case " ${WL_WAYS:-} " in "  ") ;; *" ${1%-icount} "*) ;; *" $1 "*) ;; *) return 1 ;; esac
}

for target in "$@"; do
	arch=${target%%-*}
	dir=$out/$target
	if [ ! -f "$dir/vmlinux" ]; then
		echo "workload: no kernel in $dir (make build ARCH=$target)" >&2
		rc=1
		continue
	fi
	root=$build/workload/root-$arch.cpio
	bash "$top/tests/workload/mkroot.sh" "$arch" "$root" || { rc=1; continue; }
	disks=$build/workload/disks-$arch
	mkdir -p "$disks"
	devs=(-drive "if=none,id=vb,format=raw,file=$disks/vblk.img"
		-device virtio-blk-pci,drive=vb,num-queues=4
		-drive "if=none,id=nv,format=raw,file=$disks/nvme.img"
		-device nvme,serial=wl0,drive=nv,max_ioqpairs=4
		-netdev hubport,id=n0,hubid=0 -device virtio-net-pci,netdev=n0,mac=52:54:00:12:34:01
		-netdev hubport,id=n1,hubid=0 -device virtio-net-pci,netdev=n1,mac=52:54:00:12:34:02)
	case $arch in
	x86_64)
		devs+=(-drive "if=none,id=sd,format=raw,file=$disks/ahci.img" -device ide-hd,drive=sd,bus=ide.0)
		ways=("rust:" "intel_ir=c:intel_ir=c" "daemon:wl.balance=daemon wl.hotplug=0"
			"rust-balancer:wl.balance=rust wl.hotplug=0 irqbalance.rust=1")
		icount_ways="rust intel_ir=c" ;;
	arm64)
		ways=("gicv3=c:irqchip.gicv3=c" "gicv3=rust-fasteoi:irqchip.gicv3=rust irqchip.gicv3_flow=fasteoi"
			"gicv3=rust:irqchip.gicv3=rust")
		icount_ways="gicv3=c gicv3=rust-fasteoi gicv3=rust" ;;
	esac
	runs=()
	for w in "${ways[@]}"; do runs+=("${w%%:*}|full|${w#*:}"); done
	if [ "$arch" = arm64 ]; then
		# The nested guest: this kernel's Image.gz and a busybox initramfs with
		# tests/workload/l2-init, appended to the root as a second cpio archive under /l2.
		l2=$(mktemp -d)
		mkdir -p "$l2/l2" "$l2/i/bin" "$l2/i/proc" "$l2/i/sys" "$l2/i/dev"
		cp "$dir/arch/arm64/boot/Image.gz" "$l2/l2/Image.gz"
		(cd "$l2/i" && cpio -id --quiet bin/busybox <"$root")
		for a in sh mount grep sed cat sleep poweroff; do ln -s busybox "$l2/i/bin/$a"; done
		cp "$top/tests/workload/l2-init" "$l2/i/init" && chmod +x "$l2/i/init"
		(cd "$l2/i" && find . | sort | cpio -o -H newc --quiet -R 0:0) >"$l2/l2/initrd.cpio"
		(cd "$l2" && find l2 | sort | cpio -o -H newc --quiet -R 0:0) >"$l2/l2.cpio"
		cat "$root" "$l2/l2.cpio" >"$dir/workload-nested.cpio"
		rm -rf "$l2"
		runs+=("nested-gicv3=rust|nested|irqchip.gicv3=rust" "nested-gicv3=c|nested|irqchip.gicv3=c")
	fi
	for w in $icount_ways; do
		for x in "${ways[@]}"; do [ "${x%%:*}" = "$w" ] && runs+=("$w-icount|icount|${x#*:}"); done
	done
	if [ -z "${WL_CHECK_ONLY:-}" ]; then
		for r in "${runs[@]}"; do
			way=${r%%|*}
			selected "$way" || continue
			log=$dir/workload-${way//=/-}.log
			rm -f "$log" "${log%.log}.json" "${log%.log}.trace"
		done
	fi
	for r in "${runs[@]}"; do
		way=${r%%|*} rest=${r#*|}
		mode=${rest%%|*} append=${rest#*|}
		selected "$way" || continue
		log=$dir/workload-${way//=/-}.log
		machine=$arch-workload
		[ "$mode" = icount ] && machine=$arch-workload-icount
		echo "== workload $target $way ($mode${append:+: $append})"
		if [ -n "${WL_CHECK_ONLY:-}" ]; then
			python3 "$top/tests/workload/check.py" check "$target $way" "$log" \
				"${log%.log}.json" "$mode" "$arch" || rc=1
			results+=("${log%.log}.json")
			continue
		fi
		# New disks at every boot: no block a previous boot wrote can pass a verification.
		for d in vblk nvme ahci; do
			rm -f "$disks/$d.img"
			truncate -s 128M "$disks/$d.img"
		done
		start=$(date +%s)
		initrd=$root trace=()
		if [ "$mode" = nested ]; then
			# The host's (L1's) EOIs and deactivations, by INTID (L2's go to ICV_*).
			initrd=$dir/workload-nested.cpio
			trace=(-trace gicv3_icc_eoir_write -trace gicv3_icc_dir_write -D "${log%.log}.trace")
		fi
		# A nested boot takes about 70 s; a host that deactivates the forwarded timer fills its
		# trace at gigabytes a minute, so it gets 300 s (and L2 240 s) at most.
		to=${WL_TIMEOUT:-900}
		[ "$mode" != nested ] || { [ "$to" -le 300 ] || to=300; append="$append wl.l2timeout=240"; }
		MACHINE=$machine INITRD=$initrd \
			APPEND="wl.mode=$mode wl.secs=$secs wl.ios=$ios $append" \
			timeout "$to" bash "$top/tests/boot/qemu.sh" "$target" "${devs[@]}" "${trace[@]}" \
			</dev/null >"$log" 2>&1
		q=$?
		echo "   $(($(date +%s) - start)) s, log $log"
		[ $q = 0 ] || { echo "workload: $way: QEMU exited with $q (124: WL_TIMEOUT)"; rc=1; }
		python3 "$top/tests/workload/check.py" check "$target $way" "$log" "${log%.log}.json" \
			"$mode" "$arch" || rc=1
		results+=("${log%.log}.json")
	done
done
if [ ${#results[@]} -gt 0 ]; then
	echo "== workload figures"
	python3 "$top/tests/workload/check.py" table "${results[@]}"
fi
echo "== make workload: rc=$rc"
exit $rc
