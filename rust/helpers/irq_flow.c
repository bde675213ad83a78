// SPDX-License-Identifier: GPL-2.0

/*
 * The steps of genirq's flow handlers, for the flows written in Rust (rust/kernel/irq/flow.rs).
 * They reach genirq's private state (desc->istate, threads_oneshot, the per-CPU statistics)
 * through kernel/irq/internals.h, as kernel/irq/chip.c does; each mirrors the C it names.
 *
 * This file is included last by helpers.c: internals.h poisons the IRQ_* settings flags
 * (kernel/irq/settings.h) for the rest of the translation unit.
 */

#include <linux/irq.h>
#include <linux/irqdesc.h>
#include <linux/random.h>
#include <trace/events/irq.h>

#include "../../kernel/irq/internals.h"

__rust_helper void rust_helper_irq_flow_lock(struct irq_desc *desc)
{
	raw_spin_lock(&desc->lock);
}

__rust_helper void rust_helper_irq_flow_unlock(struct irq_desc *desc)
{
	raw_spin_unlock(&desc->lock);
}

/* irq_can_handle_actions() of kernel/irq/chip.c. */
__rust_helper bool rust_helper_irq_flow_can_handle_actions(struct irq_desc *desc)
{
	desc->istate &= ~(IRQS_REPLAY | IRQS_WAITING);

	if (unlikely(!desc->action || irqd_irq_disabled(&desc->irq_data))) {
		desc->istate |= IRQS_PENDING;
		return false;
	}
	return true;
}

__rust_helper bool rust_helper_irq_flow_is_oneshot(struct irq_desc *desc)
{
	return desc->istate & IRQS_ONESHOT;
}

__rust_helper bool rust_helper_irq_flow_is_pending(struct irq_desc *desc)
{
	return desc->istate & IRQS_PENDING;
}

__rust_helper void rust_helper_irq_flow_set_pending(struct irq_desc *desc)
{
	desc->istate |= IRQS_PENDING;
}

__rust_helper void rust_helper_irq_flow_defer_eoi(struct irq_desc *desc)
{
	desc->istate |= IRQS_EOI_DEFERRED;
}

__rust_helper bool rust_helper_irq_flow_threads_pending(struct irq_desc *desc)
{
	return desc->threads_oneshot != 0;
}

__rust_helper void rust_helper_irq_flow_kstat_incr(struct irq_desc *desc)
{
	kstat_incr_irqs_this_cpu(desc);
}

__rust_helper void rust_helper_irq_flow_kstat_incr_percpu(struct irq_desc *desc)
{
	__kstat_incr_irqs_this_cpu(desc);
}

/*
 * A fasteoi flow under a top-level chip without irq_eoi: C's handle_fasteoi_irq() would call
 * through NULL; skipping the EOI would leave the line active at the controller for good (or,
 * with a GIC in EOImode=0, the CPU's running priority raised). The Rust fasteoi flow EOIs the
 * nearest level below that has an irq_eoi (for an immediate parent, what irq_chip_eoi_parent()
 * would call) and says once that the hierarchy is broken. Rust domains refuse such a chip when
 * they allocate the interrupt; a chip installed later, or by a C domain, is not checked.
 */
static noinline void irq_flow_eoi_missing(struct irq_desc *desc)
{
#ifdef CONFIG_IRQ_DOMAIN_HIERARCHY
	struct irq_data *d;

	for (d = desc->irq_data.parent_data; d; d = d->parent_data) {
		if (d->chip && d->chip->irq_eoi) {
			pr_warn_once("genirq: irq %u: chip %s has no irq_eoi for its fasteoi flow; EOI at %s\n",
				     irq_desc_get_irq(desc), desc->irq_data.chip->name, d->chip->name);
			d->chip->irq_eoi(d);
			return;
		}
	}
#endif
	pr_warn_once("genirq: irq %u: no chip of its hierarchy has irq_eoi for its fasteoi flow\n",
		     irq_desc_get_irq(desc));
}

/*
 * The chip's irq_eoi(). The C flows call it unconditionally (the chip must have it); the Rust
 * ones never call through a NULL callback, as a hierarchy's top chip may lack it.
 */
static __always_inline void irq_flow_eoi(struct irq_desc *desc, struct irq_chip *chip)
{
	if (likely(chip->irq_eoi))
		chip->irq_eoi(&desc->irq_data);
	else
		irq_flow_eoi_missing(desc);
}

/* cond_unmask_eoi_irq() of kernel/irq/chip.c. */
__rust_helper void rust_helper_irq_flow_cond_unmask_eoi(struct irq_desc *desc)
{
	struct irq_chip *chip = desc->irq_data.chip;

	if (!(desc->istate & IRQS_ONESHOT)) {
		irq_flow_eoi(desc, chip);
		return;
	}
	if (!irqd_irq_disabled(&desc->irq_data) &&
	    irqd_irq_masked(&desc->irq_data) && !desc->threads_oneshot) {
		irq_flow_eoi(desc, chip);
		unmask_irq(desc);
	} else if (!(chip->flags & IRQCHIP_EOI_THREADED)) {
		irq_flow_eoi(desc, chip);
	}
}

__rust_helper void rust_helper_irq_flow_check_resend(struct irq_desc *desc)
{
	check_irq_resend(desc, false);
}

/*
 * Not in modules, which cannot reach the irq_handler_entry/exit tracepoints. Bindgen, which always
 * defines MODULE, still declares it for the kernel crate.
 */
#if !defined(MODULE) || defined(__BINDGEN__)
/*
 * The action loop of handle_percpu_devid_irq(): runs the action of this CPU, if any, with its
 * per-CPU device id. Returns false if no action is for this CPU.
 */
__rust_helper bool rust_helper_irq_flow_percpu_devid_action(struct irq_desc *desc)
{
	unsigned int irq = irq_desc_get_irq(desc);
	unsigned int cpu = smp_processor_id();
	struct irqaction *action;
	irqreturn_t res;

	for (action = desc->action; action; action = action->next)
		if (cpumask_test_cpu(cpu, action->affinity))
			break;

	if (unlikely(!action))
		return false;

	trace_irq_handler_entry(irq, action);
	res = action->handler(irq, raw_cpu_ptr(action->percpu_dev_id));
	trace_irq_handler_exit(irq, action, res);
	return true;
}
#endif

/* The spurious branch of handle_percpu_devid_irq(). */
__rust_helper void rust_helper_irq_flow_percpu_spurious(struct irq_desc *desc)
{
	unsigned int cpu = smp_processor_id();
	bool enabled = cpumask_test_cpu(cpu, desc->percpu_enabled);

	if (enabled)
		irq_percpu_disable(desc, cpu);

	pr_err_once("Spurious%s percpu IRQ%u on CPU%u\n",
		    enabled ? " and unmasked" : "", irq_desc_get_irq(desc), cpu);
}

__rust_helper void rust_helper_irq_flow_percpu_randomness(struct irq_desc *desc)
{
	if (!in_nmi())
		add_interrupt_randomness(irq_desc_get_irq(desc));
}

/* irq_can_handle_pm() of kernel/irq/chip.c: its fast path inline, the rest out of line. */
__rust_helper bool rust_helper_irq_flow_can_handle_pm(struct irq_desc *desc)
{
	if (likely(!irqd_has_set(&desc->irq_data, IRQD_IRQ_INPROGRESS | IRQD_WAKEUP_ARMED)))
		return true;
	return irq_flow_can_handle_pm(desc);
}

/* The same for the edge flow (the migration live-lock protection). */
__rust_helper bool rust_helper_irq_flow_can_handle_pm_edge(struct irq_desc *desc)
{
	if (likely(!irqd_has_set(&desc->irq_data, IRQD_IRQ_INPROGRESS | IRQD_WAKEUP_ARMED)))
		return true;
	return irq_flow_can_handle_pm_edge(desc);
}

__rust_helper bool rust_helper_irq_flow_needs_resend(struct irq_desc *desc)
{
	return irqd_needs_resend_when_in_progress(&desc->irq_data);
}

__rust_helper void rust_helper_irq_flow_mask(struct irq_desc *desc)
{
	mask_irq(desc);
}

__rust_helper void rust_helper_irq_flow_unmask(struct irq_desc *desc)
{
	unmask_irq(desc);
}

/* mask_ack_irq() of kernel/irq/chip.c. */
__rust_helper void rust_helper_irq_flow_mask_ack(struct irq_desc *desc)
{
	struct irq_chip *chip = desc->irq_data.chip;

	if (chip->irq_mask_ack) {
		chip->irq_mask_ack(&desc->irq_data);
		irq_state_set_masked(desc);
	} else {
		mask_irq(desc);
		if (chip->irq_ack)
			chip->irq_ack(&desc->irq_data);
	}
}

__rust_helper bool rust_helper_irq_flow_has_action(struct irq_desc *desc)
{
	return desc->action;
}

__rust_helper bool rust_helper_irq_flow_is_disabled(struct irq_desc *desc)
{
	return irqd_irq_disabled(&desc->irq_data);
}

__rust_helper bool rust_helper_irq_flow_is_masked(struct irq_desc *desc)
{
	return irqd_irq_masked(&desc->irq_data);
}

__rust_helper void rust_helper_irq_flow_handle_event(struct irq_desc *desc)
{
	handle_irq_event(desc);
}

/* cond_eoi_irq() of kernel/irq/chip.c. */
__rust_helper void rust_helper_irq_flow_cond_eoi(struct irq_desc *desc)
{
	struct irq_chip *chip = desc->irq_data.chip;

	if (!(chip->flags & IRQCHIP_EOI_IF_HANDLED))
		irq_flow_eoi(desc, chip);
}

/*
 * Whether the flow may leave a ONESHOT interrupt unmasked and active for its threads: the
 * interrupt is masked by its active state, not forwarded to a vCPU (whose guest deactivates it),
 * every level above the one that said so only forwards the EOI (irq_chip_eoi_parent(): a child
 * level's own irq_eoi() may do work, such as clearing a latched edge, that must not wait for the
 * threads), and its chip has the irq_eoi() that irq_finalize_oneshot() will call.
 */
__rust_helper bool rust_helper_irq_flow_masked_by_active(struct irq_desc *desc)
{
	struct irq_data *d = &desc->irq_data;

#ifdef CONFIG_IRQ_DOMAIN_HIERARCHY
	for (struct irq_data *l = d; l->parent_data; l = l->parent_data)
		if (l->chip->irq_eoi != irq_chip_eoi_parent)
			return false;
#endif
	return irqd_is_masked_by_active(d) && !irqd_is_forwarded_to_vcpu(d) &&
	       d->chip->irq_eoi;
}

__rust_helper bool rust_helper_irq_data_eoi_deferred(struct irq_data *d)
{
	return irq_data_to_desc(d)->istate & IRQS_EOI_DEFERRED;
}

__rust_helper void rust_helper_irq_flow_ack_if_any(struct irq_desc *desc)
{
	struct irq_chip *chip = desc->irq_data.chip;

	if (chip->irq_ack)
		chip->irq_ack(&desc->irq_data);
}

__rust_helper void rust_helper_irq_flow_eoi(struct irq_desc *desc)
{
	irq_flow_eoi(desc, desc->irq_data.chip);
}

/* The EOI of handle_percpu_devid_irq(): per-CPU chips without irq_eoi exist (no fallback). */
__rust_helper void rust_helper_irq_flow_eoi_if_any(struct irq_desc *desc)
{
	struct irq_chip *chip = desc->irq_data.chip;

	if (chip->irq_eoi)
		chip->irq_eoi(&desc->irq_data);
}

/* Takes the descriptor lock: every other writer of the state word holds it. */
__rust_helper void rust_helper_irq_data_set_masked_by_active(struct irq_data *d, bool on)
{
	struct irq_desc *desc = irq_data_to_desc(d);
	unsigned long flags;

	raw_spin_lock_irqsave(&desc->lock, flags);
	if (on)
		irqd_set_masked_by_active(d);
	else
		irqd_clr_masked_by_active(d);
	raw_spin_unlock_irqrestore(&desc->lock, flags);
}

__rust_helper bool rust_helper_irq_data_is_masked_by_active(struct irq_data *d)
{
	return irqd_is_masked_by_active(d);
}
