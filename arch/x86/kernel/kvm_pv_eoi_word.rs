// SPDX-License-Identifier: GPL-2.0

//! The KVM PV EOI word and the APIC driver's EOI: the only `unsafe` code of the Rust PV EOI.
//!
//! C sources: [`arch/x86/kernel/kvm.c`](srctree/arch/x86/kernel/kvm.c),
//! [`arch/x86/include/asm/apic.h`](srctree/arch/x86/include/asm/apic.h).

use core::{
    arch::asm,
    cell::UnsafeCell, //
};

/// A KVM paravirtual EOI word (`kvm_apic_eoi`, per CPU, in C's decrypted per-CPU section):
/// bit 0 (`KVM_PV_EOI_BIT`) is set by the host when the guest's next EOI may be skipped.
///
/// # Invariants
///
/// Only one CPU and its host (on that CPU's VM exits) access the word.
#[repr(transparent)]
pub(crate) struct PvEoiWord(UnsafeCell<usize>);

impl PvEoiWord {
    /// This CPU's word.
    ///
    /// Interrupts disabled (the caller is an EOI), so the CPU cannot change while it is used.
    #[inline(always)]
    pub(crate) fn this_cpu() -> &'static Self {
        // SAFETY: The helper returns `this_cpu_ptr(&kvm_apic_eoi)`, a valid, aligned per-CPU
        // word that lives for the kernel's lifetime; `PvEoiWord` is a transparent `UnsafeCell`
        // around it, and only this CPU (interrupts are off) and its host touch it.
        unsafe { &*kernel::bindings::kvm_pv_eoi_word_this_cpu().cast::<Self>() }
    }

    /// A word outside the per-CPU area, for tests.
    #[cfg(CONFIG_X86_APIC_EOI_RUST_KUNIT_TEST)]
    pub(crate) fn new(v: usize) -> Self {
        // INVARIANT: A new word, only its owner accesses it.
        Self(UnsafeCell::new(v))
    }

    /// The word's value, for tests.
    #[cfg(CONFIG_X86_APIC_EOI_RUST_KUNIT_TEST)]
    pub(crate) fn get(&self) -> usize {
        // SAFETY: A test word: only this thread accesses it (type invariant), not concurrently.
        unsafe { *self.0.get() }
    }

    /// Tests and clears bit 0 (`__test_and_clear_bit(KVM_PV_EOI_BIT, ...)`): one non-LOCK
    /// `btr`, atomic with respect to this CPU and thus to its host's VM exits (a load and a
    /// store could let the host set or clear the bit in between).
    #[inline(always)]
    pub(crate) fn test_and_clear_eoi_bit(&self) -> bool {
        let was_set: u8;
        // SAFETY: `self.0` is a valid, aligned word that only this CPU and its host access
        // (type invariant); one instruction reads and writes it, which a VM exit cannot split.
        // No `nomem`: the word is memory the compiler must not cache across this.
        unsafe {
            asm!(
                "btr qword ptr [{w}], 0",
                "setc {c}",
                w = in(reg) self.0.get(),
                c = out(reg_byte) was_set,
                options(nostack),
            )
        };
        was_set != 0
    }
}

/// The local APIC EOI of the APIC driver in use (`apic_native_eoi()`): with
/// `CONFIG_X86_APIC_EOI_RUST`, the Rust EOI of the APIC mode.
#[inline(always)]
pub(crate) fn native_eoi() {
    // SAFETY: An APIC driver is installed when interrupts are delivered, so `apic` and its
    // `native_eoi` callback are valid.
    unsafe { kernel::bindings::apic_native_eoi() }
}

/// The installed `apic::eoi` callback, for tests.
#[cfg(CONFIG_X86_APIC_EOI_RUST_KUNIT_TEST)]
pub(crate) fn installed_eoi() -> usize {
    // SAFETY: Reads the installed APIC driver's callback pointer.
    unsafe { kernel::bindings::kvm_pv_eoi_installed_eoi() as usize }
}

/// Whether the host offers PV EOI (`kvm_para_has_feature(KVM_FEATURE_PV_EOI)`), for tests.
#[cfg(CONFIG_X86_APIC_EOI_RUST_KUNIT_TEST)]
pub(crate) fn host_offers_pv_eoi() -> bool {
    // SAFETY: Reads the CPUID-derived KVM features.
    unsafe { kernel::bindings::kvm_pv_eoi_offered() }
}
