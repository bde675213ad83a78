// SPDX-License-Identifier: GPL-2.0

//! Per-interrupt data of the provider side: `struct irq_data`, `struct irq_desc`, flow handlers
//! and chained handlers.
//!
//! C headers: [`include/linux/irq.h`](srctree/include/linux/irq.h),
//! [`include/linux/irqdesc.h`](srctree/include/linux/irqdesc.h),
//! [`include/linux/irqchip/chained_irq.h`](srctree/include/linux/irqchip/chained_irq.h)

use crate::{
    cpumask::Cpumask,
    interrupt::LocalInterruptDisabled,
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
    pub unsafe fn from_raw<'a>(ptr: *mut bindings::irq_data) -> &'a Self {
        // SAFETY: `IrqData` is a transparent wrapper of `irq_data`, and the caller guarantees
        // validity for `'a`.
        // INVARIANT: The caller guarantees `ptr` stays valid for `'a`.
        unsafe { &*ptr.cast() }
    }

    /// Returns the raw `irq_data` pointer.
    pub fn as_raw(&self) -> *mut bindings::irq_data {
        self.0.get()
    }

    /// Returns the Linux interrupt number (virq).
    pub fn irq(&self) -> u32 {
        // SAFETY: `self.0` is valid (type invariant); `irq` is set at allocation and never changes.
        unsafe { (*self.as_raw()).irq }
    }

    /// Returns the hardware interrupt number (hwirq) local to the domain of this level.
    pub fn hwirq(&self) -> usize {
        // SAFETY: `self.0` is valid (type invariant); `hwirq` is set before the chip is installed.
        unsafe { (*self.as_raw()).hwirq }
    }

    /// Returns the [`IrqData`] of the parent level in a domain hierarchy, if there is one.
    #[cfg(CONFIG_IRQ_DOMAIN_HIERARCHY)]
    pub fn parent(&self) -> Option<&IrqData> {
        // SAFETY: `self.0` is valid (type invariant).
        let parent = unsafe { (*self.as_raw()).parent_data };
        if parent.is_null() {
            None
        } else {
            // SAFETY: A non-null `parent_data` is valid for as long as this level is.
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

    /// Returns whether the line is masked in the core's view (`irqd_irq_masked`).
    pub fn is_masked(&self) -> bool {
        // SAFETY: `self.0` is valid (type invariant).
        unsafe { bindings::irqd_irq_masked(self.as_raw()) }
    }

    /// Returns whether the line is disabled in the core's view (`irqd_irq_disabled`).
    pub fn is_disabled(&self) -> bool {
        // SAFETY: `self.0` is valid (type invariant).
        unsafe { bindings::irqd_irq_disabled(self.as_raw()) }
    }

    /// Returns the affinity mask of the interrupt (`irq_data_get_affinity_mask`).
    pub fn affinity(&self) -> &Cpumask {
        // SAFETY: `self.0` is valid (type invariant); the mask lives in the descriptor's common
        // data, which outlives `self`.
        unsafe { Cpumask::from_raw(bindings::irq_data_get_affinity_mask(self.as_raw())) }
    }

    /// Sets the effective affinity (`irq_data_update_effective_affinity`).
    ///
    /// # Safety
    ///
    /// The caller holds the interrupt's descriptor lock, as in
    /// [`Chip::set_affinity`](super::Chip::set_affinity).
    pub unsafe fn update_effective_affinity(&self, mask: &Cpumask) {
        // SAFETY: `self.0` is valid (type invariant); `mask` is a valid cpumask; the caller holds
        // `desc->lock`.
        unsafe { bindings::irq_data_update_effective_affinity(self.as_raw(), mask.as_raw()) }
    }

    /// Applies a pending affinity change of the interrupt (`irq_move_irq`).
    ///
    /// # Safety
    ///
    /// The caller holds the interrupt's descriptor lock, as an `ack` called by a flow handler
    /// does.
    pub unsafe fn move_irq(&self) {
        // SAFETY: `self.0` is valid (type invariant); the caller holds `desc->lock`.
        unsafe { bindings::irq_move_irq(self.as_raw()) }
    }

    /// Changes the flow handler (`irq_set_handler_locked`).
    ///
    /// # Safety
    ///
    /// The caller holds the interrupt's descriptor lock, as in
    /// [`Chip::set_type`](super::Chip::set_type), and `flow` is not [`FlowHandler::PercpuDevid`]
    /// unless the interrupt is already per-CPU.
    pub unsafe fn set_handler_locked(&self, flow: FlowHandler) {
        // SAFETY: `self.0` is valid (type invariant); the caller holds `desc->lock`, as
        // `irq_set_handler_locked` requires; the handler is a genirq flow handler.
        unsafe { bindings::irq_set_handler_locked(self.as_raw(), flow.as_raw()) }
    }

    /// Masks the parent level of a hierarchy (`irq_chip_mask_parent`).
    ///
    /// Returns `ENODEV` if there is no parent or the parent chip cannot mask.
    #[cfg(CONFIG_IRQ_DOMAIN_HIERARCHY)]
    pub fn mask_parent(&self) -> Result {
        self.parent_has(|c| c.irq_mask.is_some())?;
        // SAFETY: `self.0` is valid and its parent's chip has `irq_mask` (checked above).
        unsafe { bindings::irq_chip_mask_parent(self.as_raw()) };
        Ok(())
    }

    /// Unmasks the parent level of a hierarchy (`irq_chip_unmask_parent`).
    ///
    /// Returns `ENODEV` if there is no parent or the parent chip cannot unmask.
    #[cfg(CONFIG_IRQ_DOMAIN_HIERARCHY)]
    pub fn unmask_parent(&self) -> Result {
        self.parent_has(|c| c.irq_unmask.is_some())?;
        // SAFETY: `self.0` is valid and its parent's chip has `irq_unmask` (checked above).
        unsafe { bindings::irq_chip_unmask_parent(self.as_raw()) };
        Ok(())
    }

    /// Signals EOI to the parent level of a hierarchy (`irq_chip_eoi_parent`).
    ///
    /// Returns `ENODEV` if there is no parent or the parent chip has no EOI.
    #[cfg(CONFIG_IRQ_DOMAIN_HIERARCHY)]
    pub fn eoi_parent(&self) -> Result {
        self.parent_has(|c| c.irq_eoi.is_some())?;
        // SAFETY: `self.0` is valid and its parent's chip has `irq_eoi` (checked above).
        unsafe { bindings::irq_chip_eoi_parent(self.as_raw()) };
        Ok(())
    }

    #[cfg(CONFIG_IRQ_DOMAIN_HIERARCHY)]
    fn parent_has(&self, has: impl Fn(&bindings::irq_chip) -> bool) -> Result {
        let parent = self.parent().ok_or(ENODEV)?;
        // SAFETY: `parent.0` is valid (type invariant).
        let chip = unsafe { (*parent.as_raw()).chip };
        // SAFETY: A non-null `chip` of an allocated interrupt points to a live `irq_chip`.
        if chip.is_null() || !has(unsafe { &*chip }) {
            return Err(ENODEV);
        }
        Ok(())
    }
}

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
}

/// A flow handler of genirq, chosen when a chip is installed on an interrupt.
///
/// C source: [`kernel/irq/chip.c`](srctree/kernel/irq/chip.c).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum FlowHandler {
    /// `handle_fasteoi_irq`: transparent controllers; only `eoi` after the handler (masks for
    /// ONESHOT lines). The chip must implement `eoi`.
    FastEoi,
    /// `handle_edge_irq`: `ack` first, re-runs the handler for edges that arrived meanwhile. The
    /// chip must implement `ack`.
    Edge,
    /// `handle_level_irq`: `mask`+`ack` first, `unmask` after the handler.
    Level,
    /// `handle_simple_irq`: no chip calls at all.
    Simple,
    /// `handle_percpu_devid_irq`: per-CPU interrupts with a per-CPU device id (PPIs, SGIs);
    /// installing it also marks the interrupt per-CPU (`irq_set_percpu_devid`).
    PercpuDevid,
    /// `handle_bad_irq`: spurious interrupt accounting; for lines that must not fire.
    Bad,
}

impl FlowHandler {
    /// Checks that chip `C` has the callbacks this flow calls unconditionally (`ack` for the edge
    /// flow, `eoi` for the fasteoi flow); `EINVAL` otherwise.
    pub fn check<C: super::Chip>(self) -> Result {
        match self {
            Self::Edge if !C::HAS_ACK => Err(EINVAL),
            Self::FastEoi if !C::HAS_EOI => Err(EINVAL),
            _ => Ok(()),
        }
    }

    /// Returns the C flow handler.
    pub fn as_raw(self) -> bindings::irq_flow_handler_t {
        Some(match self {
            Self::FastEoi => bindings::handle_fasteoi_irq,
            Self::Edge => bindings::handle_edge_irq,
            Self::Level => bindings::handle_level_irq,
            Self::Simple => bindings::handle_simple_irq,
            Self::PercpuDevid => bindings::handle_percpu_devid_irq,
            Self::Bad => bindings::handle_bad_irq,
        })
    }
}

/// Proof that `chained_irq_enter()` ran for a chained (demultiplexing) flow handler.
///
/// Created at the top of a [`ChainedHandler::handle`]; dropping it calls `chained_irq_exit()`,
/// which EOIs (or unmasks) the parent interrupt.
///
/// # Invariants
///
/// `chained_irq_enter()` was called for `desc` and its chip, and `chained_irq_exit()` has not.
pub struct ChainedIrqGuard<'a> {
    desc: &'a IrqDesc,
    chip: *mut bindings::irq_chip,
}

impl<'a> ChainedIrqGuard<'a> {
    /// Calls `chained_irq_enter()` for `desc` (masks and acks the parent unless it is a
    /// fasteoi chip).
    ///
    /// Hard IRQ context, from a chained flow handler.
    pub fn new(desc: &'a IrqDesc) -> Self {
        // SAFETY: `desc` is valid (type invariant of `IrqDesc`).
        let chip = unsafe { bindings::irq_desc_get_chip(desc.as_raw()) };
        // SAFETY: `chip` is the descriptor's own chip, `desc` is valid.
        unsafe { bindings::chained_irq_enter(chip, desc.as_raw()) };
        // INVARIANT: `chained_irq_enter()` was just called.
        Self { desc, chip }
    }

    /// Returns the descriptor of the parent interrupt.
    pub fn desc(&self) -> &IrqDesc {
        self.desc
    }
}

impl Drop for ChainedIrqGuard<'_> {
    fn drop(&mut self) {
        // SAFETY: `chained_irq_enter()` was called with the same arguments (type invariant).
        unsafe { bindings::chained_irq_exit(self.chip, self.desc.as_raw()) };
    }
}

/// A chained (demultiplexing) flow handler, installed on a parent interrupt with
/// [`Mapping::set_chained_handler`](super::Mapping::set_chained_handler).
///
/// # Examples
///
/// A handler that demultiplexes a parent line into the pending lines of a child domain, and its
/// installation:
///
/// ```
/// use kernel::interrupt::LocalInterruptDisabled;
/// use kernel::irq::{ChainedHandler, ChainedIrqGuard, Domain, DomainOps, IrqDesc, Mapping};
/// use kernel::sync::Arc;
///
/// struct Demux<T: DomainOps + 'static> {
///     child: Arc<Domain<'static, T>>,
///     pending: fn(&T) -> u32,
/// }
///
/// impl<T: DomainOps + 'static> ChainedHandler for Demux<T> {
///     fn handle(&self, desc: &IrqDesc, irqs_off: &LocalInterruptDisabled) {
///         // Masks/acks (or, for a fasteoi parent, nothing) now; EOIs or unmasks on drop.
///         let _guard = ChainedIrqGuard::new(desc);
///         let mut pending = (self.pending)(self.child.data());
///         while pending != 0 {
///             let hwirq = pending.trailing_zeros() as usize;
///             pending &= pending - 1;
///             // A line without mapping is `EINVAL`; nothing to do for it here.
///             let _ = self.child.handle_irq(hwirq, irqs_off);
///         }
///     }
/// }
///
/// fn install<T: DomainOps + 'static>(
///     parent_line: &mut Mapping<'_>,
///     child: Arc<Domain<'static, T>>,
///     pending: fn(&T) -> u32,
/// ) -> Result {
///     let demux = KBox::new(Demux { child, pending }, GFP_KERNEL)?;
///     let chained = parent_line.set_chained_handler(demux)?;
///     // ... the parent line now demultiplexes; dropping `chained` uninstalls the handler and
///     // frees it after an RCU grace period.
///     drop(chained);
///     Ok(())
/// }
/// ```
pub trait ChainedHandler: Sync {
    /// Demultiplexes one parent interrupt.
    ///
    /// Hard IRQ context; runs with interrupts disabled (`irqs_off`) and no descriptor lock held.
    /// Create a [`ChainedIrqGuard`] first, then call
    /// [`Domain::handle_irq`](super::Domain::handle_irq) for every pending child.
    fn handle(&self, desc: &IrqDesc, irqs_off: &LocalInterruptDisabled);
}
