// SPDX-License-Identifier: GPL-2.0

//! Interrupt descriptors (`struct irq_desc`) and their lock.
//!
//! C header: [`include/linux/irqdesc.h`](srctree/include/linux/irqdesc.h)

use crate::{
    irq::data::{
        IrqData,
        LockedIrqData, //
    },
    types::{
        NotThreadSafe,
        Opaque, //
    }, //
};

/// The interrupt descriptor of one Linux interrupt (`struct irq_desc`).
///
/// # Invariants
///
/// `self.0` is a valid, allocated `irq_desc` for the lifetime of every reference to it.
#[repr(transparent)]
pub struct IrqDesc(Opaque<bindings::irq_desc>);

impl IrqDesc {
    /// Creates a reference to an [`IrqDesc`] from a raw pointer.
    ///
    /// # Safety
    ///
    /// `ptr` must point to a valid `irq_desc` that stays allocated for `'a`.
    pub unsafe fn from_raw<'a>(ptr: *mut bindings::irq_desc) -> &'a Self {
        // SAFETY: `IrqDesc` is a transparent wrapper of `irq_desc`; validity is guaranteed by the
        // caller.
        // INVARIANT: The caller guarantees `ptr` stays valid for `'a`.
        unsafe { &*ptr.cast() }
    }

    /// Returns the raw `irq_desc` pointer.
    pub fn as_raw(&self) -> *mut bindings::irq_desc {
        self.0.get()
    }

    /// Returns the top-level [`IrqData`] of the descriptor (`irq_desc_get_irq_data`).
    pub fn irq_data(&self) -> &IrqData {
        // SAFETY: `self.0` is valid (type invariant); the embedded `irq_data` lives as long as
        // the descriptor.
        unsafe { IrqData::from_raw(bindings::irq_desc_get_irq_data(self.as_raw())) }
    }

    /// Returns the Linux interrupt number (virq).
    pub fn irq(&self) -> u32 {
        self.irq_data().irq()
    }

    /// Takes the descriptor lock (`desc->lock`, a raw spinlock) with interrupts disabled
    /// (`raw_spin_lock_irq_disable`, the refcounted disabling of
    /// [`local_interrupt_disable`](crate::interrupt::local_interrupt_disable), so guards of both
    /// kinds may be dropped in any order); dropping the guard releases it.
    ///
    /// Any context but NMI. Atomic context while held: do not sleep. The chip callbacks and the
    /// flow handler of the interrupt take or hold the same lock: taking it there, or handling
    /// the interrupt under it, deadlocks (lockdep reports it).
    pub fn lock(&self) -> DescLockGuard<'_> {
        // SAFETY: `self.0` is valid (type invariant).
        unsafe { bindings::irq_desc_lock_irq_disable(self.as_raw()) };
        // INVARIANT: The lock was just taken.
        DescLockGuard {
            desc: self,
            _not_send: NotThreadSafe,
        }
    }
}

/// The held descriptor lock of an interrupt, from [`IrqDesc::lock`].
///
/// # Invariants
///
/// The current context holds `self.desc`'s lock, taken with `raw_spin_lock_irq_disable()`.
pub struct DescLockGuard<'a> {
    desc: &'a IrqDesc,
    _not_send: NotThreadSafe,
}

impl DescLockGuard<'_> {
    /// Returns the top-level [`IrqData`] of the locked descriptor, with what any task may do
    /// under the lock ([`LockedIrqData::set_handler`]); not what belongs to one chip callback
    /// (the effective affinity, the vCPU-forwarded flag, a deferred move: see
    /// [`LockedIrqData`]).
    pub fn irq_data(&self) -> &LockedIrqData {
        // SAFETY: The descriptor's `irq_data` is valid and its lock is held (type invariant) for
        // as long as `self` is borrowed.
        unsafe { LockedIrqData::from_raw(self.desc.irq_data().as_raw()) }
    }
}

impl Drop for DescLockGuard<'_> {
    fn drop(&mut self) {
        // SAFETY: The lock is held (type invariant), taken with `raw_spin_lock_irq_disable()`.
        unsafe { bindings::irq_desc_unlock_irq_enable(self.desc.as_raw()) };
    }
}
