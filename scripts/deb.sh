#!/bin/bash
# Build Debian packages of the project's kernel with the kernel's own `make bindeb-pkg`
# (linux-image-RELEASE, linux-headers-RELEASE, linux-libc-dev), and irq-rs-tools with the status
# tool (scripts/irq-rs-status), for installing on a Debian 12 machine. Two configurations:
#   test    the ARCH test kernel of `make test` (build/out/ARCH/.config: every Rust path and its
#           KUnit suites built in, lockdep and the other debug options on, for QEMU's machines),
#           with loadable modules (the KUnit suites that build as modules and the Rust samples),
#           /proc/config.gz, KUnit off unless booted with kunit.enable=1 (the built-in suites
#           then run at boot, a module's when it is loaded), and the release suffix -irq-rs;
#           `make deb-test` installs it into the workload root filesystem and boots it.
#   debian  Debian's own configuration with irq_rs.config (build/out/ARCH-debian/.config, from
#           `make distro-build`): the kernel for a real machine. Builds Debian's thousands of
#           modules: hours on two cores.
# The packages go to build/out/deb/ARCH-CONFIG/ (dpkg-buildpackage writes them beside the build
# directory, build/out/deb/ARCH-CONFIG/build).
#
# Usage: scripts/deb.sh ARCH [test|debian]
# Environment: KMAKE_VARS, JOBS (set by make deb). Prints the paths of the packages built.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
tree=$build/linux
me=deb

usage() { echo "usage: scripts/deb.sh x86_64|arm64 [test|debian]" >&2; exit 2; }
[ $# -ge 1 ] && [ $# -le 2 ] || usage
arch=$1 flavour=${2:-test}
case $arch in x86_64 | arm64) ;; *) usage ;; esac
case $flavour in
test) src=$build/out/$arch/.config how="make build ARCH=$arch" ;;
debian) src=$build/out/$arch-debian/.config how="make distro-build ARCH=$arch" ;;
*) usage ;;
esac
[ -f "$src" ] || { echo "$me: no $src; run $how first" >&2; exit 1; }

pkgs=$build/out/deb/$arch-$flavour
out=$pkgs/build
mkdir -p "$out"
cp "$src" "$out/.config"
cfg() { "$tree/scripts/config" --file "$out/.config" "$@"; }
if [ "$flavour" = test ]; then
	cfg -e MODULES -e MODULE_UNLOAD -e IKCONFIG -e IKCONFIG_PROC -d KUNIT_DEFAULT_ENABLED \
		--set-str LOCALVERSION -irq-rs -d LOCALVERSION_AUTO
	# The KUnit suites that build as modules, and the Rust samples, become modules: what a user
	# loads on a machine.
	for o in INTEL_IRQ_REMAP_RUST_KUNIT_TEST ARM_GIC_V3_RUST_ITS_KUNIT_TEST IRQ_BALANCE_RUST_KUNIT_TEST; do
		if grep -q "^CONFIG_$o=y" "$out/.config"; then cfg -m "$o"; fi
	done
	for o in $(sed -n 's/^config \(SAMPLE_RUST_[A-Z0-9_]*\)$/\1/p' "$tree/samples/rust/Kconfig"); do
		grep -q "^CONFIG_$o=y" "$out/.config" || continue
		cfg -m "$o"
	done
fi
log=$out/build.log
t=$SECONDS
# DPKG_FLAGS=-d: dpkg-buildpackage does not check the build dependencies that mkdebian lists for
# a gcc build on a Debian builder: libdw-dev is for gendwarfksyms, which no configuration here
# enables, and the rest are what make deps installs (debhelper included: debian/rules runs
# dh_listpackages).
rm -f "$pkgs"/*.deb "$pkgs"/*.changes "$pkgs"/*.buildinfo
# shellcheck disable=SC2086
if ! make -s -C "$tree" O="$out" ARCH=$arch $KMAKE_VARS olddefconfig >"$log" 2>&1 ||
	! make -C "$tree" O="$out" ARCH=$arch $KMAKE_VARS -j"$JOBS" DPKG_FLAGS=-d bindeb-pkg >>"$log" 2>&1; then
	grep -m10 -E 'error|Error' "$log" | sed 's/^/    /' >&2 || true
	echo "$me: make bindeb-pkg failed ($arch, $flavour): $log" >&2
	exit 1
fi
echo "$me: $arch $flavour: bindeb-pkg in $((SECONDS - t)) s" >&2

# The status tool, as a package of its own (architecture all): irq-rs-status in /usr/sbin, at the
# kernel packages' version.
version=$(dpkg-parsechangelog -l "$out/debian/changelog" -S Version)
tools=$pkgs/irq-rs-tools
rm -rf "$tools"
mkdir -p "$tools/DEBIAN" "$tools/usr/sbin" "$tools/usr/share/doc/irq-rs-tools"
install -m 755 "$top/scripts/irq-rs-status" "$tools/usr/sbin/irq-rs-status"
cat >"$tools/usr/share/doc/irq-rs-tools/copyright" <<EOC
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: irq-rs-status

Files: *
License: GPL-2.0
 On Debian systems, the full text of the GNU General Public License version 2 can be found in
 /usr/share/common-licenses/GPL-2.
EOC
cat >"$tools/DEBIAN/control" <<EOC
Package: irq-rs-tools
Version: $version
Architecture: all
Maintainer: IRQ-RS Developers <irq-rs@localhost>
Section: admin
Priority: optional
Description: which Rust interrupt-delivery paths the running kernel uses
 irq-rs-status reads /proc, debugfs and the kernel log and reports, one line
 a component, whether the GICv3 driver and its ITS, the local-APIC EOI, posted
 MSIs, VT-d interrupt remapping and the interrupt balancer run in Rust or C,
 with the evidence (--json: the same as JSON).
EOC
dpkg-deb --root-owner-group -Zxz --build "$tools" "$pkgs/irq-rs-tools_${version}_all.deb" >/dev/null
rm -rf "$tools"
cp "$out/include/config/kernel.release" "$pkgs/kernel.release"
ls "$pkgs"/*.deb
