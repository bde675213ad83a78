// SPDX-License-Identifier: GPL-2.0

//! The LPI range allocator: which LPI INTIDs are free, as a sorted list of free ranges
//! (`lpi_range_list` in C). A device's events get one contiguous range, first fit
//! (`alloc_lpi_range()`); a request that does not fit is halved until one does
//! (`its_lpi_alloc()`); a freed range merges with its neighbours (`free_lpi_range()`).
//!
//! Plain data: the driver keeps it under a mutex (C's `lpi_range_lock`); allocation happens in
//! `msi_prepare`, never in atomic context.
//!
//! And a device's events ([`Events`]): naturally aligned power-of-two blocks, first fit, the
//! unallocated rest of a multi-MSI block held with it.
//!
//! C source: [`drivers/irqchip/irq-gic-v3-its.c`](srctree/drivers/irqchip/irq-gic-v3-its.c).

use super::cmd::FIRST_LPI;
use kernel::prelude::*;

/// A run of free LPIs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Range {
    /// The first free LPI.
    base: u32,
    /// How many, from `base` on.
    span: u32,
}

impl Range {
    fn end(&self) -> u64 {
        u64::from(self.base) + u64::from(self.span)
    }
}

/// The free LPIs of one GIC.
///
/// # Invariants
///
/// `free` is sorted by base, its ranges are non-empty, lie within `FIRST_LPI..limit`, and
/// neither overlap nor touch (touching ranges are merged).
pub(crate) struct LpiRanges {
    free: KVec<Range>,
    limit: u64,
}

impl LpiRanges {
    /// Every LPI of `id_bits` INTID bits free: `8192..2^id_bits` (`its_lpi_init()`; C caps the
    /// bits at 16, `ITS_MAX_LPI_NRBITS`, and so does its caller here).
    ///
    /// Errors: `EINVAL` for fewer than 14 bits (no LPI) or more than 32.
    pub(crate) fn new(id_bits: u32) -> Result<Self> {
        if !(14..=32).contains(&id_bits) {
            return Err(EINVAL);
        }
        let limit = 1u64 << id_bits;
        let mut free = KVec::new();
        free.push(
            Range {
                base: FIRST_LPI,
                span: (limit - u64::from(FIRST_LPI)) as u32,
            },
            GFP_KERNEL,
        )?;
        // INVARIANT: one non-empty range, within the limits.
        Ok(Self { free, limit })
    }

    /// Takes `nr` contiguous LPIs, the first free run long enough; returns the first.
    ///
    /// Errors: `EINVAL` for 0, `ENOSPC` if no run is long enough.
    pub(crate) fn alloc(&mut self, nr: u32) -> Result<u32> {
        if nr == 0 {
            return Err(EINVAL);
        }
        let i = self.free.iter().position(|r| r.span >= nr).ok_or(ENOSPC)?;
        let r = &mut self.free[i];
        let base = r.base;
        // INVARIANT: the range shrinks from its start; one taken whole is removed (its end may
        // be 2^32, past `u32`).
        if r.span == nr {
            // `i` is in range: found above.
            let _ = self.free.remove(i);
        } else {
            r.base += nr;
            r.span -= nr;
        }
        Ok(base)
    }

    /// Takes up to `nr` contiguous LPIs, halving the request until a run fits
    /// (`its_lpi_alloc()`): returns the first and how many.
    ///
    /// Errors: `EINVAL` for 0, `ENOSPC` if not one LPI is free.
    pub(crate) fn alloc_up_to(&mut self, nr: u32) -> Result<(u32, u32)> {
        if nr == 0 {
            return Err(EINVAL);
        }
        let mut n = nr;
        while n > 0 {
            if let Ok(base) = self.alloc(n) {
                return Ok((base, n));
            }
            n /= 2;
        }
        Err(ENOSPC)
    }

    /// Returns `nr` LPIs from `base` on, merging them with the free runs they touch.
    ///
    /// Errors: `EINVAL` for a range outside the LPIs or one that is (in part) free already,
    /// a double free, which C would only `WARN` about; the allocator is left as it was.
    /// `ENOMEM` if the list cannot grow.
    pub(crate) fn free(&mut self, base: u32, nr: u32) -> Result {
        let new = Range { base, span: nr };
        if nr == 0 || base < FIRST_LPI || new.end() > self.limit {
            return Err(EINVAL);
        }
        // The first free run that starts after `base`.
        let i = self
            .free
            .iter()
            .position(|r| r.base > base)
            .unwrap_or(self.free.len());
        let prev = i.checked_sub(1).and_then(|p| self.free.get(p).copied());
        let next = self.free.get(i).copied();
        if prev.is_some_and(|p| p.end() > u64::from(base))
            || next.is_some_and(|n| u64::from(n.base) < new.end())
        {
            return Err(EINVAL);
        }
        let joins_prev = prev.is_some_and(|p| p.end() == u64::from(base));
        let joins_next = next.is_some_and(|n| u64::from(n.base) == new.end());
        // INVARIANT: sorted order kept; touching runs merged into one.
        match (joins_prev, joins_next) {
            (true, true) => {
                let n = self.free.remove(i).map_err(|_| EINVAL)?;
                self.free[i - 1].span += nr + n.span;
            }
            (true, false) => self.free[i - 1].span += nr,
            (false, true) => {
                self.free[i].base = base;
                self.free[i].span += nr;
            }
            (false, false) => {
                self.free.reserve(1, GFP_KERNEL)?;
                self.free
                    .insert_within_capacity(i, new)
                    .map_err(|_| ENOMEM)?;
            }
        }
        Ok(())
    }

    /// Free LPIs in all. For the KUnit suite.
    #[cfg_attr(
        not(any(
            CONFIG_ARM_GIC_V3_RUST_ITS_KUNIT_TEST = "y",
            all(MODULE, CONFIG_ARM_GIC_V3_RUST_ITS_KUNIT_TEST = "m")
        )),
        allow(dead_code)
    )]
    pub(crate) fn free_count(&self) -> u64 {
        self.free.iter().map(|r| u64::from(r.span)).sum()
    }
}

/// An event of a device.
enum Slot<T> {
    Free,
    /// Mapped, with its state.
    Used(T),
    /// Held for the multi-MSI block whose first event this is: the device may raise every
    /// event of the power-of-two block its MSI capability was given, not only those allocated
    /// (`bitmap_find_free_region()` holds them in C).
    Reserved(u32),
}

/// The events of one device (C's `its_device->event_map.lpi_map`), each free, taken with its
/// state `T`, or held for a multi-MSI block. Naturally aligned power-of-two blocks, first fit
/// (`bitmap_find_free_region()`).
///
/// Plain data: the driver keeps it under its devices' mutex.
///
/// # Invariants
///
/// No event below `free_from` is free. A `Reserved(first)` event lies in the naturally aligned
/// block that starts at `first`, whose first event is taken or being removed ([`Events::remove`]
/// leaves it `Reserved(first)` until [`Events::release`] or [`Events::put_back`]).
pub(crate) struct Events<T> {
    slots: KVec<Slot<T>>,
    free_from: usize,
}

impl<T> Events<T> {
    /// `n` free events.
    pub(crate) fn new(n: usize) -> Result<Self> {
        let mut slots = KVec::with_capacity(n, GFP_KERNEL)?;
        for _ in 0..n {
            slots.push(Slot::Free, GFP_KERNEL)?;
        }
        // INVARIANT: nothing below 0, nothing reserved.
        Ok(Self {
            slots,
            free_from: 0,
        })
    }

    /// How many events.
    pub(crate) fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether every event is free: the device may be unmapped.
    pub(crate) fn all_free(&self) -> bool {
        self.slots.iter().all(|s| matches!(s, Slot::Free))
    }

    /// The first event of the first free naturally aligned block for `nr` events (rounded up
    /// to a power of two): `EINVAL` for 0 events or more than 2^31, `ENOSPC` if none is free.
    pub(crate) fn find_block(&self, nr: u32) -> Result<usize> {
        if nr == 0 {
            return Err(EINVAL);
        }
        let block = nr.checked_next_power_of_two().ok_or(EINVAL)? as usize;
        // A block that starts below `free_from` holds an event that is not free.
        let mut first = self.free_from.next_multiple_of(block);
        loop {
            let slots = self.slots.get(first..first + block).ok_or(ENOSPC)?;
            if slots.iter().all(|s| matches!(s, Slot::Free)) {
                return Ok(first);
            }
            first += block;
        }
    }

    /// Takes event `e` with `state`: `EINVAL` if it is not free (or does not exist).
    pub(crate) fn take(&mut self, e: usize, state: T) -> Result {
        match self.slots.get_mut(e) {
            Some(slot @ Slot::Free) => {
                *slot = Slot::Used(state);
                Ok(())
            }
            _ => Err(EINVAL),
        }
    }

    /// Holds the rest of the block of `nr` events that starts at `first`, once its events are
    /// taken (`first` at least): the events a multi-MSI device may raise beyond those it was
    /// given. `EINVAL` for a block that is not the one [`Events::find_block`] gave.
    pub(crate) fn hold_block(&mut self, first: usize, nr: u32) -> Result {
        let block = nr.checked_next_power_of_two().ok_or(EINVAL)? as usize;
        if nr == 0 || first % block != 0 || !matches!(self.slots.get(first), Some(Slot::Used(_))) {
            return Err(EINVAL);
        }
        let slots = self
            .slots
            .get_mut(first + nr as usize..first + block)
            .ok_or(EINVAL)?;
        if !slots.iter().all(|s| matches!(s, Slot::Free)) {
            return Err(EINVAL);
        }
        // INVARIANT: held for `first`, taken, in its aligned block.
        for s in slots {
            *s = Slot::Reserved(first as u32);
        }
        if self.free_from == first {
            // INVARIANT: the whole block is taken or held now.
            self.free_from = first + block;
        }
        Ok(())
    }

    /// Gives back the state of event `e` if it is taken, leaving it taken by nothing: the
    /// caller undoes its mapping, then calls [`Events::release`] (or [`Events::put_back`] if
    /// that failed).
    pub(crate) fn remove(&mut self, e: usize) -> Option<T> {
        let slot = self.slots.get_mut(e)?;
        match core::mem::replace(slot, Slot::Reserved(e as u32)) {
            Slot::Used(state) => Some(state),
            other => {
                *slot = other;
                None
            }
        }
    }

    /// Event `e`, removed, is still mapped: it stays taken with `state`, never reused.
    pub(crate) fn put_back(&mut self, e: usize, state: T) {
        if let Some(slot) = self.slots.get_mut(e) {
            *slot = Slot::Used(state);
        }
    }

    /// Frees event `e`, removed and unmapped, and the events held for the block it began.
    pub(crate) fn release(&mut self, e: usize) {
        let len = self.slots.len();
        if e >= len {
            return;
        }
        // A block is naturally aligned, so no larger than `e`'s alignment.
        let end = match e {
            0 => len,
            _ => len.min(e + (1usize << e.trailing_zeros())),
        };
        for slot in self.slots[e..end].iter_mut() {
            if matches!(slot, Slot::Reserved(first) if *first as usize == e) {
                *slot = Slot::Free;
            }
        }
        // INVARIANT: `e` is free now, and nothing else below it became so.
        self.free_from = self.free_from.min(e);
    }
}

// Built in, or in the module of its own (irq_gic_v3_rust_its_kunit.rs).
#[cfg(any(
    CONFIG_ARM_GIC_V3_RUST_ITS_KUNIT_TEST = "y",
    all(MODULE, CONFIG_ARM_GIC_V3_RUST_ITS_KUNIT_TEST = "m")
))]
#[kunit_tests(rust_gicv3_its_lpi)]
mod tests {
    use super::*;

    #[test]
    fn first_fit_then_merge_back_to_one_range() -> Result {
        // 16 bits: 65536 - 8192 LPIs.
        let mut l = LpiRanges::new(16)?;
        assert_eq!(l.free_count(), 57344);
        let a = l.alloc(32)?;
        let b = l.alloc(2)?;
        let c = l.alloc(64)?;
        assert_eq!((a, b, c), (8192, 8224, 8226));
        // A hole of 2 between a and c: a request of 2 takes it, a larger one goes past c.
        l.free(b, 2)?;
        assert_eq!(l.alloc(4)?, 8290);
        assert_eq!(l.alloc(2)?, 8224);
        l.free(8224, 2)?;
        l.free(a, 32)?;
        l.free(c, 64)?;
        l.free(8290, 4)?;
        assert_eq!(l.free_count(), 57344);
        assert_eq!(l.free.len(), 1);
        Ok(())
    }

    #[test]
    fn exhaustion_halves_the_request_then_is_enospc() -> Result {
        // 14 bits: 8192 LPIs.
        let mut l = LpiRanges::new(14)?;
        assert_eq!(l.alloc(8192)?, 8192);
        assert_eq!(l.alloc(1), Err(ENOSPC));
        assert_eq!(l.alloc_up_to(1), Err(ENOSPC));
        l.free(8192 + 100, 40)?;
        // 64 asked, 40 free in one run: 32 granted.
        assert_eq!(l.alloc_up_to(64)?, (8292, 32));
        assert_eq!(l.alloc_up_to(64)?, (8324, 8));
        assert_eq!(l.alloc_up_to(64), Err(ENOSPC));
        Ok(())
    }

    #[test]
    fn double_or_stray_frees_are_einval_and_change_nothing() -> Result {
        let mut l = LpiRanges::new(14)?;
        let a = l.alloc(16)?;
        assert_eq!(l.free(a + 8, 16), Err(EINVAL)); // overlaps the free run after it
        l.free(a, 8)?;
        assert_eq!(l.free(a + 4, 2), Err(EINVAL)); // already free
        assert_eq!(l.free(8000, 4), Err(EINVAL)); // not an LPI
        assert_eq!(l.free(16380, 8), Err(EINVAL)); // past the last
        assert_eq!(l.free(a, 0), Err(EINVAL));
        assert_eq!(l.alloc(0), Err(EINVAL));
        assert_eq!(l.free_count(), 8192 - 8);
        assert_eq!(LpiRanges::new(13).err(), Some(EINVAL));
        // 32 INTID bits: the last LPI, 2^32 - 1, taken and given back.
        let mut l = LpiRanges::new(32)?;
        let all = u32::MAX - 8191;
        assert_eq!(l.alloc(all - 1)?, 8192);
        assert_eq!(l.alloc(1)?, u32::MAX);
        assert_eq!(l.alloc(1), Err(ENOSPC));
        l.free(u32::MAX, 1)?;
        l.free(8192, all - 1)?;
        assert_eq!(l.free_count(), u64::from(all));
        assert_eq!(LpiRanges::new(33).err(), Some(EINVAL));
        Ok(())
    }

    #[test]
    fn a_multi_msi_block_is_held_whole_until_its_first_event_goes() -> Result {
        let mut ev = Events::<u32>::new(16)?;
        assert_eq!(ev.find_block(0), Err(EINVAL));
        // Three events: a block of four, the fourth held.
        let first = ev.find_block(3)?;
        assert_eq!(first, 0);
        for e in 0..3 {
            ev.take(e, e as u32)?;
        }
        assert_eq!(ev.take(1, 9), Err(EINVAL));
        ev.hold_block(first, 3)?;
        // The next single event is the fifth, not the held fourth.
        assert_eq!(ev.find_block(1)?, 4);
        ev.take(4, 4)?;
        // A block of two is aligned: 6.
        assert_eq!(ev.find_block(2)?, 6);
        // The block's events go, first first: the held one goes with the first.
        for e in 0..3 {
            assert_eq!(ev.remove(e), Some(e as u32));
            ev.release(e);
        }
        assert_eq!(ev.find_block(4)?, 0);
        assert!(!ev.all_free());
        assert_eq!(ev.remove(4), Some(4));
        ev.release(4);
        assert!(ev.all_free());
        Ok(())
    }

    #[test]
    fn an_event_whose_unmapping_failed_stays_taken() -> Result {
        let mut ev = Events::<u32>::new(8)?;
        ev.take(0, 7)?;
        ev.hold_block(0, 1)?;
        let state = ev.remove(0).ok_or(EINVAL)?;
        // Removed and not yet released: neither free nor given again.
        assert_eq!(ev.find_block(1)?, 1);
        assert_eq!(ev.remove(0), None);
        ev.put_back(0, state);
        assert!(!ev.all_free());
        assert_eq!(ev.find_block(1)?, 1);
        // A block that is not found or not taken is refused.
        assert_eq!(ev.hold_block(2, 2), Err(EINVAL));
        assert_eq!(ev.hold_block(1, 2), Err(EINVAL));
        Ok(())
    }

    #[test]
    fn blocks_run_out_and_come_back_after_frees_below_the_hint() -> Result {
        let mut ev = Events::<u32>::new(8)?;
        for e in 0..8 {
            assert_eq!(ev.find_block(1)?, e);
            ev.take(e, 0)?;
            ev.hold_block(e, 1)?;
        }
        assert_eq!(ev.find_block(1), Err(ENOSPC));
        assert_eq!(ev.find_block(16), Err(ENOSPC));
        // Freed below where the search started: found again.
        ev.remove(2);
        ev.release(2);
        ev.remove(3);
        ev.release(3);
        assert_eq!(ev.find_block(1)?, 2);
        assert_eq!(ev.find_block(2)?, 2);
        assert_eq!(ev.find_block(4), Err(ENOSPC));
        Ok(())
    }
}
