#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The Rust GICv3 driver's Rust files under drivers/irqchip/ have no `unsafe` code and no unsafe
# attribute (`#[no_mangle]`, `#[link_section]`, `#[export_name]`): it lives in the kernel crate
# (rust/kernel/irq/gic_v3/), whose `gic_v3_driver!` defines the C entry points. Comments are
# ignored. Exits non-zero, naming the lines, otherwise.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
shopt -s nullglob
files=("$top"/drivers/irqchip/*.rs)
# Not vacuous: the driver itself must be among the files checked.
[ -f "$top/drivers/irqchip/irq_gic_v3_rust.rs" ] || {
	echo "check-gic-unsafe: drivers/irqchip/irq_gic_v3_rust.rs missing" >&2
	exit 1
}
bad=0
for f in "${files[@]}"; do
	if sed -e 's://.*$::' "$f" |
		grep -nE '(^|[^A-Za-z0-9_])unsafe([^A-Za-z0-9_]|$)|#!?\[(unsafe\(|no_mangle|link_section|export_name)' |
		sed "s|^|${f#"$top"/}:|"; then
		bad=1
	fi
done
# The entry points exist, from the kernel crate's macro.
grep -q '^kernel::gic_v3_driver!(' "$top/drivers/irqchip/irq_gic_v3_rust.rs" || {
	echo "check-gic-unsafe: irq_gic_v3_rust.rs does not call kernel::gic_v3_driver!" >&2
	bad=1
}
if [ "$bad" -ne 0 ]; then
	echo "check-gic-unsafe: FAIL: unsafe code in drivers/irqchip/*.rs" >&2
	exit 1
fi
echo "check-gic-unsafe: ok (${#files[@]} files)"
