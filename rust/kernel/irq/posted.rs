// SPDX-License-Identifier: GPL-2.0

//! Posted MSIs on x86: the posted-interrupt descriptor (PID) and the posted-MSI ack.
//!
//! With VT-d posted MSIs (`intremap=posted_msi`), the IOMMU does not send a device's MSI vector
//! to the local APIC. It sets the vector's bit in the posted-interrupt request bitmap (PIR) of the
//! target CPU's descriptor and, unless a notification is already outstanding (ON) or suppressed
//! (SN), sets ON and sends one notification interrupt (NV, the posted-MSI notification vector,
//! to NDST, the CPU's APIC ID). The notification handler harvests the PIR and runs the handler of
//! every pending vector, coalescing bursts of MSIs into one notification.
//!
//! This module holds what the users of the descriptor share: the notification handler
//! (`arch/x86/kernel/posted_msi_rust.rs`), VT-d's INTEL-IR-POST chip
//! (`drivers/iommu/intel/irq_remapping_post.rs`) and the software posting agent of the tests.
//!
//! C sources: [`arch/x86/include/asm/posted_intr.h`](srctree/arch/x86/include/asm/posted_intr.h),
//! [`arch/x86/kernel/irq.c`](srctree/arch/x86/kernel/irq.c).

use crate::{
    cpu::CpuId,
    prelude::*,
    sync::{
        atomic::{
            Atomic,
            Full,
            Relaxed, //
        },
        barrier::smp_mb_after_atomic, //
    }, //
};
use core::mem::{
    align_of,
    offset_of,
    size_of, //
};

/// Number of 64-bit words of the PIR (`NR_PIR_WORDS`): 256 vectors.
pub const NR_PIR_WORDS: usize = 4;

/// The first vector an external interrupt can use (`FIRST_EXTERNAL_VECTOR`).
pub const FIRST_EXTERNAL_VECTOR: u32 = bindings::FIRST_EXTERNAL_VECTOR;

/// The posted-MSI notification vector (`POSTED_MSI_NOTIFICATION_VECTOR`).
pub const POSTED_MSI_NOTIFICATION_VECTOR: u32 = bindings::POSTED_MSI_NOTIFICATION_VECTOR;

/// The first system vector (`FIRST_SYSTEM_VECTOR`); device vectors lie below it.
pub const FIRST_SYSTEM_VECTOR: u32 = bindings::FIRST_SYSTEM_VECTOR;

/// Bit of the control word: a notification is outstanding (`POSTED_INTR_ON`).
const ON: u64 = 1 << bindings::POSTED_INTR_ON;
/// Bit of the control word: notifications are suppressed (`POSTED_INTR_SN`).
const SN: u64 = 1 << bindings::POSTED_INTR_SN;

/// An interrupt vector a PIR can hold: 32..=255.
///
/// # Invariants
///
/// `FIRST_EXTERNAL_VECTOR <= self.0 <= 255`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Vector(u8);

impl Vector {
    /// Checks `vector`; anything outside 32..=255 is `EINVAL`.
    ///
    /// # Examples
    ///
    /// ```
    /// use kernel::irq::posted::Vector;
    ///
    /// assert_eq!(Vector::new(0x41)?.as_u32(), 0x41);
    /// assert_eq!(Vector::new(31), Err(EINVAL));
    /// assert_eq!(Vector::new(256), Err(EINVAL));
    /// # Ok::<(), Error>(())
    /// ```
    pub fn new(vector: u32) -> Result<Self> {
        match u8::try_from(vector) {
            // INVARIANT: Checked against the range just here.
            Ok(v) if vector >= FIRST_EXTERNAL_VECTOR => Ok(Self(v)),
            _ => Err(EINVAL),
        }
    }

    /// Returns the vector number.
    pub fn as_u32(self) -> u32 {
        u32::from(self.0)
    }

    #[inline]
    fn word_bit(self) -> (usize, u64) {
        (usize::from(self.0 / 64), 1u64 << (self.0 % 64))
    }
}

/// A posted-interrupt descriptor (`struct pi_desc`): 64 bytes, 64-byte aligned, shared with the
/// IOMMU.
///
/// Every field the IOMMU or another CPU writes is an atomic, so all operations take `&self`.
/// The layout is checked against C's `struct pi_desc` at compile time.
///
/// The fields are [`kernel::sync::atomic`](crate::sync::atomic) atomics, on the kernel's memory
/// model like the C bitops and `READ_ONCE()`/`arch_xchg()` that C uses on the same memory. With
/// `CONFIG_RUST_INLINE_HELPERS` their C helpers are inlined: the notification path compiles to
/// what C's does (`mov` loads, `xchg`, a `lock and` to clear ON).
///
/// # Examples
///
/// Posting the way the IOMMU does, then harvesting the way the notification handler does:
///
/// ```
/// use kernel::irq::posted::{PiDesc, Vector};
///
/// let pid = PiDesc::new();
/// // The first post sets ON and asks for a notification; the second finds ON set.
/// assert!(pid.post(Vector::new(0x30)?));
/// assert!(!pid.post(Vector::new(0x31)?));
/// let mut pir = [0u64; 4];
/// assert!(pid.harvest(&mut pir));
/// assert_eq!(pir[0], 3 << 0x30);
/// assert!(pid.pir_is_empty());
/// // Suppressed: the bit is posted, no notification.
/// pid.clear_on();
/// pid.suppress();
/// assert!(!pid.post(Vector::new(0x80)?));
/// assert!(pid.test_pir(Vector::new(0x80)?) && !pid.test_on());
/// # Ok::<(), Error>(())
/// ```
#[repr(C, align(64))]
pub struct PiDesc {
    pir: [Atomic<u64>; NR_PIR_WORDS],
    /// `notifications` (ON, SN) in bits 0..16, NV in 16..24, NDST in 32..64.
    control: Atomic<u64>,
    rsvd: [Atomic<u32>; 6],
}

// The layout is C's `struct pi_desc`.
const _: () = {
    assert!(size_of::<PiDesc>() == size_of::<bindings::pi_desc>());
    assert!(size_of::<PiDesc>() == 64);
    assert!(align_of::<PiDesc>() == align_of::<bindings::pi_desc>());
    assert!(align_of::<PiDesc>() == 64);
    assert!(offset_of!(PiDesc, pir) == offset_of!(bindings::pi_desc, pir));
    assert!(offset_of!(PiDesc, control) == offset_of!(bindings::pi_desc, __bindgen_anon_1));
    assert!(offset_of!(PiDesc, rsvd) == offset_of!(bindings::pi_desc, rsvd));
};

impl Default for PiDesc {
    fn default() -> Self {
        Self::new()
    }
}

impl PiDesc {
    /// Returns an empty descriptor (no PIR bit, ON and SN clear, NV and NDST 0).
    pub const fn new() -> Self {
        Self {
            pir: [const { Atomic::new(0) }; NR_PIR_WORDS],
            control: Atomic::new(0),
            rsvd: [const { Atomic::new(0) }; 6],
        }
    }

    /// Creates a reference to a [`PiDesc`] from a raw `struct pi_desc` pointer, for the code that
    /// owns a descriptor the hardware uses: the notification handler with this CPU's
    /// `posted_msi_pi_desc`.
    ///
    /// # Safety
    ///
    /// `ptr` points to a valid `struct pi_desc` that lives for `'a` and that nothing writes but
    /// through atomic operations (the IOMMU and the [`PiDesc`] methods).
    #[inline]
    pub unsafe fn from_raw<'a>(ptr: *mut bindings::pi_desc) -> &'a Self {
        // SAFETY: `PiDesc` has `struct pi_desc`'s layout (checked above) and only atomic (or
        // never written) fields; the caller guarantees validity for `'a`.
        unsafe { &*ptr.cast::<Self>() }
    }

    /// Returns the posted-MSI descriptor of `cpu`, for the posting agent, which only posts.
    ///
    /// Crate-private: the descriptor is live hardware state shared with the IOMMU, and a
    /// [`PiDesc::harvest`] outside the notification handler would lose device interrupts.
    #[cfg(CONFIG_X86_POSTED_MSI_AGENT)]
    pub(crate) fn of_cpu(cpu: CpuId) -> &'static Self {
        // SAFETY: As in `this_cpu`, for `per_cpu_ptr()` of a valid CPU id.
        unsafe { &*bindings::posted_msi_pi_desc_of_cpu(cpu.as_u32()).cast::<Self>() }
    }

    /// Posts `vector` as the IOMMU does: sets its PIR bit, then, unless a notification is
    /// outstanding (ON) or suppressed (SN), sets ON.
    ///
    /// Returns whether a notification must be sent. Any context.
    #[inline]
    pub fn post(&self, vector: Vector) -> bool {
        self.set_pir(vector);
        self.test_and_set_on_unless_sn()
    }

    /// The second half of a post, after the PIR bit is set: sets ON unless ON or SN is set.
    ///
    /// Returns whether it set ON, i.e. whether the poster must send the notification. Any
    /// context.
    #[inline]
    pub fn test_and_set_on_unless_sn(&self) -> bool {
        // This load and the handler's harvest after clearing ON form a store-buffering pair (PIR
        // write then ON read here, ON write then PIR read there): the fully ordered PIR update
        // of `set_pir()` orders the PIR write before this read, as the posting CPU or IOMMU does.
        let mut c = self.control.load(Relaxed);
        loop {
            if c & (ON | SN) != 0 {
                return false;
            }
            match self.control.cmpxchg(c, c | ON, Full) {
                Ok(_) => return true,
                Err(now) => c = now,
            }
        }
    }

    /// Sets the PIR bit of `vector`; returns whether it was clear before.
    #[inline]
    pub fn set_pir(&self, vector: Vector) -> bool {
        let (w, bit) = vector.word_bit();
        // Fully ordered, as C's `test_and_set_bit()`.
        self.pir[w].fetch_or(bit, Full) & bit == 0
    }

    /// Returns whether the PIR bit of `vector` is set.
    #[inline]
    pub fn test_pir(&self, vector: Vector) -> bool {
        let (w, bit) = vector.word_bit();
        self.pir[w].load(Relaxed) & bit != 0
    }

    /// Returns whether no PIR bit is set.
    #[inline]
    pub fn pir_is_empty(&self) -> bool {
        !self.pir_pending()
    }

    /// Returns whether any PIR bit is set, with the loads of [`PiDesc::harvest`]: what a harvest
    /// of an empty PIR does, without the copy.
    #[inline(always)]
    pub fn pir_pending(&self) -> bool {
        // `READ_ONCE()`s, as in `harvest()`.
        self.pir.iter().fold(0, |acc, w| acc | w.load(Relaxed)) != 0
    }

    /// Moves the PIR into `out` (`pi_harvest_pir`): reads all words, then exchanges only the
    /// non-zero ones with 0, to keep the cache line shared with the IOMMU in one state.
    ///
    /// Returns whether any bit was pending.
    #[inline]
    pub fn harvest(&self, out: &mut [u64; NR_PIR_WORDS]) -> bool {
        let mut pending = 0;
        for (o, w) in out.iter_mut().zip(&self.pir) {
            // `READ_ONCE()`, as `pi_harvest_pir()`.
            *o = w.load(Relaxed);
            pending |= *o;
        }
        if pending == 0 {
            return false;
        }
        for (o, w) in out.iter_mut().zip(&self.pir) {
            if *o != 0 {
                // Fully ordered, as C's `arch_xchg()`.
                *o = w.xchg(0, Full);
            }
        }
        true
    }

    /// Clears ON, re-arming notifications (`pi_clear_on`), fully ordered against the accesses
    /// that follow.
    #[inline]
    pub fn clear_on(&self) {
        // `clear_bit()`, as `pi_clear_on()`: an unordered RMW in the LKMM.
        self.control.andnot(ON, Relaxed);
        // The handler's PIR reads after clearing ON and a poster's PIR write then ON read
        // (`set_pir()` then `test_and_set_on_unless_sn()`) are a store-buffering pair: without a
        // full barrier on both sides, the handler could miss the bit and the poster still find
        // ON set, and the vector would wait for an unrelated notification. The poster's side is
        // the fully ordered `fetch_or()` of `set_pir()`; this is the handler's. On x86 the
        // `lock and` already is one, which C's handler relies on silently, and this is only a
        // compiler barrier there: it keeps the ordering stated in the memory model.
        smp_mb_after_atomic();
    }

    /// Returns whether a notification is outstanding (`pi_test_on`).
    #[inline]
    pub fn test_on(&self) -> bool {
        self.control.load(Relaxed) & ON != 0
    }

    /// Returns whether notifications are suppressed (`pi_test_sn`).
    pub fn test_sn(&self) -> bool {
        self.control.load(Relaxed) & SN != 0
    }

    /// Suppresses notifications (`pi_set_sn`); posts still set PIR bits.
    pub fn suppress(&self) {
        self.control.or(SN, Relaxed);
    }

    /// Re-enables notifications (`pi_clear_sn`). Bits posted meanwhile stay in the PIR.
    pub fn unsuppress(&self) {
        self.control.andnot(SN, Relaxed);
    }

    /// Returns the notification vector (NV).
    pub fn nv(&self) -> u8 {
        // Bits 16..24 of the control word.
        ((self.control.load(Relaxed) >> 16) & 0xff) as u8
    }

    /// Returns the notification destination (NDST): the APIC ID in x2APIC mode, the APIC ID
    /// shifted left by 8 in xAPIC mode.
    pub fn ndst(&self) -> u32 {
        // Bits 32..64 of the control word.
        (self.control.load(Relaxed) >> 32) as u32
    }
}

/// Returns whether `cpu` is online (`cpu_online()`); it may change right after, unless the caller
/// keeps it from going offline (interrupts disabled: offlining clears the bit in
/// `stop_machine()`, which waits for every online CPU).
pub(crate) fn cpu_online(cpu: CpuId) -> bool {
    // SAFETY: `__cpu_online_mask` is a valid cpumask for the kernel's lifetime.
    unsafe { crate::cpumask::Cpumask::from_raw(&raw const bindings::__cpu_online_mask) }.test(cpu)
}

/// Sends the posted-MSI notification interrupt to `cpu`, as the IOMMU does after a post set ON:
/// `POSTED_MSI_NOTIFICATION_VECTOR` (NV) to the CPU's APIC ID (NDST).
///
/// Any context but NMI (it disables interrupts for the check and the send). For posting agents
/// that stand in for the IOMMU (tests, samples, benchmarks). Safe and public on purpose: a
/// notification without posted vectors is one the hardware may send too (its vectors already
/// taken by a previous notification's final harvest), and the handler then only reads the PIR,
/// clears ON and EOIs.
///
/// # Errors
///
/// `EINVAL` if `cpu` is not online. The APIC ID of a CPU that was never online is `BAD_APICID`,
/// which x2APIC physical mode reads as a broadcast to every CPU. With interrupts disabled from
/// the check to the send, `cpu` cannot go offline in between: offlining clears its online bit
/// in `stop_machine()`, which waits for this CPU. An IPI that reaches it afterwards, once it is
/// offline, is what C's `apic->send_IPI()` risks too, and harmless: its APIC ID stays valid
/// (only the physical removal of an offline CPU resets it), and the interrupt stays pending
/// until the INIT of its next online resets its local APIC, or at worst runs as an empty
/// notification there.
pub fn send_notification(cpu: CpuId) -> Result {
    let _irqs_off = crate::interrupt::local_interrupt_disable();
    if !cpu_online(cpu) {
        return Err(EINVAL);
    }
    // SAFETY: Sends a fixed-vector IPI to an online CPU, whose APIC ID is valid and stays so
    // (it cannot go offline while interrupts are disabled here); the vector's handler is
    // installed at boot (`sysvec_posted_msi_notification`).
    unsafe { bindings::posted_msi_send_notification(cpu.as_u32()) };
    Ok(())
}

/// Returns how many posted-MSI notifications `cpu` has taken: its PMN count in
/// `/proc/interrupts`. Any context; the value may be stale by the time it is used.
pub fn notification_count(cpu: CpuId) -> u32 {
    // SAFETY: Reads a per-CPU counter of a valid CPU id.
    unsafe { bindings::posted_msi_notification_count(cpu.as_u32()) }
}

/// Signals EOI of the notification to the local APIC (`apic_eoi()`, the static call to the
/// installed APIC driver's EOI, Rust's with `CONFIG_X86_APIC_EOI_RUST`).
///
/// Private: an EOI outside the interrupt it completes would end a higher-priority one early.
#[cfg(CONFIG_X86_POSTED_MSI_RUST)]
#[inline]
fn apic_eoi() {
    // SAFETY: Only tells the local APIC that the in-service interrupt is complete.
    unsafe { bindings::apic_eoi() }
}

/// Returns whether device MSIs are posted (`posted_msi_enabled()`): `intremap=posted_msi` on
/// a machine whose every remapping unit can post. Interrupt remapping then writes posted IRTEs
/// for PCI MSIs, and acks them without EOI.
///
/// Any context; fixed once interrupt remapping is enabled.
pub fn msi_enabled() -> bool {
    // SAFETY: Reads boot-time state.
    unsafe { bindings::posted_msi_enabled() }
}

/// Returns the physical address of `cpu`'s posted-MSI descriptor (`posted_msi_pi_desc`), where
/// an IOMMU posts the MSIs routed to `cpu` (`get_pi_desc_addr()`).
///
/// Any context.
pub fn pi_desc_phys(cpu: CpuId) -> u64 {
    // SAFETY: `per_cpu_ptr()` of a valid CPU id, a per-CPU variable in the kernel's direct map.
    unsafe { bindings::virt_to_phys(bindings::posted_msi_pi_desc_of_cpu(cpu.as_u32()).cast()) }
}

/// Returns whether the Rust posted-MSI implementation is selected: `posted_msi=rust` (the
/// default) or `posted_msi=c` on the kernel command line, or a test's `x86_posted_msi_select()`.
///
/// Any context; the selection may change at any time after it is read.
pub fn rust_selected() -> bool {
    #[cfg(CONFIG_X86_POSTED_MSI_RUST)]
    // SAFETY: Reads a static key.
    return unsafe { bindings::x86_posted_msi_use_rust() };
    #[cfg(not(CONFIG_X86_POSTED_MSI_RUST))]
    return false;
}

/// Returns whether this CPU is running the posted-MSI notification handler
/// (`posted_msi_handler_active`).
///
/// Hard IRQ context.
#[cfg(CONFIG_X86_POSTED_MSI_RUST)]
pub(crate) fn notification_active() -> bool {
    // SAFETY: Reads a per-CPU flag of this CPU.
    unsafe { bindings::x86_posted_msi_handler_active() }
}

/// The `irq_ack` of posted MSIs (`intel_ack_posted_msi_irq`).
///
/// Applies a pending affinity change, which posted MSIs must honour like any other (the
/// pending bit is tested first, as in C, so the common ack costs no more). The EOI is skipped:
/// a posted MSI never reaches the local APIC's IRR, and the notification handler EOIs once for
/// all the vectors it demultiplexes. Only when the interrupt did not come through the
/// notification handler -- `irq_retrigger()` raised the vector itself -- does it EOI, or the
/// stale ISR bit would block lower-priority interrupts.
///
/// # Safety
///
/// Only called as the `irq_ack` of `irqd`'s chip by a flow handler holding the interrupt's
/// descriptor lock (`handle_edge_irq()`, which VT-d's posted MSIs have), in the interrupt's hard
/// IRQ: the move needs the lock, and the EOI decision the interrupt in service.
#[cfg(CONFIG_X86_POSTED_MSI_RUST)]
#[inline]
pub unsafe fn ack(irqd: &crate::irq::IrqData) {
    // SAFETY: This is the `irq_ack` of the edge flow, which holds the descriptor lock, in the
    // interrupt's hard IRQ (the function's safety requirements). It tests the pending bit first.
    unsafe { irqd.move_irq_locked() };
    if !notification_active() {
        apic_eoi();
    }
}

#[cfg(CONFIG_X86_POSTED_MSI_KUNIT_TEST)]
#[macros::kunit_tests(rust_posted_msi_pid)]
mod tests {
    use super::*;

    #[test]
    fn vector_range() -> Result {
        for v in [0u32, 1, 31, 256, 0x1000, u32::MAX] {
            assert_eq!(Vector::new(v), Err(EINVAL));
        }
        for v in [32u32, 0x41, 0xeb, 255] {
            assert_eq!(Vector::new(v)?.as_u32(), v);
        }
        Ok(())
    }

    #[test]
    fn post_sets_on_once_and_respects_sn() -> Result {
        let pid = PiDesc::new();
        assert!(pid.post(Vector::new(0x20)?));
        assert!(pid.test_on());
        for v in 0x21..0x30 {
            assert!(!pid.post(Vector::new(v)?));
        }
        // Re-posting a pending vector does not set a new bit.
        assert!(!pid.set_pir(Vector::new(0x25)?));
        pid.clear_on();
        pid.suppress();
        assert!(!pid.post(Vector::new(0xc0)?));
        assert!(!pid.test_on());
        assert!(pid.test_pir(Vector::new(0xc0)?));
        pid.unsuppress();
        assert!(!pid.test_sn());
        assert!(pid.post(Vector::new(0xc1)?));
        Ok(())
    }

    #[test]
    fn harvest_moves_every_word() -> Result {
        let pid = PiDesc::new();
        let mut out = [0u64; NR_PIR_WORDS];
        assert!(!pid.harvest(&mut out));
        for v in [0x20u32, 0x7f, 0x80, 0xc3, 0xff] {
            pid.set_pir(Vector::new(v)?);
        }
        assert!(pid.harvest(&mut out));
        assert_eq!(out, [1 << 0x20, 1 << 0x3f, 1, 1 << 3 | 1 << 0x3f]);
        assert!(pid.pir_is_empty());
        Ok(())
    }
}
