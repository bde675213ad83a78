// SPDX-License-Identifier: GPL-2.0

//! The body of the posted-MSI notification handler in Rust.
//!
//! With `CONFIG_X86_POSTED_MSI_RUST`, `sysvec_posted_msi_notification()` (the IDT entry, still
//! C/asm) does the entry bookkeeping (irq regs, the PMN count, `irq_enter()`) and calls
//! [`rust_posted_msi_notification`] for the rest: harvest the PIR, run the handler of every
//! pending vector for at most 3 coalescing loops, clear ON, re-check the PIR and EOI through the
//! Rust local APIC EOI.
//!
//! C source: `sysvec_posted_msi_notification()` in
//! [`arch/x86/kernel/irq.c`](srctree/arch/x86/kernel/irq.c).

use kernel::irq::posted::{
    self,
    PiDesc, //
};

/// Demultiplexes this CPU's posted MSIs and EOIs the notification.
///
/// Context: hard IRQ, interrupts disabled, between `irq_enter()` and `irq_exit()` of the
/// posted-MSI notification vector, on the CPU whose descriptor is processed.
#[no_mangle]
pub extern "C" fn rust_posted_msi_notification() {
    posted::demux(PiDesc::this_cpu(), posted::call_irq_handler);
    posted::apic_eoi();
}
