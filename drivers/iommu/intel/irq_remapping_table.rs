// SPDX-License-Identifier: GPL-2.0

//! The interrupt remapping table's allocator, the remappable MSI format, and the
//! interrupt-entry-cache invalidation of a block, in Rust.
//!
//! - [`IrteAllocator`]: which of the table's 65536 IRTEs are in use (`ir_table->bitmap`). A
//!   device's vectors take one naturally aligned block of a power of two of entries
//!   (`alloc_irte()`, `bitmap_find_free_region()`): multi-MSI numbers its vectors by the low
//!   bits of the MSI data, so vector `i` of a block at `index` uses sub-handle `i` and entry
//!   `index + i`.
//! - [`msi_msg()`]: the address and data a device writes for an IRTE (`fill_msi_msg()`): the
//!   remappable format, handle and sub-handle instead of a destination and vector.
//! - [`iec_flush()`]: the queued-invalidation descriptor that drops a block from the
//!   interrupt entry cache (`qi_flush_iec()`), after an IRTE write.
//!
//! Plain values and a bitmap: the caller holds the table's lock (`irq_2_ir_lock`, a raw
//! spinlock: allocation may happen with interrupts off, so the bitmap is allocated up front and
//! nothing here allocates after [`IrteAllocator::new`]).
//!
//! C source: [`drivers/iommu/intel/irq_remapping.c`](srctree/drivers/iommu/intel/irq_remapping.c).

use kernel::{
    bitmap::BitmapVec,
    prelude::*, //
};

/// Entries in a remapping table (`INTR_REMAP_TABLE_ENTRIES`).
pub(crate) const TABLE_ENTRIES: usize = 65536;

/// A block of IRTEs: `1 << mask` entries from `index`.
///
/// # Invariants
///
/// `mask <= 15`, and `index` is a multiple of `1 << mask`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct IrteBlock {
    /// The first entry: the handle of the block's MSI messages.
    index: u16,
    /// The block holds `1 << mask` entries (`irte_mask`).
    mask: u8,
}

impl IrteBlock {
    /// The block of `1 << mask` entries from `index`.
    ///
    /// Errors: `EINVAL` for a mask above 15 or an `index` not aligned to the block's size.
    pub(crate) fn new(index: u16, mask: u8) -> Result<Self> {
        if mask > 15 || usize::from(index) % (1usize << mask) != 0 {
            return Err(EINVAL);
        }
        // INVARIANT: checked above.
        Ok(Self { index, mask })
    }

    /// Entries in the block, 1 to 32768.
    pub(crate) fn count(&self) -> usize {
        1 << self.mask
    }

    /// The first entry, the handle of the block's messages.
    pub(crate) fn index(&self) -> u16 {
        self.index
    }

    /// The block holds `1 << mask()` entries.
    pub(crate) fn mask(&self) -> u8 {
        self.mask
    }
}

/// The IRTEs of one remapping unit in use.
///
/// # Invariants
///
/// `used` has `TABLE_ENTRIES` bits (fewer only in tests); a bit is set exactly while its entry
/// belongs to a block handed out by [`IrteAllocator::alloc`] and not yet freed; `max_mask <= 15`.
pub(crate) struct IrteAllocator {
    used: BitmapVec,
    /// The largest block the unit can invalidate in one descriptor (`ecap_max_handle_mask()`,
    /// `ECAP.MHMV`): a larger one could not be flushed with a single IEC descriptor.
    max_mask: u8,
}

impl IrteAllocator {
    /// An empty table of `TABLE_ENTRIES` entries, for a unit whose extended capability register
    /// is `ecap` (its MHMV field, bits 23:20, bounds the blocks). May sleep (`GFP_KERNEL`).
    pub(crate) fn new(ecap: u64) -> Result<Self> {
        Self::with_entries(TABLE_ENTRIES, ecap)
    }

    /// A table of `entries` entries (a power of two, at most `TABLE_ENTRIES`).
    fn with_entries(entries: usize, ecap: u64) -> Result<Self> {
        if !entries.is_power_of_two() || entries > TABLE_ENTRIES {
            return Err(EINVAL);
        }
        // INVARIANT: `entries` bits, all clear; MHMV is a 4-bit field.
        Ok(Self {
            used: BitmapVec::new(entries, GFP_KERNEL)?,
            max_mask: ((ecap >> 20) & 0xf) as u8,
        })
    }

    /// Takes a block for `count` vectors: `count` rounded up to a power of two, aligned to its
    /// size, the lowest free (`alloc_irte()`). Never sleeps, never allocates.
    ///
    /// Errors: `EINVAL` for no vectors, more than 32 (multi-MSI's limit), or a block larger
    /// than the unit can invalidate at once (`ECAP.MHMV`); `ENOSPC` if no aligned block of that
    /// size is free.
    pub(crate) fn alloc(&mut self, count: u32) -> Result<IrteBlock> {
        if count == 0 || count > 32 {
            return Err(EINVAL);
        }
        // `alloc_irte()`: a power of two of entries, their mask at most what one IEC descriptor
        // invalidates.
        let size = count.next_power_of_two() as usize;
        let mask = size.trailing_zeros() as u8;
        if mask > self.max_mask {
            pr_err!(
                "IRTE block of {} exceeds the max invalidation handle mask {}\n",
                size,
                self.max_mask
            );
            return Err(EINVAL);
        }
        let entries = self.used.len();
        let mut start = 0;
        while start + size <= entries {
            // The first used entry at or after `start`: the block fits if it is past the end.
            match self.used.next_bit(start) {
                Some(u) if u < start + size => {
                    // Skip to the next aligned start past the used entry.
                    start = (u / size + 1) * size;
                }
                _ => {
                    for i in start..start + size {
                        self.used.set_bit(i);
                    }
                    // INVARIANT: the block's bits are set; `start < entries <= 65536`, a
                    // multiple of `size`, and `mask <= self.max_mask <= 15`.
                    return Ok(IrteBlock {
                        index: start as u16,
                        mask,
                    });
                }
            }
        }
        pr_warn!("can't allocate a block of {} IRTEs\n", size);
        Err(ENOSPC)
    }

    /// Returns `block` (`free_irte()`, `bitmap_release_region()`).
    ///
    /// Errors: `EINVAL` if `block` is outside the table or not entirely in use (a double free,
    /// which C would not notice); nothing changes then.
    pub(crate) fn free(&mut self, block: IrteBlock) -> Result {
        let (start, size) = (usize::from(block.index), block.count());
        if start + size > self.used.len() {
            return Err(EINVAL);
        }
        if self
            .used
            .next_zero_bit(start)
            .is_some_and(|z| z < start + size)
        {
            return Err(EINVAL);
        }
        // INVARIANT: the whole block was in use and is released.
        for i in start..start + size {
            self.used.clear_bit(i);
        }
        Ok(())
    }

    /// Whether entry `index` belongs to a block in use.
    pub(crate) fn is_used(&self, index: u16) -> bool {
        let i = usize::from(index);
        i < self.used.len() && self.used.next_bit(i) == Some(i)
    }

    /// Whether any entry is in use.
    pub(crate) fn any_used(&self) -> bool {
        self.used.next_bit(0).is_some()
    }

    /// Entries in use.
    #[cfg_attr(not(CONFIG_INTEL_IRQ_REMAP_RUST_KUNIT_TEST = "y"), allow(dead_code))]
    pub(crate) fn in_use(&self) -> usize {
        let mut n = 0;
        let mut i = 0;
        while i < self.used.len() {
            let Some(b) = self.used.next_bit(i) else {
                break;
            };
            n += 1;
            i = b + 1;
        }
        n
    }
}

/// An MSI message: what a device writes, and where.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct MsiMsg {
    /// `address_lo`.
    pub(crate) address_lo: u32,
    /// `address_hi`.
    pub(crate) address_hi: u32,
    /// `data`.
    pub(crate) data: u32,
}

/// The MSI message of vector `sub` of `block`, in remappable format (`fill_msi_msg()`): the
/// handle is the block's first entry, the data the sub-handle. Address bits 31:20 are 0xfee,
/// 19:5 the handle's bits 14:0, bit 4 the remappable format, bit 3 SHV (the data holds the
/// sub-handle), bit 2 the handle's bit 15.
///
/// Errors: `EINVAL` for a sub-handle past the block.
pub(crate) fn msi_msg(block: IrteBlock, sub: u16) -> Result<MsiMsg> {
    if usize::from(sub) >= block.count() {
        return Err(EINVAL);
    }
    Ok(msi_msg_subhandle(block, sub))
}

/// The message of `block` with `sub` in the data's sub-handle field whatever the block's size:
/// an IO-APIC pin's (`intel_irq_remapping_prepare_irte()` passes the pin). The IO-APIC takes
/// the handle into its redirection entry and the pin as the entry's vector; its requests carry
/// no sub-handle, so they use the block's first entry.
pub(crate) fn msi_msg_subhandle(block: IrteBlock, sub: u16) -> MsiMsg {
    let index = u32::from(block.index);
    MsiMsg {
        address_lo: 0xfee0_0000
            | (index & 0x7fff) << 5
            | 1 << 4
            | 1 << 3
            | ((index >> 15) & 1) << 2,
        address_hi: 0,
        data: u32::from(sub),
    }
}

/// The queued-invalidation descriptor (`qw0`; `qw1` is 0) that drops `block` from the interrupt
/// entry cache (`qi_flush_iec()`): type 4, selective, index and mask.
pub(crate) fn iec_flush(block: IrteBlock) -> u64 {
    u64::from(block.index) << 32 | u64::from(block.mask & 0x1f) << 27 | 1 << 4 | 0x4
}

// Built in, or in the module of its own (irq_remapping_rust_kunit.rs).
#[cfg(any(
    CONFIG_INTEL_IRQ_REMAP_RUST_KUNIT_TEST = "y",
    all(MODULE, CONFIG_INTEL_IRQ_REMAP_RUST_KUNIT_TEST = "m")
))]
#[kunit_tests(rust_vtd_irte_table)]
mod tests {
    use super::*;

    /// ECAP with MHMV 15: blocks up to 32 (the multi-MSI limit) allowed.
    const ECAP: u64 = 0xf << 20;

    #[test]
    fn blocks_are_aligned_to_their_size() -> Result {
        let mut t = IrteAllocator::new(ECAP)?;
        let a = t.alloc(1)?;
        assert_eq!(a, IrteBlock { index: 0, mask: 0 });
        // 3 vectors: a block of 4, at the next multiple of 4.
        let b = t.alloc(3)?;
        assert_eq!(b, IrteBlock { index: 4, mask: 2 });
        let c = t.alloc(1)?;
        assert_eq!(c.index, 1);
        // 32 vectors: index 32, past the used entries 0, 1 and 4..8.
        let d = t.alloc(32)?;
        assert_eq!(d, IrteBlock { index: 32, mask: 5 });
        assert_eq!(t.in_use(), 1 + 4 + 1 + 32);
        // Freed blocks are reused, lowest first.
        t.free(b)?;
        assert_eq!(t.alloc(4)?, IrteBlock { index: 4, mask: 2 });
        assert_eq!(t.alloc(2)?, IrteBlock { index: 2, mask: 1 });
        Ok(())
    }

    #[test]
    fn exhaustion_is_enospc_and_a_free_makes_room() -> Result {
        let mut t = IrteAllocator::with_entries(64, ECAP)?;
        let a = t.alloc(32)?;
        let b = t.alloc(16)?;
        let c = t.alloc(8)?;
        assert_eq!((a.index, b.index, c.index), (0, 32, 48));
        // 8 entries left at 56..64: no block of 16.
        assert_eq!(t.alloc(9), Err(ENOSPC));
        assert!(t.alloc(8).is_ok());
        assert_eq!(t.alloc(1), Err(ENOSPC));
        t.free(b)?;
        assert_eq!(t.alloc(16)?.index, 32);
        Ok(())
    }

    #[test]
    fn bad_requests_and_frees_are_einval() -> Result {
        // MHMV 2: blocks of at most 4.
        let mut t = IrteAllocator::with_entries(64, 2 << 20)?;
        assert_eq!(t.alloc(5), Err(EINVAL));
        assert_eq!(t.alloc(0), Err(EINVAL));
        let mut t = IrteAllocator::new(ECAP)?;
        assert_eq!(t.alloc(33), Err(EINVAL));
        let a = t.alloc(4)?;
        // Misaligned or too large: no such block.
        assert_eq!(IrteBlock::new(2, 2), Err(EINVAL));
        assert_eq!(IrteBlock::new(0, 16), Err(EINVAL));
        assert_eq!(IrteBlock::new(0, 255), Err(EINVAL));
        // Not in use, or past the table's end.
        assert_eq!(t.free(IrteBlock::new(8, 2)?), Err(EINVAL));
        let mut small = IrteAllocator::with_entries(64, ECAP)?;
        assert_eq!(small.free(IrteBlock::new(64, 2)?), Err(EINVAL));
        t.free(a)?;
        assert_eq!(t.free(a), Err(EINVAL));
        assert_eq!(t.in_use(), 0);
        assert!(IrteAllocator::with_entries(48, ECAP).is_err());
        // Every entry in use, the last one too.
        for _ in 0..2 {
            small.alloc(32)?;
        }
        assert_eq!(small.in_use(), 64);
        Ok(())
    }

    #[test]
    fn remappable_msi_and_iec_descriptor_layout() -> Result {
        // Handle 0x8120: bits 14:0 in address 19:5, bit 15 in address bit 2.
        let b = IrteBlock::new(0x8120, 2)?;
        let MsiMsg {
            address_lo: lo,
            address_hi: hi,
            data,
        } = msi_msg(b, 3)?;
        assert_eq!(lo >> 20, 0xfee);
        assert_eq!((lo >> 5) & 0x7fff, 0x0120);
        assert_eq!((lo >> 2) & 1, 1);
        assert_eq!((lo >> 3) & 3, 3); // SHV and the remappable format
        assert_eq!(lo & 3, 0);
        assert_eq!((hi, data), (0, 3));
        // `QI_IEC_IIDEX(0x40) | QI_IEC_TYPE | QI_IEC_IM(3) | QI_IEC_SELECTIVE`: index in 63:32,
        // mask in 31:27, selective bit 4, type 4.
        assert_eq!(
            iec_flush(IrteBlock {
                index: 0x40,
                mask: 3
            }),
            0x0000_0040_1800_0014
        );
        // Vector 4 of a block of 4 does not exist.
        assert_eq!(msi_msg(b, 4), Err(EINVAL));
        Ok(())
    }
}
