// SPDX-License-Identifier: GPL-2.0

//! The KUnit suites of the Rust GICv3 ITS's formats as a loadable module
//! (`CONFIG_ARM_GIC_V3_RUST_ITS_KUNIT_TEST=m`): `rust_gicv3_its_cmd` (the commands and the
//! command queue), `rust_gicv3_its_tables` (`GITS_TYPER` and the `GITS_BASER<n>` negotiation),
//! `rust_gicv3_its_lpi` (the LPI range allocator) and `rust_gicv3_its_rdist` (the redistributors'
//! LPI tables).
//!
//! The module compiles the driver's own source files (`irq_gic_v3_rust/its/`) with their suites;
//! built in (`=y`), the suites are in the driver's crate instead. They run against fakes of the
//! ITS's registers: loading the module touches no ITS, redistributor or interrupt of the machine.

use kernel::prelude::*;

/// The formats of `irq_gic_v3_rust/its.rs`, without the driver.
// The suites use part of each file's items; the driver uses the rest.
#[allow(dead_code)]
#[path = "irq_gic_v3_rust"]
mod its {
    #[path = "its/bits.rs"]
    mod bits;
    use bits::{
        field,
        mask,
        with_field, //
    };

    #[path = "its/cmd.rs"]
    pub(crate) mod cmd;
    #[path = "its/lpi.rs"]
    pub(crate) mod lpi;
    #[path = "its/rdist.rs"]
    pub(crate) mod rdist;
    #[path = "its/tables.rs"]
    pub(crate) mod tables;
}

module! {
    type: GicV3ItsKunit,
    name: "irq_gic_v3_rust_its_kunit",
    authors: ["IRQ-RS Developers"],
    description: "KUnit tests of the GICv3 ITS formats in Rust",
    license: "GPL",
}

/// The module: its suites run when it is loaded; it has nothing else to do.
struct GicV3ItsKunit;

impl kernel::Module for GicV3ItsKunit {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        Ok(Self)
    }
}
