// SPDX-License-Identifier: GPL-2.0

//! The C entry point, the KVM PV EOI word and the APIC driver's EOI: the only `unsafe` code of
//! the Rust PV EOI.
//!
//! C sources: [`arch/x86/kernel/kvm.c`](srctree/arch/x86/kernel/kvm.c),
//! [`arch/x86/include/asm/apic.h`](srctree/arch/x86/include/asm/apic.h).

use core::arch::asm;
#[cfg(CONFIG_X86_APIC_EOI_RUST_KUNIT_TEST)]
use core::{
    cell::UnsafeCell,
    sync::atomic::{
        AtomicU32,
        AtomicUsize,
        Ordering, //
    },
};

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
///
/// # Safety
///
/// Called with interrupts disabled, as an `apic::eoi` callback is: the task must not migrate
/// between finding this CPU's word and its `btr`, and nothing else of this CPU may access the
/// word meanwhile.
#[no_mangle]
pub(crate) unsafe extern "C" fn rust_kvm_guest_apic_eoi_write() {
    // SAFETY: Interrupts are disabled until this returns (the function's safety requirements).
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

/// The CPU whose native EOIs [`counting_native_eoi`] counts instead of doing them, `u32::MAX`
/// for none.
#[cfg(CONFIG_X86_APIC_EOI_RUST_KUNIT_TEST)]
static COUNT_ON_CPU: AtomicU32 = AtomicU32::new(u32::MAX);
/// The native EOIs [`counting_native_eoi`] counted.
#[cfg(CONFIG_X86_APIC_EOI_RUST_KUNIT_TEST)]
static COUNTED: AtomicU32 = AtomicU32::new(0);
/// The native EOI [`counting_native_eoi`] stands in for, as an address (never 0 once set).
#[cfg(CONFIG_X86_APIC_EOI_RUST_KUNIT_TEST)]
static REAL_NATIVE_EOI: AtomicUsize = AtomicUsize::new(0);

/// The native EOI while [`run_real_pv_eoi`] runs: on the CPU of its test, interrupts disabled,
/// it counts the EOI instead of doing it (nothing is in service there); on any other CPU, or
/// outside that window, it does the real one, which a KVM host's PV EOI (installed on every
/// CPU) calls whenever the host did not complete the interrupt.
#[cfg(CONFIG_X86_APIC_EOI_RUST_KUNIT_TEST)]
extern "C" fn counting_native_eoi() {
    if COUNT_ON_CPU.load(Ordering::Relaxed) == kernel::cpu::CpuId::current().as_u32() {
        COUNTED.fetch_add(1, Ordering::Relaxed);
        return;
    }
    let real = REAL_NATIVE_EOI.load(Ordering::Acquire);
    // SAFETY: `run_real_pv_eoi` stored the address of the installed native EOI, a non-null
    // `void (*)(void)` of the APIC driver, before installing this function, and never clears
    // it.
    let real = unsafe { core::mem::transmute::<usize, unsafe extern "C" fn()>(real) };
    // SAFETY: Called in the context of the native EOI this stands in for, as it would be.
    unsafe { real() };
}

/// Runs the shipped PV EOI, [`rust_kvm_guest_apic_eoi_write`], once on this CPU's real PV EOI
/// word (`this_cpu_ptr(&kvm_apic_eoi)`, the word the host sets) with bit 0 set to `bit`; the
/// APIC driver's native EOI it calls otherwise (the `apic_call_native_eoi` static call that
/// `apic_native_eoi()` takes) is meanwhile [`counting_native_eoi`], which counts it. Returns
/// bit 0 of the word after the call and the native EOIs counted; the word and the native EOI
/// are restored before it returns.
///
/// Process context (the static call is patched, which sleeps). With interrupts disabled for
/// the call, no interrupt of this CPU can EOI meanwhile, and a KVM host, which writes the word
/// only when it injects an interrupt or completes one in service, cannot either: an EOI counted
/// is the PV EOI's. No real EOI is done for it: with nothing in service it would be ignored
/// (the local APIC, QEMU's and KVM's alike, EOIs the highest in-service vector, if any), but
/// the counter takes it instead.
///
/// Does not assert anything itself: a KUnit assertion aborts the test thread, which must not
/// happen while the counter is installed.
///
/// # Errors
///
/// `ENODEV` if no native EOI is installed.
#[cfg(CONFIG_X86_APIC_EOI_RUST_KUNIT_TEST)]
pub(crate) fn run_real_pv_eoi(bit: bool) -> kernel::error::Result<(bool, u32)> {
    use kernel::bindings;

    // SAFETY: Reads the static call's target.
    let real = unsafe { bindings::kvm_pv_eoi_native_eoi() } as usize;
    if real == 0 {
        return Err(kernel::error::code::ENODEV);
    }
    // SAFETY: `real` is the address of the installed native EOI, a `void (*)(void)`, not null.
    let real_fn = unsafe { core::mem::transmute::<usize, unsafe extern "C" fn()>(real) };
    REAL_NATIVE_EOI.store(real, Ordering::Release);
    let counting = counting_native_eoi as unsafe extern "C" fn();
    // SAFETY: Process context; `counting_native_eoi` is an EOI callback of the right type, which
    // does the real EOI (`REAL_NATIVE_EOI`, stored above) wherever it does not count.
    unsafe { bindings::kvm_pv_eoi_swap_native_eoi(Some(counting)) };
    let (after, counted) = {
        let _irqs_off = kernel::interrupt::local_interrupt_disable();
        COUNTED.store(0, Ordering::Relaxed);
        COUNT_ON_CPU.store(kernel::cpu::CpuId::current().as_u32(), Ordering::Relaxed);
        // SAFETY: This CPU's PV EOI word in the per-CPU area, valid for the kernel's lifetime;
        // interrupts are disabled, so the task stays on this CPU.
        let word = unsafe { bindings::kvm_pv_eoi_this_cpu_word() };
        // SAFETY: `word` is valid and aligned; only this CPU, interrupts off, and its host access
        // it (see above). Volatile: the PV EOI's `btr` writes it behind the compiler's back.
        let saved = unsafe { word.read_volatile() };
        // SAFETY: As for the read.
        unsafe { word.write_volatile((saved & !1) | kernel::ffi::c_ulong::from(bit)) };
        // SAFETY: Interrupts are disabled.
        unsafe { rust_kvm_guest_apic_eoi_write() };
        // SAFETY: As for the first read.
        let after = unsafe { word.read_volatile() } & 1 != 0;
        // SAFETY: As for the first read.
        unsafe { word.write_volatile(saved) };
        COUNT_ON_CPU.store(u32::MAX, Ordering::Relaxed);
        (after, COUNTED.load(Ordering::Relaxed))
    };
    // SAFETY: Process context; `real_fn` was the installed native EOI.
    unsafe { bindings::kvm_pv_eoi_swap_native_eoi(Some(real_fn)) };
    Ok((after, counted))
}

/// Whether a KVM host offers PV EOI (`hypervisor_is_type(X86_HYPER_KVM)` and
/// `kvm_para_has_feature(KVM_FEATURE_PV_EOI)`), for tests.
#[cfg(CONFIG_X86_APIC_EOI_RUST_KUNIT_TEST)]
pub(crate) fn host_offers_pv_eoi() -> bool {
    // SAFETY: Reads the CPUID-derived KVM features.
    unsafe { kernel::bindings::kvm_pv_eoi_offered() }
}
