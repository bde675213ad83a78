// SPDX-License-Identifier: GPL-2.0

//! `GITS_TYPER`, and the ITS's tables (`GITS_BASER<n>`).
//!
//! An ITS says in each `GITS_BASER<n>` which table it wants (device, collection, vPE) and how
//! large an entry is; the driver picks the page size the ITS takes (64 KiB, else 16 KiB, else
//! 4 KiB: `its_probe_baser_psz()`), a flat or a two-level table (`its_parse_indirect_baser()`:
//! two levels when a flat table would exceed two ITS pages and the ITS can do it), allocates
//! it, and writes the register, keeping the shareability the ITS reads back (a non-shareable
//! ITS gets a non-cacheable table: `its_setup_baser()`). [`plan()`] and [`commit()`] are that
//! sequence around the allocation, which is the caller's.
//!
//! C source: [`drivers/irqchip/irq-gic-v3-its.c`](srctree/drivers/irqchip/irq-gic-v3-its.c).

use super::{
    field,
    mask,
    with_field, //
};
use kernel::prelude::*;

/// `GITS_TYPER`, decoded: what the driver needs to size tables and check commands.
///
/// # Invariants
///
/// Made only by [`Typer::from_raw`]: `idbits` and `devbits` are in `1..=32`, `cidbits` in
/// `1..=16`, `itt_entry_size` in `1..=16`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Typer {
    /// Virtual LPIs (GICv4): vPEs, vLPIs, doorbells (`GITS_TYPER.Virtual`).
    virt: bool,
    /// Bytes per ITT entry (`ITT_entry_size + 1`).
    itt_entry_size: u32,
    /// EventID bits (`ID_bits + 1`).
    idbits: u32,
    /// DeviceID bits (`Devbits + 1`).
    devbits: u32,
    /// Targets are redistributor addresses (1) or processor numbers (0).
    pta: bool,
    /// Collections held in the ITS itself, without a collection table (`HCC`).
    hcc: u32,
    /// Collection ID bits (`CIDbits + 1` with `CIL`, else 16).
    cidbits: u32,
}

impl Typer {
    /// Decodes `raw`. `ENODEV` for an ITS without physical LPIs (`PLPIS` clear), which has
    /// nothing for this driver.
    pub(crate) fn from_raw(raw: u64) -> Result<Self> {
        if raw & 1 == 0 {
            return Err(ENODEV);
        }
        let cil = field(raw, 36, 36) != 0;
        // INVARIANT: 5-bit fields plus one, a 4-bit field plus one, or 16.
        Ok(Self {
            virt: field(raw, 1, 1) != 0,
            itt_entry_size: field(raw, 7, 4) as u32 + 1,
            idbits: field(raw, 12, 8) as u32 + 1,
            devbits: field(raw, 17, 13) as u32 + 1,
            pta: field(raw, 19, 19) != 0,
            hcc: field(raw, 31, 24) as u32,
            cidbits: if cil {
                field(raw, 35, 32) as u32 + 1
            } else {
                16
            },
        })
    }

    /// The number of collection IDs (ICIDs) commands may name.
    pub(crate) fn is_virtual(&self) -> bool {
        self.virt
    }

    /// Collections the ITS can name (ICIDs).
    pub(crate) fn collections(&self) -> u32 {
        1 << self.cidbits
    }

    /// Bytes per ITT entry, 1 to 16.
    pub(crate) fn itt_entry_size(&self) -> u32 {
        self.itt_entry_size
    }

    /// EventID bits, 1 to 32.
    pub(crate) fn idbits(&self) -> u32 {
        self.idbits
    }

    /// DeviceID bits, 1 to 32.
    pub(crate) fn devbits(&self) -> u32 {
        self.devbits
    }

    /// Whether collections target redistributor addresses (else processor numbers).
    pub(crate) fn pta(&self) -> bool {
        self.pta
    }
}

/// What a `GITS_BASER<n>` holds (its Type field).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TableType {
    /// The device table (DeviceID to ITT).
    Device,
    /// The collection table (ICIDs beyond the ITS's own `HCC`).
    Collection,
    /// A reserved type: given one ITS page, as C gives it.
    Reserved(u8),
}

/// `GITS_BASER` shareability (bits 11:10). The driver asks for inner shareable; the KUnit suite
/// also commits the others.
#[cfg_attr(
    not(any(
        CONFIG_ARM_GIC_V3_RUST_ITS_KUNIT_TEST = "y",
        all(MODULE, CONFIG_ARM_GIC_V3_RUST_ITS_KUNIT_TEST = "m")
    )),
    allow(dead_code)
)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Shareability {
    /// Non-shareable: the ITS does not snoop; the table must be cleaned to the point of
    /// coherency after every CPU write.
    Non = 0,
    /// Inner shareable, what C asks first.
    Inner = 1,
    /// Outer shareable.
    Outer = 2,
}

/// Inner cacheability, `GITS_BASER_nC` (non-cacheable).
pub(crate) const CACHE_NC: u64 = 1;
/// Inner cacheability, `GITS_BASER_RaWaWb` (write-back, read- and write-allocate).
pub(crate) const CACHE_RAWAWB: u64 = 7;

/// `GITS_BASER<n>` as the table setup sees it: a write, then what the ITS made of it.
pub(crate) trait BaserReg {
    /// Reads the register.
    fn read(&mut self) -> u64;
    /// Writes `val`, then reads it back (`its_write_baser()`): fields the ITS does not
    /// implement read back as it has them.
    fn write_read(&mut self, val: u64) -> u64;
}

/// The memory the kernel allocates tables from.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PageLimits {
    /// `PAGE_SIZE`.
    pub(crate) page_size: usize,
    /// `MAX_PAGE_ORDER`: the largest allocation is `page_size << max_order`.
    pub(crate) max_order: u32,
}

impl PageLimits {
    /// `get_order(bytes)`: the least order whose allocation holds `bytes`.
    fn order_for(&self, bytes: u64) -> u32 {
        let mut order = 0;
        while ((self.page_size as u64) << order) < bytes {
            order += 1;
        }
        order
    }
}

/// How one table is to be set up: the outcome of [`plan()`], before the allocation.
///
/// # Invariants
///
/// Made only by [`plan()`]: `psz` is 4, 16 or 64 KiB, `entry_size` in `1..=32`, `esz` is
/// `entry_size` or 8, `pages` in `1..=256`, `bytes` a power of two of at least `psz`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TablePlan {
    /// What the table holds.
    pub(crate) kind: TableType,
    /// The ITS page size, bytes.
    pub(crate) psz: u32,
    /// Bytes per entry of the first level (8 if two-level).
    pub(crate) esz: u32,
    /// Two levels: the first holds 8-byte pointers to ITS pages of entries, allocated as
    /// devices appear.
    pub(crate) indirect: bool,
    /// The allocation: `page_size << order` bytes, zeroed.
    pub(crate) order: u32,
    /// ITS pages in the register's Size field (at most 256).
    pub(crate) pages: u32,
    /// The ID bits the table covers (DeviceID bits for the device table), fewer than the ITS
    /// has when the allocation had to be capped; of the first level if two-level.
    pub(crate) ids: u32,
    /// Bytes per entry as the ITS has them (`GITS_BASER.Entry_Size + 1`).
    pub(crate) entry_size: u32,
    /// Bytes allocated: `page_size << order`.
    pub(crate) bytes: u64,
}

/// Where a device's entry lives in its table ([`TablePlan::slot`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Slot {
    /// In the flat table, allocated with it.
    Flat,
    /// In the second-level page that first-level entry `index` points at, which the driver
    /// allocates (one ITS page, zeroed) when that entry is still 0.
    Level2 {
        /// Index of the first-level entry (8 bytes each).
        index: usize,
    },
}

impl TablePlan {
    /// Where the entry of `id` (a DeviceID) lives: `its_alloc_table_entry()` up to the
    /// allocation of a second-level page.
    ///
    /// Errors: `EINVAL` for an ID beyond what the table covers.
    pub(crate) fn slot(&self, id: u32) -> Result<Slot> {
        let id = u64::from(id);
        if !self.indirect {
            return if id < self.bytes / u64::from(self.entry_size) {
                Ok(Slot::Flat)
            } else {
                Err(EINVAL)
            };
        }
        // Each second-level page holds `psz / entry_size` entries.
        let index = id >> (self.psz / self.entry_size).ilog2();
        if index >= self.bytes / 8 {
            return Err(EINVAL);
        }
        Ok(Slot::Level2 {
            index: index as usize,
        })
    }

    /// The first-level entry of a second-level page at physical address `pa`: the address with
    /// its Valid bit (`page_to_phys(page) | GITS_BASER_VALID`), in CPU order (the table holds it
    /// little-endian).
    ///
    /// Errors: `EINVAL` for an address not aligned to the ITS page or above 52 bits.
    pub(crate) fn lvl1_entry(&self, pa: u64) -> Result<u64> {
        if pa % u64::from(self.psz) != 0 || pa >> 52 != 0 {
            return Err(EINVAL);
        }
        Ok(pa | 1 << 63)
    }
}

/// Page size field (9:8) values: 4 KiB, 16 KiB, 64 KiB.
fn psz_field(psz: u32) -> u64 {
    match psz {
        0x1_0000 => 2,
        0x4000 => 1,
        _ => 0,
    }
}

/// Reads which table `GITS_BASER<n>` describes, finds the page size the ITS takes and whether
/// the table is flat or two-level, and sizes it: `its_alloc_tables()` up to the allocation.
/// `Ok(None)` for an unimplemented register (Type 0).
///
/// Errors: `ENXIO` if the ITS takes none of the three page sizes; `EOPNOTSUPP` for a vPE
/// table (GICv4, which stays with the C driver).
pub(crate) fn plan(
    reg: &mut impl BaserReg,
    typer: &Typer,
    mem: PageLimits,
) -> Result<Option<TablePlan>> {
    if !mem.page_size.is_power_of_two()
        || !(4096..=0x1_0000).contains(&mem.page_size)
        || mem.max_order > 20
    {
        return Err(EINVAL);
    }
    let val = reg.read();
    let kind = match field(val, 58, 56) as u8 {
        0 => return Ok(None),
        1 => TableType::Device,
        2 => return Err(EOPNOTSUPP),
        4 => TableType::Collection,
        t => TableType::Reserved(t),
    };
    let entry_size = field(val, 52, 48) as u32 + 1;
    let mut esz = entry_size;

    // `its_probe_baser_psz()`: the largest page size that sticks.
    let mut psz = 0;
    for try_psz in [0x1_0000u32, 0x4000, 0x1000] {
        let v = with_field(reg.read(), psz_field(try_psz), 9, 8);
        if field(reg.write_read(v), 9, 8) == psz_field(try_psz) {
            psz = try_psz;
            break;
        }
    }
    if psz == 0 {
        return Err(ENXIO);
    }

    let mut order = mem.order_for(psz.into());
    let mut indirect = false;
    let mut ids = 0;
    if kind == TableType::Device {
        // `its_parse_indirect_baser()`.
        ids = typer.devbits;
        if (u64::from(esz) << ids) > 2 * u64::from(psz) {
            let v = (Shareability::Inner as u64) << 10 | CACHE_RAWAWB << 59 | psz_field(psz) << 8;
            let back = reg.write_read(v | 1 << 62);
            indirect = field(back, 62, 62) != 0;
            if indirect {
                // The second level is one ITS page of entries per first-level entry.
                ids -= (psz / esz).ilog2();
                esz = 8;
            }
        }
        order = order.max(mem.order_for(u64::from(esz) << ids));
        if order > mem.max_order {
            order = mem.max_order;
            let fits = ((mem.page_size as u64) << order) / u64::from(esz);
            let fewer = fits.ilog2();
            pr_warn!(
                "ITS: device table too large, ID bits reduced {} -> {}\n",
                ids,
                fewer
            );
            ids = fewer;
        }
    }

    // `its_setup_baser()`: at most 256 ITS pages; the IDs then covered may be fewer.
    let mut pages = ((mem.page_size as u64) << order) / u64::from(psz);
    if pages > 256 {
        pages = 256;
        order = mem.order_for(256 * u64::from(psz));
        if kind == TableType::Device {
            ids = ids.min((256 * u64::from(psz) / u64::from(esz)).ilog2());
        }
    }
    // INVARIANT: `psz` is one of the three sizes, `pages` in 1..=256 (`page_size << order`
    // holds at least one ITS page), entry sizes from a 5-bit field plus one, or 8.
    Ok(Some(TablePlan {
        kind,
        psz,
        esz,
        indirect,
        order,
        pages: pages as u32,
        ids,
        entry_size,
        bytes: (mem.page_size as u64) << order,
    }))
}

/// Writes `GITS_BASER<n>` for `plan`'s table at physical address `pa`, with the cacheability
/// and shareability the previous table settled on (C starts with inner shareable, `RaWaWb`),
/// and returns the value the register holds: `its_setup_baser()` after the allocation. When the
/// shareability does not stick, takes the ITS's (non-shareable tables are non-cacheable too) and
/// writes again.
///
/// A returned shareability of 0 (non-shareable) means the ITS does not snoop: the caller cleans
/// the table to the point of coherency after every write it makes to it, and before the first
/// command that makes the ITS read it (C's `gic_flush_dcache_to_poc()`).
///
/// Errors: `EINVAL` for an address the table cannot take (not aligned to the ITS page, or above
/// 48 bits on a page size below 64 KiB, above 52 bits on 64 KiB); `ENXIO` if the value does not
/// stick (the ITS changed a field it should have kept).
pub(crate) fn commit(
    reg: &mut impl BaserReg,
    plan: &TablePlan,
    pa: u64,
    cache: u64,
    shr: Shareability,
) -> Result<u64> {
    if pa % u64::from(plan.psz) != 0 || pa >> 52 != 0 || (plan.psz != 0x1_0000 && pa >> 48 != 0) {
        return Err(EINVAL);
    }
    // 64 KiB pages: address bits 51:48 go in bits 15:12 (`GITS_BASER_PHYS_52_to_48()`).
    let addr = if plan.psz == 0x1_0000 {
        (pa & mask(47, 16)) | ((pa >> 48) & 0xf) << 12
    } else {
        pa
    };
    let keep = reg.read() & (0x7 << 56 | 0x1f << 48);
    let mut cache = cache & 0x7;
    let mut shr = shr as u64;
    // A second pass at most: with the shareability the ITS reported.
    for _ in 0..2 {
        let mut val = keep
            | addr
            | cache << 59
            | shr << 10
            | psz_field(plan.psz) << 8
            | u64::from(plan.pages - 1)
            | 1 << 63;
        if plan.indirect {
            val |= 1 << 62;
        }
        let back = reg.write_read(val);
        if field(back ^ val, 11, 10) != 0 {
            shr = field(back, 11, 10);
            if shr == 0 {
                cache = CACHE_NC;
            }
            continue;
        }
        if back != val {
            pr_err!("ITS: GITS_BASER doesn't stick: {:#x} {:#x}\n", val, back);
            return Err(ENXIO);
        }
        return Ok(back);
    }
    pr_err!("ITS: GITS_BASER shareability doesn't stick\n");
    Err(ENXIO)
}

// Built in, or in the module of its own (irq_gic_v3_rust_its_kunit.rs).
#[cfg(any(
    CONFIG_ARM_GIC_V3_RUST_ITS_KUNIT_TEST = "y",
    all(MODULE, CONFIG_ARM_GIC_V3_RUST_ITS_KUNIT_TEST = "m")
))]
#[kunit_tests(rust_gicv3_its_tables)]
mod tests {
    use super::*;

    /// A `GITS_BASER<n>` as an ITS implements it.
    struct FakeBaser {
        val: u64,
        /// Page size field values it takes.
        psz_ok: &'static [u64],
        indirect_ok: bool,
        /// Shareability it keeps (others read back as this).
        shr_fixed: Option<u64>,
        writes: u32,
        /// The last value written to find out whether two levels stick (Indirect, not Valid).
        indirect_probe: Option<u64>,
    }

    impl FakeBaser {
        fn new(ty: u64, esz: u64) -> Self {
            Self {
                val: ty << 56 | (esz - 1) << 48,
                psz_ok: &[0, 1, 2],
                indirect_ok: true,
                shr_fixed: None,
                writes: 0,
                indirect_probe: None,
            }
        }
    }

    impl BaserReg for FakeBaser {
        fn read(&mut self) -> u64 {
            self.val
        }

        fn write_read(&mut self, val: u64) -> u64 {
            self.writes += 1;
            if val & (1 << 62) != 0 && val & (1 << 63) == 0 {
                self.indirect_probe = Some(val);
            }
            // Type and entry size are read-only.
            let ro = 0x7 << 56 | 0x1f << 48;
            let mut v = (self.val & ro) | (val & !ro);
            if !self.psz_ok.contains(&field(v, 9, 8)) {
                v = with_field(v, field(self.val, 9, 8), 9, 8);
            }
            if !self.indirect_ok {
                v &= !(1 << 62);
            }
            if let Some(s) = self.shr_fixed {
                v = with_field(v, s, 11, 10);
                if s == 0 {
                    // RAZ/WI cacheability with no shareability, as some ITSes.
                    v = with_field(v, CACHE_NC, 61, 59);
                }
            }
            self.val = v;
            v
        }
    }

    const PAGES_4K: PageLimits = PageLimits {
        page_size: 4096,
        max_order: 10,
    };

    fn typer(devbits: u64) -> Result<Typer> {
        Typer::from_raw(1 | 7 << 4 | 15 << 8 | (devbits - 1) << 13)
    }

    #[test]
    fn typer_fields() -> Result {
        let t = Typer::from_raw(1 | 1 << 1 | 7 << 4 | 19 << 8 | 20 << 13 | 1 << 19 | 8 << 24)?;
        assert_eq!(
            (t.virt, t.itt_entry_size, t.idbits, t.devbits, t.pta, t.hcc),
            (true, 8, 20, 21, true, 8)
        );
        assert_eq!(t.collections(), 1 << 16);
        let t = Typer::from_raw(1 | 1 << 36 | 3 << 32)?;
        assert_eq!(t.collections(), 16);
        assert_eq!(Typer::from_raw(1 << 1), Err(ENODEV));
        Ok(())
    }

    #[test]
    fn a_small_device_table_is_flat_on_64k_pages() -> Result {
        // QEMU: 8-byte device entries, 16 DeviceID bits: 512 KiB flat, over 2 pages of 64 KiB,
        // so two-level where the ITS can.
        let mut b = FakeBaser::new(1, 8);
        b.indirect_ok = false;
        let p = plan(&mut b, &typer(16)?, PAGES_4K)?.ok_or(EINVAL)?;
        assert_eq!(
            (p.kind, p.psz, p.indirect, p.esz, p.ids),
            (TableType::Device, 0x1_0000, false, 8, 16)
        );
        // 512 KiB: order 7 of 4 KiB pages, 8 ITS pages.
        assert_eq!((p.order, p.pages), (7, 8));

        // 8 DeviceID bits: 2 KiB, flat without asking.
        let mut b = FakeBaser::new(1, 8);
        let w = b.writes;
        let p = plan(&mut b, &typer(8)?, PAGES_4K)?.ok_or(EINVAL)?;
        assert!(!p.indirect);
        assert_eq!((p.order, p.pages), (4, 1));
        // Only the page-size probe wrote.
        assert_eq!(b.writes - w, 1);
        Ok(())
    }

    #[test]
    fn a_large_device_table_goes_two_level_or_is_capped() -> Result {
        // 24 DeviceID bits of 8 bytes: 128 MiB flat.
        let mut b = FakeBaser::new(1, 8);
        let p = plan(&mut b, &typer(24)?, PAGES_4K)?.ok_or(EINVAL)?;
        // Two levels: each 64 KiB page covers 8192 devices (13 bits); the first level holds
        // 2^11 pointers of 8 bytes, 16 KiB, under one ITS page.
        assert_eq!((p.indirect, p.esz, p.ids), (true, 8, 11));
        assert_eq!((p.order, p.pages), (4, 1));
        // Asked as C asks: inner shareable, RaWaWb, Indirect; no size, not valid yet.
        let probe = b.indirect_probe.ok_or(EINVAL)?;
        assert_eq!(
            (
                field(probe, 11, 10),
                field(probe, 61, 59),
                field(probe, 7, 0)
            ),
            (1, CACHE_RAWAWB, 0)
        );

        // 4 KiB ITS pages, flat: capped at MAX_PAGE_ORDER, then at 256 ITS pages, 1 MiB:
        // 17 DeviceID bits.
        let mut b = FakeBaser::new(1, 8);
        (b.indirect_ok, b.psz_ok) = (false, &[0]);
        let p = plan(&mut b, &typer(24)?, PAGES_4K)?.ok_or(EINVAL)?;
        assert_eq!((p.ids, p.order, p.pages), (17, 8, 256));
        assert_eq!(p.slot((1 << 17) - 1)?, Slot::Flat);
        assert_eq!(p.slot(1 << 17), Err(EINVAL));

        // Without two levels, capped at MAX_PAGE_ORDER (4 MiB): 19 ID bits, and 64 pages.
        let mut b = FakeBaser::new(1, 8);
        b.indirect_ok = false;
        let p = plan(&mut b, &typer(24)?, PAGES_4K)?.ok_or(EINVAL)?;
        assert_eq!((p.indirect, p.ids, p.order, p.pages), (false, 19, 10, 64));
        Ok(())
    }

    #[test]
    fn page_size_falls_back_and_none_is_enxio() -> Result {
        let mut b = FakeBaser::new(4, 8);
        b.psz_ok = &[0];
        let p = plan(&mut b, &typer(16)?, PAGES_4K)?.ok_or(EINVAL)?;
        assert_eq!(
            (p.kind, p.psz, p.order, p.pages),
            (TableType::Collection, 4096, 0, 1)
        );

        // 64 KiB kernel pages and 4 KiB ITS pages: one kernel page, 16 ITS pages.
        let mut b = FakeBaser::new(4, 8);
        b.psz_ok = &[0];
        let big = PageLimits {
            page_size: 0x1_0000,
            max_order: 13,
        };
        let p = plan(&mut b, &typer(16)?, big)?.ok_or(EINVAL)?;
        assert_eq!((p.order, p.pages), (0, 16));

        let mut b = FakeBaser::new(1, 8);
        b.psz_ok = &[];
        b.val = with_field(b.val, 3, 9, 8);
        assert_eq!(plan(&mut b, &typer(16)?, PAGES_4K), Err(ENXIO));
        let mut b = FakeBaser::new(0, 1);
        assert_eq!(plan(&mut b, &typer(16)?, PAGES_4K), Ok(None));
        let mut b = FakeBaser::new(2, 32);
        assert_eq!(plan(&mut b, &typer(16)?, PAGES_4K), Err(EOPNOTSUPP));
        // Memory limits no kernel has.
        let mut b = FakeBaser::new(1, 8);
        for bad in [(0, 10), (2048, 10), (0x3000, 10), (4096, 21)] {
            let mem = PageLimits {
                page_size: bad.0,
                max_order: bad.1,
            };
            assert_eq!(plan(&mut b, &typer(16)?, mem), Err(EINVAL));
        }
        Ok(())
    }

    #[test]
    fn commit_writes_every_field_and_keeps_the_its_shareability() -> Result {
        let mut b = FakeBaser::new(1, 8);
        let p = plan(&mut b, &typer(16)?, PAGES_4K)?.ok_or(EINVAL)?;
        let pa = 0x8_4000_0000;
        let v = commit(&mut b, &p, pa, CACHE_RAWAWB, Shareability::Inner)?;
        assert_eq!(field(v, 63, 63), 1);
        assert_eq!(field(v, 62, 62), u64::from(p.indirect));
        assert_eq!(field(v, 61, 59), CACHE_RAWAWB);
        assert_eq!(field(v, 58, 56), 1);
        assert_eq!(field(v, 52, 48), 7);
        assert_eq!(field(v, 47, 16) << 16, pa);
        assert_eq!(field(v, 11, 10), 1);
        assert_eq!(field(v, 9, 8), 2);
        assert_eq!(field(v, 7, 0), u64::from(p.pages) - 1);

        // Asked for non-shareable, it stays so; asked for outer shareable by an ITS that only
        // does inner, it becomes inner.
        let v = commit(&mut b, &p, pa, CACHE_NC, Shareability::Non)?;
        assert_eq!((field(v, 11, 10), field(v, 61, 59)), (0, CACHE_NC));
        b.shr_fixed = Some(Shareability::Inner as u64);
        let v = commit(&mut b, &p, pa, CACHE_RAWAWB, Shareability::Outer)?;
        assert_eq!((field(v, 11, 10), field(v, 61, 59)), (1, CACHE_RAWAWB));

        // An ITS that is not shareable: the table goes non-cacheable as well.
        let mut b = FakeBaser::new(1, 8);
        b.shr_fixed = Some(0);
        let p = plan(&mut b, &typer(8)?, PAGES_4K)?.ok_or(EINVAL)?;
        let v = commit(&mut b, &p, 0x4000_0000, CACHE_RAWAWB, Shareability::Inner)?;
        assert_eq!((field(v, 11, 10), field(v, 61, 59)), (0, CACHE_NC));
        Ok(())
    }

    #[test]
    fn device_ids_find_their_slot() -> Result {
        // Flat: 2^8 entries of 8 bytes in one 64 KiB ITS page, 8192 entries allocated.
        let mut b = FakeBaser::new(1, 8);
        let p = plan(&mut b, &typer(8)?, PAGES_4K)?.ok_or(EINVAL)?;
        assert_eq!(p.bytes, 0x1_0000);
        assert_eq!(p.slot(255)?, Slot::Flat);
        assert_eq!(p.slot(8191)?, Slot::Flat);
        assert_eq!(p.slot(8192), Err(EINVAL));
        // Two-level, 24 DeviceID bits: 8192 devices per 64 KiB second-level page.
        let mut b = FakeBaser::new(1, 8);
        let p = plan(&mut b, &typer(24)?, PAGES_4K)?.ok_or(EINVAL)?;
        assert_eq!(p.slot(8191)?, Slot::Level2 { index: 0 });
        assert_eq!(p.slot(8192)?, Slot::Level2 { index: 1 });
        assert_eq!(p.slot((1 << 24) - 1)?, Slot::Level2 { index: 2047 });
        // The first level is a 64 KiB allocation of 8192 entries: IDs up to 2^26 find a slot
        // (as in C, the ITS's DevBits bound the IDs before), larger ones do not.
        assert_eq!(p.slot(u32::MAX), Err(EINVAL));
        assert_eq!(p.lvl1_entry(0x4_0001_0000)?, 0x8000_0004_0001_0000);
        assert_eq!(p.lvl1_entry(0x4_0000_1000), Err(EINVAL));
        Ok(())
    }

    #[test]
    fn addresses_beyond_48_bits_need_64k_pages() -> Result {
        let mut b = FakeBaser::new(1, 8);
        let p = plan(&mut b, &typer(8)?, PAGES_4K)?.ok_or(EINVAL)?;
        assert_eq!(p.psz, 0x1_0000);
        // 52-bit address: bits 51:48 in 15:12.
        let pa = 0xa_1234_5678_0000;
        let v = commit(&mut b, &p, pa, CACHE_RAWAWB, Shareability::Inner)?;
        assert_eq!(field(v, 15, 12), 0xa);
        assert_eq!(field(v, 47, 16) << 16 | field(v, 15, 12) << 48, pa);

        let mut b = FakeBaser::new(1, 8);
        b.psz_ok = &[0];
        let p = plan(&mut b, &typer(8)?, PAGES_4K)?.ok_or(EINVAL)?;
        assert_eq!(
            commit(&mut b, &p, 1 << 48, CACHE_RAWAWB, Shareability::Inner),
            Err(EINVAL)
        );
        assert_eq!(
            commit(&mut b, &p, 0x1800, CACHE_RAWAWB, Shareability::Inner),
            Err(EINVAL)
        );
        Ok(())
    }
}
