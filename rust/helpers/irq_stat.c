// SPDX-License-Identifier: GPL-2.0

#include <linux/cpumask.h>
#include <linux/irq.h>
#include <linux/irqdesc.h>
#include <linux/kernel_stat.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/cputime.h>
#include <linux/sched/isolation.h>
#include <linux/topology.h>

__rust_helper unsigned int rust_helper_irq_desc_kstat_cpu(struct irq_desc *desc, unsigned int cpu)
{
	return irq_desc_kstat_cpu(desc, cpu);
}

__rust_helper bool rust_helper_irqd_is_per_cpu(struct irq_data *d)
{
	return irqd_is_per_cpu(d);
}

__rust_helper bool rust_helper_irqd_can_balance(struct irq_data *d)
{
	return irqd_can_balance(d);
}

__rust_helper bool rust_helper_irqd_affinity_is_managed(struct irq_data *d)
{
	return irqd_affinity_is_managed(d);
}

/* The CPU's interrupt time in ns (CONFIG_IRQ_TIME_ACCOUNTING), as /proc/stat's "irq". */
__rust_helper u64 rust_helper_kcpustat_cpu_irq_ns(int cpu)
{
	return READ_ONCE(kcpustat_cpu(cpu).cpustat[CPUTIME_IRQ]);
}

__rust_helper const struct cpumask *rust_helper_topology_sibling_cpumask(int cpu)
{
	return topology_sibling_cpumask(cpu);
}

__rust_helper const struct cpumask *rust_helper_topology_core_cpumask(int cpu)
{
	return topology_core_cpumask(cpu);
}

/* The CPUs sharing the last-level cache with cpu, where the architecture says (x86, arm64). */
__rust_helper const struct cpumask *rust_helper_cpu_llc_cpumask(int cpu)
{
#if defined(CONFIG_X86) || defined(CONFIG_GENERIC_ARCH_TOPOLOGY)
	return cpu_coregroup_mask(cpu);
#else
	return cpumask_of(cpu);
#endif
}

__rust_helper int rust_helper_cpu_to_node(int cpu)
{
	return cpu_to_node(cpu);
}

__rust_helper bool rust_helper_cpu_possible(unsigned int cpu)
{
	return cpu_possible(cpu);
}

__rust_helper bool rust_helper_cpu_active(unsigned int cpu)
{
	return cpu_active(cpu);
}

/*
 * Whether cpu may take unmanaged interrupts: not isolated by isolcpus= or nohz_full=. The
 * housekeeping masks are RCU-protected (cpuset may change HK_TYPE_DOMAIN at run time): read them
 * in a read-side section; the answer is a snapshot.
 */
__rust_helper bool rust_helper_cpu_is_irq_housekeeping(int cpu)
{
	guard(rcu)();
	return housekeeping_cpu(cpu, HK_TYPE_DOMAIN) &&
	       housekeeping_cpu(cpu, HK_TYPE_MANAGED_IRQ) &&
	       housekeeping_cpu(cpu, HK_TYPE_KERNEL_NOISE);
}

/* cond_resched() is a macro: between the steps of the balancer's pass. */
__rust_helper void rust_helper_irq_stat_cond_resched(void)
{
	cond_resched();
}

/* The current task's CPU time in ns (sum_exec_runtime with the running slice). */
__rust_helper u64 rust_helper_irq_stat_current_runtime_ns(void)
{
	return task_sched_runtime(current);
}
