// SPDX-License-Identifier: GPL-2.0
/* Helpers for the Rust KVM PV EOI (arch/x86/kernel/kvm_pv_eoi_word.rs). */

#ifdef CONFIG_KVM_GUEST
#include <asm/apic.h>
#include <asm/kvm_para.h>

/* This CPU's PV EOI word (arch/x86/kernel/kvm.c). */
__rust_helper unsigned long *rust_helper_kvm_pv_eoi_word_this_cpu(void)
{
	return this_cpu_ptr(&kvm_apic_eoi);
}

__rust_helper void rust_helper_apic_native_eoi(void)
{
	apic_native_eoi();
}
#endif

#if defined(CONFIG_KVM_GUEST) && defined(CONFIG_X86_APIC_EOI_RUST_KUNIT_TEST)
/* For the KUnit case: the installed EOI callback, and whether the host offers PV EOI. */
__rust_helper void *rust_helper_kvm_pv_eoi_installed_eoi(void)
{
	return apic ? (void *)apic->eoi : NULL;
}

__rust_helper bool rust_helper_kvm_pv_eoi_offered(void)
{
	return kvm_para_has_feature(KVM_FEATURE_PV_EOI);
}
#endif
