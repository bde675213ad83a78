// SPDX-License-Identifier: GPL-2.0

#include <linux/irqflags.h>
#include <linux/preempt.h>
#include <linux/sched.h>
#include <linux/smp.h>
#include <trace/events/ipi.h>

__rust_helper void rust_helper_smp_send_reschedule(int cpu)
{
	smp_send_reschedule(cpu);
}

__rust_helper bool rust_helper_irqs_disabled(void)
{
	return irqs_disabled();
}

__rust_helper bool rust_helper_in_hardirq(void)
{
	return in_hardirq();
}

__rust_helper bool rust_helper_in_task(void)
{
	return in_task();
}

__rust_helper bool rust_helper_is_idle_task_current(void)
{
	return is_idle_task(current);
}
