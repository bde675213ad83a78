#!/bin/bash
# Build the initramfs of the boot test and `make run`: a static busybox for ARCH, /init and the
# status tool (scripts/irq-rs-status, as /bin/irq-rs-status).
# Usage: tests/boot/mkinitramfs.sh ARCH OUTPUT
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$top/build}
arch=$1 out=$2

case $arch in
x86_64) busybox=/bin/busybox; deb_arch=amd64 ;;
arm64) busybox=""; deb_arch=arm64 ;;
*) echo "mkinitramfs: unknown ARCH $arch" >&2; exit 1 ;;
esac

# A Debian 12 package for deb_arch: the newest .deb of it in build/dl, else downloaded there with
# the project-local apt state build/apt/DEB_ARCH (scripts/debs.sh, which fails naming it).
deb_of() {
	local deb
	deb=$(ls "$build"/dl/"$1"_*_"$deb_arch".deb 2>/dev/null | tail -n 1 || true)
	[ -n "$deb" ] ||
		deb=$("$top/scripts/debs.sh" -a "$deb_arch" "$build/apt/$deb_arch" bookworm \
			"$build/dl" "$1") ||
		{ echo "mkinitramfs: no $1 ($deb_arch) for the initramfs" >&2; return 1; }
	echo "$deb"
}

# The host's busybox-static serves x86_64; for arm64 take Debian's arm64 busybox-static package.
if [ -z "$busybox" ]; then
	deb=$(deb_of busybox-static)
	x=$build/busybox-$deb_arch
	rm -rf "$x" && mkdir -p "$x"
	dpkg-deb -x "$deb" "$x"
	busybox=$x/bin/busybox
fi

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/{bin,dev,proc,sys,tmp}
cp "$busybox" "$root/bin/busybox"
cp "$top/tests/boot/init" "$root/init"
# The status tool, which the boot test runs (and `make run`'s shell has).
cp "$top/scripts/irq-rs-status" "$root/bin/irq-rs-status"
chmod +x "$root/init" "$root/bin/busybox" "$root/bin/irq-rs-status"

# With INITRAMFS_IRQBALANCE=1 (x86_64, the balancer benchmark): Debian's irqbalance daemon
# (downloaded with the project-local apt state), the host's copies of the libraries it links
# (Debian 12's, as the package's), and a policy script that lets it balance interrupts without a
# device per core (by default it balances those per package only).
if [ "${INITRAMFS_IRQBALANCE:-0}" = 1 ] && [ "$arch" = x86_64 ]; then
	deb=$(deb_of irqbalance)
	x=$(mktemp -d)
	dpkg-deb -x "$deb" "$x"
	mkdir -p "$root/usr/sbin" "$root/etc" "$root/run"
	cp "$x/usr/sbin/irqbalance" "$root/usr/sbin/irqbalance"
	for lib in $(ldd "$x/usr/sbin/irqbalance" | grep -o '/[^ ]*'); do
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done
	rm -rf "$x"
	printf '#!/bin/sh\necho balance_level=core\n' >"$root/etc/irqbalance-policy"
	chmod +x "$root/etc/irqbalance-policy"
	mkdir -p "$root/usr/bin" && ln -sf /bin/busybox "$root/usr/bin/env"
fi
(cd "$root" && find . | sort | cpio -o -H newc --quiet -R 0:0) >"$out"
