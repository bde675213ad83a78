// SPDX-License-Identifier: GPL-2.0
/* Helpers for the Rust KVM PV EOI (arch/x86/kernel/kvm_pv_eoi_word.rs). */

#ifdef CONFIG_KVM_GUEST
#include <linux/percpu.h>
#include <linux/static_call.h>
#include <asm/apic.h>
#include <asm/hypervisor.h>
#include <linux/kvm_para.h>

/*
 * Not in modules, which cannot reach apic_native_eoi()'s static call. Bindgen, which always
 * defines MODULE, still declares it for the kernel crate.
 */
#if !defined(MODULE) || defined(__BINDGEN__)
__rust_helper notrace void rust_helper_apic_native_eoi(void)
{
	apic_native_eoi();
}
#endif
#endif

#if defined(CONFIG_KVM_GUEST) && defined(CONFIG_X86_APIC_EOI_RUST_KUNIT_TEST)
/* For the KUnit case: the installed EOI callback, and whether the host offers PV EOI. */
__rust_helper void *rust_helper_kvm_pv_eoi_installed_eoi(void)
{
	return apic ? (void *)apic->eoi : NULL;
}

__rust_helper void *rust_helper_kvm_pv_eoi_called_eoi(void)
{
	return static_call_query(apic_call_eoi);
}

__rust_helper bool rust_helper_kvm_pv_eoi_offered(void)
{
	return hypervisor_is_type(X86_HYPER_KVM) && kvm_para_has_feature(KVM_FEATURE_PV_EOI);
}

#ifdef CONFIG_SMP
/* For the KUnit cases that run the shipped PV EOI on this CPU's real word. */
DECLARE_PER_CPU_DECRYPTED(unsigned long, kvm_apic_eoi);

__rust_helper unsigned long *rust_helper_kvm_pv_eoi_this_cpu_word(void)
{
	return this_cpu_ptr(&kvm_apic_eoi);
}

/* The APIC driver's native EOI, which apic_native_eoi() calls: the static call's target. */
__rust_helper void *rust_helper_kvm_pv_eoi_native_eoi(void)
{
	return static_call_query(apic_call_native_eoi);
}

/*
 * Makes @eoi the target of apic_native_eoi(), returning the one it replaces. Process context:
 * static_call_update() patches text and sleeps.
 */
__rust_helper void *rust_helper_kvm_pv_eoi_swap_native_eoi(void (*eoi)(void))
{
	void *old = static_call_query(apic_call_native_eoi);

	static_call_update(apic_call_native_eoi, eoi);
	return old;
}
#endif
#endif
