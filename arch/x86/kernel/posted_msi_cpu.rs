// SPDX-License-Identifier: GPL-2.0

//! Per-CPU posted-MSI state and the calls of the notification handler into the x86 interrupt
//! entry code: the only `unsafe` code of the Rust notification handler.
//!
//! C sources: [`arch/x86/kernel/irq.c`](srctree/arch/x86/kernel/irq.c),
//! [`arch/x86/include/asm/apic.h`](srctree/arch/x86/include/asm/apic.h).

use kernel::{
    bindings,
    irq::{
        posted::{
            self,
            PiDesc,
            Vector, //
        },
        IrqData, //
    },
    prelude::*,
    types::NotThreadSafe, //
};

/// The body of the posted-MSI notification handler, called by its IDT entry.
///
/// # Safety
///
/// Only called by `sysvec_posted_msi_notification()`: hard IRQ context, interrupts disabled,
/// between `irq_enter()` and `irq_exit()`, the notification in service and not EOId yet.
#[no_mangle]
pub(crate) unsafe extern "C" fn rust_posted_msi_notification() {
    // SAFETY: Called by the notification handler (the function's safety requirements).
    super::handle_notification(unsafe { Notification::new() });
}

/// The Rust posted-MSI ack ([`posted::ack`]) for C chips: `intel_ack_posted_msi_irq()` calls it
/// when the Rust implementation is selected (`posted_msi=rust`, the default).
///
/// # Safety
///
/// Only called by `intel_ack_posted_msi_irq()`, the `irq_ack` of a posted MSI's chip, with its
/// valid `irq_data`, by a flow handler that holds the descriptor lock (the edge flow), as that
/// function's contract says.
#[no_mangle]
pub(crate) unsafe extern "C" fn rust_posted_msi_ack(irqd: *mut bindings::irq_data) {
    // SAFETY: `irqd` is valid for the call (the function's safety requirements).
    let irqd = unsafe { IrqData::from_raw(irqd) };
    // SAFETY: Called as `irqd`'s `irq_ack` by a flow holding the descriptor lock, in its hard
    // IRQ (the function's safety requirements).
    unsafe { posted::ack(irqd) }
}

/// The posted-MSI notification being handled on this CPU.
///
/// Only [`rust_posted_msi_notification`] creates it and [`Notification::eoi`] consumes it: its
/// methods are the hardware actions only the notification handler may take.
///
/// # Invariants
///
/// It exists only in the posted-MSI notification handler of this CPU: hard IRQ context,
/// interrupts disabled, between `irq_enter()` and `irq_exit()`, the notification in service and
/// not EOId yet. `self.pid` is this CPU's posted-MSI descriptor.
pub(crate) struct Notification {
    pid: &'static PiDesc,
    _not_thread_safe: NotThreadSafe,
}

impl Notification {
    /// Returns the notification being handled.
    ///
    /// # Safety
    ///
    /// Only called by the notification handler, as [`rust_posted_msi_notification`], once.
    #[inline(always)]
    unsafe fn new() -> Self {
        // SAFETY: The helper returns `this_cpu_ptr(&posted_msi_pi_desc)`, this CPU's descriptor
        // in the per-CPU area, which lives for the kernel's lifetime and which the IOMMU and
        // the posting agents only change atomically. Interrupts are disabled, so the CPU does
        // not change under it.
        let pid = unsafe { PiDesc::from_raw(bindings::posted_msi_pi_desc_this_cpu()) };
        // INVARIANT: Called by the notification handler (the function's safety requirements).
        Self {
            pid,
            _not_thread_safe: NotThreadSafe,
        }
    }

    /// Returns this CPU's posted-interrupt descriptor.
    #[inline(always)]
    pub(crate) fn pid(&self) -> &PiDesc {
        self.pid
    }

    /// Runs the flow handler of the interrupt bound to `vector` on this CPU, as the local APIC
    /// entry does (`call_irq_handler()`), with the interrupted registers of the notification.
    #[inline]
    pub(crate) fn call_irq_handler(&self, vector: Vector) {
        // SAFETY: In the notification handler (type invariant), as the C function requires:
        // it looks the descriptor up in this CPU's `vector_irq[]`, which interrupts being
        // disabled keeps stable, and handles a missing one as a spurious interrupt.
        unsafe { bindings::x86_posted_msi_call_irq_handler(vector.as_u32() as c_int) }
    }

    /// Signals EOI of the notification to the local APIC (`apic_eoi()`, the static call to the
    /// APIC driver's EOI, Rust's with `CONFIG_X86_APIC_EOI_RUST`), once, at the end.
    #[inline]
    pub(crate) fn eoi(self) {
        // SAFETY: The notification is the interrupt in service (type invariant); this completes
        // it, and consuming `self` ends the handler's use of the hardware.
        unsafe { bindings::apic_eoi() }
    }
}
