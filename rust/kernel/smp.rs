// SPDX-License-Identifier: GPL-2.0

//! Inter-processor interrupts.
//!
//! C header: [`include/linux/smp.h`](srctree/include/linux/smp.h)

use crate::{
    bindings,
    cpu::CpuId,
    prelude::*, //
};

/// Sends a reschedule IPI to `cpu` (`smp_send_reschedule()`), the current CPU included: `cpu`
/// takes the interrupt and runs `scheduler_ipi()`, which only checks whether it should
/// schedule, so a spurious one is harmless. Benchmarks use it as an IPI to self.
///
/// Process context (holds the CPU hotplug lock around the send, so that `cpu` cannot go offline
/// meanwhile: an IPI to an offline CPU is a warning on x86). Returns `ENXIO` if `cpu` is
/// offline.
///
/// # Examples
///
/// ```
/// use kernel::{cpu::CpuId, smp};
///
/// smp::send_reschedule(CpuId::current())?;
/// # Ok::<(), Error>(())
/// ```
pub fn send_reschedule(cpu: CpuId) -> Result {
    crate::task::might_sleep();
    // SAFETY: Process context (checked above); paired with the unlock below.
    unsafe { bindings::cpus_read_lock() };
    // SAFETY: `__cpu_online_mask` is valid for the kernel's lifetime; it cannot change while the
    // hotplug lock is held.
    let online =
        unsafe { crate::cpumask::Cpumask::from_raw(&raw const bindings::__cpu_online_mask) }
            .test(cpu);
    if online {
        // SAFETY: `cpu` is online and stays so while the hotplug lock is held.
        unsafe { bindings::smp_send_reschedule(cpu.as_u32() as c_int) };
    }
    // SAFETY: Taken above.
    unsafe { bindings::cpus_read_unlock() };
    if online {
        Ok(())
    } else {
        Err(ENXIO)
    }
}
