#!/bin/bash
# Boot the kernel built for ARCH in QEMU with the test initramfs, on the machine of
# tests/qemu/ARCH.args. Extra kernel command-line words come from $APPEND.
# Usage: tests/boot/qemu.sh ARCH [QEMU-ARGS...]
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
out=${BUILD:-$top/build}/out
arch=$1
shift

case $arch in
x86_64) qemu=qemu-system-x86_64 kernel=arch/x86/boot/bzImage console=ttyS0 ;;
arm64) qemu=qemu-system-aarch64 kernel=arch/arm64/boot/Image.gz console=ttyAMA0 ;;
*) echo "qemu.sh: unknown ARCH $arch" >&2; exit 1 ;;
esac

initrd=$out/$arch/initramfs.cpio
bash "$top/tests/boot/mkinitramfs.sh" "$arch" "$initrd"
mapfile -t machine < <(grep -v '^$' "$top/tests/qemu/$arch.args")
exec "/usr/bin/$qemu" "${machine[@]}" -nographic -no-reboot -nodefaults -serial mon:stdio \
	-kernel "$out/$arch/$kernel" -initrd "$initrd" \
	-append "console=$console rdinit=/init kunit.enable=0 ${APPEND:-}" "$@"
