// SPDX-License-Identifier: GPL-2.0

//! The IRTE operations of VT-d interrupt remapping, seen from the Rust posted-MSI chip: the
//! only `unsafe` code of the chip, calls into `irq_remapping.c`.
//!
//! C source: [`drivers/iommu/intel/irq_remapping.c`](srctree/drivers/iommu/intel/irq_remapping.c).

use kernel::{
    bindings,
    cpumask::Cpumask,
    error::to_result,
    irq::{
        AckCtx,
        IrqData,
        LockedIrqData,
        MsiMsg,
        SetAffinity,
        VcpuInfo, //
    },
    prelude::*,
    types::Opaque, //
};

/// The chip data VT-d interrupt remapping keeps per interrupt (`struct intel_ir_data`), seen
/// from a Rust chip installed by the VT-d code: the IRTE and its MSI message.
///
/// # Invariants
///
/// A reference to it is only ever handed to the callbacks of a chip the VT-d interrupt-remapping
/// code installed, as the `chip_data` of the `irq_data` they receive.
#[repr(transparent)]
pub(crate) struct IntelIrData(Opaque<u8>);

// SAFETY: The Rust side never reads or writes the data itself; the C functions it calls run under
// genirq's serialisation of the interrupt, as for the C chip (`set_affinity` and
// `set_vcpu_affinity` with the descriptor lock held; `compose_msi_msg` only reads the MSI message
// set up at allocation).
unsafe impl Sync for IntelIrData {}

impl IntelIrData {
    /// Checks that `irqd` is the interrupt whose chip data `self` is; `EINVAL` otherwise.
    fn check(&self, irqd: &IrqData) -> Result {
        // SAFETY: `irqd` is valid (type invariant of `IrqData`).
        let chip_data = unsafe { (*irqd.as_raw()).chip_data };
        if core::ptr::eq(chip_data.cast_const().cast::<Self>(), self) {
            Ok(())
        } else {
            Err(EINVAL)
        }
    }

    /// Moves the interrupt: the parent (vector) domain assigns the new vector, then the IRTE is
    /// rewritten and the old vector cleaned up (`intel_ir_set_affinity`).
    pub(crate) fn set_affinity(
        &self,
        irqd: &LockedIrqData,
        mask: &Cpumask,
        force: bool,
    ) -> Result<SetAffinity> {
        self.check(irqd)?;
        // SAFETY: `irqd`'s chip data is `self` (checked), an `intel_ir_data` (type invariant);
        // `mask` is a valid cpumask; the descriptor lock is held (`LockedIrqData`).
        let ret = unsafe { bindings::intel_ir_set_affinity(irqd.as_raw(), mask.as_raw(), force) };
        to_result(ret)?;
        // Non-negative: one of the `IRQ_SET_MASK_OK*` values.
        match ret as u32 {
            bindings::IRQ_SET_MASK_OK => Ok(SetAffinity::Ok),
            bindings::IRQ_SET_MASK_OK_NOCOPY => Ok(SetAffinity::NoCopy),
            bindings::IRQ_SET_MASK_OK_DONE => Ok(SetAffinity::Done),
            _ => Err(EINVAL),
        }
    }

    /// Returns the MSI message that targets the interrupt's IRTE (`intel_ir_compose_msi_msg`).
    ///
    /// `EINVAL` for an `irqd` whose chip data is not `self`.
    pub(crate) fn compose_msi_msg(&self, irqd: &IrqData) -> Result<MsiMsg> {
        self.check(irqd)?;
        let mut raw = core::mem::MaybeUninit::<[u32; 4]>::zeroed();
        let raw = raw.as_mut_ptr().cast::<bindings::msi_msg>();
        let mut msg = MsiMsg::default();
        // SAFETY: As in `set_affinity`; `raw` is zeroed storage large enough for a `msi_msg`
        // (three 32-bit words) that the C function fills in.
        unsafe {
            bindings::intel_ir_compose_msi_msg(irqd.as_raw(), raw);
            bindings::msi_msg_get(raw, &mut msg.address_lo, &mut msg.address_hi, &mut msg.data);
        }
        Ok(msg)
    }

    /// Posts the interrupt to a vCPU, or back to the host (`intel_ir_set_vcpu_affinity`).
    pub(crate) fn set_vcpu_affinity(&self, irqd: &IrqData, vcpu: VcpuInfo) -> Result {
        self.check(irqd)?;
        // SAFETY: As in `set_affinity`; `vcpu` is the pointer genirq passed to the chip.
        to_result(unsafe { bindings::intel_ir_set_vcpu_affinity(irqd.as_raw(), vcpu.as_raw()) })
    }
}

/// The posted-MSI ack ([`kernel::irq::posted::ack`]) of the INTEL-IR-POST chip.
///
/// Only for the chip's `irq_ack` (its one caller; an [`AckCtx`] exists only in an ack), in hard
/// IRQ context.
pub(crate) fn posted_ack(irqd: &AckCtx<'_>) {
    // SAFETY: Called only as the `irq_ack` of INTEL-IR-POST, which `intel_irq_remapping_alloc()`
    // installs on PCI MSI/MSI-X interrupts, and of INTEL-IR-POST-RS, which the Rust domain
    // installs on the same: their flow is the PCI/MSI domain's edge flow, `handle_edge_irq()`
    // or, below the Rust domain, `rust_handle_edge_irq()`; both call `irq_ack` with the
    // descriptor lock held, in the interrupt's hard IRQ.
    // C code that acks a posted MSI otherwise (a chained handler on one) breaks the same
    // contract of C's `intel_ack_posted_msi_irq()`; with lockdep it is reported.
    unsafe { kernel::irq::posted::ack(irqd) }
}
