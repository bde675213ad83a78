// SPDX-License-Identifier: GPL-2.0

//! Inter-processor interrupts and cross-CPU function calls.
//!
//! The functions a call runs on another CPU run in hard-IRQ context there, with interrupts
//! disabled: they must be short, must not sleep, and must not take a lock that is taken
//! elsewhere with interrupts enabled, nor one that the calling task holds while it waits for
//! the call (the target would spin on it forever).
//!
//! C header: [`include/linux/smp.h`](srctree/include/linux/smp.h)

use crate::{
    bindings,
    cpu::CpuId,
    cpumask::Cpumask,
    error::to_result,
    ffi::c_void,
    interrupt::local_interrupt_disable,
    module::this_module,
    prelude::*,
    ModuleMetadata, //
};

/// Refuses a cross-CPU call from anything but a task with interrupts enabled, which C would warn
/// about (`WARN_ON_ONCE(!in_task())` and `irqs_disabled()` in `kernel/smp.c`): from a softirq or
/// an interrupt, the call could interrupt a task of this CPU between queueing its own call and
/// sending the IPI, or in the middle of using the per-CPU call data, and wait or spin forever.
fn check_context() -> Result {
    // SAFETY: Reads this CPU's preempt count and interrupt state; no other effect.
    if unsafe { !bindings::in_task() || bindings::irqs_disabled() } {
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
/// Task context with interrupts enabled (`EINVAL` otherwise). Returns `ENXIO` if `cpu` is
/// offline (`f` is then dropped without running).
///
/// # Examples
///
/// ```
/// use core::sync::atomic::{AtomicU32, Ordering::Relaxed};
/// use kernel::{cpu::CpuId, smp};
///
/// let ran_on = AtomicU32::new(u32::MAX);
/// let cpu = CpuId::current();
/// smp::call_on(cpu, || ran_on.store(CpuId::current().as_u32(), Relaxed))?;
/// assert_eq!(ran_on.load(Relaxed), cpu.as_u32());
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
    check_context()?;
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

/// A function queued by [`call_on_nowait`], as the non-generic trampoline calls it.
trait Queued: Send {
    fn call(&mut self);
}

impl<F: FnOnce() + Send> Queued for Option<F> {
    fn call(&mut self) {
        if let Some(f) = self.take() {
            f();
        }
    }
}

/// A queued call and the module whose code it runs.
struct QueuedCall {
    module: *mut bindings::module,
    f: KBox<dyn Queued>,
}

/// Runs `f` on `cpu` without waiting for it (`smp_call_function_single(..., wait = false)`).
///
/// As [`call_on`], but the call returns once `f` is queued (or has run, on the current CPU):
/// `f` owns what it uses (`'static`), boxed until it runs and dropped right after it, in
/// hard-IRQ context on `cpu` (so its captures must be droppable there). `M`, the module of the
/// caller's code, is pinned (`try_module_get()`) until `f` has run and been dropped, so that it
/// cannot be unloaded with the call still queued; the trampoline that runs `f` and then drops
/// the module reference is the kernel's own code. A module whose `init` fails with calls still
/// queued stays loaded (`module!`'s `init` sees the references they hold, with
/// `CONFIG_MODULE_UNLOAD`; without it the pin is refused while the module initialises).
///
/// `M` is the caller's `crate::LocalModule`, which `module!` (or, in code linked into the kernel
/// image, [`built_in_module!`](crate::built_in_module!)) defines: a type, not a `&ThisModule`
/// argument, so that safe code can only name its own module (the only other `ModuleMetadata`
/// types it can reach are its own, whose `THIS_MODULE` it cannot forge without `unsafe`).
///
/// Task context with interrupts enabled (`EINVAL` otherwise). Returns `ENXIO` if `cpu` is
/// offline (`f` is then dropped without running), `ENODEV` if the module is going away, `ENOMEM`,
/// and `EOPNOTSUPP` on `PREEMPT_RT`, where freeing memory in hard-IRQ context is not allowed.
///
/// # Examples
///
/// ```
/// use core::sync::atomic::{AtomicU32, Ordering::Relaxed};
/// use kernel::{cpu::CpuId, smp, sync::Arc, time::{delay::fsleep, Delta}};
///
/// let runs = Arc::new(AtomicU32::new(0), GFP_KERNEL)?;
/// let r = runs.clone();
/// # if cfg!(CONFIG_PREEMPT_RT) { return Ok(()); }
/// // The module of this code: `crate::LocalModule` (here the doctests', built in).
/// smp::call_on_nowait::<crate::LocalModule, _>(CpuId::current(), move || {
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
pub fn call_on_nowait<M: ModuleMetadata, F: FnOnce() + Send + 'static>(cpu: CpuId, f: F) -> Result {
    /// Runs and frees the [`QueuedCall`] at `info`, then drops its module reference.
    ///
    /// # Safety
    ///
    /// `info` is a `KBox<QueuedCall>` leaked with `KBox::into_raw`, owned by this call, whose
    /// `module` reference was taken for it.
    unsafe extern "C" fn trampoline(info: *mut c_void) {
        // SAFETY: `info` is the box `call_on_nowait` leaked for this call, which runs once.
        let q = KBox::into_inner(unsafe { KBox::from_raw(info.cast::<QueuedCall>()) });
        let QueuedCall { module, mut f } = q;
        f.call();
        // The module's code drops its closure; the module may go once that has returned.
        drop(f);
        // SAFETY: The reference `call_on_nowait` took for this call.
        unsafe { bindings::module_put(module) };
    }
    check_context()?;
    if cfg!(CONFIG_PREEMPT_RT) {
        return Err(EOPNOTSUPP);
    }
    let f: KBox<dyn Queued> = KBox::new(Some(f), GFP_KERNEL)?;
    let module = this_module::<M>();
    // `try_pin()`: refused while the module goes away (or still initialises where references are
    // not counted), so a module's failed `init` or its exit cannot leave a call behind.
    if !crate::module::try_pin(module) {
        return Err(ENODEV);
    }
    let q = match KBox::new(
        QueuedCall {
            module: module.as_ptr(),
            f,
        },
        GFP_KERNEL,
    ) {
        Ok(q) => KBox::into_raw(q),
        Err(e) => {
            // SAFETY: Taken above, for this call.
            unsafe { bindings::module_put(module.as_ptr()) };
            return Err(e.into());
        }
    };
    // SAFETY: `trampoline` takes ownership of the box `q` points to when it runs, once, and
    // drops the module reference taken for it.
    let r = unsafe {
        bindings::smp_call_function_single(cpu.as_u32() as c_int, Some(trampoline), q.cast(), false)
    };
    if r != 0 {
        // SAFETY: On error the call was not queued: the box and the module reference are ours.
        drop(unsafe { KBox::from_raw(q) });
        // SAFETY: As above.
        unsafe { bindings::module_put(module.as_ptr()) };
    }
    to_result(r)
}

/// Runs `f` on every online CPU of `mask`, the current one included, and waits until all have
/// run it (`on_each_cpu_cond_mask(NULL, ..., wait = true, mask)`, which calls
/// `smp_call_function_many_cond()` for the other CPUs).
///
/// `f` runs in hard-IRQ context on the other CPUs and with interrupts disabled here: fast, no
/// sleeping; concurrently on several CPUs, hence `Fn` and `Sync`.
///
/// Task context with interrupts enabled (`EINVAL` otherwise).
///
/// # Examples
///
/// ```
/// use core::sync::atomic::{AtomicU32, Ordering::Relaxed};
/// use kernel::{cpu::CpuId, cpumask::CpumaskVar, smp};
///
/// let mut mask = CpumaskVar::new_zero(GFP_KERNEL)?;
/// mask.set(CpuId::current());
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
    check_context()?;
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
/// let cpu = CpuId::current();
/// let by_ipi = work_on_cpu!(cpu, || -> Result<bool> {
///     let mut by_ipi = true;
///     smp::call_on(cpu, || by_ipi = smp::in_hardirq())?;
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
/// assert!(!smp::is_idle_task());
/// ```
#[inline]
pub fn is_idle_task() -> bool {
    // SAFETY: Reads the current task's flags; no other effect.
    unsafe { bindings::is_idle_task_current() }
}

/// Sends a reschedule IPI to `cpu` (`smp_send_reschedule()`), the current CPU included: `cpu`
/// takes the interrupt and runs `scheduler_ipi()`, which only checks whether it should
/// schedule, so a spurious one is harmless. Benchmarks use it as an IPI to self.
///
/// Any context but NMI: the send runs with interrupts disabled, which holds off the
/// stop-machine step that takes a CPU offline, so `cpu` cannot go offline between the check and
/// the send (an IPI to an offline CPU is a warning on x86). Returns `ENXIO` if `cpu` is offline.
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
    let _irqs_off = local_interrupt_disable();
    // SAFETY: `__cpu_online_mask` is valid for the kernel's lifetime; with interrupts disabled
    // here, no CPU can leave it meanwhile.
    let online =
        unsafe { crate::cpumask::Cpumask::from_raw(&raw const bindings::__cpu_online_mask) }
            .test(cpu);
    if !online {
        return Err(ENXIO);
    }
    // SAFETY: `cpu` is online and stays so while interrupts are disabled here.
    unsafe { bindings::smp_send_reschedule(cpu.as_u32() as c_int) };
    Ok(())
}
