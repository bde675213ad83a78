// SPDX-License-Identifier: GPL-2.0

//! Flow handlers of genirq: the choice among the C flows, and flows written in Rust.
//!
//! C header: [`include/linux/irq.h`](srctree/include/linux/irq.h)

use crate::{
    irq::{
        data::LockedIrqData,
        desc::IrqDesc, //
    },
    prelude::*,
    types::NotThreadSafe, //
};

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
    /// [`fasteoi`], `handle_fasteoi_irq()` written in Rust, with the strict flow for interrupts
    /// masked by their active state. The chip must implement `eoi`.
    RustFastEoi,
    /// [`edge`], `handle_edge_irq()` written in Rust. The chip must implement `ack`.
    RustEdge,
    /// [`percpu_devid`], `handle_percpu_devid_irq()` written in Rust; installing it marks the
    /// interrupt per-CPU, as [`FlowHandler::PercpuDevid`] does.
    RustPercpuDevid,
}

impl FlowHandler {
    /// Checks that chip `C` has the callbacks this flow calls unconditionally (`ack` for the edge
    /// flow, `eoi` for the fasteoi flow); `EINVAL` otherwise.
    pub fn check<C: super::Chip>(self) -> Result {
        match self {
            Self::Edge | Self::RustEdge if !C::HAS_ACK => Err(EINVAL),
            // A chip with `EOI_PARENT` ends nothing without a hierarchy.
            Self::FastEoi | Self::RustFastEoi
                if !(C::HAS_EOI || (C::EOI_PARENT && cfg!(CONFIG_IRQ_DOMAIN_HIERARCHY))) =>
            {
                Err(EINVAL)
            }
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
            Self::RustFastEoi => rust_handle_fasteoi_irq,
            Self::RustEdge => rust_handle_edge_irq,
            Self::RustPercpuDevid => rust_handle_percpu_devid_irq,
        })
    }

    /// Whether `handler`, a descriptor's `handle_irq`, is this flow: functions are defined
    /// once, so their addresses identify them.
    pub(crate) fn is(self, handler: bindings::irq_flow_handler_t) -> bool {
        self.as_raw().map(|p| p as usize) == handler.map(|p| p as usize)
    }

    /// Whether the flow is for per-CPU interrupts with per-CPU device ids (installing it needs
    /// `irq_set_percpu_devid()`).
    pub fn is_percpu_devid(self) -> bool {
        matches!(self, Self::PercpuDevid | Self::RustPercpuDevid)
    }
}

/// Flow handler choices and the deferred EOI of the strict flow, under the descriptor lock.
impl LockedIrqData {
    /// Whether a flow deferred the interrupt's EOI to the end of its threads
    /// (`IRQS_EOI_DEFERRED`): it is active until `irq_finalize_oneshot()` EOIs it.
    pub fn is_eoi_deferred(&self) -> bool {
        // SAFETY: `self.as_raw()` is a valid `irq_data` whose descriptor lock is held (type
        // invariant), which `desc->istate` is read under.
        unsafe { bindings::irq_data_eoi_deferred(self.as_raw()) }
    }

    /// Changes the flow handler (`irq_set_handler_locked`), as a chip's `set_type` does when the
    /// new trigger type needs another flow.
    ///
    /// Returns `EINVAL` for the per-CPU devid flows, which need the per-CPU setup of
    /// `irq_set_percpu_devid()` when the interrupt is allocated, and for a flow whose callbacks
    /// the interrupt's top-level chip lacks (`ack` for the edge flow, `eoi` for fasteoi), and
    /// `EBUSY` if the interrupt's handler is not one of [`FlowHandler`]'s flows (a chained
    /// handler, a per-CPU flow).
    ///
    /// A swap between the Rust fasteoi flow, which may leave a ONESHOT interrupt unmasked and
    /// active for its threads, and another flow is safe at any time: the deferred EOI belongs to
    /// the run that deferred it (`IRQS_EOI_DEFERRED`), and the new flow masks as it always does.
    pub fn set_handler(&self, flow: FlowHandler) -> Result {
        if flow.is_percpu_devid() {
            return Err(EINVAL);
        }
        // SAFETY: The `irq_data` is valid and `desc->lock` is held (type invariant): the descriptor's
        // handler and top-level chip are stable.
        let (current, chip) = unsafe {
            let desc = bindings::irq_data_to_desc(self.as_raw());
            ((*desc).handle_irq, (*desc).irq_data.chip)
        };
        let replaceable = [
            FlowHandler::FastEoi,
            FlowHandler::Edge,
            FlowHandler::Level,
            FlowHandler::Simple,
            FlowHandler::Bad,
            FlowHandler::RustFastEoi,
            FlowHandler::RustEdge,
        ]
        .into_iter()
        .any(|f| f.is(current));
        if !replaceable {
            return Err(EBUSY);
        }
        // SAFETY: A non-null `chip` of an allocated interrupt points to a live `irq_chip`.
        let chip = unsafe { chip.as_ref() }.ok_or(EINVAL)?;
        match flow {
            FlowHandler::Edge | FlowHandler::RustEdge if chip.irq_ack.is_none() => {
                return Err(EINVAL)
            }
            FlowHandler::FastEoi | FlowHandler::RustFastEoi if chip.irq_eoi.is_none() => {
                return Err(EINVAL)
            }
            _ => {}
        }
        // SAFETY: The `irq_data` is valid and `desc->lock` is held (type invariant), as
        // `irq_set_handler_locked()` requires; the handler is a genirq flow handler.
        unsafe { bindings::irq_set_handler_locked(self.as_raw(), flow.as_raw()) };
        Ok(())
    }
}

/// The descriptor of an interrupt whose flow handler runs, with its lock (`desc->lock`) held: the
/// steps a flow handler of `kernel/irq/chip.c` takes, as safe methods.
///
/// Only the flow trampolines of this module create one, in the hard IRQ of the interrupt, so no
/// step runs outside a flow or without the lock; [`LockedFlow::handle_event`] drops the lock
/// around the handlers and takes it back, so no handler runs with it held.
///
/// # Invariants
///
/// The current CPU runs the flow handler of `desc` with interrupts disabled and holds
/// `desc->lock`; `desc` has a chip.
pub struct LockedFlow<'a> {
    desc: &'a IrqDesc,
    _not_send: NotThreadSafe,
}

impl<'a> LockedFlow<'a> {
    /// Takes the descriptor lock for the flow handler of `desc` (`raw_spin_lock`).
    ///
    /// # Safety
    ///
    /// Called by the flow handler of `desc`, run by genirq in the hard IRQ of the interrupt
    /// (interrupts disabled), without the lock.
    unsafe fn lock(desc: &'a IrqDesc) -> Self {
        // SAFETY: `desc` is valid; interrupts are disabled (the caller's guarantee).
        unsafe { bindings::irq_flow_lock(desc.as_raw()) };
        // INVARIANT: The lock was just taken in the flow handler; genirq installs flow handlers
        // with a chip (`handle_bad_irq` otherwise).
        Self {
            desc,
            _not_send: NotThreadSafe,
        }
    }

    /// Returns the descriptor.
    pub fn desc(&self) -> &IrqDesc {
        self.desc
    }

    /// Whether the interrupt may be handled now (`irq_can_handle_pm()`): not in progress on
    /// another CPU, not an armed wakeup source (which it then reports to the PM core), not being
    /// polled. It may drop and retake the lock while another CPU finishes the interrupt.
    #[inline]
    pub fn can_handle_pm(&mut self) -> bool {
        // SAFETY: The lock is held in the flow handler (type invariant).
        unsafe { bindings::irq_flow_can_handle_pm(self.desc.as_raw()) }
    }

    /// [`LockedFlow::can_handle_pm`] for an edge flow: an interrupt moved to this CPU while it
    /// is still in progress on its previous target is waited for, not marked pending and
    /// masked, which could keep the previous target's edge loop going for good (genirq's
    /// migration live-lock protection, which `irq_can_handle_pm()` gives `handle_edge_irq()`).
    #[inline]
    pub fn can_handle_pm_edge(&mut self) -> bool {
        // SAFETY: The lock is held in the flow handler (type invariant).
        unsafe { bindings::irq_flow_can_handle_pm_edge(self.desc.as_raw()) }
    }

    /// Whether the interrupt has handlers and is enabled (`irq_can_handle_actions()`); if not,
    /// marks it pending for a resend. Clears the replay and waiting states either way.
    #[inline]
    pub fn can_handle_actions(&mut self) -> bool {
        // SAFETY: The lock is held in the flow handler (type invariant).
        unsafe { bindings::irq_flow_can_handle_actions(self.desc.as_raw()) }
    }

    /// Whether the interrupt must be resent when it arrives while in progress on another CPU
    /// (`irqd_needs_resend_when_in_progress()`).
    #[inline]
    pub fn needs_resend_when_in_progress(&self) -> bool {
        // SAFETY: The lock is held (type invariant).
        unsafe { bindings::irq_flow_needs_resend(self.desc.as_raw()) }
    }

    /// Marks the interrupt pending for a resend (`IRQS_PENDING`).
    #[inline]
    pub fn set_pending(&mut self) {
        // SAFETY: The lock is held (type invariant).
        unsafe { bindings::irq_flow_set_pending(self.desc.as_raw()) }
    }

    /// Whether the interrupt is pending for a resend (`IRQS_PENDING`).
    #[inline]
    pub fn is_pending(&self) -> bool {
        // SAFETY: The lock is held (type invariant).
        unsafe { bindings::irq_flow_is_pending(self.desc.as_raw()) }
    }

    /// Whether the interrupt stays masked until its threads are done (`IRQS_ONESHOT`).
    #[inline]
    pub fn is_oneshot(&self) -> bool {
        // SAFETY: The lock is held (type invariant).
        unsafe { bindings::irq_flow_is_oneshot(self.desc.as_raw()) }
    }

    /// Whether the interrupt is masked by its active state and its EOI may wait for its threads:
    /// marked so by its domain (`IRQD_MASKED_BY_ACTIVE`), every level above that domain only
    /// forwards the EOI (`irq_chip_eoi_parent()`: a child level's own `irq_eoi` may do work that
    /// must not wait for the threads), not forwarded to a vCPU, and its chip has `irq_eoi`.
    #[inline]
    pub fn masked_by_active(&self) -> bool {
        // SAFETY: The lock is held (type invariant).
        unsafe { bindings::irq_flow_masked_by_active(self.desc.as_raw()) }
    }

    /// Whether a thread of the interrupt was woken and has not finished
    /// (`desc->threads_oneshot`).
    #[inline]
    pub fn threads_pending(&self) -> bool {
        // SAFETY: The lock is held (type invariant).
        unsafe { bindings::irq_flow_threads_pending(self.desc.as_raw()) }
    }

    /// Counts the interrupt on this CPU and in the descriptor's total
    /// (`kstat_incr_irqs_this_cpu()`), the `/proc/interrupts` count.
    #[inline]
    pub fn kstat_incr(&mut self) {
        // SAFETY: The lock is held (type invariant).
        unsafe { bindings::irq_flow_kstat_incr(self.desc.as_raw()) }
    }

    /// Masks the interrupt unless it is masked (`mask_irq()`).
    #[inline]
    pub fn mask(&mut self) {
        // SAFETY: The lock is held (type invariant).
        unsafe { bindings::irq_flow_mask(self.desc.as_raw()) }
    }

    /// Unmasks the interrupt if it is masked (`unmask_irq()`).
    #[inline]
    pub fn unmask(&mut self) {
        // SAFETY: The lock is held (type invariant).
        unsafe { bindings::irq_flow_unmask(self.desc.as_raw()) }
    }

    /// Masks and acks the interrupt (`mask_ack_irq()`): the chip's `irq_mask_ack`, or its mask
    /// then its `irq_ack` if it has one.
    #[inline]
    pub fn mask_ack(&mut self) {
        // SAFETY: The lock is held (type invariant).
        unsafe { bindings::irq_flow_mask_ack(self.desc.as_raw()) }
    }

    /// Calls the chip's `irq_ack`, if it has one (the edge flow's chips do: the Rust domains
    /// check it, [`FlowHandler::check`]).
    #[inline]
    pub fn ack(&mut self) {
        // SAFETY: The lock is held (type invariant).
        unsafe { bindings::irq_flow_ack_if_any(self.desc.as_raw()) }
    }

    /// Whether the interrupt has a handler (`desc->action`).
    #[inline]
    pub fn has_action(&self) -> bool {
        // SAFETY: The lock is held (type invariant): actions are added and removed under it.
        unsafe { bindings::irq_flow_has_action(self.desc.as_raw()) }
    }

    /// Whether the interrupt is disabled (`irqd_irq_disabled()`).
    #[inline]
    pub fn is_disabled(&self) -> bool {
        // SAFETY: The lock is held (type invariant).
        unsafe { bindings::irq_flow_is_disabled(self.desc.as_raw()) }
    }

    /// Whether the interrupt is masked (`irqd_irq_masked()`).
    #[inline]
    pub fn is_masked(&self) -> bool {
        // SAFETY: The lock is held (type invariant).
        unsafe { bindings::irq_flow_is_masked(self.desc.as_raw()) }
    }

    /// Calls the top-level chip's `irq_eoi`; under a chip without one (a broken hierarchy:
    /// C's flows would call through NULL), the `irq_eoi` of the nearest level below that has
    /// one, with a warning once.
    #[inline]
    pub fn eoi(&mut self) {
        // SAFETY: The lock is held (type invariant).
        unsafe { bindings::irq_flow_eoi(self.desc.as_raw()) }
    }

    /// EOIs the interrupt unless the chip EOIs only handled ones (`cond_eoi_irq()`).
    #[inline]
    pub fn cond_eoi(&mut self) {
        // SAFETY: The lock is held (type invariant).
        unsafe { bindings::irq_flow_cond_eoi(self.desc.as_raw()) }
    }

    /// EOIs the interrupt, and unmasks a ONESHOT one whose thread was not woken
    /// (`cond_unmask_eoi_irq()`).
    #[inline]
    pub fn cond_unmask_eoi(&mut self) {
        // SAFETY: The lock is held (type invariant).
        unsafe { bindings::irq_flow_cond_unmask_eoi(self.desc.as_raw()) }
    }

    /// Leaves the EOI to the end of the interrupt's last thread (`IRQS_EOI_DEFERRED`) if a
    /// thread is [pending](Self::threads_pending): `irq_finalize_oneshot()` calls `irq_eoi`
    /// then, exactly once, also if the interrupt was disabled or freed meanwhile. Otherwise it
    /// EOIs now.
    ///
    /// For a ONESHOT interrupt the flow left unmasked because it was
    /// [`masked_by_active`](Self::masked_by_active) when the flow decided, under this lock
    /// hold: not decided again here, after the lock was dropped for the handlers, so that a
    /// change meanwhile (`irq_set_vcpu_affinity()`) cannot leave the interrupt unmasked and EOId
    /// while its thread runs.
    #[inline]
    pub fn defer_eoi_to_threads(&mut self) {
        if self.threads_pending() {
            // SAFETY: The lock is held (type invariant).
            unsafe { bindings::irq_flow_defer_eoi(self.desc.as_raw()) }
        } else {
            self.eoi();
        }
    }

    /// Runs the interrupt's handlers (`handle_irq_event()`): marks it in progress, drops the lock
    /// while the hard handlers run and wake their threads, takes it back.
    #[inline]
    pub fn handle_event(&mut self) {
        // SAFETY: The lock is held, in the flow handler (type invariant); the C function
        // returns with it held again.
        unsafe { bindings::irq_flow_handle_event(self.desc.as_raw()) }
    }

    /// Resends the interrupt if it is pending (`check_irq_resend()`).
    #[inline]
    pub fn check_resend(&mut self) {
        // SAFETY: The lock is held (type invariant).
        unsafe { bindings::irq_flow_check_resend(self.desc.as_raw()) }
    }
}

impl Drop for LockedFlow<'_> {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: The lock is held (type invariant).
        unsafe { bindings::irq_flow_unlock(self.desc.as_raw()) }
    }
}

/// The fasteoi flow (`handle_fasteoi_irq()`), in Rust, with the strict flow: for transparent
/// controllers that need only an EOI after the handlers.
///
/// As C: an interrupt that cannot be handled now is EOId (marked pending if it needs a resend);
/// one without handlers or disabled is masked, marked pending and EOId; otherwise it is counted,
/// a ONESHOT one masked, its handlers run, and it is EOId (and unmasked if no thread was woken);
/// a pending one is resent.
///
/// Strict flow: a ONESHOT interrupt that is [masked by its active
/// state](LockedFlow::masked_by_active) is neither masked nor unmasked; its EOI (for a GIC in
/// EOImode=1 the deactivate, `ICC_DIR_EL1`) comes after its last thread if one was woken
/// ([`LockedFlow::defer_eoi_to_threads`]), at once otherwise. Between the priority drop and the
/// deactivate its active state keeps it from being signalled again, so the mask and unmask were
/// pure cost. Interrupts that are not ONESHOT, and those without the state bit, take the C path.
///
/// Hard IRQ context, the descriptor lock held ([`LockedFlow`]).
///
/// C source: [`kernel/irq/chip.c`](srctree/kernel/irq/chip.c).
pub fn fasteoi(flow: &mut LockedFlow<'_>) {
    if !flow.can_handle_pm() {
        if flow.needs_resend_when_in_progress() {
            flow.set_pending();
        }
        flow.cond_eoi();
        return;
    }
    if !flow.can_handle_actions() {
        flow.mask();
        flow.cond_eoi();
        return;
    }
    flow.kstat_incr();
    let strict = flow.is_oneshot() && flow.masked_by_active();
    if flow.is_oneshot() && !strict {
        flow.mask();
    }
    flow.handle_event();
    if strict {
        flow.defer_eoi_to_threads();
    } else {
        flow.cond_unmask_eoi();
    }
    if flow.is_pending() {
        flow.check_resend();
    }
}

/// The edge flow (`handle_edge_irq()`), in Rust: for interrupts that latch an edge, which the
/// `ack` clears, so that one arriving while the handlers run is seen again.
///
/// As C: an interrupt that cannot be handled now (in progress on another CPU, no handlers,
/// disabled) is marked pending, masked and acked; otherwise it is counted and acked, and its
/// handlers run, again as long as another edge arrived meanwhile (pending) and it is not
/// disabled, unmasking it first if a previous edge masked it; an interrupt whose handlers were
/// freed meanwhile is masked.
///
/// Hard IRQ context, the descriptor lock held ([`LockedFlow`]).
///
/// C source: [`kernel/irq/chip.c`](srctree/kernel/irq/chip.c).
pub fn edge(flow: &mut LockedFlow<'_>) {
    if !flow.can_handle_pm_edge() || !flow.can_handle_actions() {
        flow.set_pending();
        flow.mask_ack();
        return;
    }
    flow.kstat_incr();
    flow.ack();
    loop {
        if !flow.has_action() {
            flow.mask();
            return;
        }
        // An edge that arrived while the handlers ran may have masked it (above, on another
        // CPU): unmask unless it was disabled meanwhile.
        if flow.is_pending() && !flow.is_disabled() && flow.is_masked() {
            flow.unmask();
        }
        flow.handle_event();
        if !flow.is_pending() || flow.is_disabled() {
            return;
        }
    }
}

/// The descriptor of a per-CPU interrupt whose flow handler runs on this CPU: per-CPU flows take
/// no lock (per-CPU interrupts are not serialized).
///
/// # Invariants
///
/// The current CPU runs the per-CPU flow handler of `desc`, with interrupts disabled; `desc` has
/// a chip.
pub struct PercpuFlow<'a> {
    desc: &'a IrqDesc,
    _not_send: NotThreadSafe,
}

impl PercpuFlow<'_> {
    /// Counts the interrupt on this CPU only (`__kstat_incr_irqs_this_cpu()`: per-CPU interrupts
    /// do not touch the descriptor's total).
    #[inline]
    pub fn kstat_incr(&mut self) {
        // SAFETY: In the per-CPU flow of `desc` (type invariant).
        unsafe { bindings::irq_flow_kstat_incr_percpu(self.desc.as_raw()) }
    }

    /// Calls the chip's `irq_ack`, if it has one.
    #[inline]
    pub fn ack(&mut self) {
        // SAFETY: In the per-CPU flow of `desc` (type invariant).
        unsafe { bindings::irq_flow_ack_if_any(self.desc.as_raw()) }
    }

    /// Calls the chip's `irq_eoi`, if it has one (as `handle_percpu_devid_irq()` does).
    #[inline]
    pub fn eoi(&mut self) {
        // SAFETY: In the per-CPU flow of `desc` (type invariant).
        unsafe { bindings::irq_flow_eoi_if_any(self.desc.as_raw()) }
    }

    /// Runs the handler of this CPU's action with its per-CPU device id; returns `false` if no
    /// action is for this CPU.
    #[inline]
    pub fn handle_action(&mut self) -> bool {
        // SAFETY: In the per-CPU flow of `desc` (type invariant): the action list is stable
        // while the interrupt runs (`free_percpu_irq()` synchronizes with it).
        unsafe { bindings::irq_flow_percpu_devid_action(self.desc.as_raw()) }
    }

    /// Reports a spurious per-CPU interrupt, once, and disables it on this CPU if it was enabled.
    #[inline]
    pub fn spurious(&mut self) {
        // SAFETY: In the per-CPU flow of `desc` (type invariant).
        unsafe { bindings::irq_flow_percpu_spurious(self.desc.as_raw()) }
    }

    /// Feeds the interrupt to the entropy pool unless in NMI (`add_interrupt_randomness()`).
    #[inline]
    pub fn add_randomness(&mut self) {
        // SAFETY: In the per-CPU flow of `desc` (type invariant).
        unsafe { bindings::irq_flow_percpu_randomness(self.desc.as_raw()) }
    }
}

/// The per-CPU flow with per-CPU device ids (`handle_percpu_devid_irq()`), in Rust: counted on
/// this CPU, acked if the chip acks, this CPU's action run (a spurious interrupt reported and
/// disabled on this CPU), randomness, EOId if the chip EOIs.
///
/// Hard IRQ context (or NMI), no lock.
///
/// C source: [`kernel/irq/chip.c`](srctree/kernel/irq/chip.c).
pub fn percpu_devid(flow: &mut PercpuFlow<'_>) {
    flow.kstat_incr();
    flow.ack();
    if !flow.handle_action() {
        flow.spurious();
    }
    flow.add_randomness();
    flow.eoi();
}

/// The flow handler of [`FlowHandler::RustFastEoi`].
///
/// # Safety
///
/// Called by genirq as the flow handler of `desc`, in its hard IRQ (`desc->handle_irq`).
#[no_mangle]
unsafe extern "C" fn rust_handle_fasteoi_irq(desc: *mut bindings::irq_desc) {
    // SAFETY: genirq passes the live descriptor of the interrupt it handles.
    let desc = unsafe { IrqDesc::from_raw(desc) };
    // SAFETY: This is the flow handler of `desc`, in its hard IRQ, without the lock.
    let mut flow = unsafe { LockedFlow::lock(desc) };
    fasteoi(&mut flow);
}

/// The flow handler of [`FlowHandler::RustEdge`].
///
/// # Safety
///
/// Called by genirq as the flow handler of `desc`, in its hard IRQ (`desc->handle_irq`).
#[no_mangle]
unsafe extern "C" fn rust_handle_edge_irq(desc: *mut bindings::irq_desc) {
    // SAFETY: genirq passes the live descriptor of the interrupt it handles.
    let desc = unsafe { IrqDesc::from_raw(desc) };
    // SAFETY: This is the flow handler of `desc`, in its hard IRQ, without the lock.
    let mut flow = unsafe { LockedFlow::lock(desc) };
    edge(&mut flow);
}

/// The flow handler of [`FlowHandler::RustPercpuDevid`].
///
/// # Safety
///
/// Called by genirq as the flow handler of `desc`, in its hard IRQ (`desc->handle_irq`).
#[no_mangle]
unsafe extern "C" fn rust_handle_percpu_devid_irq(desc: *mut bindings::irq_desc) {
    // SAFETY: genirq passes the live descriptor of the interrupt it handles.
    let desc = unsafe { IrqDesc::from_raw(desc) };
    // INVARIANT: genirq runs this flow handler of `desc` with interrupts disabled, and installs
    // flow handlers with a chip.
    let mut flow = PercpuFlow {
        desc,
        _not_send: NotThreadSafe,
    };
    percpu_devid(&mut flow);
}
