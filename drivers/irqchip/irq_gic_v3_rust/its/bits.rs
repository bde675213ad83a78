// SPDX-License-Identifier: GPL-2.0

//! Bit fields of the ITS's 64-bit registers and command words.

/// The mask of bits `hi:lo` (`GENMASK_ULL(hi, lo)`); bits past 63 are not there, an empty
/// range (`lo > hi`) is no bit.
pub(super) fn mask(hi: u32, lo: u32) -> u64 {
    let high = u64::MAX.checked_shr(63u32.saturating_sub(hi)).unwrap_or(0);
    let low = u64::MAX.checked_shl(lo).unwrap_or(0);
    if hi > 63 || lo > hi {
        0
    } else {
        high & low
    }
}

/// Field `hi:lo` of `raw`.
pub(super) fn field(raw: u64, hi: u32, lo: u32) -> u64 {
    (raw & mask(hi, lo)).checked_shr(lo).unwrap_or(0)
}

/// `raw` with field `hi:lo` set to `val` (`its_mask_encode()`): bits of `val` above the field
/// are dropped, as C drops them; callers check their ranges before.
pub(super) fn with_field(raw: u64, val: u64, hi: u32, lo: u32) -> u64 {
    let m = mask(hi, lo);
    (raw & !m) | (val.checked_shl(lo).unwrap_or(0) & m)
}
