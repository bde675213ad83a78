#!/bin/bash
# Install everything the project needs on Debian 12 (bookworm). Idempotent.
#
# - Debian 12 packages: the Rust 1.96 "-web" toolchain, clang/LLVM 22 (bookworm-security; the
#   same LLVM as rustc-web 1.96, so Rust can inline the C helpers), the kernel build tools,
#   busybox-static for the initramfs, ccache for the C side, dpkg-dev and debhelper for the
#   kernel's bindeb-pkg (make deb; its debian/rules runs dh_listpackages).
# - QEMU 10 from bookworm-backports, installed through a project-local apt state so that the
#   host's apt sources are not changed.
# - bindgen-cli 0.72.1 with `cargo install --locked` into tools/ (project-local).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
sudo=""
[ "$(id -u)" = 0 ] || sudo=sudo
export DEBIAN_FRONTEND=noninteractive

pkgs=(rustc-web rust-web-src rustfmt-web rust-web-clippy
      clang-22 lld-22 llvm-22 libclang-22-dev ccache
      make flex bison bc libelf-dev libssl-dev cpio busybox-static
      python3 python3-ply python3-git git xz-utils zstd rsync kmod dwarves
      dpkg-dev debhelper)

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "deps: installing ${missing[*]}"
	$sudo apt-get update -qq
	$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# QEMU >= 10 (x2APIC under TCG needs >= 9.0; bookworm's 7.2 lacks it), and the arm64 UEFI
# firmware of the ACPI boot test (qemu-efi-aarch64's AAVMF).
qemu_ok() {
	command -v qemu-system-x86_64 >/dev/null && command -v qemu-system-aarch64 >/dev/null || return 1
	[ -f /usr/share/AAVMF/AAVMF_CODE.fd ] && [ -f /usr/share/AAVMF/AAVMF_VARS.fd ] || return 1
	v=$(qemu-system-x86_64 --version | sed -n 's/.*version \([0-9]*\)\..*/\1/p')
	[ "${v:-0}" -ge 10 ]
}
if ! qemu_ok; then
	echo "deps: installing QEMU from bookworm-backports (project-local apt state)"
	st="$top/build/apt/bpo"
	suites="bookworm bookworm-updates bookworm-security bookworm-backports"
	$sudo "$top/scripts/apt-local.sh" "$st" "$suites" update -qq
	$sudo "$top/scripts/apt-local.sh" "$st" "$suites" install -y -qq --no-install-recommends \
		-t bookworm-backports qemu-system-x86 qemu-system-arm qemu-system-data ipxe-qemu \
		seabios qemu-efi-aarch64
	qemu_ok || { echo "deps: QEMU >= 10 not available" >&2; exit 1; }
fi

# bindgen-cli 0.72.1, built with whichever cargo is present (rustup's or Debian's), linked
# against libclang 22 at run time.
if ! "$top/tools/bin/bindgen" --version 2>/dev/null | grep -q '0\.72\.1'; then
	cargo=$(command -v cargo || true)
	if [ -z "$cargo" ]; then
		$sudo apt-get install -y -qq --no-install-recommends cargo-web
		cargo=$(command -v cargo)
	fi
	echo "deps: building bindgen-cli 0.72.1 with $cargo"
	LIBCLANG_PATH=/usr/lib/llvm-22/lib "$cargo" install --locked --quiet \
		--root "$top/tools" bindgen-cli --version 0.72.1
fi

echo "deps: ok ($(/usr/bin/rustc --version), $(clang-22 --version | head -1), $(qemu-system-x86_64 --version | head -1), $("$top/tools/bin/bindgen" --version))"
