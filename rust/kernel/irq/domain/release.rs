// SPDX-License-Identifier: GPL-2.0

//! The per-interrupt chip data of a [`Domain`](super::Domain) ([`Allocator::set_info_boxed`],
//! [`Allocator::set_chip_boxed`]), and its release once no CPU can be in a chip callback with it:
//! after an RCU grace period, in a work item that holds its module.
//!
//! [`Allocator::set_info_boxed`]: super::Allocator::set_info_boxed
//! [`Allocator::set_chip_boxed`]: super::Allocator::set_chip_boxed

use super::ModuleRef;
use crate::{
    bindings,
    prelude::*,
    types::Opaque, //
};
use core::ffi::c_void;

/// Per-interrupt chip data installed by [`Allocator::set_info_boxed`].
///
/// # Invariants
///
/// `data` came from `KBox::<D>::into_raw()` and `drop` is `drop_boxed::<D>`, for one type `D`.
pub(super) struct BoxedData {
    pub(super) virq: u32,
    pub(super) data: *mut c_void,
    pub(super) drop: unsafe fn(*mut c_void),
}

// SAFETY: The data is `Send` (`set_info_boxed` requires it); the entry is only a pointer to it.
unsafe impl Send for BoxedData {}

impl BoxedData {
    /// Drops the data. Nothing may use it any more.
    pub(super) fn release(self) {
        // SAFETY: `drop` is the dropper of `data`'s type (type invariant).
        unsafe { (self.drop)(self.data) }
    }
}

/// Per-interrupt data taken from the registry, dropped once no CPU can be in a chip callback
/// with it: a flow handler that loaded the chip before the interrupt's reset may still be in one,
/// and flow handlers run with interrupts disabled, an RCU read-side critical section. The chip
/// callbacks that run outside a flow are done by then too: those of activation and affinity
/// (`irq_compose_msi_msg`, `irq_set_affinity`) run with the descriptor lock held, interrupts
/// disabled, or within an MSI allocation, before anything can free the interrupt; the IPI
/// senders with preemption disabled, also a read-side critical section. Dropping it waits for
/// the grace period (process context); `_owner` goes last.
struct DeferredRelease {
    boxed: KVec<BoxedData>,
    _owner: Option<ModuleRef>,
}

impl DeferredRelease {
    /// Drops the data now: a grace period has elapsed since it was taken from the registry.
    fn release_elapsed(&mut self) {
        while let Some(e) = self.boxed.pop() {
            e.release();
        }
    }
}

impl Drop for DeferredRelease {
    fn drop(&mut self) {
        if self.boxed.is_empty() {
            return;
        }
        // SAFETY: Process context (a work item, or the caller's).
        unsafe { bindings::synchronize_rcu() };
        self.release_elapsed();
    }
}

/// A [`DeferredRelease`] queued behind an RCU grace period (`queue_rcu_work()`): RCU batches
/// the grace periods of all its callbacks, so that freeing the 64 vectors of a device waits for
/// about one grace period, not one per vector as a work item calling `synchronize_rcu()` each
/// would.
///
/// # Invariants
///
/// Once queued, `rwork` is initialised (`INIT_RCU_WORK()`) with [`rcu_release_work`] as its
/// function.
struct RcuRelease {
    rwork: Opaque<bindings::rcu_work>,
    d: DeferredRelease,
}

// The release moves to a worker.
const _: () = {
    const fn send<T: Send>() {}
    send::<DeferredRelease>();
};

/// The function of an [`RcuRelease`]'s work item, run in process context after the grace
/// period: drops the data, then (`RcuRelease`'s fields) the module reference; the workqueue
/// allows a work item to free itself.
///
/// # Safety
///
/// `work` is the `work_struct` of an `RcuRelease` leaked from a `KBox` and queued with
/// `queue_rcu_work()`, run once.
unsafe extern "C" fn rcu_release_work(work: *mut bindings::work_struct) {
    // SAFETY: `work` is the `work` field of the `rcu_work` of an `RcuRelease` (the function's
    // safety requirements).
    let rwork = unsafe { crate::container_of!(work, bindings::rcu_work, work) };
    // SAFETY: That `rcu_work` is the `rwork` field of an `RcuRelease` (`Opaque` is transparent).
    let r = unsafe { crate::container_of!(Opaque::cast_from(rwork).cast_mut(), RcuRelease, rwork) };
    // SAFETY: `r` came from `KBox::into_raw()` and nothing else uses it any more (the function's
    // safety requirements).
    let mut r = unsafe { KBox::from_raw(r) };
    r.d.release_elapsed();
}

/// Releases `boxed`, per-interrupt data whose drop is code of module `M`, after an RCU grace
/// period: in a work item (`system_dfl_wq`) queued behind the grace period
/// (`queue_rcu_work()`) and holding a reference on `M`, so that the caller does not wait for
/// it; inline (waiting) if the work item cannot be allocated or `M` cannot be pinned: a module
/// being unloaded (its exit dropping its domain) is freed once its exit returns, whatever
/// references it holds, so nothing of its code may be left queued.
///
/// Process context.
pub(super) fn release_after_grace_period<M: crate::ModuleMetadata>(boxed: KVec<BoxedData>) {
    // Without memory for the work item the grace period is waited for here.
    crate::task::might_sleep();
    let module = crate::module::this_module::<M>();
    spawn_release(DeferredRelease {
        boxed,
        // Only a live module is pinned for it: one still initialising would otherwise hold a
        // reference its failed `init` did not leak (and be kept loaded for it).
        _owner: if module_live(module) {
            ModuleRef::get(module).ok()
        } else {
            None
        },
    });
}

/// Whether `module` is the kernel image or a module that finished its `init` and is not going
/// away (`MODULE_STATE_LIVE`).
#[cfg(CONFIG_MODULES)]
fn module_live(module: &crate::ThisModule) -> bool {
    let m = module.as_ptr();
    // SAFETY: A non-null `ThisModule` is its module's `THIS_MODULE`, a valid `struct module` while
    // its code runs (the caller is its code); the loader writes `state` before and after `init`
    // and at unload, hence the volatile read.
    m.is_null()
        || unsafe { core::ptr::read_volatile(core::ptr::addr_of!((*m).state)) }
            == bindings::module_state_MODULE_STATE_LIVE
}

/// Whether `module` is live: without modules, only the kernel image exists.
#[cfg(not(CONFIG_MODULES))]
fn module_live(_module: &crate::ThisModule) -> bool {
    true
}

/// Queues [`release_after_grace_period`]'s release behind a grace period ([`RcuRelease`]): not
/// generic, so that the work item's code is the `kernel` crate's, never a module's: the module
/// reference is dropped last (`DeferredRelease`'s fields), after which the worker runs no code
/// of the module. One instance, so one lock class for the work item. Inline if `d` holds no
/// module reference (the module is being unloaded) or the work item cannot be allocated.
#[inline(never)]
fn spawn_release(d: DeferredRelease) {
    if d._owner.is_none() {
        drop(d);
        return;
    }
    // Without memory for it, `KBox::new` drops `d`, which waits for the grace period here, in
    // process context.
    let Ok(r) = KBox::new(
        RcuRelease {
            rwork: Opaque::uninit(),
            d,
        },
        GFP_KERNEL,
    ) else {
        return;
    };
    let r = KBox::into_raw(r);
    // SAFETY: `r` is a live allocation: a pointer to its field, with the whole allocation's
    // provenance.
    let rwork = Opaque::cast_into(unsafe { &raw const (*r).rwork });
    // SAFETY: `rwork` is live; it is initialised once, before it is queued.
    unsafe { bindings::init_rcu_work(rwork, Some(rcu_release_work)) };
    // INVARIANT: `rwork` is initialised with `rcu_release_work`.
    // SAFETY: `system_dfl_wq` is a C global, always available; `rwork` is initialised, queued
    // once, and lives until `rcu_release_work` frees it.
    unsafe { bindings::queue_rcu_work(bindings::system_dfl_wq, rwork) };
}

/// Drops a `KBox<D>` from its raw pointer.
///
/// # Safety
///
/// `p` came from `KBox::<D>::into_raw()` and is not used afterwards.
pub(super) unsafe fn drop_boxed<D>(p: *mut c_void) {
    // SAFETY: As the caller guarantees.
    drop(unsafe { KBox::from_raw(p.cast::<D>()) });
}
