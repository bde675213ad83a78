// SPDX-License-Identifier: GPL-2.0

//! Inter-processor interrupts and cross-CPU function calls.
//!
//! C header: [`include/linux/smp.h`](srctree/include/linux/smp.h)

use crate::{
    bindings,
    cpu::CpuId,
    cpumask::Cpumask,
    error::to_result,
    ffi::c_void,
    prelude::*, //
};

/// Refuses a cross-CPU call from a context with interrupts disabled, which C would warn about
/// (and which can deadlock: the target may be waiting for this CPU).
fn check_irqs_enabled() -> Result {
    // SAFETY: Reads this CPU's interrupt state.
    if unsafe { bindings::irqs_disabled() } {
        return Err(EINVAL);
    }
    Ok(())
}

/// Runs `f` on `cpu` and waits until it has run (`smp_call_function_single(..., wait = true)`).
///
/// `f` runs in hard-IRQ context on `cpu`, from the function-call IPI, or, if `cpu` is the current
/// CPU, right here with interrupts disabled: it must be fast and must not sleep. It may borrow
/// from the caller, since the call returns only after `f` has run; it is `Send`, as it runs on
/// another CPU.
///
/// Process context with interrupts enabled (`EINVAL` otherwise). Returns `ENXIO` if `cpu` is
/// offline (`f` is then dropped without running).
///
/// # Examples
///
/// ```
/// use core::sync::atomic::{AtomicU32, Ordering::Relaxed};
/// use kernel::{cpu::CpuId, smp};
///
/// let ran_on = AtomicU32::new(u32::MAX);
/// let cpu0 = CpuId::from_u32(0).ok_or(EINVAL)?;
/// smp::call_on(cpu0, || ran_on.store(CpuId::current().as_u32(), Relaxed))?;
/// assert_eq!(ran_on.load(Relaxed), 0);
/// # Ok::<(), Error>(())
/// ```
pub fn call_on<F: FnOnce() + Send>(cpu: CpuId, f: F) -> Result {
    /// Runs the `Option<F>` at `info` once.
    ///
    /// # Safety
    ///
    /// `info` points to a live `Option<F>` that nothing else uses during the call.
    unsafe extern "C" fn trampoline<F: FnOnce()>(info: *mut c_void) {
        // SAFETY: `info` is the `Option<F>` of `call_on`, which waits for this call: it is live
        // and no one else uses it meanwhile.
        let slot = unsafe { &mut *info.cast::<Option<F>>() };
        if let Some(f) = slot.take() {
            f();
        }
    }
    check_irqs_enabled()?;
    let mut slot = Some(f);
    // SAFETY: `trampoline::<F>` takes the `Option<F>` that `info` points to; with `wait`, the C
    // function returns only after it ran (or without queueing it, on error), so `slot` outlives
    // every use.
    to_result(unsafe {
        bindings::smp_call_function_single(
            cpu.as_u32() as c_int,
            Some(trampoline::<F>),
            (&raw mut slot).cast(),
            true,
        )
    })
}

/// Runs `f` on `cpu` without waiting for it (`smp_call_function_single(..., wait = false)`).
///
/// As [`call_on`], but the call returns once `f` is queued (or has run, on the current CPU):
/// `f` owns what it uses (`'static`), boxed until it runs and dropped after it, on `cpu`.
///
/// Process context with interrupts enabled (`EINVAL` otherwise). Returns `ENXIO` if `cpu` is
/// offline (`f` is then dropped without running) and `ENOMEM`.
///
/// # Examples
///
/// ```
/// use core::sync::atomic::{AtomicU32, Ordering::Relaxed};
/// use kernel::{cpu::CpuId, smp, sync::Arc, time::{delay::fsleep, Delta}};
///
/// let runs = Arc::new(AtomicU32::new(0), GFP_KERNEL)?;
/// let r = runs.clone();
/// smp::call_on_nowait(CpuId::from_u32(0).ok_or(EINVAL)?, move || {
///     r.fetch_add(1, Relaxed);
/// })?;
/// // It runs soon (the target takes waiting calls before queued asynchronous ones).
/// for _ in 0..1000 {
///     if runs.load(Relaxed) != 0 {
///         break;
///     }
///     fsleep(Delta::from_millis(1));
/// }
/// assert_eq!(runs.load(Relaxed), 1);
/// # Ok::<(), Error>(())
/// ```
pub fn call_on_nowait<F: FnOnce() + Send + 'static>(cpu: CpuId, f: F) -> Result {
    /// Runs and frees the boxed `F` at `info`.
    ///
    /// # Safety
    ///
    /// `info` is a `KBox<F>` leaked with `KBox::into_raw`, owned by this call.
    unsafe extern "C" fn trampoline<F: FnOnce()>(info: *mut c_void) {
        // SAFETY: `info` is the box `call_on_nowait` leaked for this call, which runs once.
        let f = unsafe { KBox::from_raw(info.cast::<F>()) };
        KBox::into_inner(f)();
    }
    check_irqs_enabled()?;
    let f = KBox::into_raw(KBox::new(f, GFP_KERNEL)?);
    // SAFETY: `trampoline::<F>` takes ownership of the box `f` points to when it runs, once.
    let r = unsafe {
        bindings::smp_call_function_single(
            cpu.as_u32() as c_int,
            Some(trampoline::<F>),
            f.cast(),
            false,
        )
    };
    if r != 0 {
        // SAFETY: On error the call was not queued: the box is still ours.
        drop(unsafe { KBox::from_raw(f) });
    }
    to_result(r)
}

/// Runs `f` on every online CPU of `mask`, the current one included, and waits until all have
/// run it (`on_each_cpu_mask(..., wait = true)`).
///
/// `f` runs in hard-IRQ context on the other CPUs and with interrupts disabled here: fast, no
/// sleeping; concurrently on several CPUs, hence `Fn` and `Sync`.
///
/// Process context with interrupts enabled (`EINVAL` otherwise).
///
/// # Examples
///
/// ```
/// use core::sync::atomic::{AtomicU32, Ordering::Relaxed};
/// use kernel::{cpu::CpuId, cpumask::CpumaskVar, smp};
///
/// let mut mask = CpumaskVar::new_zero(GFP_KERNEL)?;
/// mask.set(CpuId::from_u32(0).ok_or(EINVAL)?);
/// let runs = AtomicU32::new(0);
/// smp::call_on_each(&mask, &|| {
///     runs.fetch_add(1, Relaxed);
/// })?;
/// assert_eq!(runs.load(Relaxed), 1);
/// # Ok::<(), Error>(())
/// ```
pub fn call_on_each<F: Fn() + Sync>(mask: &Cpumask, f: &F) -> Result {
    /// Runs the `F` at `info`.
    ///
    /// # Safety
    ///
    /// `info` points to an `F` that stays live during the call.
    unsafe extern "C" fn trampoline<F: Fn()>(info: *mut c_void) {
        // SAFETY: `info` is the `&F` of `call_on_each`, which waits for every run.
        let f = unsafe { &*info.cast::<F>() };
        f();
    }
    check_irqs_enabled()?;
    // SAFETY: With `wait`, the C function returns after every run of `trampoline::<F>`, so `f`
    // outlives them; `F: Sync` allows the concurrent shared calls.
    unsafe {
        bindings::on_each_cpu_cond_mask(
            None,
            Some(trampoline::<F>),
            core::ptr::from_ref(f).cast_mut().cast(),
            true,
            mask.as_raw(),
        )
    };
    Ok(())
}

/// Whether this CPU is running a hard interrupt handler (`in_hardirq()`).
///
/// A cross-CPU call's function can tell by it how it came: from the function-call IPI (hard-IRQ
/// context), or, when the target CPU idled in a polling loop and the caller only set its
/// `TIF_NEED_RESCHED` instead of sending the IPI (`set_nr_if_polling()`), from the idle task's
/// `flush_smp_call_function_queue()` (interrupts disabled, not hard-IRQ context). Any context.
///
/// # Examples
///
/// ```
/// use kernel::{cpu::CpuId, smp, workqueue::work_on_cpu};
///
/// assert!(!smp::in_hardirq());
/// // A call to the current CPU runs right here, with interrupts disabled but not from an IPI.
/// let cpu0 = CpuId::from_u32(0).ok_or(EINVAL)?;
/// let by_ipi = work_on_cpu!(cpu0, || -> Result<bool> {
///     let mut by_ipi = true;
///     smp::call_on(cpu0, || by_ipi = smp::in_hardirq())?;
///     Ok(by_ipi)
/// })??;
/// assert!(!by_ipi);
/// # Ok::<(), Error>(())
/// ```
#[inline]
pub fn in_hardirq() -> bool {
    // SAFETY: Reads this CPU's preempt count; no other effect.
    unsafe { bindings::in_hardirq() }
}

/// Whether the current task is this CPU's idle task (`is_idle_task(current)`).
///
/// In a cross-CPU call's function run by the IPI, it tells whether the IPI found the target CPU
/// idle or running a task. Any context.
///
/// # Examples
///
/// ```
/// use kernel::smp;
///
/// // A doctest runs in a task, never in the idle task.
/// assert!(!smp::in_idle_task());
/// ```
#[inline]
pub fn in_idle_task() -> bool {
    // SAFETY: Reads the current task's flags; no other effect.
    unsafe { bindings::in_idle_task() }
}

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
