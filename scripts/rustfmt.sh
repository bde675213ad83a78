#!/bin/bash
# `make fmt` / `make fmtcheck`: run Debian's rustfmt with the kernel's .rustfmt.toml on the
# overlay's Rust files, in this repository (the same settings as the kernel's `make rustfmt`).
# Usage: scripts/rustfmt.sh fix|check
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
tree=${BUILD:-$top/build}/linux
mode=${1:-check}
cd "$top"
mapfile -t files < <(git ls-files --cached --others --exclude-standard -- '*.rs')
[ ${#files[@]} -gt 0 ] || exit 0
args=(--edition 2021 --config-path "$tree/.rustfmt.toml")
[ "$mode" = check ] && args+=(--check)
/usr/bin/rustfmt "${args[@]}" "${files[@]}"
[ "$mode" = check ] || exit 0
# The upstream Rust files the patches change are checked in the assembled tree (fix them there
# and write them back with make patches).
mapfile -t patched < <(sed -n 's|^diff --git a/\(.*\.rs\) .*|\1|p' patches/*.patch | sort -u |
	while read -r f; do [ -e "$f" ] || echo "$f"; done)
(cd "$tree" && /usr/bin/rustfmt "${args[@]}" "${patched[@]}")
echo "rustfmt: ${#files[@]} overlay files and ${#patched[@]} patched files formatted"
exit 0
