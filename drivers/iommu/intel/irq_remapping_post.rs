// SPDX-License-Identifier: GPL-2.0

//! VT-d interrupt remapping: the posted-MSI interrupt chip, "INTEL-IR-POST", in Rust.
//!
//! With posted MSIs (`intremap=posted_msi`, every IOMMU capable of posting), VT-d's interrupt
//! remapping installs this chip instead of "INTEL-IR" on PCI MSI/MSI-X interrupts: the same
//! IRTE handling, but an `ack` without EOI, since posted MSIs never reach the local APIC's IRR
//! and the notification handler EOIs once for a whole burst. `intel_irq_remapping_alloc()`
//! installs it when the Rust implementation is selected (`posted_msi=rust`, the default).
//!
//! The IRTE operations stay the C functions of `irq_remapping.c`; [`irq_remapping_irte`], the
//! only `unsafe` code here, calls them, and the posted-MSI ack ([`kernel::irq::posted::ack`]).
//!
//! C source: `intel_ir_chip_post_msi` in
//! [`drivers/iommu/intel/irq_remapping.c`](srctree/drivers/iommu/intel/irq_remapping.c).

use kernel::{
    cpumask::Cpumask,
    irq::{
        AckCtx,
        Chip,
        ChipVtable,
        IrqData,
        MsiMsg,
        SetAffinity,
        SetAffinityCtx,
        SetVcpuAffinityCtx,
        VcpuInfo, //
    },
    prelude::*, //
};

// `crate::LocalModule`, the owner of this chip's code that `#[vtable]` impls name: the kernel
// image (`IRQ_REMAP` and `X86_POSTED_MSI_RUST`, which build it, are `bool`).
kernel::built_in_module!();

mod irq_remapping_irte;

// The Rust interrupt remapping domain (`intel_ir=rust`): its chips and operations, the IRTE
// formats, the IRTE allocator with the remappable MSI format and the IEC flush descriptor, and
// the table writes and C calls. The formats and the allocator are also built for their KUnit
// suites when these are built in (as a module: irq_remapping_rust_kunit.rs), which use only
// part of them.
#[cfg(CONFIG_INTEL_IRQ_REMAP_RUST)]
mod irq_remapping_domain;
#[cfg(any(
    CONFIG_INTEL_IRQ_REMAP_RUST,
    CONFIG_INTEL_IRQ_REMAP_RUST_KUNIT_TEST = "y"
))]
#[cfg_attr(not(CONFIG_INTEL_IRQ_REMAP_RUST), allow(dead_code))]
mod irq_remapping_entry;
#[cfg(CONFIG_INTEL_IRQ_REMAP_RUST)]
mod irq_remapping_hw;
#[cfg(any(
    CONFIG_INTEL_IRQ_REMAP_RUST,
    CONFIG_INTEL_IRQ_REMAP_RUST_KUNIT_TEST = "y"
))]
#[cfg_attr(not(CONFIG_INTEL_IRQ_REMAP_RUST), allow(dead_code))]
mod irq_remapping_table;

/// The prefix of the messages of this crate's modules, as C's `pr_fmt` in `irq_remapping.c`.
#[cfg(any(
    CONFIG_INTEL_IRQ_REMAP_RUST,
    CONFIG_INTEL_IRQ_REMAP_RUST_KUNIT_TEST = "y"
))]
const __LOG_PREFIX: &[u8] = b"DMAR-IR\0";

use irq_remapping_irte::IntelIrData;

/// The posted-MSI chip of VT-d interrupt remapping.
struct IntelIrPostMsi;

#[vtable]
impl Chip for IntelIrPostMsi {
    type Data = IntelIrData;
    const NAME: &'static CStr = c"INTEL-IR-POST";

    /// Applies a pending affinity change; no EOI (see [`kernel::irq::posted::ack`]).
    fn ack(_ir: &IntelIrData, irqd: &AckCtx<'_>) {
        irq_remapping_irte::posted_ack(irqd)
    }

    fn set_affinity(
        ir: &IntelIrData,
        irqd: &SetAffinityCtx<'_>,
        mask: &Cpumask,
        force: bool,
    ) -> Result<SetAffinity> {
        ir.set_affinity(irqd, mask, force)
    }

    fn compose_msi_msg(ir: &IntelIrData, irqd: &IrqData) -> Result<MsiMsg> {
        ir.compose_msi_msg(irqd)
    }

    fn set_vcpu_affinity(
        ir: &IntelIrData,
        irqd: &SetVcpuAffinityCtx<'_>,
        vcpu: VcpuInfo,
    ) -> Result {
        ir.set_vcpu_affinity(irqd, vcpu)
    }
}

/// Returns the constant `struct irq_chip` that `intel_irq_remapping_alloc()` installs on posted
/// MSIs, with their `struct intel_ir_data` as chip data.
///
/// Any context.
#[no_mangle]
pub extern "C" fn rust_intel_ir_post_msi_chip() -> *const kernel::bindings::irq_chip {
    ChipVtable::<IntelIrPostMsi>::build()
}
