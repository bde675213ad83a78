// SPDX-License-Identifier: GPL-2.0

//! The LPI range allocator: which LPI INTIDs are free, as a sorted list of free ranges
//! (`lpi_range_list` in C). A device's events get one contiguous range, first fit
//! (`alloc_lpi_range()`); a request that does not fit is halved until one does
//! (`its_lpi_alloc()`); a freed range merges with its neighbours (`free_lpi_range()`).
//!
//! Plain data: the driver keeps it under a mutex (C's `lpi_range_lock`); allocation happens in
//! `msi_prepare`, never in atomic context.
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

    /// Free LPIs in all.
    pub(crate) fn free_count(&self) -> u64 {
        self.free.iter().map(|r| u64::from(r.span)).sum()
    }
}

#[cfg(CONFIG_ARM_GIC_V3_RUST_ITS_KUNIT_TEST)]
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
}
