#!/bin/bash
# Boot the kernel built for TARGET (an ARCH, or ARCH-VARIANT built in build/out/ARCH-VARIANT) in
# QEMU with the test initramfs, on the machine of tests/qemu/$MACHINE.args (MACHINE defaults to
# the ARCH; the boot test also uses arm64-itsoff, the arm64 machine without the GIC's ITS). Extra
# kernel command-line words come from $APPEND; extra QEMU arguments follow TARGET. $INITRD
# replaces the busybox initramfs; $KERNEL, a path in the build directory, replaces the kernel
# image (the arm64 ACPI boot's UEFI firmware loads the uncompressed Image, an EFI application).
# Usage: tests/boot/qemu.sh TARGET [QEMU-ARGS...]
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
out=${BUILD:-$top/build}/out
target=$1
arch=${target%%-*}
mname=${MACHINE:-$arch}
shift

case $arch in
x86_64) qemu=qemu-system-x86_64 kernel=arch/x86/boot/bzImage console=ttyS0 ;;
arm64) qemu=qemu-system-aarch64 kernel=arch/arm64/boot/Image.gz console=ttyAMA0 ;;
*) echo "qemu.sh: unknown ARCH $arch" >&2; exit 1 ;;
esac

# $INITRD: an initramfs built elsewhere (the workload's, tests/workload/mkroot.sh).
initrd=${INITRD:-$out/$target/initramfs.cpio}
[ -n "${INITRD:-}" ] || bash "$top/tests/boot/mkinitramfs.sh" "$arch" "$initrd"
mapfile -t machine < <(grep -v '^$' "$top/tests/qemu/$mname.args")
exec "/usr/bin/$qemu" "${machine[@]}" -nographic -no-reboot -nodefaults -serial mon:stdio \
	-kernel "$out/$target/${KERNEL:-$kernel}" -initrd "$initrd" \
	-append "console=$console rdinit=/init kunit.enable=0 ${APPEND:-}" "$@"
