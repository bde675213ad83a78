// SPDX-License-Identifier: GPL-2.0

//! The GICv3 Interrupt Translation Service (ITS) in Rust, for physical LPIs: the formats and
//! the bookkeeping, and the driver on them.
//!
//! - [`cmd`]: the commands (MAPD, MAPC, MAPTI, MOVI, DISCARD, INV, INVALL, INT, CLEAR, SYNC) as
//!   C's `its_build_*_cmd()` encode them, and the command queue: allocation with wrap-around,
//!   `GITS_CWRITER`, and a bounded wait on `GITS_CREADR` that reports a stalled or timed-out
//!   queue as an error instead of hanging (`its_allocate_entry()`,
//!   `its_wait_for_range_completion()`);
//! - [`tables`]: `GITS_TYPER`, and the `GITS_BASER<n>` negotiation of `its_alloc_tables()`: the
//!   page size the ITS takes, flat or two-level, the size in pages, and the shareability and
//!   cacheability the ITS keeps;
//! - [`lpi`]: the LPI range allocator of `its_lpi_alloc()` (from 8192);
//! - [`rdist`]: the redistributors' LPI property and pending tables, the configuration byte of
//!   an LPI, and `GICR_PROPBASER`/`GICR_PENDBASER` with C's fallback for a redistributor that
//!   is not shareable.
//!
//! The register accesses are traits ([`cmd::QueueRegs`], [`tables::BaserReg`]), so that KUnit
//! drives every path here against fakes that behave as an ITS may: one that stalls, one that
//! only takes 4 KiB pages or no shareability; [`node`] implements them on the ITS's frame.
//!
//! - [`node`]: the ITS itself, on those: the probe, the queue and tables in memory, the
//!   redistributors' LPIs, each CPU's collection, the MSI parent domain and the chip.
//!
//! C source: [`drivers/irqchip/irq-gic-v3-its.c`](srctree/drivers/irqchip/irq-gic-v3-its.c),
//! [`include/linux/irqchip/arm-gic-v3.h`](srctree/include/linux/irqchip/arm-gic-v3.h).

#[path = "its/cmd.rs"]
pub(crate) mod cmd;
#[path = "its/lpi.rs"]
pub(crate) mod lpi;
#[path = "its/node.rs"]
pub(crate) mod node;
#[path = "its/rdist.rs"]
pub(crate) mod rdist;
#[path = "its/tables.rs"]
pub(crate) mod tables;

#[path = "its/bits.rs"]
mod bits;
use bits::{
    field,
    mask,
    with_field, //
};
