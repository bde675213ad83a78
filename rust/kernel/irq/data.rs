// SPDX-License-Identifier: GPL-2.0

//! Per-chip data of one interrupt at one hierarchy level (`struct irq_data`), with and without
//! its descriptor lock held, and trigger types.
//!
//! C header: [`include/linux/irq.h`](srctree/include/linux/irq.h)

use core::ops::Deref;

use crate::{
    cpumask::Cpumask,
    prelude::*,
    types::Opaque, //
};

/// The trigger type of an interrupt line (`IRQ_TYPE_*`).
///
/// # Examples
///
/// ```
/// use kernel::irq::TriggerType;
///
/// assert_eq!(TriggerType::try_from(4u32), Ok(TriggerType::LevelHigh));
/// // Two level senses at once is not a trigger type.
/// assert_eq!(TriggerType::try_from(0xcu32), Err(EINVAL));
/// # Ok::<(), Error>(())
/// ```
#[repr(u32)]
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum TriggerType {
    /// No trigger type given, or keep the current one.
    None = bindings::IRQ_TYPE_NONE,
    /// Rising-edge triggered.
    EdgeRising = bindings::IRQ_TYPE_EDGE_RISING,
    /// Falling-edge triggered.
    EdgeFalling = bindings::IRQ_TYPE_EDGE_FALLING,
    /// Triggered on both edges.
    EdgeBoth = bindings::IRQ_TYPE_EDGE_BOTH,
    /// High-level sensitive.
    LevelHigh = bindings::IRQ_TYPE_LEVEL_HIGH,
    /// Low-level sensitive.
    LevelLow = bindings::IRQ_TYPE_LEVEL_LOW,
}

impl TriggerType {
    /// Returns whether this is a level-sensitive type.
    pub const fn is_level(self) -> bool {
        matches!(self, Self::LevelHigh | Self::LevelLow)
    }

    /// Returns whether this is an edge-triggered type.
    pub const fn is_edge(self) -> bool {
        matches!(self, Self::EdgeRising | Self::EdgeFalling | Self::EdgeBoth)
    }

    /// Returns the raw `IRQ_TYPE_*` value.
    pub const fn as_raw(self) -> u32 {
        self as u32
    }
}

impl TryFrom<u32> for TriggerType {
    type Error = Error;

    /// Converts a raw `IRQ_TYPE_*` value (only the `IRQ_TYPE_SENSE_MASK` bits); any other value
    /// is refused with `EINVAL`.
    fn try_from(raw: u32) -> Result<Self> {
        Ok(match raw {
            bindings::IRQ_TYPE_NONE => Self::None,
            bindings::IRQ_TYPE_EDGE_RISING => Self::EdgeRising,
            bindings::IRQ_TYPE_EDGE_FALLING => Self::EdgeFalling,
            bindings::IRQ_TYPE_EDGE_BOTH => Self::EdgeBoth,
            bindings::IRQ_TYPE_LEVEL_HIGH => Self::LevelHigh,
            bindings::IRQ_TYPE_LEVEL_LOW => Self::LevelLow,
            _ => return Err(EINVAL),
        })
    }
}

/// The per-chip data of one interrupt at one level of a domain hierarchy (`struct irq_data`).
///
/// Chip callbacks and domain operations receive it by reference.
///
/// # Invariants
///
/// `self.0` is a valid `irq_data` of an allocated interrupt descriptor for the lifetime of every
/// reference to it.
#[repr(transparent)]
pub struct IrqData(Opaque<bindings::irq_data>);

impl IrqData {
    /// Creates a reference to an [`IrqData`] from a raw pointer.
    ///
    /// # Safety
    ///
    /// `ptr` must point to a valid `irq_data` that stays valid for `'a`.
    #[inline]
    pub unsafe fn from_raw<'a>(ptr: *mut bindings::irq_data) -> &'a Self {
        // SAFETY: `IrqData` is a transparent wrapper of `irq_data`, and the caller guarantees
        // validity for `'a`.
        // INVARIANT: The caller guarantees `ptr` stays valid for `'a`.
        unsafe { &*ptr.cast() }
    }

    /// Returns the raw `irq_data` pointer.
    #[inline]
    pub fn as_raw(&self) -> *mut bindings::irq_data {
        self.0.get()
    }

    /// Returns the Linux interrupt number (virq).
    #[inline]
    pub fn irq(&self) -> u32 {
        // SAFETY: `self.0` is valid (type invariant); `irq` is set at allocation and never changes.
        unsafe { (*self.as_raw()).irq }
    }

    /// Returns the hardware interrupt number (hwirq) local to the domain of this level.
    #[inline]
    pub fn hwirq(&self) -> usize {
        // SAFETY: `self.0` is valid (type invariant); `hwirq` is set before the chip is installed.
        unsafe { (*self.as_raw()).hwirq }
    }

    /// Returns the [`IrqData`] of the parent level in a domain hierarchy, if there is one.
    #[cfg(CONFIG_IRQ_DOMAIN_HIERARCHY)]
    pub fn parent(&self) -> Option<&IrqData> {
        // A volatile read (`READ_ONCE()`), as genirq's readers of a hierarchy in flux.
        // SAFETY: `self.0` is valid (type invariant).
        let parent = unsafe { core::ptr::read_volatile(&raw const (*self.as_raw()).parent_data) };
        if parent.is_null() {
            None
        } else {
            // SAFETY: The parent levels live while the interrupt is allocated: genirq frees
            // them, at once, when it is disposed of (`irq_domain_free_irq_data()`). A reference
            // to this level comes from the interrupt's owner, which keeps it allocated, or from
            // a chip callback or a flow of the interrupt, which a disposal by a Rust owner waits
            // for; a disposal by C relies on the interrupt's flows being done, as
            // `irq_chip_eoi_parent()` does in C.
            Some(unsafe { Self::from_raw(parent) })
        }
    }

    /// Returns the trigger type currently configured for the line (`irqd_get_trigger_type`).
    ///
    /// Returns `EINVAL` if the descriptor holds a value that is not a [`TriggerType`].
    pub fn trigger_type(&self) -> Result<TriggerType> {
        // SAFETY: `self.0` is valid (type invariant).
        TriggerType::try_from(unsafe { bindings::irqd_get_trigger_type(self.as_raw()) })
    }

    /// Returns whether an affinity change waits for the next `ack` (`irqd_is_setaffinity_pending`),
    /// as with `IRQCHIP_MOVE_DEFERRED` chips.
    pub fn is_move_pending(&self) -> bool {
        // SAFETY: `self.0` is valid (type invariant).
        unsafe { bindings::irqd_is_setaffinity_pending(self.as_raw()) }
    }

    /// Applies a pending deferred affinity change of the interrupt (`irq_move_irq()`), as the
    /// `irq_ack` of an interrupt whose top-level chip is `IRQCHIP_MOVE_DEFERRED` does. Without a
    /// pending change (the common case) it only tests the bit.
    ///
    /// The safe way in is [`AckCtx::move_irq`](super::AckCtx::move_irq), which has the same
    /// contract.
    ///
    /// # Safety
    ///
    /// The current context is the `irq_ack` call of a genirq flow handler of this interrupt
    /// that holds its descriptor lock (`handle_edge_irq()`, `handle_level_irq()`'s
    /// `mask_ack_irq()`), in the interrupt's hard IRQ: `irq_move_masked_irq()` reprograms the
    /// affinity under that lock (`assert_raw_spin_locked()`), and the move was deferred so that
    /// it runs on a CPU the interrupt still targets (x86's vector cleanup relies on it). Not
    /// `chained_irq_enter()`, a per-CPU flow or a driver calling chip callbacks.
    #[inline]
    pub(crate) unsafe fn move_irq_locked(&self) {
        if !self.is_move_pending() {
            return;
        }
        // With lockdep, a caller breaking the contract is reported (`lockdep_assert_held()`).
        // SAFETY: `self.0` is valid (type invariant).
        unsafe { bindings::irq_data_assert_desc_locked(self.as_raw()) };
        // SAFETY: `self.0` is valid (type invariant); the caller is the interrupt's `irq_ack`
        // in its flow, holding `desc->lock` (the function's safety requirements).
        unsafe { bindings::irq_move_irq(self.as_raw()) }
    }

    /// Returns whether the line is masked in the core's view (`irqd_irq_masked`).
    #[inline]
    pub fn is_masked(&self) -> bool {
        // SAFETY: `self.0` is valid (type invariant).
        unsafe { bindings::irqd_irq_masked(self.as_raw()) }
    }

    /// Returns whether the line is disabled in the core's view (`irqd_irq_disabled`).
    #[inline]
    pub fn is_disabled(&self) -> bool {
        // SAFETY: `self.0` is valid (type invariant).
        unsafe { bindings::irqd_irq_disabled(self.as_raw()) }
    }

    /// Returns whether the interrupt is forwarded to a vCPU (`irqd_is_forwarded_to_vcpu`): the
    /// guest deactivates it, not the host.
    #[inline]
    pub fn is_forwarded_to_vcpu(&self) -> bool {
        // SAFETY: `self.as_raw()` is a valid `irq_data` (type invariant).
        unsafe { bindings::irqd_is_forwarded_to_vcpu(self.as_raw()) }
    }

    /// Returns the affinity mask of the interrupt (`irq_data_get_affinity_mask`).
    pub fn affinity(&self) -> &Cpumask {
        // SAFETY: `self.0` is valid (type invariant); the mask lives in the descriptor's common
        // data, which outlives `self`.
        unsafe { Cpumask::from_raw(bindings::irq_data_get_affinity_mask(self.as_raw())) }
    }

    /// Masks the parent level of a hierarchy (`irq_chip_mask_parent`).
    ///
    /// Returns `ENODEV` if there is no parent or the parent chip cannot mask.
    ///
    /// Crate-private: any task reaches an `IrqData` (`Mapping::desc()`), and an unmask or EOI from
    /// outside the interrupt's flow unmasks a line genirq holds masked (a ONESHOT thread running)
    /// or drops the running priority of whatever this CPU has active. Chips reach the parent level
    /// through the callbacks genirq calls with the flow.
    #[cfg(CONFIG_IRQ_DOMAIN_HIERARCHY)]
    pub(crate) fn mask_parent(&self) -> Result {
        self.parent_has(|c| c.irq_mask.is_some())?;
        // SAFETY: `self.0` is valid and its parent's chip has `irq_mask` (checked above).
        unsafe { bindings::irq_chip_mask_parent(self.as_raw()) };
        Ok(())
    }

    /// Unmasks the parent level of a hierarchy (`irq_chip_unmask_parent`).
    ///
    /// Returns `ENODEV` if there is no parent or the parent chip cannot unmask.
    #[cfg(CONFIG_IRQ_DOMAIN_HIERARCHY)]
    #[cfg_attr(not(CONFIG_RUST_IRQ_PROVIDER_KUNIT_TEST), allow(dead_code))]
    pub(crate) fn unmask_parent(&self) -> Result {
        self.parent_has(|c| c.irq_unmask.is_some())?;
        // SAFETY: `self.0` is valid and its parent's chip has `irq_unmask` (checked above).
        unsafe { bindings::irq_chip_unmask_parent(self.as_raw()) };
        Ok(())
    }

    /// Signals EOI to the parent level of a hierarchy (`irq_chip_eoi_parent`).
    ///
    /// Returns `ENODEV` if there is no parent or the parent chip has no EOI.
    #[cfg(CONFIG_IRQ_DOMAIN_HIERARCHY)]
    pub(crate) fn eoi_parent(&self) -> Result {
        // `irq_chip_eoi_parent()` without its second walk to the parent: a hot path, every
        // interrupt of a level whose EOI is its parent's.
        let (parent, eoi) = self.parent_op(|c| c.irq_eoi)?;
        // SAFETY: `parent.0` is the valid parent level, whose chip's `irq_eoi` this is.
        unsafe { eoi(parent.as_raw()) };
        Ok(())
    }

    /// Whether the parent level exists with a chip that has `irq_eoi`: `ENODEV` otherwise.
    #[cfg(CONFIG_IRQ_DOMAIN_HIERARCHY)]
    pub(crate) fn parent_has_eoi(&self) -> Result {
        self.parent_has(|c| c.irq_eoi.is_some())
    }

    #[cfg(CONFIG_IRQ_DOMAIN_HIERARCHY)]
    fn parent_has(&self, has: impl Fn(&bindings::irq_chip) -> bool) -> Result {
        self.parent_op(|c| has(c).then_some(())).map(|_| ())
    }

    /// The parent level and what `op` finds in its chip (a callback), if the level exists with
    /// a chip and `op` finds it: `ENODEV` otherwise.
    #[cfg(CONFIG_IRQ_DOMAIN_HIERARCHY)]
    fn parent_op<F>(
        &self,
        op: impl FnOnce(&bindings::irq_chip) -> Option<F>,
    ) -> Result<(&IrqData, F)> {
        let parent = self.parent().ok_or(ENODEV)?;
        // A volatile read (`READ_ONCE()`), as genirq's readers of a hierarchy in flux.
        // SAFETY: `parent.0` is valid (type invariant).
        let chip = unsafe { core::ptr::read_volatile(&raw const (*parent.as_raw()).chip) };
        // A level disconnected from the hierarchy (`irq_domain_disconnect_hierarchy()`) has an
        // error pointer as its chip.
        if chip.is_null() || (chip as usize) > usize::MAX - (bindings::MAX_ERRNO as usize) {
            return Err(ENODEV);
        }
        // SAFETY: A chip of an allocated interrupt that is neither null nor an error pointer
        // points to a live `irq_chip` (chips outlive the interrupts they are installed on).
        let found = op(unsafe { &*chip }).ok_or(ENODEV)?;
        Ok((parent, found))
    }
}

/// The [`IrqData`] of an interrupt whose descriptor lock (`desc->lock`) the current context
/// holds: what a [`DescLockGuard`](super::DescLockGuard) hands out and what genirq passes to the
/// chip callbacks it calls with the lock held (`set_type`; `set_affinity` and
/// `set_vcpu_affinity` through their context types, which dereference to it). Its methods are
/// what any task may do under the lock ([`set_handler`](Self::set_handler),
/// [`is_eoi_deferred`](Self::is_eoi_deferred)).
///
/// Holding the lock is not enough for the operations that belong to one chip callback: the
/// effective affinity, which only the `set_affinity` that programmed the hardware knows
/// ([`SetAffinityCtx`](super::SetAffinityCtx)), the vCPU-forwarded flag, which only
/// `set_vcpu_affinity` may change ([`SetVcpuAffinityCtx`](super::SetVcpuAffinityCtx)), and a
/// deferred move, which only the interrupt's own `ack` may apply
/// ([`AckCtx::move_irq`](super::AckCtx::move_irq)). They are not methods of this type.
///
/// It dereferences to [`IrqData`]. References to it are neither `Send` nor `Sync`: the lock
/// belongs to this context.
///
/// # Invariants
///
/// The `irq_data` is valid and the descriptor lock of its interrupt is held by the current
/// context for the lifetime of every reference to it.
#[repr(transparent)]
pub struct LockedIrqData(IrqData);

impl LockedIrqData {
    /// Creates a reference to a [`LockedIrqData`] from a raw pointer.
    ///
    /// # Safety
    ///
    /// `ptr` must point to a valid `irq_data` whose descriptor lock the current context holds
    /// for `'a`.
    pub(crate) unsafe fn from_raw<'a>(ptr: *mut bindings::irq_data) -> &'a Self {
        // SAFETY: `LockedIrqData` is a transparent wrapper of `IrqData`, itself of `irq_data`.
        // INVARIANT: The caller guarantees validity and the lock for `'a`.
        unsafe { &*ptr.cast() }
    }

    /// Returns `irqd` as a [`LockedIrqData`], for code that genirq's rules put under the lock
    /// but that the types cannot see (`irq_set_vcpu_affinity()`'s call of the chip callback).
    ///
    /// # Safety
    ///
    /// The current context holds the descriptor lock of `irqd`'s interrupt for `'a`.
    pub(crate) unsafe fn assume_locked<'a>(irqd: &'a IrqData) -> &'a Self {
        // With lockdep, a caller breaking the contract is reported (`lockdep_assert_held()`).
        // SAFETY: `irqd` is valid (type invariant of `IrqData`).
        unsafe { bindings::irq_data_assert_desc_locked(irqd.as_raw()) };
        // SAFETY: As the caller guarantees; `irqd` is valid for `'a`.
        unsafe { Self::from_raw(irqd.as_raw()) }
    }
}

impl Deref for LockedIrqData {
    type Target = IrqData;

    fn deref(&self) -> &IrqData {
        &self.0
    }
}
