// SPDX-License-Identifier: GPL-2.0

//! A kernel raw spinlock.
//!
//! This module allows Rust code to use the kernel's `raw_spinlock_t`: the lock of code that runs
//! where a sleeping lock (on `PREEMPT_RT` every `spinlock_t`) must not be taken, e.g. an
//! `irq_chip` callback under the interrupt descriptor's lock, which is itself raw.
//!
//! C header: [`include/linux/spinlock.h`](srctree/include/linux/spinlock.h).

use super::*;

/// Creates a [`RawSpinLock`] initialiser with the given name and a newly-created lock class.
///
/// It uses the name if one is given, otherwise it generates one based on the file name and line
/// number.
#[macro_export]
macro_rules! new_raw_spinlock {
    ($inner:expr $(, $name:literal)? $(,)?) => {
        $crate::sync::RawSpinLock::new(
            $inner, $crate::optional_name!($($name)?), $crate::static_lock_class!())
    };
}
pub use new_raw_spinlock;

/// A raw spinlock that disables interrupts while held (`raw_spin_lock_irq_disable()`).
///
/// Exposes the kernel's [`raw_spinlock_t`], which never sleeps, not even on `PREEMPT_RT`: what
/// code under another raw spinlock needs, such as an `irq_chip` callback (the descriptor lock is
/// raw) or a CPU hotplug STARTING callback. Lockdep checks this nesting
/// (`CONFIG_PROVE_RAW_LOCK_NESTING`): a [`SpinLock`](super::spinlock::SpinLock) there is an
/// "invalid wait context". Keep the critical sections short and bounded.
///
/// Locking disables interrupts with the kernel's nesting count (`local_interrupt_disable()`);
/// unlocking re-enables them when the last such section ends, whatever order guards are dropped
/// in. So the lock may be taken in any context, including hard interrupt context.
///
/// # Examples
///
/// ```
/// use kernel::sync::{new_raw_spinlock, RawSpinLock};
///
/// #[pin_data]
/// struct Queue {
///     #[pin]
///     head: RawSpinLock<u32>,
/// }
///
/// let q = KBox::pin_init(pin_init!(Queue { head <- new_raw_spinlock!(0) }), GFP_KERNEL)?;
/// *q.head.lock() += 1;
/// assert_eq!(*q.head.lock(), 1);
/// # Ok::<(), Error>(())
/// ```
///
/// [`raw_spinlock_t`]: srctree/include/linux/spinlock.h
pub type RawSpinLock<T> = Lock<T, RawSpinLockBackend>;

/// A kernel `raw_spinlock_t` lock backend, interrupts disabled while held.
pub struct RawSpinLockBackend;

/// A [`Guard`] acquired from locking a [`RawSpinLock`].
pub type RawSpinLockGuard<'a, T> = Guard<'a, T, RawSpinLockBackend>;

// SAFETY: The underlying kernel `raw_spinlock_t` object ensures mutual exclusion. `relock` uses
// the default implementation that always calls the same locking method.
unsafe impl Backend for RawSpinLockBackend {
    type State = bindings::raw_spinlock_t;
    type GuardState = ();

    #[inline]
    unsafe fn init(
        ptr: *mut Self::State,
        name: *const crate::ffi::c_char,
        key: *mut bindings::lock_class_key,
    ) {
        // SAFETY: The safety requirements ensure that `ptr` is valid for writes, and `name` and
        // `key` are valid for read indefinitely.
        unsafe { bindings::raw_spin_lock_init_key(ptr, name, key) }
    }

    #[inline]
    unsafe fn lock(ptr: *mut Self::State) -> Self::GuardState {
        // SAFETY: The safety requirements of this function ensure that `ptr` points to valid
        // memory, and that it has been initialised before.
        unsafe { bindings::raw_spin_lock_irq_disable(ptr) }
    }

    #[inline]
    unsafe fn unlock(ptr: *mut Self::State, _guard_state: &Self::GuardState) {
        // SAFETY: The safety requirements of this function ensure that `ptr` is valid and that the
        // caller is the owner of the lock.
        unsafe { bindings::raw_spin_unlock_irq_enable(ptr) }
    }

    #[inline]
    unsafe fn try_lock(ptr: *mut Self::State) -> Option<Self::GuardState> {
        // SAFETY: The `ptr` pointer is guaranteed to be valid and initialized before use.
        let result = unsafe { bindings::raw_spin_trylock_irq_disable(ptr) };
        (result != 0).then_some(())
    }

    #[inline]
    unsafe fn assert_is_held(ptr: *mut Self::State) {
        // SAFETY: The `ptr` pointer is guaranteed to be valid and initialized before use.
        unsafe { bindings::raw_spin_assert_is_held(ptr) }
    }
}

impl<T: ?Sized + Send + Unpin> Lock<T, RawSpinLockBackend> {
    /// Runs `f` with the lock held and interrupts disabled as `raw_spin_lock_irqsave()` and
    /// `raw_spin_unlock_irqrestore()` do: the interrupt state is saved on entry and restored on
    /// return, without the nesting count of [`Lock::lock`]. The lock is held exactly for the
    /// call, so sections end in the reverse order they began, and the restored state is always
    /// the one that was saved. Cheaper than a guard on a hot path (a command queue taken for
    /// every interrupt injected); any context, including hard interrupt context.
    ///
    /// `f`, its result and the data are [`Send`]: a proof that interrupts are disabled (a
    /// [`LocalInterruptDisabled`](crate::interrupt::LocalInterruptDisabled), which is not
    /// `Send`) can be neither returned, nor stored in what `f` captured, nor stored in the data,
    /// so none outlives the call, whose end may enable interrupts again. A counted section
    /// leaked inside `f` (a guard or token given to `mem::forget`) leaves the count raised:
    /// interrupts come back on when this section ends, and the counted sections that follow on
    /// that CPU leave them off; a bug, as a leaked guard is anywhere, but nothing unsound, as
    /// no proof that interrupts are off outlives the call. Chip callbacks copy what they need
    /// out of their `&IrqData` (not `Send`) before the call.
    ///
    /// # Examples
    ///
    /// ```
    /// use kernel::sync::{new_raw_spinlock, RawSpinLock};
    ///
    /// let q = KBox::pin_init(new_raw_spinlock!(0u32), GFP_KERNEL)?;
    /// let n = q.with_irqsave(|n| {
    ///     *n += 1;
    ///     *n
    /// });
    /// assert_eq!(n, 1);
    /// assert_eq!(*q.lock(), 1);
    /// # Ok::<(), Error>(())
    /// ```
    #[inline]
    pub fn with_irqsave<R: Send>(&self, f: impl FnOnce(&mut T) -> R + Send) -> R {
        let ptr = self.state.get();
        // SAFETY: `ptr` is the lock's `raw_spinlock_t`, initialised by `Lock::new` and pinned.
        let flags = unsafe { bindings::raw_spin_lock_irqsave(ptr) };
        // SAFETY: The lock is held until the unlock below, so this is the only reference to the
        // data; `T: Unpin`, so a `&mut T` cannot unpin it.
        let r = f(unsafe { &mut *self.data.get() });
        // SAFETY: Locked above by this call, with these flags.
        unsafe { bindings::raw_spin_unlock_irqrestore(ptr, flags) };
        r
    }
}
