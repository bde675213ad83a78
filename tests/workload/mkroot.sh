#!/bin/bash
# Build the initramfs of the real-workload boots (`make workload`): Debian 12's own fio, iperf3,
# stress-ng, iproute2, util-linux and irqbalance for ARCH, with exactly the shared libraries they
# load, a static busybox for the shell, and tests/workload/init. The packages and their
# dependency closure come from Debian with the project-local apt state (an empty dpkg status, so
# apt resolves every dependency); the archive is cached in build/workload/ and rebuilt only when
# this script, the init or the package set changes.
#
# An initramfs rather than a root filesystem booted with systemd: the guest must reach its
# workload in seconds under TCG, and a foreign-architecture root (arm64) would need a second stage
# run under emulation; the programs are Debian's binaries either way.
#
# Usage: tests/workload/mkroot.sh ARCH OUTPUT
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$top/build}
arch=$1 out=$2
case $arch in
x86_64) deb_arch=amd64 triplet=x86_64-linux-gnu ;;
arm64) deb_arch=arm64 triplet=aarch64-linux-gnu ;;
*) echo "mkroot: unknown ARCH $arch" >&2; exit 1 ;;
esac

packages="fio iperf3 stress-ng iproute2 util-linux irqbalance busybox-static"
# The programs the init runs; everything they load comes along (DT_NEEDED closure).
programs="usr/bin/fio usr/bin/iperf3 usr/bin/stress-ng bin/ip sbin/ip usr/sbin/irqbalance
	usr/bin/taskset bin/busybox"
# arm64: Debian's QEMU for the nested guest (-accel kvm: the machine enters at EL2).
if [ "$arch" = arm64 ]; then
	packages="$packages qemu-system-arm"
	programs="$programs usr/bin/qemu-system-aarch64"
fi

stamp="$packages $(cat "$0" "$top/tests/workload/init" | sha256sum | cut -c1-16)"
if [ -f "$out" ] && [ "$(cat "$out.stamp" 2>/dev/null)" = "$stamp" ]; then
	exit 0
fi

state=$build/apt/$deb_arch
opts=(-o APT::Architecture="$deb_arch" -o APT::Architectures::="$deb_arch"
	-o Debug::NoLocking=1)
empty=$build/workload/dpkg-$deb_arch
mkdir -p "$empty" "$(dirname "$out")"
: >"$empty/status"
apt() { "$top/scripts/apt-local.sh" "$state" bookworm "${opts[@]}" \
	-o Dir::State="$empty" -o Dir::State::status="$empty/status" "$@"; }
# The dependency closure, as PACKAGE=VERSION in apt's order: what `apt-get install` would unpack.
closure() {
	apt --no-install-recommends -s install $packages |
		sed -n 's/^Inst \([^ ]*\) [^(]*(\([^ ]*\) .*/\1=\2/p'
}
# Resolve first from the lists we have; refresh them only when that fails (a package moved on).
pins=$(closure 2>/dev/null) || true
if [ -z "$pins" ]; then
	apt -qq update
	pins=$(closure)
fi
[ -n "$pins" ] || { echo "mkroot: apt resolved no packages for $deb_arch" >&2; exit 1; }
list=$(for p in $pins; do echo "${p%%=*}"; done)
# Each at that version into the apt cache (scripts/debs.sh: kept there, fetched once).
debs=$("$top/scripts/debs.sh" -a "$deb_arch" -o Debug::NoLocking=1 \
	-o Dir::State="$empty" -o Dir::State::status="$empty/status" \
	"$state" bookworm "$state/cache/archives" $pins) || {
	echo "mkroot: downloading $packages ($deb_arch) from Debian failed" >&2; exit 1; }

x=$(mktemp -d) root=$(mktemp -d)
trap 'rm -rf "$x" "$root"' EXIT
for deb in $debs; do
	dpkg-deb -x "$deb" "$x"
done

# Copy one file of the extracted packages into the root, resolving symbolic links to their
# targets so that a library's SONAME link and the file both arrive.
copy() {
	local f=$1
	[ -e "$root/$f" ] || [ -L "$root/$f" ] && return 0
	mkdir -p "$root/$(dirname "$f")"
	if [ -L "$x/$f" ]; then
		local t; t=$(readlink "$x/$f")
		cp -P "$x/$f" "$root/$f"
		case $t in /*) copy "${t#/}" ;; *) copy "$(dirname "$f")/$t" ;; esac
	else
		cp "$x/$f" "$root/$f"
	fi
}
# (librados finds libceph-common through its RUNPATH, usr/lib/TRIPLET/ceph.)
libdirs="lib/$triplet usr/lib/$triplet usr/lib/$triplet/ceph lib usr/lib"
declare -A seen=()
need() {
	local f=$1 so d
	copy "$f"
	for so in $(llvm-readelf -d "$x/$f" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
		[ -z "${seen[$so]:-}" ] || continue
		seen[$so]=1
		for d in $libdirs; do
			if [ -e "$x/$d/$so" ]; then need "$d/$so"; continue 2; fi
		done
		echo "mkroot: $so (needed by $f) is in no package" >&2
		exit 1
	done
}
for p in $programs; do
	[ -e "$x/$p" ] || continue
	need "$p"
done
# The dynamic loader (PT_INTERP), which no DT_NEEDED names.
interp=$(llvm-readelf -l "$x/usr/bin/fio" | sed -n 's/.*interpreter: \/\(.*\)\]/\1/p')
need "$interp"

mkdir -p "$root"/{dev,proc,sys,tmp,run,etc,var/run,mnt}
for a in $("$x/bin/busybox" --list 2>/dev/null || /bin/busybox --list); do
	for d in bin sbin usr/bin usr/sbin; do [ -e "$root/$d/$a" ] && continue 2; done
	ln -s /bin/busybox "$root/bin/$a"
done
printf '#!/bin/sh\necho balance_level=core\n' >"$root/etc/irqbalance-policy"
chmod +x "$root/etc/irqbalance-policy"
cp "$top/tests/workload/init" "$root/init"
chmod +x "$root/init"
(cd "$root" && find . | sort | cpio -o -H newc --quiet -R 0:0) >"$out.tmp"
mv "$out.tmp" "$out"
echo "$stamp" >"$out.stamp"
echo "mkroot: $out ($(du -h "$out" | cut -f1), $(echo "$list" | wc -w) packages)"
