// SPDX-License-Identifier: GPL-2.0
/* Helpers for the Rust posted-MSI code (rust/kernel/irq/posted.rs). */

#ifdef CONFIG_X86_POSTED_MSI
#include <linux/irq.h>
#include <asm/apic.h>
#include <asm/hardirq.h>
#include <asm/posted_intr.h>
#include <asm/irq_remapping.h>

__rust_helper struct pi_desc *rust_helper_posted_msi_pi_desc_this_cpu(void)
{
	return this_cpu_ptr(&posted_msi_pi_desc);
}

__rust_helper struct pi_desc *rust_helper_posted_msi_pi_desc_of_cpu(unsigned int cpu)
{
	return per_cpu_ptr(&posted_msi_pi_desc, cpu);
}

/*
 * Not in modules, which cannot reach __apic_send_IPI()'s static call. Bindgen, which always
 * defines MODULE, still declares it for the kernel crate.
 */
#if !defined(MODULE) || defined(__BINDGEN__)
__rust_helper void rust_helper_posted_msi_send_notification(unsigned int cpu)
{
	__apic_send_IPI(cpu, POSTED_MSI_NOTIFICATION_VECTOR);
}
#endif

__rust_helper unsigned int rust_helper_posted_msi_notification_count(unsigned int cpu)
{
	return READ_ONCE(per_cpu(irq_stat, cpu).counts[IRQ_COUNT_POSTED_MSI_NOTIFICATION]);
}

#ifdef CONFIG_X86_POSTED_MSI_RUST
__rust_helper bool rust_helper_x86_posted_msi_use_rust(void)
{
	return x86_posted_msi_use_rust();
}
#endif

/*
 * Not in modules, which cannot reach apic_eoi()'s static call. Bindgen, which always defines
 * MODULE, still declares it for the kernel crate.
 */
#if !defined(MODULE) || defined(__BINDGEN__)
__rust_helper void rust_helper_apic_eoi(void)
{
	apic_eoi();
}
#endif

__rust_helper bool rust_helper_posted_msi_enabled(void)
{
	return posted_msi_enabled();
}
#endif
