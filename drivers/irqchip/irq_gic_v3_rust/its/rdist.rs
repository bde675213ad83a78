// SPDX-License-Identifier: GPL-2.0

//! The redistributors' LPI tables: the property table all of them share (one configuration
//! byte per LPI), each one's pending table, and the `GICR_PROPBASER`/`GICR_PENDBASER` values
//! that point at them (`its_setup_lpi_prop_table()`, `its_cpu_init_lpis()`).
//!
//! As C: LPI INTIDs get at most 16 bits (`ITS_MAX_LPI_NRBITS`), the property table is
//! `2^bits` bytes and the pending table `2^bits / 8`, each rounded up to 64 KiB; both are asked
//! inner shareable and write-back cacheable, and where the redistributor reads back
//! non-shareable they are made non-cacheable and the driver cleans them to the point of
//! coherency after every write ([`Settled::clean`]).
//!
//! C source: [`drivers/irqchip/irq-gic-v3-its.c`](srctree/drivers/irqchip/irq-gic-v3-its.c).

use super::{
    field,
    tables::{
        CACHE_NC,
        CACHE_RAWAWB, //
    },
    with_field, //
};
use kernel::prelude::*;

/// The most INTID bits LPIs get (`ITS_MAX_LPI_NRBITS`: 64K INTIDs).
const MAX_LPI_BITS: u32 = 16;

/// The default LPI priority (`LPI_PROP_DEFAULT_PRIO`, `GICD_INT_DEF_PRI`), which the KUnit suite
/// checks the encoding of.
#[cfg_attr(
    not(any(
        CONFIG_ARM_GIC_V3_RUST_ITS_KUNIT_TEST = "y",
        all(MODULE, CONFIG_ARM_GIC_V3_RUST_ITS_KUNIT_TEST = "m")
    )),
    allow(dead_code)
)]
pub(crate) const DEFAULT_PRIO: u8 = 0xa0;

/// The size of the LPI tables of a GIC.
///
/// # Invariants
///
/// `bits` is in `14..=16`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LpiTables {
    bits: u32,
}

impl LpiTables {
    /// The tables for a GIC whose distributor has `gicd_id_bits` INTID bits
    /// (`GICD_TYPER.IDbits + 1`), capped at 16 as C caps them.
    ///
    /// Errors: `EINVAL` for fewer than 14 bits: no INTID past 8191, no LPI.
    pub(crate) fn new(gicd_id_bits: u32) -> Result<Self> {
        if gicd_id_bits < 14 {
            return Err(EINVAL);
        }
        // INVARIANT: at least 14, at most 16.
        Ok(Self {
            bits: gicd_id_bits.min(MAX_LPI_BITS),
        })
    }

    /// The INTID bits of the LPIs (`lpi_id_bits`).
    pub(crate) fn bits(&self) -> u32 {
        self.bits
    }

    /// Bytes of the property table (`LPI_PROPBASE_SZ`): one per INTID, 64 KiB aligned.
    pub(crate) fn prop_bytes(&self) -> usize {
        (1usize << self.bits).next_multiple_of(0x1_0000)
    }

    /// Bytes of a pending table (`LPI_PENDBASE_SZ`): one bit per INTID, 64 KiB aligned.
    pub(crate) fn pend_bytes(&self) -> usize {
        ((1usize << self.bits) / 8).next_multiple_of(0x1_0000)
    }

    /// `GICR_PROPBASER` for a property table at `pa`: the address (4 KiB aligned, bits 51:12),
    /// inner shareable, inner write-back `RaWaWb`, and the ID bits minus one.
    ///
    /// Errors: `EINVAL` for a misaligned address or one past 52 bits.
    pub(crate) fn propbaser(&self, pa: u64) -> Result<u64> {
        if pa & 0xfff != 0 || pa >> 52 != 0 {
            return Err(EINVAL);
        }
        Ok(pa | 1 << 10 | CACHE_RAWAWB << 7 | u64::from(self.bits - 1))
    }

    /// `GICR_PENDBASER` for a pending table at `pa`: the address (64 KiB aligned, bits 51:16),
    /// inner shareable, inner `RaWaWb`; `zeroed`: the table is known to be all zeroes (PTZ, bit
    /// 62), so the redistributor need not read it.
    ///
    /// Errors: `EINVAL` for a misaligned address or one past 52 bits.
    pub(crate) fn pendbaser(&self, pa: u64, zeroed: bool) -> Result<u64> {
        if pa & 0xffff != 0 || pa >> 52 != 0 {
            return Err(EINVAL);
        }
        Ok(pa | 1 << 10 | CACHE_RAWAWB << 7 | u64::from(zeroed) << 62)
    }
}

/// The configuration byte of one LPI in the property table: priority (bits 7:2), Group 1
/// (bit 1, always), enabled (bit 0). The priority's low two bits are not stored.
pub(crate) fn lpi_config(prio: u8, enabled: bool) -> u8 {
    (prio & 0xfc) | 1 << 1 | u8::from(enabled)
}

/// What a `GICR_PROPBASER` or `GICR_PENDBASER` write settles on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Settled {
    /// The value to write again, if the first one must change: non-shareable and
    /// non-cacheable, where the redistributor read back non-shareable.
    pub(crate) rewrite: Option<u64>,
    /// The table must be cleaned to the point of coherency after every write to it
    /// (`RDIST_FLAGS_PROPBASE_NEEDS_FLUSHING` for the property table).
    pub(crate) clean: bool,
}

/// `val` without shareability and inner cacheability, non-cacheable instead.
fn non_cacheable(val: u64) -> u64 {
    with_field(with_field(val, 0, 11, 10), CACHE_NC, 9, 7)
}

/// How a `GICR_PROPBASER` write of `val` that read back `back` settles (`its_cpu_init_lpis()`):
/// a shareability other than asked means cleaning the table; read back as non-shareable, the
/// value is written again non-cacheable.
pub(crate) fn settle_propbaser(val: u64, back: u64) -> Settled {
    if field(val ^ back, 11, 10) == 0 {
        return Settled {
            rewrite: None,
            clean: false,
        };
    }
    Settled {
        rewrite: (field(back, 11, 10) == 0).then(|| non_cacheable(val)),
        clean: true,
    }
}

/// How a `GICR_PENDBASER` write of `val` that read back `back` settles: read back as
/// non-shareable, it is written again non-cacheable (the pending table is the redistributor's
/// alone once LPIs are on: the CPU writes it only before, zeroed).
pub(crate) fn settle_pendbaser(val: u64, back: u64) -> Settled {
    let non_shareable = field(back, 11, 10) == 0;
    Settled {
        rewrite: non_shareable.then(|| non_cacheable(val)),
        clean: non_shareable,
    }
}

// Built in, or in the module of its own (irq_gic_v3_rust_its_kunit.rs).
#[cfg(any(
    CONFIG_ARM_GIC_V3_RUST_ITS_KUNIT_TEST = "y",
    all(MODULE, CONFIG_ARM_GIC_V3_RUST_ITS_KUNIT_TEST = "m")
))]
#[kunit_tests(rust_gicv3_its_rdist)]
mod tests {
    use super::*;

    #[test]
    fn table_sizes_as_c_sizes_them() -> Result {
        // QEMU's GICv3: 16 INTID bits. 64 KiB of properties, 8 KiB of pending bits rounded up.
        let t = LpiTables::new(16)?;
        assert_eq!(
            (t.bits(), t.prop_bytes(), t.pend_bytes()),
            (16, 0x1_0000, 0x1_0000)
        );
        // 24 bits on the distributor: capped at 16.
        assert_eq!(LpiTables::new(24)?.bits(), 16);
        // 14 bits: 16 KiB of properties, still a 64 KiB allocation.
        let t = LpiTables::new(14)?;
        assert_eq!((t.prop_bytes(), t.pend_bytes()), (0x1_0000, 0x1_0000));
        assert_eq!(LpiTables::new(13), Err(EINVAL));
        Ok(())
    }

    #[test]
    fn baser_values_field_by_field() -> Result {
        let t = LpiTables::new(16)?;
        let v = t.propbaser(0x4_0123_4000)?;
        assert_eq!(field(v, 51, 12) << 12, 0x4_0123_4000);
        assert_eq!(
            (field(v, 11, 10), field(v, 9, 7), field(v, 4, 0)),
            (1, 7, 15)
        );
        assert_eq!(field(v, 63, 56), 0);
        let v = t.pendbaser(0x4_0001_0000, true)?;
        assert_eq!(field(v, 51, 16) << 16, 0x4_0001_0000);
        assert_eq!(
            (field(v, 11, 10), field(v, 9, 7), field(v, 62, 62)),
            (1, 7, 1)
        );
        assert_eq!(field(t.pendbaser(0x4_0001_0000, false)?, 62, 62), 0);
        assert_eq!(t.propbaser(0x4_0123_4800), Err(EINVAL));
        assert_eq!(t.propbaser(1 << 52), Err(EINVAL));
        assert_eq!(t.pendbaser(0x4_0001_8000, false), Err(EINVAL));
        Ok(())
    }

    #[test]
    fn config_byte() {
        assert_eq!(lpi_config(DEFAULT_PRIO, false), 0xa2);
        assert_eq!(lpi_config(DEFAULT_PRIO, true), 0xa3);
        // The low two bits of a priority are not stored.
        assert_eq!(lpi_config(0x83, true), 0x83);
        assert_eq!(lpi_config(0x81, false), 0x82);
    }

    #[test]
    fn non_shareable_redistributors_get_non_cacheable_tables() -> Result {
        let t = LpiTables::new(16)?;
        let val = t.propbaser(0x4000_0000)?;
        // Kept as written: nothing to do.
        assert_eq!(
            settle_propbaser(val, val),
            Settled {
                rewrite: None,
                clean: false
            }
        );
        // Outer instead of inner shareable: kept, but cleaned (C's "using cache flushing").
        let outer = with_field(val, 2, 11, 10);
        assert_eq!(
            settle_propbaser(val, outer),
            Settled {
                rewrite: None,
                clean: true
            }
        );
        // Non-shareable: written again non-shareable and non-cacheable, and cleaned.
        let s = settle_propbaser(val, with_field(val, 0, 11, 10));
        let again = s.rewrite.ok_or(EINVAL)?;
        assert_eq!((field(again, 11, 10), field(again, 9, 7)), (0, CACHE_NC));
        assert_eq!(field(again, 51, 12) << 12, 0x4000_0000);
        assert_eq!(field(again, 4, 0), 15);
        assert!(s.clean);

        let val = t.pendbaser(0x4001_0000, true)?;
        assert_eq!(settle_pendbaser(val, val).rewrite, None);
        let s = settle_pendbaser(val, with_field(val, 0, 11, 10));
        let again = s.rewrite.ok_or(EINVAL)?;
        assert_eq!((field(again, 11, 10), field(again, 9, 7)), (0, CACHE_NC));
        assert_eq!(field(again, 62, 62), 1);
        Ok(())
    }
}
