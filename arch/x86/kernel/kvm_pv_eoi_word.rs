// SPDX-License-Identifier: GPL-2.0

//! The C entry point, the KVM PV EOI word and the APIC driver's EOI: the only `unsafe` code of
//! the Rust PV EOI.
//!
//! C sources: [`arch/x86/kernel/kvm.c`](srctree/arch/x86/kernel/kvm.c),
//! [`arch/x86/include/asm/apic.h`](srctree/arch/x86/include/asm/apic.h).

use core::arch::asm;
#[cfg(CONFIG_X86_APIC_EOI_RUST_KUNIT_TEST)]
use core::cell::UnsafeCell;

use kernel::types::NotThreadSafe;

/// A word whose bit 0 (`KVM_PV_EOI_BIT`) the PV EOI tests and clears.
pub(crate) trait PvEoiWord {
    /// Tests and clears bit 0 (`__test_and_clear_bit(KVM_PV_EOI_BIT, ...)`): one non-LOCK
    /// `btr`, atomic with respect to this CPU and thus to its host's VM exits (a load and a
    /// store could let the host set or clear the bit in between).
    fn test_and_clear_eoi_bit(&self) -> bool;
}

extern "C" {
    // `arch/x86/kernel/kvm.c`: the per-CPU PV EOI word (its per-CPU offset, in C's decrypted
    // per-CPU section).
    static kvm_apic_eoi: usize;
    // `arch/x86/kernel/setup_percpu.c`: this CPU's per-CPU offset, read through `%gs`.
    static this_cpu_off: usize;
}

/// This CPU's KVM PV EOI word (`this_cpu_ptr(&kvm_apic_eoi)`), which the host sets bit 0 of
/// when the guest's next EOI may be skipped.
///
/// # Invariants
///
/// It exists only while interrupts are disabled on this CPU (the task cannot migrate), and only
/// this CPU's code with interrupts off (C's `kvm_guest_cpu_init()`, this EOI) and its host (at
/// this CPU's VM exits) access the word.
pub(crate) struct ThisCpuWord(NotThreadSafe);

impl ThisCpuWord {
    /// # Safety
    ///
    /// Interrupts stay disabled while the returned value exists.
    #[inline(always)]
    unsafe fn new() -> Self {
        // INVARIANT: Interrupts are disabled (the function's safety requirements).
        Self(NotThreadSafe)
    }
}

impl PvEoiWord for ThisCpuWord {
    #[inline(always)]
    fn test_and_clear_eoi_bit(&self) -> bool {
        // SAFETY: `%gs:this_cpu_off` is this CPU's per-CPU offset, so `[offset + kvm_apic_eoi]`
        // is this CPU's aligned PV EOI word, which only this CPU and its host access meanwhile
        // (type invariant); one `btr` reads and writes it, which a VM exit cannot split. The
        // carry flag goes straight to a branch, as C's flag output does. No `nomem`: the word is
        // memory the compiler must not cache across this; `btr` writes the flags.
        unsafe {
            asm!(
                "mov {off}, qword ptr gs:[rip + {this_cpu_off}]",
                "btr qword ptr [{off} + {word}], 0",
                "jnc {clear}",
                off = out(reg) _,
                this_cpu_off = sym this_cpu_off,
                word = sym kvm_apic_eoi,
                clear = label {
                    return false;
                },
                options(nostack),
            )
        };
        true
    }
}

/// A PV EOI word outside the per-CPU area, for tests.
#[cfg(CONFIG_X86_APIC_EOI_RUST_KUNIT_TEST)]
pub(crate) struct TestWord(UnsafeCell<usize>);

#[cfg(CONFIG_X86_APIC_EOI_RUST_KUNIT_TEST)]
impl TestWord {
    /// A word of value `v`.
    pub(crate) fn new(v: usize) -> Self {
        Self(UnsafeCell::new(v))
    }

    /// The word's value.
    pub(crate) fn get(&self) -> usize {
        // SAFETY: `TestWord` is not `Sync` (`UnsafeCell`): only this thread accesses it, and no
        // reference into it is live.
        unsafe { *self.0.get() }
    }
}

#[cfg(CONFIG_X86_APIC_EOI_RUST_KUNIT_TEST)]
impl PvEoiWord for TestWord {
    fn test_and_clear_eoi_bit(&self) -> bool {
        // SAFETY: `self.0` is a valid, aligned word that only this thread accesses (not `Sync`);
        // the same `btr` as on the per-CPU word.
        unsafe {
            asm!(
                "btr qword ptr [{w}], 0",
                "jc {set}",
                w = in(reg) self.0.get(),
                set = label {
                    return true;
                },
                options(nostack),
            )
        };
        false
    }
}

/// KVM's paravirtual EOI (`kvm_guest_apic_eoi_write()`): if the host set bit 0
/// (`KVM_PV_EOI_BIT`) of this CPU's PV EOI word, it has already completed the interrupt; clear
/// the bit and skip the APIC EOI. Otherwise EOI the local APIC (`apic->native_eoi`, the Rust EOI
/// of the APIC mode in use).
///
/// Installed as `apic::eoi` by `kvm_guest_init()` when the host offers `KVM_FEATURE_PV_EOI`.
///
/// Context: hard IRQ, interrupts disabled, at the end of an interrupt's handling (the only way
/// C calls an `apic::eoi`). The test and clear is one non-LOCK `btr` on the per-CPU word
/// ([`ThisCpuWord`]'s [`PvEoiWord::test_and_clear_eoi_bit`]).
#[no_mangle]
pub(crate) extern "C" fn rust_kvm_guest_apic_eoi_write() {
    // SAFETY: An EOI callback runs with interrupts disabled, until it returns.
    let word = unsafe { ThisCpuWord::new() };
    super::pv_eoi(&word, native_eoi);
}

/// The local APIC EOI of the APIC driver in use (`apic_native_eoi()`): with
/// `CONFIG_X86_APIC_EOI_RUST`, the Rust EOI of the APIC mode.
#[inline(always)]
pub(crate) fn native_eoi() {
    // SAFETY: An APIC driver is installed when interrupts are delivered, so `apic` and its
    // `native_eoi` callback are valid.
    unsafe { kernel::bindings::apic_native_eoi() }
}

/// The installed `apic::eoi` callback and the `apic_eoi()` static call's target, for tests.
#[cfg(CONFIG_X86_APIC_EOI_RUST_KUNIT_TEST)]
pub(crate) fn installed_eoi() -> (usize, usize) {
    // SAFETY: Read the installed APIC driver's callback and the static call's target.
    unsafe {
        (
            kernel::bindings::kvm_pv_eoi_installed_eoi() as usize,
            kernel::bindings::kvm_pv_eoi_called_eoi() as usize,
        )
    }
}

/// Whether a KVM host offers PV EOI (`hypervisor_is_type(X86_HYPER_KVM)` and
/// `kvm_para_has_feature(KVM_FEATURE_PV_EOI)`), for tests.
#[cfg(CONFIG_X86_APIC_EOI_RUST_KUNIT_TEST)]
pub(crate) fn host_offers_pv_eoi() -> bool {
    // SAFETY: Reads the CPUID-derived KVM features.
    unsafe { kernel::bindings::kvm_pv_eoi_offered() }
}
