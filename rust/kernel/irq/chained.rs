// SPDX-License-Identifier: GPL-2.0

//! Chained (demultiplexing) flow handlers: the handler of a parent interrupt that runs the
//! interrupts of a child domain, between `chained_irq_enter()` and `chained_irq_exit()`.
//!
//! C header: [`include/linux/irqchip/chained_irq.h`](srctree/include/linux/irqchip/chained_irq.h)

use crate::{
    interrupt::LocalInterruptDisabled,
    irq::desc::IrqDesc,
    prelude::*, //
};

/// Proof that `chained_irq_enter()` ran for a chained (demultiplexing) flow handler.
///
/// The chained flow creates it before it calls [`ChainedHandler::handle`] and drops it after:
/// `chained_irq_exit()` then EOIs (or unmasks) the parent interrupt. Handlers only borrow it, so
/// neither call can be skipped, repeated or made outside the flow.
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
    /// # Safety
    ///
    /// Only called by the chained flow installed on `desc`, in its hard IRQ, once per run; its
    /// chip has `irq_eoi`, or `irq_mask` and `irq_unmask` (checked at installation).
    pub(crate) unsafe fn new(desc: &'a IrqDesc) -> Self {
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
/// use kernel::irq::{ChainedHandler, ChainedIrqGuard, Domain, DomainOps, Mapping};
/// use kernel::sync::Arc;
///
/// struct Demux<T: DomainOps + 'static> {
///     child: Arc<Domain<'static, T>>,
///     pending: fn(&T) -> u32,
/// }
///
/// #[vtable]
/// impl<T: DomainOps + 'static> ChainedHandler for Demux<T> {
///     fn handle(&self, _parent: &ChainedIrqGuard<'_>, irqs_off: &LocalInterruptDisabled) {
///         // The parent is masked and acked (or, for a fasteoi parent, nothing), and is EOId or
///         // unmasked once this returns.
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
#[vtable]
pub trait ChainedHandler: Sync {
    /// Demultiplexes one run of the parent interrupt, `parent` (its descriptor is
    /// [`ChainedIrqGuard::desc`]), between `chained_irq_enter()` and `chained_irq_exit()`: call
    /// [`Domain::handle_irq`](super::Domain::handle_irq) for every pending child.
    ///
    /// Hard IRQ context; runs with interrupts disabled (`irqs_off`) and no descriptor lock held.
    fn handle(&self, parent: &ChainedIrqGuard<'_>, irqs_off: &LocalInterruptDisabled);
}
