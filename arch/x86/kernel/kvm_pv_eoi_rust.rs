// SPDX-License-Identifier: GPL-2.0

//! KVM's paravirtual EOI in Rust.
//!
//! On a host offering `KVM_FEATURE_PV_EOI`, `kvm_guest_init()` installs
//! `rust_kvm_guest_apic_eoi_write()` as `apic::eoi` (with `CONFIG_X86_APIC_EOI_RUST`): when the
//! host says so in this CPU's PV EOI word, the APIC EOI, and the VM exit it costs, is skipped.
//!
//! The only `unsafe` code is in [`kvm_pv_eoi_word`]: the C entry point, the per-CPU word and the
//! `btr` on it, and the call of the APIC driver's EOI.
//!
//! C source: `kvm_guest_apic_eoi_write()` in
//! [`arch/x86/kernel/kvm.c`](srctree/arch/x86/kernel/kvm.c).

mod kvm_pv_eoi_word;

// `#[kunit_tests]`, for the suite below.
#[cfg(CONFIG_X86_APIC_EOI_RUST_KUNIT_TEST)]
use kernel::prelude::*;
use kvm_pv_eoi_word::PvEoiWord;

/// The PV EOI decision on `word`, with the APIC EOI `apic_eoi`: the body of
/// [`rust_kvm_guest_apic_eoi_write`](kvm_pv_eoi_word::rust_kvm_guest_apic_eoi_write).
#[inline(always)]
fn pv_eoi(word: &impl PvEoiWord, apic_eoi: impl FnOnce()) {
    if word.test_and_clear_eoi_bit() {
        return;
    }
    apic_eoi();
}

#[cfg(CONFIG_X86_APIC_EOI_RUST_KUNIT_TEST)]
#[kunit_tests(rust_kvm_pv_eoi)]
mod tests {
    use super::*;
    use kvm_pv_eoi_word::TestWord;

    #[test]
    fn installed_callback_is_rust_exactly_with_the_feature() {
        // Without a KVM host offering PV EOI (QEMU's TCG offers no KVM features), the native
        // (Rust) EOI stays installed; with one, the Rust PV EOI is, in `apic::eoi` and in the
        // `apic_eoi()` static call.
        let rust =
            kvm_pv_eoi_word::rust_kvm_guest_apic_eoi_write as unsafe extern "C" fn() as usize;
        let (installed, called) = kvm_pv_eoi_word::installed_eoi();
        assert_ne!(installed, 0);
        let offered = kvm_pv_eoi_word::host_offers_pv_eoi();
        let is_rust = installed == rust;
        assert_eq!(is_rust, offered);
        let called_rust = called == rust;
        assert_eq!(called_rust, offered);
    }

    // The shipped function on this CPU's real word. Under TCG no host offers PV EOI, so the
    // word is only this test's; with a KVM host, the host writes it only around interrupts,
    // which are disabled during the call. The APIC driver's EOI is counted, not done.
    #[test]
    fn real_word_bit_set_is_cleared_without_an_eoi() -> Result {
        let (bit_after, eois) = kvm_pv_eoi_word::run_real_pv_eoi(true)?;
        assert!(!bit_after);
        assert_eq!(eois, 0);
        Ok(())
    }

    #[test]
    fn real_word_bit_clear_does_exactly_one_eoi() -> Result {
        let (bit_after, eois) = kvm_pv_eoi_word::run_real_pv_eoi(false)?;
        assert!(!bit_after);
        assert_eq!(eois, 1);
        Ok(())
    }

    #[test]
    fn bit_set_skips_the_apic_eoi_and_clears_it() {
        let word = TestWord::new(1);
        let mut eois = 0;
        pv_eoi(&word, || eois += 1);
        assert_eq!(eois, 0);
        assert_eq!(word.get(), 0);
    }

    #[test]
    fn bit_clear_does_exactly_one_apic_eoi() {
        let word = TestWord::new(0);
        let mut eois = 0;
        pv_eoi(&word, || eois += 1);
        assert_eq!(eois, 1);
        assert_eq!(word.get(), 0);
    }

    #[test]
    fn other_bits_are_left_alone() {
        // Only bit 0 is the host's flag.
        let word = TestWord::new(0b110);
        let mut eois = 0;
        pv_eoi(&word, || eois += 1);
        assert_eq!((eois, word.get()), (1, 0b110));
        let word = TestWord::new(0b111);
        pv_eoi(&word, || eois += 1);
        assert_eq!((eois, word.get()), (1, 0b110));
    }
}
