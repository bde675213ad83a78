// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers for the provider side of genirq (rust/kernel/irq/{chip,data,domain}.rs): the static
 * inlines of irq.h, irqdesc.h, irqdomain.h and chained_irq.h.
 */

#include <linux/irq.h>
#include <linux/irqchip/chained_irq.h>
#include <linux/irqdesc.h>
#include <linux/iommu.h>
#include <linux/irqdomain.h>
#include <linux/module.h>
#include <linux/msi.h>
#include <linux/workqueue.h>

__rust_helper u32 rust_helper_irqd_get_trigger_type(struct irq_data *d)
{
	return irqd_get_trigger_type(d);
}

__rust_helper bool rust_helper_irqd_irq_masked(struct irq_data *d)
{
	return irqd_irq_masked(d);
}

__rust_helper bool rust_helper_irqd_is_setaffinity_pending(struct irq_data *d)
{
	return irqd_is_setaffinity_pending(d);
}

__rust_helper bool rust_helper_irqd_irq_disabled(struct irq_data *d)
{
	return irqd_irq_disabled(d);
}

__rust_helper const struct cpumask *rust_helper_irq_data_get_affinity_mask(struct irq_data *d)
{
	return irq_data_get_affinity_mask(d);
}

__rust_helper const struct cpumask *
rust_helper_irq_data_get_effective_affinity_mask(struct irq_data *d)
{
	return irq_data_get_effective_affinity_mask(d);
}

__rust_helper void rust_helper_irq_data_update_effective_affinity(struct irq_data *d,
								   const struct cpumask *m)
{
	irq_data_update_effective_affinity(d, m);
}

__rust_helper void rust_helper_irq_set_handler_locked(struct irq_data *d,
						      irq_flow_handler_t handler)
{
	irq_set_handler_locked(d, handler);
}

__rust_helper void rust_helper_irq_data_assert_desc_locked(struct irq_data *d)
{
	lockdep_assert_held(&irq_data_to_desc(d)->lock);
}

__rust_helper struct irq_desc *rust_helper_irq_data_to_desc(struct irq_data *d)
{
	return irq_data_to_desc(d);
}

__rust_helper struct irq_data *rust_helper_irq_desc_get_irq_data(struct irq_desc *desc)
{
	return irq_desc_get_irq_data(desc);
}

__rust_helper struct irq_chip *rust_helper_irq_desc_get_chip(struct irq_desc *desc)
{
	return irq_desc_get_chip(desc);
}

__rust_helper void *rust_helper_irq_desc_get_handler_data(struct irq_desc *desc)
{
	return irq_desc_get_handler_data(desc);
}

__rust_helper void rust_helper_chained_irq_enter(struct irq_chip *chip, struct irq_desc *desc)
{
	chained_irq_enter(chip, desc);
}

__rust_helper void rust_helper_chained_irq_exit(struct irq_chip *chip, struct irq_desc *desc)
{
	chained_irq_exit(chip, desc);
}

#ifdef CONFIG_IRQ_DOMAIN
__rust_helper struct fwnode_handle *rust_helper_irq_domain_alloc_named_fwnode(const char *name)
{
	return irq_domain_alloc_named_fwnode(name);
}

__rust_helper unsigned int rust_helper_irq_create_mapping(struct irq_domain *domain,
							  irq_hw_number_t hwirq)
{
	return irq_create_mapping(domain, hwirq);
}

__rust_helper unsigned int rust_helper_irq_find_mapping(struct irq_domain *domain,
							irq_hw_number_t hwirq)
{
	return irq_find_mapping(domain, hwirq);
}
#endif

__rust_helper void rust_helper_irq_move_irq(struct irq_data *d)
{
	irq_move_irq(d);
}

__rust_helper void rust_helper_msi_msg_get(const struct msi_msg *msg, u32 *address_lo,
					   u32 *address_hi, u32 *data)
{
	*address_lo = msg->address_lo;
	*address_hi = msg->address_hi;
	*data = msg->data;
}

__rust_helper void rust_helper_msi_msg_set(struct msi_msg *msg, u32 address_lo, u32 address_hi,
					   u32 data)
{
	msg->address_lo = address_lo;
	msg->address_hi = address_hi;
	msg->data = data;
}

/* The refcounted interrupt disabling of local_interrupt_disable() and SpinLockIrq. */
__rust_helper void rust_helper_irq_desc_lock_irq_disable(struct irq_desc *desc)
{
	raw_spin_lock_irq_disable(&desc->lock);
}

__rust_helper void rust_helper_irq_desc_unlock_irq_enable(struct irq_desc *desc)
{
	raw_spin_unlock_irq_enable(&desc->lock);
}

__rust_helper bool rust_helper_irqd_is_forwarded_to_vcpu(struct irq_data *d)
{
	return irqd_is_forwarded_to_vcpu(d);
}

__rust_helper void rust_helper_irqd_set_handle_enforce_irqctx(struct irq_data *d)
{
	irqd_set_handle_enforce_irqctx(d);
}

__rust_helper void rust_helper_irqd_set_single_target(struct irq_data *d)
{
	irqd_set_single_target(d);
}

__rust_helper void rust_helper_irqd_set_forwarded_to_vcpu(struct irq_data *d)
{
	irqd_set_forwarded_to_vcpu(d);
}

__rust_helper void rust_helper_irqd_clr_forwarded_to_vcpu(struct irq_data *d)
{
	irqd_clr_forwarded_to_vcpu(d);
}

#ifdef CONFIG_IRQ_MSI_IOMMU
/* iommu_dma_prepare_msi(), an inline stub without CONFIG_IOMMU_API. */
__rust_helper int rust_helper_msi_iommu_prepare(struct msi_desc *desc, phys_addr_t msi_addr)
{
	return iommu_dma_prepare_msi(desc, msi_addr);
}
#endif

/* The physical address of a table a GIC reads (rust/kernel/irq/gic_v3/its.rs). */
__rust_helper phys_addr_t rust_helper_virt_to_phys(void *x)
{
	return virt_to_phys(x);
}

__rust_helper void rust_helper_irqd_set_resend_when_in_progress(struct irq_data *d)
{
	irqd_set_resend_when_in_progress(d);
}

__rust_helper void rust_helper_irqd_set_affinity_on_activate(struct irq_data *d)
{
	irqd_set_affinity_on_activate(d);
}

/*
 * The address a device writes @pa's messages to: its IOMMU's mapping of the doorbell, if
 * iommu_dma_prepare_msi() made one for the interrupt's MSI descriptor (msi_msg_set_addr()).
 */
__rust_helper u64 rust_helper_msi_doorbell_addr(struct irq_data *d, u64 pa)
{
	struct msi_desc *desc = irq_data_get_msi_desc(d);
	struct msi_msg msg = {};

	if (!desc)
		return pa;
	msi_msg_set_addr(desc, &msg, pa);
	return ((u64)msg.address_hi << 32) | msg.address_lo;
}

/* The deferred release of per-interrupt chip data (rust/kernel/irq/domain.rs). */
__rust_helper void rust_helper_init_rcu_work(struct rcu_work *rwork, work_func_t func)
{
	INIT_RCU_WORK(rwork, func);
}

#ifdef CONFIG_X86_LOCAL_APIC
#include <linux/msi.h>
#include <linux/pci.h>
#include <asm/apic.h>
#include <asm/hw_irq.h>

/* For rust/kernel/irq/domain/x86.rs: x86 domains below the vector domain. */
__rust_helper bool rust_helper_x86_apic_dest_mode_logical(void)
{
	return apic->dest_mode_logical;
}

/*
 * Not in modules, which cannot reach apic_eoi()'s static call. Bindgen, which always defines
 * MODULE, still declares it for the kernel crate.
 */
#if !defined(MODULE) || defined(__BINDGEN__)
/* apic_ack_irq(), inline in the Rust chips' ack. */
__rust_helper void rust_helper_x86_apic_ack_irq(struct irq_data *irqd)
{
	irq_move_irq(irqd);
	apic_eoi();
}
#endif

__rust_helper bool rust_helper_x86_irqd_is_vector_domain_level(struct irq_data *irqd)
{
	return irqd->domain == x86_vector_domain;
}

#ifdef CONFIG_PCI_MSI
__rust_helper struct pci_dev *rust_helper_msi_desc_to_pci_dev(struct msi_desc *desc)
{
	return msi_desc_to_pci_dev(desc);
}
#endif
#endif
