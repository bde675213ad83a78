// SPDX-License-Identifier: GPL-2.0

//! The Interrupt Remapping Table Entry (IRTE) of VT-d, encoded in Rust: the remapped format
//! (VT-d specification 9.10) and the posted format (9.11), laid out as `struct irte` in
//! `include/linux/dmar.h` lays them out, as C's `prepare_irte()`, `set_irte_sid()`,
//! `set_irte_verify_bus()` and `intel_ir_set_vcpu_affinity()` fill them.
//!
//! Pure values: nothing here reads or writes a table. The Rust interrupt remapping domain
//! ([`irq_remapping_domain`](crate::irq_remapping_domain)) writes them; KUnit checks them
//! against the layout of the specification, field by field.
//!
//! C source: [`drivers/iommu/intel/irq_remapping.c`](srctree/drivers/iommu/intel/irq_remapping.c).

use kernel::prelude::*;

/// The first vector an interrupt may use: 0-15 are reserved (an IRTE with one is refused here,
/// where the hardware would raise an illegal-vector error).
const FIRST_VECTOR: u8 = 0x10;

/// How the destination ID of a remapped entry is read (`eim_mode`, `IRTE_DEST()`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ApicMode {
    /// Extended interrupt mode off: an 8-bit xAPIC ID, in bits 47:40 of the entry.
    XApic,
    /// Extended interrupt mode (`eim=on`, x2APIC): a 32-bit x2APIC ID in bits 63:32.
    X2Apic,
}

/// Which requests may use an entry (SVT, SQ, SID: `set_irte_sid()`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SourceId {
    /// No verification (SVT 0), as with `intremap=nosid`.
    None,
    /// The requester ID `sid` (SVT 1), its low bits ignored as the qualifier `sq` (0: all 16
    /// bits; 1, 2, 3: the low 1, 2 or 3 function bits ignored).
    RequesterId {
        /// The requester ID, bus:device.function.
        sid: u16,
        /// The source-id qualifier, 0 to 3.
        sq: u8,
    },
    /// Any requester ID whose bus lies in `start..=end` (SVT 2: `set_irte_verify_bus()`, for
    /// devices behind a PCIe-to-PCI bridge).
    Bus {
        /// The first bus.
        start: u8,
        /// The last bus.
        end: u8,
    },
}

impl SourceId {
    /// The high quadword's SID, SQ and SVT fields (bits 79:64, 81:80, 83:82).
    fn encode(self) -> Result<u64> {
        let (svt, sq, sid) = match self {
            Self::None => (0u64, 0u64, 0u64),
            Self::RequesterId { sid, sq } => {
                if sq > 3 {
                    return Err(EINVAL);
                }
                (1, u64::from(sq), u64::from(sid))
            }
            Self::Bus { start, end } => {
                if start > end {
                    return Err(EINVAL);
                }
                (2, 0, u64::from(start) << 8 | u64::from(end))
            }
        };
        Ok(sid | sq << 16 | svt << 18)
    }
}

/// One interrupt remapping table entry, 128 bits (`struct irte`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Irte {
    low: u64,
    high: u64,
}

const _: () = assert!(core::mem::size_of::<Irte>() == 16);

// Bits of the low quadword (`struct irte`'s bitfields).
/// Present.
const P: u64 = 1 << 0;
/// Destination mode: logical.
const DM_LOGICAL: u64 = 1 << 2;
/// Redirection hint.
const RH: u64 = 1 << 3;
/// Urgent (posted format).
const URG: u64 = 1 << 14;
/// Posted (IRTE mode).
const PST: u64 = 1 << 15;
/// The vector, bits 23:16.
const VECTOR_SHIFT: u32 = 16;
/// The destination ID, bits 63:32 (remapped format).
const DEST_SHIFT: u32 = 32;
/// The posted-interrupt descriptor's address bits 31:6, in bits 63:38 (posted format).
const PDA_L_SHIFT: u32 = 38;
/// The posted-interrupt descriptor's address bits 63:32, in the high quadword's 63:32.
const PDA_H_SHIFT: u32 = 32;

impl Irte {
    /// A remapped-format entry (`prepare_irte()` and the source ID): present, fixed delivery,
    /// edge (the IO-APIC's RTE keeps a level line's trigger), redirection hint set, `vector` to
    /// the APIC ID `dest`, physical or `logical` destination mode.
    ///
    /// Returns `EINVAL` for a vector below 16, an xAPIC destination above 255, or a bad source
    /// ID (a qualifier above 3, a bus range whose start is after its end).
    pub(crate) fn remapped(
        vector: u8,
        dest: u32,
        mode: ApicMode,
        logical: bool,
        source: SourceId,
    ) -> Result<Self> {
        if vector < FIRST_VECTOR {
            return Err(EINVAL);
        }
        let dest_id = match mode {
            // `IRTE_DEST()`: the xAPIC ID in bits 15:8 of the field.
            ApicMode::XApic if dest > 0xff => return Err(EINVAL),
            ApicMode::XApic => u64::from(dest) << 8,
            ApicMode::X2Apic => u64::from(dest),
        };
        let dm = if logical { DM_LOGICAL } else { 0 };
        Ok(Self {
            low: P | dm | RH | u64::from(vector) << VECTOR_SHIFT | dest_id << DEST_SHIFT,
            high: source.encode()?,
        })
    }

    /// A posted-format entry (`intel_ir_set_vcpu_affinity()`): present, posted, `vector` posted
    /// into the posted-interrupt descriptor at physical address `pda`, `urgent` or not.
    ///
    /// Returns `EINVAL` for a vector below 16, a descriptor address not aligned to its 64 bytes,
    /// or a bad source ID.
    pub(crate) fn posted(vector: u8, pda: u64, urgent: bool, source: SourceId) -> Result<Self> {
        if vector < FIRST_VECTOR || pda & 0x3f != 0 {
            return Err(EINVAL);
        }
        let urg = if urgent { URG } else { 0 };
        let pda_l = (pda >> 6) & ((1 << 26) - 1);
        let pda_h = pda >> 32;
        Ok(Self {
            low: P | urg | PST | u64::from(vector) << VECTOR_SHIFT | pda_l << PDA_L_SHIFT,
            high: source.encode()? | pda_h << PDA_H_SHIFT,
        })
    }

    /// The entry that remaps nothing: not present (`clear_entries()`, deactivation).
    pub(crate) const ZERO: Self = Self { low: 0, high: 0 };

    /// The entry whose quadwords are `low` (bits 63:0) and `high` (bits 127:64), as read from
    /// a table.
    pub(crate) fn from_raw(low: u64, high: u64) -> Self {
        Self { low, high }
    }

    /// Whether the entry is present (P, bit 0): the unit remaps through it.
    pub(crate) fn is_present(&self) -> bool {
        self.low & P != 0
    }

    /// Whether the entry is in posted format (IM, bit 15): its descriptor address spans both
    /// quadwords, so it is only written as one 128-bit update.
    pub(crate) fn is_posted(&self) -> bool {
        self.low & PST != 0
    }

    /// The entry as one 128-bit value, the low quadword in bits 63:0.
    pub(crate) fn as_u128(&self) -> u128 {
        u128::from(self.high) << 64 | u128::from(self.low)
    }

    /// The low quadword (bits 63:0).
    pub(crate) fn low(&self) -> u64 {
        self.low
    }

    /// The high quadword (bits 127:64).
    pub(crate) fn high(&self) -> u64 {
        self.high
    }
}

// Built in, or in the module of its own (irq_remapping_rust_kunit.rs).
#[cfg(any(
    CONFIG_INTEL_IRQ_REMAP_RUST_KUNIT_TEST = "y",
    all(MODULE, CONFIG_INTEL_IRQ_REMAP_RUST_KUNIT_TEST = "m")
))]
#[kunit_tests(rust_vtd_irte)]
mod tests {
    use super::*;

    /// Field `bits` (`hi:lo`, of the 128-bit entry) of `e`.
    fn field(e: &Irte, hi: u32, lo: u32) -> u64 {
        let v = u128::from(e.high()) << 64 | u128::from(e.low());
        ((v >> lo) & ((1u128 << (hi - lo + 1)) - 1)) as u64
    }

    #[test]
    fn remapped_x2apic_fields_as_the_specification_lays_them() -> Result {
        let sid = SourceId::RequesterId { sid: 0x00f8, sq: 0 };
        let e = Irte::remapped(0x31, 0x1234_5678, ApicMode::X2Apic, false, sid)?;
        assert_eq!(field(&e, 0, 0), 1); // P
        assert_eq!(field(&e, 1, 1), 0); // FPD
        assert_eq!(field(&e, 2, 2), 0); // DM: physical
        assert_eq!(field(&e, 3, 3), 1); // RH
        assert_eq!(field(&e, 4, 4), 0); // TM: edge
        assert_eq!(field(&e, 7, 5), 0); // DLM: fixed
        assert_eq!(field(&e, 15, 15), 0); // IM: remapped
        assert_eq!(field(&e, 23, 16), 0x31); // V
        assert_eq!(field(&e, 63, 32), 0x1234_5678); // DST
        assert_eq!(field(&e, 79, 64), 0x00f8); // SID
        assert_eq!(field(&e, 81, 80), 0); // SQ
        assert_eq!(field(&e, 83, 82), 1); // SVT
        assert_eq!(field(&e, 127, 84), 0);
        Ok(())
    }

    #[test]
    fn remapped_xapic_destination_in_bits_47_40() -> Result {
        let e = Irte::remapped(0xef, 0xa5, ApicMode::XApic, true, SourceId::None)?;
        assert_eq!(e.low(), 0x0000_a500_00ef_000d);
        assert_eq!(e.high(), 0);
        assert_eq!(field(&e, 47, 40), 0xa5);
        assert_eq!(field(&e, 2, 2), 1); // DM: logical
        Ok(())
    }

    #[test]
    fn source_validation_by_bus_and_qualifier() -> Result {
        let e = Irte::remapped(
            0x20,
            0,
            ApicMode::X2Apic,
            false,
            SourceId::Bus { start: 2, end: 5 },
        )?;
        // `set_irte_verify_bus()`: SVT 2, SQ 0, SID = start << 8 | end.
        assert_eq!(field(&e, 79, 64), 0x0205);
        assert_eq!(field(&e, 83, 82), 2);
        let e = Irte::remapped(
            0x20,
            0,
            ApicMode::X2Apic,
            false,
            SourceId::RequesterId { sid: 0xf0f8, sq: 3 },
        )?;
        assert_eq!(field(&e, 81, 80), 3);
        assert_eq!(field(&e, 83, 82), 1);
        Ok(())
    }

    #[test]
    fn posted_descriptor_address_split_as_c_splits_it() -> Result {
        let pda = 0x0000_0012_3456_7fc0u64;
        let e = Irte::posted(0x41, pda, true, SourceId::None)?;
        assert_eq!(field(&e, 0, 0), 1); // P
        assert_eq!(field(&e, 14, 14), 1); // URG
        assert_eq!(field(&e, 15, 15), 1); // IM: posted
        assert_eq!(field(&e, 23, 16), 0x41); // VV

        // C: `pda_l = (addr >> (32 - PDA_LOW_BIT)) & ~(-1UL << PDA_LOW_BIT)`, bits 63:38.
        assert_eq!(field(&e, 63, 38), (pda >> 6) & 0x3ff_ffff);
        // `pda_h = (addr >> 32) & ~(-1UL << PDA_HIGH_BIT)`, bits 127:96.
        assert_eq!(field(&e, 127, 96), pda >> 32);
        // Address bits 31:6 and 63:32 together give the address back.
        assert_eq!(field(&e, 127, 96) << 32 | field(&e, 63, 38) << 6, pda);
        Ok(())
    }

    #[test]
    fn bad_input_is_einval() {
        let none = SourceId::None;
        assert_eq!(
            Irte::remapped(0x0f, 0, ApicMode::X2Apic, false, none),
            Err(EINVAL)
        );
        assert_eq!(
            Irte::remapped(0x30, 0x100, ApicMode::XApic, false, none),
            Err(EINVAL)
        );
        assert_eq!(
            Irte::remapped(
                0x30,
                0,
                ApicMode::X2Apic,
                false,
                SourceId::RequesterId { sid: 0, sq: 4 }
            ),
            Err(EINVAL)
        );
        assert_eq!(
            Irte::remapped(
                0x30,
                0,
                ApicMode::X2Apic,
                false,
                SourceId::Bus { start: 6, end: 5 }
            ),
            Err(EINVAL)
        );
        assert_eq!(Irte::posted(0x30, 0x1020, false, none), Err(EINVAL));
        assert_eq!(Irte::posted(0x02, 0x1000, false, none), Err(EINVAL));
        // The largest xAPIC ID is accepted.
        assert!(Irte::remapped(0x30, 0xff, ApicMode::XApic, false, none).is_ok());
    }
}
