// SPDX-License-Identifier: GPL-2.0

//! The KUnit suites of the VT-d interrupt remapping formats in Rust as a loadable module
//! (`CONFIG_INTEL_IRQ_REMAP_RUST_KUNIT_TEST=m`): `rust_vtd_irte` (the IRTE formats of
//! [`irq_remapping_entry`]) and `rust_vtd_irte_table` (the IRTE allocator, the remappable MSI
//! format and the IEC flush descriptor of [`irq_remapping_table`]).
//!
//! The module compiles the driver's own source files with their suites; built in (`=y`), the
//! suites are in the driver's crate (`irq_remapping_post.rs`) instead. They test encodings and an
//! allocator of their own: loading the module reads and writes no remapping table, register or
//! interrupt of the machine.

use kernel::prelude::*;

// The suites use part of each file's items; the driver uses the rest.
#[allow(dead_code)]
#[path = "irq_remapping_entry.rs"]
mod irq_remapping_entry;
#[allow(dead_code)]
#[path = "irq_remapping_table.rs"]
mod irq_remapping_table;

module! {
    type: VtdIrKunit,
    name: "irq_remapping_rust_kunit",
    authors: ["IRQ-RS Developers"],
    description: "KUnit tests of the VT-d interrupt remapping formats in Rust",
    license: "GPL",
}

/// The module: its suites run when it is loaded; it has nothing else to do.
struct VtdIrKunit;

impl kernel::Module for VtdIrKunit {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        Ok(Self)
    }
}
