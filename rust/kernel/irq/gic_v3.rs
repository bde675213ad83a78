// SPDX-License-Identifier: GPL-2.0

//! The ARM GICv3 interrupt controller, for drivers written in Rust.
//!
//! - [`sysreg`]: the CPU interface's system registers (`ICC_*_EL1`), shared by every user of
//!   the GICv3 CPU interface.
//! - With `CONFIG_ARM_GIC_V3_RUST`, the Rust GICv3 driver's side of the C shim
//!   `irq-gic-v3-select.c`: the register frames the shim mapped ([`Regions`], [`Bank`],
//!   [`Redist`]), the probe's tokens ([`Probe`], [`RootNode`], [`Ipis`]), and the C entry
//!   points, which [`gic_v3_driver!`](crate::gic_v3_driver) generates for a [`Driver`] so that
//!   the driver itself has no `unsafe` code; and the ITS's ([`ItsNode`], the table memory
//!   [`PhysMem`]). The shim's interface is its header
//!   [`drivers/irqchip/irq-gic-v3-rust.h`](srctree/drivers/irqchip/irq-gic-v3-rust.h), which
//!   `bindgen` translates: the entry points are checked against it at compile time.
//!
//! C sources: [`drivers/irqchip/irq-gic-v3.c`](srctree/drivers/irqchip/irq-gic-v3.c),
//! [`drivers/irqchip/irq-gic-v3-select.c`](srctree/drivers/irqchip/irq-gic-v3-select.c).

pub mod sysreg;

#[cfg(CONFIG_ARM_GIC_V3_RUST)]
mod shim;

#[cfg(CONFIG_ARM_GIC_V3_RUST)]
pub use shim::*;

#[cfg(CONFIG_ARM_GIC_V3_RUST)]
mod its;

#[cfg(CONFIG_ARM_GIC_V3_RUST)]
pub use its::{
    ItsFrame,
    ItsNode,
    PhysMem,
    ITS_FRAMES, //
};
