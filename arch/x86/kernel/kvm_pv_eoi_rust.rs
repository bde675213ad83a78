// SPDX-License-Identifier: GPL-2.0

//! KVM's paravirtual EOI in Rust.
//!
//! On a host offering `KVM_FEATURE_PV_EOI`, `kvm_guest_init()` installs
//! [`rust_kvm_guest_apic_eoi_write`] as `apic::eoi` (with `CONFIG_X86_APIC_EOI_RUST`): when the
//! host says so in this CPU's PV EOI word, the APIC EOI, and the VM exit it costs, is skipped.
//!
//! The only `unsafe` code is in [`kvm_pv_eoi_word`]: the per-CPU word and the `btr` on it, and
//! the call of the APIC driver's EOI.
//!
//! C source: `kvm_guest_apic_eoi_write()` in [`arch/x86/kernel/kvm.c`](srctree/arch/x86/kernel/kvm.c).

mod kvm_pv_eoi_word;

use kvm_pv_eoi_word::PvEoiWord;

/// KVM's paravirtual EOI (`kvm_guest_apic_eoi_write()`): if the host set bit 0
/// (`KVM_PV_EOI_BIT`) of this CPU's PV EOI word, it has already completed the interrupt; clear
/// the bit and skip the APIC EOI. Otherwise EOI the local APIC (`apic->native_eoi`, the Rust EOI
/// of the APIC mode in use).
///
/// Installed as `apic::eoi` by `kvm_guest_init()` when the host offers `KVM_FEATURE_PV_EOI`.
///
/// Context: hard IRQ, interrupts disabled, at the end of an interrupt's handling. The test and
/// clear is one non-LOCK `btr` on the per-CPU word ([`PvEoiWord::test_and_clear_eoi_bit`]).
#[no_mangle]
pub extern "C" fn rust_kvm_guest_apic_eoi_write() {
    pv_eoi(PvEoiWord::this_cpu(), kvm_pv_eoi_word::native_eoi);
}

/// The PV EOI decision on `word`, with the APIC EOI `apic_eoi`.
#[inline(always)]
fn pv_eoi(word: &PvEoiWord, apic_eoi: impl FnOnce()) {
    if word.test_and_clear_eoi_bit() {
        return;
    }
    apic_eoi();
}

#[cfg(CONFIG_X86_APIC_EOI_RUST_KUNIT_TEST)]
#[kunit_tests(rust_kvm_pv_eoi)]
mod tests {
    use super::*;
    use kernel::prelude::*;

    #[test]
    fn installed_callback_is_rust_exactly_with_the_feature() {
        // QEMU's TCG never offers KVM features: there the native (Rust) EOI stays installed.
        let installed = kvm_pv_eoi_word::installed_eoi();
        assert_ne!(installed, 0);
        let rust = rust_kvm_guest_apic_eoi_write as usize;
        assert_eq!(installed == rust, kvm_pv_eoi_word::host_offers_pv_eoi());
    }

    #[test]
    fn bit_set_skips_the_apic_eoi_and_clears_it() {
        let word = PvEoiWord::new(1);
        let mut eois = 0;
        pv_eoi(&word, || eois += 1);
        assert_eq!(eois, 0);
        assert_eq!(word.get(), 0);
    }

    #[test]
    fn bit_clear_does_exactly_one_apic_eoi() {
        let word = PvEoiWord::new(0);
        let mut eois = 0;
        pv_eoi(&word, || eois += 1);
        assert_eq!(eois, 1);
        assert_eq!(word.get(), 0);
    }

    #[test]
    fn other_bits_are_left_alone() {
        // Only bit 0 is the host's flag.
        let word = PvEoiWord::new(0b110);
        let mut eois = 0;
        pv_eoi(&word, || eois += 1);
        assert_eq!((eois, word.get()), (1, 0b110));
        let word = PvEoiWord::new(0b111);
        pv_eoi(&word, || eois += 1);
        assert_eq!((eois, word.get()), (1, 0b110));
    }
}
