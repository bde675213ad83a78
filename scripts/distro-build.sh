#!/bin/bash
# Build the series with Debian's own kernel configuration plus the distribution fragment
# irq_rs.config, as a distribution kernel team would: the configuration of Debian's kernel of the
# base's version (package linux-config-7.3 at the pinned base version, flavour amd64 or arm64),
# the fragment merged with `make irq_rs.config`, then vmlinux and every directory the series
# changes (their modules included). Not part of `make test`: it builds a distribution kernel (see
# docs/times.md).
#
# Two changes to Debian's configuration, both for what Debian's packaging provides and this
# build does not: no trusted or revocation keys (Debian's name files of its own packaging
# tree), and no debug information (Debian builds it, with BTF, for its -dbg package; it does not
# change what is compiled, and it would double the time). The toolchain is the project's
# (KMAKE_VARS: LLVM, rustc-web, bindgen), not Debian's gcc-14 and rustc 1.85; olddefconfig
# settles what depends on it.
#
# Usage: scripts/distro-build.sh [ARCH...]   (x86_64, arm64; default: both)
# Environment: KMAKE_VARS, JOBS (set by make distro-build).
# Fails on a build error, on an option of irq_rs.config that the configuration lost, and on a
# compiler warning in a file the series changes. Writes build/out/ARCH-debian/summary.txt.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
tree=$build/linux
me=distro-build

[ -d "$tree/.git" ] || { echo "$me: no $tree; run make tree first" >&2; exit 1; }
# The base's Debian version (scripts/assemble.sh pins it): its kernel's configuration.
base_version=$(sed -n 's/^base_version=//p' "$top/scripts/assemble.sh")
[ -n "$base_version" ] || { echo "$me: no base_version in scripts/assemble.sh" >&2; exit 1; }

touched_list=$build/distro-touched.txt
git -C "$tree" diff --name-only base HEAD >"$touched_list"
# The directories of the C and Rust files the series changes (kbuild directories; samples are not
# in a distribution configuration).
dirs=$(grep -E '\.(c|rs)$' "$touched_list" | grep -v -e '^samples/' -e '^rust/' | xargs -n1 dirname |
	sort -u | while read -r d; do [ ! -f "$tree/$d/Makefile" ] || echo "$d"; done)

rc=0
arches=${*:-x86_64 arm64}
for a in $arches; do
	{
		case $a in
		x86_64) deb_arch=amd64 srcarch=x86 ;;
		arm64) deb_arch=arm64 srcarch=arm64 ;;
		*) echo "$me: unknown ARCH $a (x86_64 or arm64)" >&2; exit 2 ;;
		esac
		out=$build/out/$a-debian
		mkdir -p "$out"
		echo "== $me: $a, Debian's config.${deb_arch}_none_$deb_arch of linux-config-7.3 $base_version + irq_rs.config"
		deb=$("$top/scripts/debs.sh" -a "$deb_arch" "$build/apt/base" "trixie-backports sid" \
			"$build/dl" "linux-config-7.3=$base_version") || {
			echo "$me: Debian no longer serves linux-config-7.3 $base_version for $deb_arch" >&2
			exit 1
		}
		dpkg-deb --fsys-tarfile "$deb" |
			tar -xO "./usr/src/linux-config-7.3/config.${deb_arch}_none_$deb_arch.xz" | xz -d >"$out/.config"
		cfg() { "$tree/scripts/config" --file "$out/.config" "$@"; }
		cfg --set-str SYSTEM_TRUSTED_KEYS "" --set-str SYSTEM_REVOCATION_KEYS "" \
			-d DEBUG_INFO_BTF -d DEBUG_INFO_BTF_MODULES -d DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT \
			-d DEBUG_INFO_DWARF4 -d DEBUG_INFO_DWARF5 -e DEBUG_INFO_NONE
		log=$out/build.log
		# The objects of the files the series changes are built again, so that their warnings are
		# in this run's log even when nothing else changed since the last run (a crate's root
		# object: the kernel crate's, rust/kernel.o, for its files).
		while read -r f; do
			case $f in
			rust/kernel/*.rs) rm -f "$out/rust/kernel.o" ;;
			*.c | *.rs) rm -f "$out/${f%.*}.o" ;;
			esac
		done <"$touched_list"
		t=$SECONDS
		# shellcheck disable=SC2086
		if ! make -s -C "$tree" O="$out" ARCH=$a $KMAKE_VARS olddefconfig irq_rs.config >"$log" 2>&1; then
			tail -n 20 "$log" >&2
			echo "$me: $a: Debian's configuration with irq_rs.config does not configure" >&2
			rc=1
			continue
		fi
		lost=0
		while read -r o; do
			grep -qx "$o" "$out/.config" || { echo "$me: $a: $o of irq_rs.config lost" >&2; lost=1; }
		done < <(grep '^CONFIG_' "$tree/arch/$srcarch/configs/irq_rs.config")
		[ $lost -eq 0 ] || { rc=1; continue; }
		# Not the other architecture's directories. (rust/ is part of vmlinux.)
		adirs=$(for d in $dirs; do
			case $d in arch/$srcarch/*) echo "$d/" ;; arch/*) ;; *) echo "$d/" ;; esac
		done)
		# shellcheck disable=SC2086
		if make -s -C "$tree" O="$out" ARCH=$a $KMAKE_VARS -j"$JOBS" vmlinux >>"$log" 2>&1 &&
			make -s -C "$tree" O="$out" ARCH=$a $KMAKE_VARS -j"$JOBS" $adirs >>"$log" 2>&1; then
			w=$(python3 "$top/scripts/series-warnings.py" "$log" "$tree" "$touched_list")
			if [ "$w" -eq 0 ]; then res=ok; else res="FAILED ($w warnings in files the series changes)"; rc=1; fi
		else
			grep -m10 -E 'error' "$log" | sed 's/^/    /' >&2 || true
			res="FAILED: $log"
			rc=1
		fi
		line="$a: Debian $base_version config + irq_rs.config: vmlinux and $(echo $adirs | wc -w) directories: $res, $((SECONDS - t)) s"
		echo "$line" | tee "$out/summary.txt"
	}
done
exit $rc
