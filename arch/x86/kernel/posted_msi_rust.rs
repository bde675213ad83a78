// SPDX-License-Identifier: GPL-2.0

//! The posted-MSI notification handler's body in Rust, and the posted-MSI ack for C chips.
//!
//! C's `intel_ack_posted_msi_irq()` calls
//! [`rust_posted_msi_ack`](posted_msi_cpu::rust_posted_msi_ack), [`kernel::irq::posted::ack`], when
//! the Rust implementation is selected.
//!
//! With posted MSIs the IOMMU sets a device vector's bit in the target CPU's posted-interrupt
//! descriptor ([`PiDesc`]) and sends one notification for a burst of them.
//! `sysvec_posted_msi_notification()`, the IDT entry, stays C and does the entry bookkeeping
//! (irq regs, the PMN count, `irq_enter()`/`irq_exit()`, `posted_msi_handler_active`); with
//! `posted_msi=rust`, the default, it calls [`rust_posted_msi_notification`] for the rest: harvest
//! the PIR, run the flow handler of every pending vector, re-arm notifications, EOI.
//!
//! The only `unsafe` code is in [`posted_msi_cpu`]: the C entry point, this CPU's descriptor,
//! the vector's flow handler, the EOI.
//!
//! C source: `sysvec_posted_msi_notification()` and `intel_ack_posted_msi_irq()` in
//! [`arch/x86/kernel/irq.c`](srctree/arch/x86/kernel/irq.c).

use kernel::{
    irq::posted::{
        PiDesc,
        Vector,
        FIRST_EXTERNAL_VECTOR,
        FIRST_SYSTEM_VECTOR,
        NR_PIR_WORDS, //
    }, //
};

mod posted_msi_cpu;

/// Loops of the notification handler, the final pass after clearing ON included
/// (`MAX_POSTED_MSI_COALESCING_LOOP`).
const MAX_COALESCING_LOOP: u32 = 3;

/// Calls `handle` for every device vector set in a harvested PIR.
#[inline(always)]
fn handle_harvested(pir: &[u64; NR_PIR_WORDS], handle: &mut impl FnMut(Vector)) {
    for (w, &word) in pir.iter().enumerate() {
        let mut bits = word;
        while bits != 0 {
            let v = w as u32 * 64 + bits.trailing_zeros();
            bits &= bits - 1;
            if !(FIRST_EXTERNAL_VECTOR..FIRST_SYSTEM_VECTOR).contains(&v) {
                continue;
            }
            if let Ok(v) = Vector::new(v) {
                handle(v);
            }
        }
    }
}

/// Harvests the PIR once and calls `handle` for every pending device vector
/// (`handle_pending_pir`). Returns whether anything was pending.
///
/// Always inlined, as C's `__always_inline` one.
#[inline(always)]
fn handle_pending_pir(pid: &PiDesc, handle: &mut impl FnMut(Vector)) -> bool {
    let mut pir = [0u64; NR_PIR_WORDS];
    if !pid.harvest(&mut pir) {
        return false;
    }
    handle_harvested(&pir, handle);
    true
}

/// C's demux loop, for [`demux`] once a read of the PIR found vectors: up to
/// [`MAX_COALESCING_LOOP`] - 1 harvests while vectors keep arriving, clear ON, one final harvest.
///
/// Out of line, so that the empty notification in [`demux`] needs no stack frame.
#[inline(never)]
fn demux_pending(pid: &PiDesc, handle: &mut impl FnMut(Vector)) {
    for _ in 1..MAX_COALESCING_LOOP {
        if !handle_pending_pir(pid, handle) {
            break;
        }
    }
    pid.clear_on();
    // Clearing ON can race with a post: process the PIR once more so that the new vectors do not
    // wait for the next notification.
    handle_pending_pir(pid, handle);
}

/// [`demux`]'s final harvest after an empty first one: vectors posted while ON was cleared.
#[inline(never)]
fn demux_final(pid: &PiDesc, handle: &mut impl FnMut(Vector)) {
    handle_pending_pir(pid, handle);
}

/// The demux loop of the posted-MSI notification handler: up to
/// [`MAX_COALESCING_LOOP`] - 1 harvests while vectors keep arriving, then ON is cleared to
/// re-arm notifications, then one final harvest for vectors that raced with clearing ON.
///
/// Calls `handle` once per harvested device vector (32..`FIRST_SYSTEM_VECTOR`). Hard IRQ
/// context, interrupts disabled, on the CPU that owns `pid`; the caller EOIs the notification
/// afterwards.
///
/// C source: `sysvec_posted_msi_notification()` in
/// [`arch/x86/kernel/irq.c`](srctree/arch/x86/kernel/irq.c). KUnit: `rust_posted_msi_demux`.
#[inline(always)]
fn demux(pid: &PiDesc, mut handle: impl FnMut(Vector)) {
    // C's loop, with one read of the PIR more where it finds vectors. A harvest that finds the
    // PIR empty only reads it, so the empty notification (its vectors already taken by a
    // previous one's final harvest) is handled inline: read the PIR, clear ON, read it again.
    // Anything found goes to the loop out of line, which harvests from the start: the empty
    // notification needs no stack frame, register saves or PIR copy. The extra read cannot
    // change what is harvested: only this CPU's notification handler clears PIR bits (posters
    // only set them), and it does not nest.
    if pid.pir_pending() {
        demux_pending(pid, &mut handle);
        return;
    }
    pid.clear_on();
    // Clearing ON can race with a post: process the PIR once more so that the new vectors do not
    // wait for the next notification.
    if pid.pir_pending() {
        demux_final(pid, &mut handle);
    }
}

/// The body of the posted-MSI notification handler: demultiplexes this CPU's posted MSIs
/// ([`demux`] running each vector's flow handler) and EOIs the notification.
///
/// Hard IRQ context, interrupts disabled: called by the C entry point
/// [`rust_posted_msi_notification`](posted_msi_cpu::rust_posted_msi_notification) with the
/// notification it handles.
fn handle_notification(n: posted_msi_cpu::Notification) {
    demux(n.pid(), |v| n.call_irq_handler(v));
    n.eoi();
}

#[cfg(CONFIG_X86_POSTED_MSI_KUNIT_TEST)]
#[kernel::prelude::kunit_tests(rust_posted_msi_demux)]
mod tests {
    use super::*;
    use kernel::prelude::*;

    #[test]
    fn demux_delivers_each_vector_once_and_skips_system_vectors() -> Result {
        let pid = PiDesc::new();
        let mut hits = [0u32; 256];
        for v in (0x20..=0xff).step_by(3) {
            pid.post(Vector::new(v)?);
        }
        demux(&pid, |v| hits[v.as_u32() as usize] += 1);
        for v in 0..256u32 {
            let want = u32::from(
                (FIRST_EXTERNAL_VECTOR..FIRST_SYSTEM_VECTOR).contains(&v) && (v - 0x20) % 3 == 0,
            );
            assert_eq!(hits[v as usize], want);
        }
        assert!(pid.pir_is_empty());
        assert!(!pid.test_on());
        Ok(())
    }

    #[test]
    fn empty_notification_clears_on_and_handles_nothing() -> Result {
        let pid = PiDesc::new();
        assert!(pid.post(Vector::new(0x40)?));
        // A previous notification's final harvest took the vector; ON is still set.
        let mut pir = [0u64; NR_PIR_WORDS];
        assert!(pid.harvest(&mut pir));
        let mut calls = 0;
        demux(&pid, |_| calls += 1);
        assert_eq!(calls, 0);
        assert!(!pid.test_on() && pid.pir_is_empty());
        Ok(())
    }

    #[test]
    fn final_harvest_takes_what_arrived_after_clear_on() -> Result {
        let pid = PiDesc::new();
        pid.set_pir(Vector::new(0x41)?);
        let mut seen = [0u32; 256];
        demux_final(&pid, &mut |v: Vector| seen[v.as_u32() as usize] += 1);
        assert_eq!(seen[0x41], 1);
        assert_eq!(seen.iter().sum::<u32>(), 1);
        assert!(pid.pir_is_empty());
        Ok(())
    }

    #[test]
    fn at_most_two_harvests_before_on_is_cleared() -> Result {
        // A vector that re-posts itself on every run: as in C, it runs twice with ON set, once
        // after ON was cleared, and that run's post finds ON clear and notifies.
        let pid = PiDesc::new();
        let v = Vector::new(0x50)?;
        assert!(pid.post(v));
        let (mut with_on, mut without_on, mut notified) = (0u32, 0u32, 0u32);
        demux(&pid, |v| {
            if pid.test_on() {
                with_on += 1;
            } else {
                without_on += 1;
            }
            notified += u32::from(pid.post(v));
        });
        assert_eq!((with_on, without_on, notified), (2, 1, 1));
        assert!(pid.test_pir(v) && pid.test_on());
        Ok(())
    }

    #[test]
    fn vector_posted_during_demux_is_not_lost() -> Result {
        let pid = PiDesc::new();
        let mut hits = [0u32; 256];
        let mut notifications = u32::from(pid.post(Vector::new(0x40)?));
        let mut rounds = 0;
        // Each handled vector posts the next one, as a device raising MSIs back to back does:
        // 0x40 -> 0x41 -> ... -> 0x45. Posts made while ON is set send no notification; one
        // made after the final harvest finds ON clear and notifies, which is the next round.
        while !pid.pir_is_empty() {
            rounds += 1;
            demux(&pid, |v| {
                hits[v.as_u32() as usize] += 1;
                if v.as_u32() < 0x45 {
                    if let Ok(next) = Vector::new(v.as_u32() + 1) {
                        notifications += u32::from(pid.post(next));
                    }
                }
            });
        }
        assert!(hits[0x40..=0x45].iter().all(|h| *h == 1));
        assert_eq!(hits.iter().sum::<u32>(), 6);
        // Every notification was one demux round. Each round runs two vectors with ON set and
        // one after clearing it, whose post notifies: 0x40..=0x42, then 0x43..=0x45 (0x45 posts
        // nothing).
        assert_eq!(rounds, notifications);
        assert_eq!(notifications, 2);
        assert!(!pid.test_on());
        Ok(())
    }
}
