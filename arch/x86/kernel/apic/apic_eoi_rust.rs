// SPDX-License-Identifier: GPL-2.0

//! Local APIC end-of-interrupt (EOI) in Rust.
//!
//! With `CONFIG_X86_APIC_EOI_RUST` the x2APIC and xAPIC drivers install these functions as their
//! `apic::eoi` callback, so every interrupt the local APIC delivers (timer, IPIs, MSIs, IO-APIC
//! lines) is completed by Rust code: `apic_eoi()` is a static call to one of them.
//!
//! C sources: `native_apic_msr_eoi()` and `native_apic_mem_eoi()` in
//! [`arch/x86/include/asm/apic.h`](srctree/arch/x86/include/asm/apic.h).

mod apic_eoi_regs;

/// Signals EOI to the local APIC in x2APIC mode: a `wrmsr` of 0 to the EOI MSR (0x80b).
///
/// Installed as `apic::eoi` by the x2APIC drivers (`x2apic_phys`, `x2apic_cluster`).
///
/// Context: hard IRQ, interrupts disabled, at the end of an interrupt's handling. Compiles to
/// the same instructions as C's `native_apic_msr_eoi()`.
#[no_mangle]
pub extern "C" fn rust_apic_msr_eoi() {
    apic_eoi_regs::x2apic_write_eoi();
}

/// Signals EOI to the local APIC in xAPIC mode: a write of 0 to the memory-mapped EOI register.
///
/// Installed as `apic::eoi` by the flat and physflat xAPIC drivers.
///
/// Context: hard IRQ, interrupts disabled, at the end of an interrupt's handling.
#[no_mangle]
pub extern "C" fn rust_apic_mem_eoi() {
    apic_eoi_regs::xapic_write_eoi();
}
