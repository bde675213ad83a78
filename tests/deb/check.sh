#!/bin/bash
# `make deb-test`: the packages of `make deb` (the test configuration) installed on Debian 12 and
# booted.
#   1. apt resolves them for Debian 12 (bookworm, the project-local apt state, an empty dpkg
#      status: every dependency must come from bookworm): apt-get -s install ./PACKAGE.deb...;
#   2. the host's dpkg (Debian 12's) installs them into the workload root filesystem
#      (tests/workload/mkroot.sh: Debian 12's own programs and libraries), maintainer scripts run
#      in that root; the kernel image, its modules and the status tool must land where Debian
#      puts them, and dpkg's database must list them as installed. arm64 packages are installed
#      the same way, without their maintainer scripts: this machine cannot run arm64 programs
#      (no binfmt emulation), and the scripts are the kernel's generic hook runners, the same
#      shell as x86_64's, which the x86_64 run executes;
#   3. that root boots on the kernel image dpkg installed (/boot/vmlinuz-RELEASE) with
#      kunit.enable=1 (the package's kernel keeps KUnit off otherwise): the built-in suites run at
#      boot, the KUnit modules' suites when tests/deb/init loads them (insmod, then rmmod, as the
#      sample modules), then the status tool runs; the console log is checked
#      (tests/deb/check.py): the release, the modules, every suite passed, the architecture's
#      Rust paths live (x86_64: the local-APIC EOI and VT-d remapping; arm64: the GICv3 root and
#      its ITS), no splat.
# Usage: tests/deb/check.sh [x86_64|arm64]
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$top/build}
me=deb-test
arch=${1:-x86_64}
case $arch in
x86_64) deb_arch=amd64 ;;
arm64) deb_arch=arm64 ;;
*) echo "usage: tests/deb/check.sh [x86_64|arm64]" >&2; exit 2 ;;
esac
[ "$(id -u)" -eq 0 ] || { echo "$me: needs root: dpkg --root runs the packages' maintainer scripts in a chroot" >&2; exit 1; }
dir=$build/out/deb/$arch-test
[ -f "$dir/kernel.release" ] || { echo "$me: no packages in $dir; run make deb ARCH=$arch first" >&2; exit 1; }
rel=$(cat "$dir/kernel.release")
image=$(ls "$dir"/linux-image-"${rel}"_*_$deb_arch.deb 2>/dev/null | head -n 1)
tools=$(ls "$dir"/irq-rs-tools_*_all.deb 2>/dev/null | head -n 1)
[ -n "$image" ] && [ -n "$tools" ] || { echo "$me: $dir lacks linux-image-${rel} or irq-rs-tools; run make deb ARCH=$arch" >&2; exit 1; }
debs=("$image" "$tools")
echo "== $me: $(basename "$image") and $(basename "${debs[1]}") (release $rel)"
fail() { echo "$me: FAIL: $*"; exit 1; }

# 1. Installable on Debian 12: apt resolves every dependency from bookworm alone.
empty=$build/workload/dpkg-$deb_arch
mkdir -p "$empty"
: >"$empty/status"
sim=$("$top/scripts/apt-local.sh" "$build/apt/$deb_arch" bookworm -o Debug::NoLocking=1 \
	-o APT::Architecture=$deb_arch -o Dir::State="$empty" -o Dir::State::status="$empty/status" \
	--no-install-recommends -s install "${debs[@]}" 2>&1) || { echo "$sim"; fail "apt cannot install the packages on Debian 12"; }
for d in "${debs[@]}"; do
	p=$(dpkg-deb -f "$d" Package)
	grep -q "^Inst $p " <<<"$sim" || { echo "$sim"; fail "apt would not install $p"; }
done
echo "   apt (bookworm): $(grep -c '^Inst ' <<<"$sim") packages to install, the two and their dependencies"

# 2. Installed into the workload root filesystem by dpkg.
root=$build/workload/root-$arch.cpio
bash "$top/tests/workload/mkroot.sh" "$arch" "$root"
r=$(mktemp -d)
trap 'rm -rf "$r"' EXIT
(cd "$r" && cpio -id --quiet <"$root")
mkdir -p "$r/var/lib/dpkg/info" "$r/var/lib/dpkg/updates" "$r/boot"
: >"$r/var/lib/dpkg/status"
# The root carries the dependencies' files (copied by mkroot) but no dpkg database listing them.
log=$dir/install.log
: >"$log"
if [ "$arch" != x86_64 ]; then
	# A foreign architecture for the host's dpkg; the packages without their maintainer scripts,
	# which would run the root's (arm64) shell (see the top).
	dpkg --root="$r" --add-architecture "$deb_arch"
	for i in "${!debs[@]}"; do
		u=$(mktemp -d)
		dpkg-deb -R "${debs[$i]}" "$u/p"
		rm -f "$u"/p/DEBIAN/{preinst,postinst,prerm,postrm}
		dpkg-deb -b "$u/p" "$u/$(basename "${debs[$i]}")" >>"$log"
		cp "$u/$(basename "${debs[$i]}")" "$dir/noscripts-$(basename "${debs[$i]}")"
		rm -rf "$u"
		debs[$i]=$dir/noscripts-$(basename "${debs[$i]}")
	done
fi
dpkg --root="$r" --force-depends -i "${debs[@]}" >>"$log" 2>&1 || { cat "$log"; fail "dpkg -i failed"; }
for f in "boot/vmlinuz-$rel" "boot/config-$rel" "boot/System.map-$rel" "lib/modules/$rel/modules.dep" \
	usr/sbin/irq-rs-status; do
	[ -e "$r/$f" ] || fail "dpkg installed no /$f"
done
echo "   dpkg installed: $(grep -c '^Status: install ok installed' "$r/var/lib/dpkg/status") packages," \
	"/boot/vmlinuz-$rel, $(find "$r/lib/modules/$rel" -name '*.ko*' | wc -l) modules"

# 3. Booted on the kernel dpkg installed.
cp "$top/tests/deb/init" "$r/init"
chmod +x "$r/init"
initrd=$dir/root-installed.cpio
(cd "$r" && find . | sort | cpio -o -H newc --quiet -R 0:0) >"$initrd"
kdir=$build/out/$arch-deb
mkdir -p "$kdir"
cp "$r/boot/vmlinuz-$rel" "$kdir/vmlinuz"
console=$dir/boot.log
start=$(date +%s)
BUILD=$build MACHINE=$arch INITRD=$initrd KERNEL=vmlinuz \
	APPEND="kunit.enable=1" \
	timeout "${BOOT_TIMEOUT:-600}" bash "$top/tests/boot/qemu.sh" "$arch-deb" </dev/null >"$console" 2>&1 ||
	fail "QEMU exited with $? (124: BOOT_TIMEOUT), log $console"
echo "   booted in $(($(date +%s) - start)) s, log $console"
python3 "$top/tests/deb/check.py" "$console" "$rel" "$r" "$arch"
