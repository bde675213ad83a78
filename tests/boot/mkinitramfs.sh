#!/bin/bash
# Build the initramfs of the boot test and `make run`: a static busybox for ARCH and /init.
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

# The host's busybox-static serves x86_64; for arm64 take Debian's arm64 busybox-static package,
# downloaded with a project-local apt state.
if [ -z "$busybox" ]; then
	deb=$(ls "$build"/dl/busybox-static_*_"$deb_arch".deb 2>/dev/null | tail -n 1 || true)
	if [ -z "$deb" ]; then
		mkdir -p "$build/dl"
		opts=(-o APT::Architecture="$deb_arch" -o APT::Architectures::="$deb_arch")
		"$top/scripts/apt-local.sh" "$build/apt/$deb_arch" bookworm "${opts[@]}" -qq update
		(cd "$build/dl" && "$top/scripts/apt-local.sh" "$build/apt/$deb_arch" bookworm \
			"${opts[@]}" -qq download busybox-static 2>&1 | grep -v unsandboxed || true)
		deb=$(ls "$build"/dl/busybox-static_*_"$deb_arch".deb | tail -n 1)
	fi
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
chmod +x "$root/init" "$root/bin/busybox"
(cd "$root" && find . | sort | cpio -o -H newc --quiet -R 0:0) >"$out"
