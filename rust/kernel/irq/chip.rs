// SPDX-License-Identifier: GPL-2.0

//! Interrupt controller chips: the provider side of genirq.
//!
//! An interrupt controller driver describes its hardware operations (mask, unmask, ack, EOI, ...)
//! by implementing [`Chip`]. [`ChipVtable`] turns an implementation into a constant,
//! `IRQCHIP_IMMUTABLE` `struct irq_chip` that a `Domain` installs on the
//! interrupts it maps.
//!
//! C header: [`include/linux/irq.h`](srctree/include/linux/irq.h)

use core::{
    marker::PhantomData,
    ops::Deref, //
};

use crate::{
    cpu::CpuId,
    cpumask::Cpumask,
    error::{
        from_result,
        VTABLE_DEFAULT_ERROR, //
    },
    impl_flags,
    irq::data::{
        IrqData,
        LockedIrqData,
        TriggerType, //
    },
    prelude::*,
    sync::atomic::{
        Atomic,
        Relaxed, //
    },
    types::NotThreadSafe, //
};

impl_flags!(
    /// Flags of an interrupt chip (`IRQCHIP_*`), a set of [`ChipFlag`]s.
    ///
    /// [`ChipVtable`] always adds [`ChipFlag::Immutable`]: Rust chips are constant tables that
    /// genirq never modifies.
    ///
    /// # Examples
    ///
    /// ```
    /// use kernel::irq::{ChipFlag, ChipFlags};
    ///
    /// const FLAGS: ChipFlags = ChipFlags::of(ChipFlag::SetTypeMasked).with(ChipFlag::SkipSetWake);
    /// assert!(FLAGS.contains(ChipFlag::SkipSetWake));
    /// assert!(!FLAGS.contains(ChipFlag::Immutable));
    /// assert_eq!(FLAGS, ChipFlag::SetTypeMasked | ChipFlag::SkipSetWake);
    /// ```
    #[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
    pub struct ChipFlags(u32);

    /// One flag of an interrupt chip (`IRQCHIP_*`).
    #[derive(Clone, Copy, PartialEq, Eq, Debug)]
    pub enum ChipFlag {
        /// Mask the interrupt before calling `set_type` (`IRQCHIP_SET_TYPE_MASKED`).
        SetTypeMasked = bindings::IRQCHIP_SET_TYPE_MASKED,
        /// Only issue `eoi` when the interrupt was handled (`IRQCHIP_EOI_IF_HANDLED`).
        EoiIfHandled = bindings::IRQCHIP_EOI_IF_HANDLED,
        /// Mask non-wake interrupts in the suspend path (`IRQCHIP_MASK_ON_SUSPEND`).
        MaskOnSuspend = bindings::IRQCHIP_MASK_ON_SUSPEND,
        /// Call the CPU online/offline callbacks even for disabled interrupts
        /// (`IRQCHIP_ONOFFLINE_ENABLED`).
        OnofflineEnabled = bindings::IRQCHIP_ONOFFLINE_ENABLED,
        /// The chip does not need `set_wake` (`IRQCHIP_SKIP_SET_WAKE`).
        SkipSetWake = bindings::IRQCHIP_SKIP_SET_WAKE,
        /// One-shot does not require masking with this chip (`IRQCHIP_ONESHOT_SAFE`).
        OneshotSafe = bindings::IRQCHIP_ONESHOT_SAFE,
        /// The chip requires `eoi` on unmask in threaded mode (`IRQCHIP_EOI_THREADED`).
        EoiThreaded = bindings::IRQCHIP_EOI_THREADED,
        /// The chip can deliver NMIs (`IRQCHIP_SUPPORTS_NMI`).
        SupportsNmi = bindings::IRQCHIP_SUPPORTS_NMI,
        /// Invoke `enable` on wake-up interrupts in the suspend path
        /// (`IRQCHIP_ENABLE_WAKEUP_ON_SUSPEND`).
        EnableWakeupOnSuspend = bindings::IRQCHIP_ENABLE_WAKEUP_ON_SUSPEND,
        /// Set the affinity before the interrupt is started up (`IRQCHIP_AFFINITY_PRE_STARTUP`).
        AffinityPreStartup = bindings::IRQCHIP_AFFINITY_PRE_STARTUP,
        /// The chip is immutable (`IRQCHIP_IMMUTABLE`).
        Immutable = bindings::IRQCHIP_IMMUTABLE,
        /// Affinity changes are deferred to the next interrupt, applied by the `ack` of the
        /// interrupt's hierarchy ([`AckCtx::move_irq`]) (`IRQCHIP_MOVE_DEFERRED`). Read on the
        /// top-level chip; a chip with it must implement `mask` and `unmask` (checked at build
        /// time), which the move calls.
        MoveDeferred = bindings::IRQCHIP_MOVE_DEFERRED,
    }
);

impl ChipFlags {
    /// The set of the single flag `flag`, usable in constant expressions.
    pub const fn of(flag: ChipFlag) -> Self {
        Self(flag as u32)
    }

    /// Returns `self` with `flag` added, usable in constant expressions.
    pub const fn with(self, flag: ChipFlag) -> Self {
        Self(self.0 | flag as u32)
    }

    /// Returns the raw `IRQCHIP_*` value of `struct irq_chip`'s `flags`.
    pub const fn as_raw(self) -> c_ulong {
        self.0 as c_ulong
    }
}

/// The result of a successful [`Chip::set_affinity`] (`IRQ_SET_MASK_OK*`).
#[repr(u32)]
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum SetAffinity {
    /// The affinity was set; the core copies the mask into the descriptor.
    Ok = bindings::IRQ_SET_MASK_OK,
    /// The affinity was set; the chip already updated the descriptor's mask.
    NoCopy = bindings::IRQ_SET_MASK_OK_NOCOPY,
    /// The affinity was set and nothing further down the hierarchy needs updating.
    Done = bindings::IRQ_SET_MASK_OK_DONE,
}

/// Interrupt line state a chip can read or write (`enum irqchip_irq_state`).
///
/// The C enum is a parameter of the `irq_get_irqchip_state`/`irq_set_irqchip_state` callbacks,
/// which genirq calls indirectly: bindgen makes it a newtype carrying the C type's kCFI encoding
/// (`rust/bindgen_parameters`), so that the trampolines' kCFI type hash is the C prototype's.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ChipState {
    /// The interrupt is pending.
    Pending,
    /// The interrupt is active (in service).
    Active,
    /// The interrupt is masked.
    Masked,
    /// The interrupt line is asserted.
    LineLevel,
}

impl ChipState {
    /// Returns the raw `IRQCHIP_STATE_*` value.
    pub const fn as_raw(self) -> bindings::irqchip_irq_state {
        match self {
            Self::Pending => bindings::irqchip_irq_state::IRQCHIP_STATE_PENDING,
            Self::Active => bindings::irqchip_irq_state::IRQCHIP_STATE_ACTIVE,
            Self::Masked => bindings::irqchip_irq_state::IRQCHIP_STATE_MASKED,
            Self::LineLevel => bindings::irqchip_irq_state::IRQCHIP_STATE_LINE_LEVEL,
        }
    }
}

impl TryFrom<bindings::irqchip_irq_state> for ChipState {
    type Error = Error;

    /// Converts a raw `IRQCHIP_STATE_*` value; any other value is `EINVAL`.
    fn try_from(raw: bindings::irqchip_irq_state) -> Result<Self> {
        Ok(match raw {
            bindings::irqchip_irq_state::IRQCHIP_STATE_PENDING => Self::Pending,
            bindings::irqchip_irq_state::IRQCHIP_STATE_ACTIVE => Self::Active,
            bindings::irqchip_irq_state::IRQCHIP_STATE_MASKED => Self::Masked,
            bindings::irqchip_irq_state::IRQCHIP_STATE_LINE_LEVEL => Self::LineLevel,
            _ => return Err(EINVAL),
        })
    }
}

/// A message that a device writes to signal an MSI (`struct msi_msg`).
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
pub struct MsiMsg {
    /// Low 32 bits of the message address.
    pub address_lo: u32,
    /// High 32 bits of the message address.
    pub address_hi: u32,
    /// The message data.
    pub data: u32,
}

/// The vCPU an interrupt is to be posted to, as the hypervisor passes it to
/// `irq_set_vcpu_affinity()` (for VT-d, a `struct intel_iommu_pi_data`), or none to stop posting.
///
/// Only genirq creates it; a chip passes it on unchanged to the code that understands it.
pub struct VcpuInfo(*mut c_void);

impl VcpuInfo {
    /// Returns the raw pointer, null meaning "no vCPU".
    pub fn as_raw(&self) -> *mut c_void {
        self.0
    }
}

/// The interrupt that [`Chip::ack`] acknowledges: what genirq's `irq_ack` call gives the chip.
///
/// Only the `irq_ack` trampoline of [`ChipVtable`] creates one, on its stack, and lends it to
/// [`Chip::ack`] for the call; it is neither `Send` nor `Sync`. It dereferences to [`IrqData`],
/// not to [`LockedIrqData`]: genirq's flows (`handle_edge_irq()`, `handle_level_irq()`) call
/// `irq_ack` with the descriptor lock held, but `chained_irq_enter()`, the per-CPU flows and
/// drivers calling chip callbacks from their handlers do not, and nothing tells the callee which.
///
/// Applying a deferred affinity change ([`AckCtx::move_irq`]) needs the lock, so it is `unsafe`:
/// the chip states that only flows holding the lock ack its interrupts.
///
/// # Invariants
///
/// `self.irqd` is the `irq_data` that genirq passed to the `irq_ack` of a chip built by
/// [`ChipVtable`], and that call has not returned: hard IRQ context (or the context of the code
/// that called the chip's `irq_ack`), interrupts disabled.
pub struct AckCtx<'a> {
    irqd: &'a IrqData,
    _not_send: NotThreadSafe,
}

impl AckCtx<'_> {
    /// Applies a pending deferred affinity change of the interrupt (`irq_move_irq()`), as the
    /// `ack` of an interrupt whose top-level chip is [`ChipFlag::MoveDeferred`] does (the x86
    /// chips: the move must run in the interrupt, on a CPU it still targets, for the vector
    /// cleanup). Without a pending change it only tests the bit.
    ///
    /// # Safety
    ///
    /// This ack is the `irq_ack` call of a genirq flow handler that holds the interrupt's
    /// descriptor lock (`handle_edge_irq()`, `handle_level_irq()`'s `mask_ack_irq()`): the
    /// chip's interrupts have only such flows, and nothing else calls its `irq_ack` (no
    /// chained handler on them, whose `chained_irq_enter()` acks without the lock; no per-CPU
    /// flow; no driver calling it). `irq_move_masked_irq()` reprograms the affinity under the
    /// lock. With lockdep, a call without the lock is reported.
    pub unsafe fn move_irq(&self) {
        // SAFETY: `self.irqd` is the `irq_data` of this `irq_ack` call, in the interrupt's hard
        // IRQ (type invariant); the caller guarantees that the flow calling it holds the lock.
        unsafe { self.irqd.move_irq_locked() }
    }
}

impl Deref for AckCtx<'_> {
    type Target = IrqData;

    fn deref(&self) -> &IrqData {
        self.irqd
    }
}

/// The interrupt whose affinity [`Chip::set_affinity`] sets, its descriptor lock held: what
/// genirq's `irq_set_affinity` call gives the chip.
///
/// Only the `irq_set_affinity` trampoline of [`ChipVtable`] creates one, on its stack, and lends
/// it to [`Chip::set_affinity`] for the call; it is neither `Send` nor `Sync`. It dereferences to
/// [`LockedIrqData`] (genirq calls `irq_set_affinity` with the lock held: `irq_do_set_affinity()`,
/// `irq_chip_set_affinity_parent()`) and adds what only this callback may do:
/// [`update_effective_affinity`](Self::update_effective_affinity).
///
/// # Invariants
///
/// `self.irqd` is the `irq_data` that genirq passed to the `irq_set_affinity` of a chip built by
/// [`ChipVtable`], and that call, made with the descriptor lock held, has not returned.
pub struct SetAffinityCtx<'a> {
    irqd: &'a LockedIrqData,
    _not_send: NotThreadSafe,
}

impl SetAffinityCtx<'_> {
    /// Sets the effective affinity (`irq_data_update_effective_affinity()`): the CPUs the
    /// hardware now delivers the interrupt to, once this `set_affinity` programmed it for `mask`.
    ///
    /// Only here: `irq_migrate_all_off_this_cpu()` trusts the effective mask when a CPU goes
    /// offline (an interrupt whose mask misses the CPU it really targets is not moved, and lost),
    /// and `/proc/irq/*/effective_affinity` reports it.
    pub fn update_effective_affinity(&self, mask: &Cpumask) {
        // SAFETY: `self.irqd` is valid and its descriptor lock is held, in the interrupt's
        // `irq_set_affinity` call (type invariant); `mask` is a valid cpumask.
        unsafe { bindings::irq_data_update_effective_affinity(self.irqd.as_raw(), mask.as_raw()) }
    }
}

impl Deref for SetAffinityCtx<'_> {
    type Target = LockedIrqData;

    fn deref(&self) -> &LockedIrqData {
        self.irqd
    }
}

/// The interrupt that [`Chip::set_vcpu_affinity`] posts to a vCPU or takes back, its descriptor
/// lock held: what genirq's `irq_set_vcpu_affinity` call gives the chip.
///
/// Only the `irq_set_vcpu_affinity` trampoline of [`ChipVtable`] creates one, on its stack, and
/// lends it to [`Chip::set_vcpu_affinity`] for the call; it is neither `Send` nor `Sync`. It
/// dereferences to [`LockedIrqData`] (`irq_set_vcpu_affinity()` takes the lock) and adds what only
/// this callback may do: [`set_forwarded_to_vcpu`](Self::set_forwarded_to_vcpu).
///
/// # Invariants
///
/// `self.irqd` is the `irq_data` that genirq passed to the `irq_set_vcpu_affinity` of a chip
/// built by [`ChipVtable`], and that call, made with the descriptor lock held, has not returned.
pub struct SetVcpuAffinityCtx<'a> {
    irqd: &'a LockedIrqData,
    _not_send: NotThreadSafe,
}

impl SetVcpuAffinityCtx<'_> {
    /// Marks the interrupt as forwarded to a vCPU, or not (`irqd_set_forwarded_to_vcpu()`,
    /// `irqd_clr_forwarded_to_vcpu()`), as the chip that just handed it to the vCPU (or took it
    /// back) knows it is.
    ///
    /// Only here: a forwarded interrupt is deactivated by the guest, so the host's EOI skips the
    /// deactivation (`gic_eoimode1_eoi_irq()`); a flag set for an interrupt the host still
    /// handles leaves it active for good.
    pub fn set_forwarded_to_vcpu(&self, forwarded: bool) {
        // SAFETY: `self.irqd` is valid; the flag is one bit of its state word, which genirq and
        // the flows update under the descriptor lock, held in this `irq_set_vcpu_affinity`
        // call (type invariant).
        unsafe {
            if forwarded {
                bindings::irqd_set_forwarded_to_vcpu(self.irqd.as_raw())
            } else {
                bindings::irqd_clr_forwarded_to_vcpu(self.irqd.as_raw())
            }
        }
    }
}

impl Deref for SetVcpuAffinityCtx<'_> {
    type Target = LockedIrqData;

    fn deref(&self) -> &LockedIrqData {
        self.irqd
    }
}

/// The hardware operations of an interrupt controller (`struct irq_chip`).
///
/// Implement it on a marker type; [`ChipVtable`] builds the constant `struct irq_chip`. Each
/// callback receives the chip data, [`Chip::Data`], which the `Domain` that
/// installed the chip owns and which outlives every interrupt the chip is installed on, and the
/// [`IrqData`] of the interrupt (or a context type that dereferences to it).
///
/// A callback that finds no chip data (an interrupt whose level `irq_domain_reset_irq_data()`
/// tore down while a flow that had already loaded the chip ran on) cannot call the
/// implementation: its trampoline warns once (`pr_warn_once`) and does what keeps the line from
/// staying active or firing: `eoi` is forwarded to the parent level (`irq_chip_eoi_parent()`),
/// `mask`, `mask_ack`, `disable` and `shutdown` mask the parent level, if there is a parent
/// whose chip has the callback; `ack` is not forwarded (a parent's ack is no substitute: x86's
/// vector domain's EOIs the local APIC, which a posted MSI's ack must not); the others do
/// nothing or return `EINVAL` (`startup` 0, `retrigger` not resent, `compose_msi_msg` leaves the
/// message unwritten).
///
/// # Context
///
/// The callbacks run with interrupts disabled, in hard IRQ context or in the thread that changes
/// the line's state, mostly with the descriptor's raw spinlock (`desc->lock`) held; the
/// exceptions are `ipi_send_*`, `compose_msi_msg` when MSI descriptors are set up, the
/// `mask`/`ack`/`unmask`/`eoi` calls of `chained_irq_enter()`/`chained_irq_exit()` on a parent
/// interrupt and of the per-CPU flows. They must not sleep or allocate with `GFP_KERNEL`.
///
/// The context is in the types. `set_type`, which genirq always calls with the lock held,
/// receives a [`LockedIrqData`], whose methods are what any task may do under the lock.
/// `set_affinity` and `set_vcpu_affinity`, also called with the lock held, receive a
/// [`SetAffinityCtx`] and a [`SetVcpuAffinityCtx`], which dereference to it and add what only
/// that callback may do (set the effective affinity, mark the interrupt forwarded to a vCPU).
/// `ack` receives an [`AckCtx`], which dereferences to [`IrqData`] only: flow handlers call it
/// with the lock held, but `chained_irq_enter()`, the per-CPU flows and drivers calling chip
/// callbacks from their handlers (after `handle_irq_event()` dropped the lock) do not, and
/// nothing tells the callee which; applying a deferred move there is `unsafe`
/// ([`AckCtx::move_irq`]). `mask`, `unmask` and `eoi` receive an [`IrqData`], for the same
/// reason. Only the trampolines of [`ChipVtable`] create the context types, for one call.
///
/// C code that calls a Rust chip's callbacks directly, a C child level forwarding to its Rust
/// parent, must do so as genirq does: `set_type`, `set_affinity` and `set_vcpu_affinity` with
/// the descriptor lock held (or before the interrupt is visible, while its domain allocates it).
///
/// C header: [`include/linux/irq.h`](srctree/include/linux/irq.h) (`struct irq_chip`).
///
/// # Examples
///
/// A chip whose lines can be routed to one CPU each and report their pending state; the
/// `Domain` example shows a chip installed and used.
///
/// ```
/// use kernel::cpumask::Cpumask;
/// use kernel::irq::{
///     Chip, ChipState, IrqData, LockedIrqData, MsiMsg, SetAffinity, SetAffinityCtx, TriggerType,
/// };
/// use kernel::sync::atomic::{Atomic, Relaxed};
///
/// struct Lines {
///     pending: [Atomic<u32>; 4],
///     level: [Atomic<u32>; 4],
/// }
///
/// struct LinesChip;
///
/// #[vtable]
/// impl Chip for LinesChip {
///     type Data = Lines;
///     const NAME: &'static CStr = c"doc-lines";
///
///     fn eoi(l: &Lines, d: &IrqData) {
///         l.pending[d.hwirq()].store(0, Relaxed);
///     }
///
///     fn set_type(l: &Lines, d: &LockedIrqData, ty: TriggerType) -> Result {
///         // `ty` is already a valid trigger type; this controller has no falling edges.
///         if ty == TriggerType::EdgeFalling || ty == TriggerType::LevelLow {
///             return Err(EINVAL);
///         }
///         l.level[d.hwirq()].store(u32::from(ty.is_level()), Relaxed);
///         Ok(())
///     }
///
///     fn set_affinity(
///         _l: &Lines,
///         d: &SetAffinityCtx<'_>,
///         mask: &Cpumask,
///         _force: bool,
///     ) -> Result<SetAffinity> {
///         if mask.empty() {
///             return Err(EINVAL);
///         }
///         // The hardware delivers to any CPU of the mask; only `set_affinity` may say so.
///         d.update_effective_affinity(mask);
///         Ok(SetAffinity::Ok)
///     }
///
///     fn compose_msi_msg(_l: &Lines, d: &IrqData) -> Result<MsiMsg> {
///         // Lines 0 and 1 can be signalled by a write to the doorbell; the others cannot: an
///         // error, never a made-up message.
///         if d.hwirq() > 1 {
///             return Err(ENXIO);
///         }
///         Ok(MsiMsg {
///             address_lo: 0x1000_0040,
///             address_hi: 0,
///             data: d.hwirq() as u32,
///         })
///     }
///
///     fn get_irqchip_state(l: &Lines, d: &IrqData, which: ChipState) -> Result<bool> {
///         match which {
///             ChipState::Pending => Ok(l.pending[d.hwirq()].load(Relaxed) != 0),
///             ChipState::LineLevel => Ok(l.level[d.hwirq()].load(Relaxed) != 0),
///             _ => Err(EINVAL),
///         }
///     }
/// }
/// ```
#[vtable]
pub trait Chip {
    /// The chip data (`irq_data->chip_data`).
    ///
    /// `'static`: a leaked (`mem::forget`) `Domain` keeps the chip installed
    /// with its data forever.
    type Data: Sync + 'static;

    /// The name shown in `/proc/interrupts` and debugfs.
    const NAME: &'static CStr;

    /// `IRQCHIP_*` flags; [`ChipFlag::Immutable`] is always added.
    const FLAGS: ChipFlags = ChipFlags::empty();

    /// The chip's EOI is its parent level's (`irq_chip_eoi_parent()` as `irq_eoi`): a level of
    /// a hierarchy that has nothing of its own to end, such as a GICv3 ITS above the GIC's CPU
    /// interface. Only for chips without [`Chip::eoi`]; domains install such a chip only on a
    /// level whose parent level, allocated first, has a chip with an EOI (else `EINVAL`), and
    /// the EOI checks the parent again each time.
    const EOI_PARENT: bool = false;

    /// Starts up the interrupt (`irq_startup`); defaults to `enable` in the core.
    ///
    /// Returns a value passed back to the caller of `irq_startup()`, normally 0.
    fn startup(_data: &Self::Data, _irqd: &IrqData) -> u32 {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Shuts down the interrupt (`irq_shutdown`); defaults to `disable` in the core.
    fn shutdown(_data: &Self::Data, _irqd: &IrqData) {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Enables the interrupt (`irq_enable`); defaults to `unmask` in the core.
    fn enable(_data: &Self::Data, _irqd: &IrqData) {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Disables the interrupt (`irq_disable`).
    fn disable(_data: &Self::Data, _irqd: &IrqData) {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Acknowledges the start of a new interrupt (`irq_ack`).
    ///
    /// Hard IRQ context, with the descriptor lock held if a genirq flow calls it, without if
    /// `chained_irq_enter()`, a per-CPU flow or a driver does (see [`AckCtx`]).
    fn ack(_data: &Self::Data, _irqd: &AckCtx<'_>) {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Masks the interrupt source (`irq_mask`).
    fn mask(_data: &Self::Data, _irqd: &IrqData) {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Acknowledges and masks the interrupt source in one operation (`irq_mask_ack`).
    fn mask_ack(_data: &Self::Data, _irqd: &IrqData) {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Unmasks the interrupt source (`irq_unmask`).
    fn unmask(_data: &Self::Data, _irqd: &IrqData) {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Signals the end of interrupt to the controller (`irq_eoi`).
    fn eoi(_data: &Self::Data, _irqd: &IrqData) {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Sets the CPU affinity (`irq_set_affinity`); `force` skips the online-CPU check.
    ///
    /// Descriptor lock held. Once the hardware targets the new CPUs, report them with
    /// [`SetAffinityCtx::update_effective_affinity`] (or return [`SetAffinity::NoCopy`] after
    /// the parent did).
    fn set_affinity(
        _data: &Self::Data,
        _irqd: &SetAffinityCtx<'_>,
        _mask: &Cpumask,
        _force: bool,
    ) -> Result<SetAffinity> {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Resends the interrupt to the CPU (`irq_retrigger`). Returns whether it was resent.
    fn retrigger(_data: &Self::Data, _irqd: &IrqData) -> bool {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Sets the trigger type (`irq_set_type`).
    ///
    /// Descriptor lock held. A raw type that is not a [`TriggerType`] is refused with `EINVAL`
    /// before this is called.
    fn set_type(_data: &Self::Data, _irqd: &LockedIrqData, _ty: TriggerType) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Enables or disables power-management wake-on of the interrupt (`irq_set_wake`).
    fn set_wake(_data: &Self::Data, _irqd: &IrqData, _on: bool) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Reads a state bit of the interrupt (`irq_get_irqchip_state`).
    fn get_irqchip_state(_data: &Self::Data, _irqd: &IrqData, _which: ChipState) -> Result<bool> {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Writes a state bit of the interrupt (`irq_set_irqchip_state`).
    fn set_irqchip_state(
        _data: &Self::Data,
        _irqd: &IrqData,
        _which: ChipState,
        _state: bool,
    ) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Sets or clears the vCPU the interrupt is posted to (`irq_set_vcpu_affinity`).
    ///
    /// Called with the descriptor lock held (`irq_set_vcpu_affinity()` takes it). A chip whose
    /// EOI depends on it marks the interrupt forwarded with
    /// [`SetVcpuAffinityCtx::set_forwarded_to_vcpu`].
    fn set_vcpu_affinity(
        _data: &Self::Data,
        _irqd: &SetVcpuAffinityCtx<'_>,
        _vcpu: VcpuInfo,
    ) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Composes the MSI message of the interrupt (`irq_compose_msi_msg`): returns the message
    /// a device writes to signal it.
    ///
    /// A chip that cannot compose one (the interrupt's target is not set up, the interrupt is
    /// not its own) returns an error, never a placeholder: a device programmed with it would
    /// write to a wrong address. The C callback returns nothing, so the trampoline then leaves
    /// the caller's message unwritten and warns once (`pr_warn_once`), and
    /// `irq_chip_compose_msi_msg()` still returns 0. What the caller sees is its own buffer:
    /// the MSI core (`msi_domain_activate()`, `msi_domain_set_affinity()`) zeroes it before and
    /// writes it to the device anyway, x86's HPET and IOAPIC code compose into an uninitialised
    /// one. A [`Domain`](crate::irq::Domain) therefore has an MSI's message composed at its level
    /// when it activates the interrupt (if this chip is the one genirq composes with), before
    /// the MSI domain above does, and refuses the activation with `EINVAL` if this returned an
    /// error: the device is never programmed. Once activated, keep it infallible (an affinity
    /// change composes again, and an error there leaves the MSI core's buffer).
    ///
    /// Called where the interrupt is activated (`irq_domain_activate_irq()`) and from
    /// `set_affinity` (`msi_domain_set_affinity()`), with interrupts disabled in the latter: it
    /// must not sleep.
    fn compose_msi_msg(_data: &Self::Data, _irqd: &IrqData) -> Result<MsiMsg> {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Sends an IPI to one CPU (`ipi_send_single`).
    fn ipi_send_single(_data: &Self::Data, _irqd: &IrqData, _cpu: CpuId) {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Sends an IPI to the CPUs of a mask (`ipi_send_mask`).
    fn ipi_send_mask(_data: &Self::Data, _irqd: &IrqData, _mask: &Cpumask) {
        build_error!(VTABLE_DEFAULT_ERROR)
    }
}

/// The `irq_eoi` of a chip with [`Chip::EOI_PARENT`]: `irq_chip_eoi_parent()` where the parent
/// level exists and its chip has `irq_eoi`, checked at every call. Domains also refuse such a
/// chip where that is not so when they install it, but the parent level can change afterwards
/// (freed by a safe `alloc`, reset under a running flow at teardown, disconnected by a C
/// parent), and `irq_chip_eoi_parent()` itself would follow a NULL parent or call a NULL EOI.
/// Without a parent EOI it says so once and does nothing.
const fn eoi_parent() -> Option<unsafe extern "C" fn(*mut bindings::irq_data)> {
    /// # Safety
    ///
    /// Only called by genirq as `irq_eoi`, with a valid `irq_data`.
    unsafe extern "C" fn eoi_parent(irqd: *mut bindings::irq_data) {
        #[cfg(CONFIG_IRQ_DOMAIN_HIERARCHY)]
        {
            // SAFETY: Valid for the call (the function's safety requirements).
            let d = unsafe { IrqData::from_raw(irqd) };
            if d.eoi_parent().is_err() {
                crate::pr_warn_once!("irq {}: no parent EOI for an EOI_PARENT chip\n", d.irq());
            }
        }
        #[cfg(not(CONFIG_IRQ_DOMAIN_HIERARCHY))]
        let _ = irqd;
    }
    Some(eoi_parent)
}

/// The constant `struct irq_chip` of a [`Chip`] implementation.
///
/// Whoever installs the table on an interrupt guarantees that the interrupt's `chip_data` is null
/// or points to a `T::Data` that outlives the installation: `Domain` installs
/// it with its own host data; C code that installs it (VT-d's posted-MSI chip) with the data
/// type it declares.
pub struct ChipVtable<T: Chip>(PhantomData<T>);

/// Recovers the [`IrqData`] and the chip data of a callback; the chip data is `None` if it is
/// gone (an interrupt being torn down by `irq_domain_reset_irq_data()`): see [`data_gone`].
///
/// # Safety
///
/// `irqd` must be a valid `irq_data` for the duration of `'a` whose `chip_data` is null or points
/// to a valid `T::Data`, as [`ChipVtable`]'s installers guarantee.
unsafe fn callback_args<'a, T: Chip>(
    irqd: *mut bindings::irq_data,
) -> (&'a IrqData, Option<&'a T::Data>) {
    // SAFETY: Per the function's safety requirements `irqd` is valid for `'a`.
    let d = unsafe { IrqData::from_raw(irqd) };
    // A volatile read (`READ_ONCE()`): `irq_domain_reset_irq_data()` may clear it concurrently.
    // SAFETY: Per the function's safety requirements `irqd` is valid.
    let data = unsafe { core::ptr::read_volatile(&raw const (*irqd).chip_data) }.cast::<T::Data>();
    // SAFETY: Per the function's safety requirements a non-null `chip_data` points to a valid
    // `T::Data` that outlives the interrupt, hence `'a`.
    (d, unsafe { data.as_ref() })
}

/// How many chip callbacks found no chip data ([`data_gone`]), for the tests.
static DATA_GONE: Atomic<u32> = Atomic::new(0);

/// Returns how many chip callbacks found no chip data since boot.
#[cfg(CONFIG_RUST_IRQ_PROVIDER_KUNIT_TEST)]
pub(crate) fn data_gone_count() -> u32 {
    DATA_GONE.load(Relaxed)
}

/// Reports that the callback `what` of chip `chip` found no chip data on `irqd`: the interrupt's
/// level was torn down (`irq_domain_reset_irq_data()`) while a flow that had already loaded the
/// chip ran on (`handle_fasteoi_irq()` loads it before it takes the descriptor lock), or a C
/// installer broke [`ChipVtable`]'s contract. The implementation cannot be called without its
/// data; the caller does what keeps the line from staying active (see [`Chip`]).
///
/// A warning once (`pr_warn_once`), not `WARN_ONCE()`: the race with a teardown is not a bug of
/// the caller, and a backtrace would fail the boot checks for it. The count is for the tests.
#[cold]
#[inline(never)]
fn data_gone(chip: &CStr, what: &str, irqd: &IrqData) {
    DATA_GONE.fetch_add(1, Relaxed);
    crate::pr_warn_once!(
        "genirq: irq {}: {} of chip {} without chip data (interrupt torn down?)\n",
        irqd.irq(),
        what,
        chip
    );
}

/// Masks the parent level of `irqd`, whose chip data is gone, if it has a parent whose chip can.
fn mask_parent_of_orphan(irqd: &IrqData) {
    #[cfg(CONFIG_IRQ_DOMAIN_HIERARCHY)]
    let _ = irqd.mask_parent();
    #[cfg(not(CONFIG_IRQ_DOMAIN_HIERARCHY))]
    let _ = irqd;
}

/// EOIs the parent level of `irqd`, whose chip data is gone, if it has a parent whose chip has
/// `irq_eoi`: in a hierarchy, the level that deactivates the line.
fn eoi_parent_of_orphan(irqd: &IrqData) {
    #[cfg(CONFIG_IRQ_DOMAIN_HIERARCHY)]
    let _ = irqd.eoi_parent();
    #[cfg(not(CONFIG_IRQ_DOMAIN_HIERARCHY))]
    let _ = irqd;
}

/// Reports, once, that chip `chip` could not compose the MSI message of `irqd` (`err`) and left
/// the caller's message unwritten.
#[cold]
#[inline(never)]
fn compose_failed(chip: &CStr, irqd: &IrqData, err: Error) {
    crate::pr_warn_once!(
        "genirq: irq {}: chip {} cannot compose its MSI message ({:?}); message not written\n",
        irqd.irq(),
        chip,
        err
    );
}

impl<T: Chip> ChipVtable<T> {
    /// # Safety
    ///
    /// Only called by genirq as the callback of the same name in `Self::VTABLE`, with the
    /// `irq_data` of an interrupt this chip is installed on.
    unsafe extern "C" fn startup(irqd: *mut bindings::irq_data) -> c_uint {
        // SAFETY: genirq calls chip callbacks with a valid `irq_data` of an interrupt this chip
        // is installed on, whose `chip_data` is null or a `T::Data` (see `ChipVtable`).
        let (d, data) = unsafe { callback_args::<T>(irqd) };
        let Some(data) = data else {
            // Not started: the interrupt is being torn down.
            data_gone(T::NAME, "irq_startup", d);
            return 0;
        };
        T::startup(data, d)
    }

    /// # Safety
    ///
    /// Only called by genirq as the callback of the same name in `Self::VTABLE`, with the
    /// `irq_data` of an interrupt this chip is installed on.
    unsafe extern "C" fn shutdown(irqd: *mut bindings::irq_data) {
        // SAFETY: As in `startup`.
        let (d, data) = unsafe { callback_args::<T>(irqd) };
        let Some(data) = data else {
            data_gone(T::NAME, "irq_shutdown", d);
            mask_parent_of_orphan(d);
            return;
        };
        T::shutdown(data, d)
    }

    /// # Safety
    ///
    /// Only called by genirq as the callback of the same name in `Self::VTABLE`, with the
    /// `irq_data` of an interrupt this chip is installed on.
    unsafe extern "C" fn enable(irqd: *mut bindings::irq_data) {
        // SAFETY: As in `startup`.
        let (d, data) = unsafe { callback_args::<T>(irqd) };
        let Some(data) = data else {
            data_gone(T::NAME, "irq_enable", d);
            return;
        };
        T::enable(data, d)
    }

    /// # Safety
    ///
    /// Only called by genirq as the callback of the same name in `Self::VTABLE`, with the
    /// `irq_data` of an interrupt this chip is installed on.
    unsafe extern "C" fn disable(irqd: *mut bindings::irq_data) {
        // SAFETY: As in `startup`.
        let (d, data) = unsafe { callback_args::<T>(irqd) };
        let Some(data) = data else {
            data_gone(T::NAME, "irq_disable", d);
            mask_parent_of_orphan(d);
            return;
        };
        T::disable(data, d)
    }

    /// # Safety
    ///
    /// Only called by genirq as the callback of the same name in `Self::VTABLE`, with the
    /// `irq_data` of an interrupt this chip is installed on.
    unsafe extern "C" fn ack(irqd: *mut bindings::irq_data) {
        // SAFETY: As in `startup`.
        let (d, data) = unsafe { callback_args::<T>(irqd) };
        let Some(data) = data else {
            data_gone(T::NAME, "irq_ack", d);
            return;
        };
        // INVARIANT: `d` is the `irq_data` genirq passed to this `irq_ack`; the context lives in
        // this frame and is only lent to `T::ack` for the call.
        let ctx = AckCtx {
            irqd: d,
            _not_send: NotThreadSafe,
        };
        T::ack(data, &ctx)
    }

    /// # Safety
    ///
    /// Only called by genirq as the callback of the same name in `Self::VTABLE`, with the
    /// `irq_data` of an interrupt this chip is installed on.
    unsafe extern "C" fn mask(irqd: *mut bindings::irq_data) {
        // SAFETY: As in `startup`.
        let (d, data) = unsafe { callback_args::<T>(irqd) };
        let Some(data) = data else {
            data_gone(T::NAME, "irq_mask", d);
            mask_parent_of_orphan(d);
            return;
        };
        T::mask(data, d)
    }

    /// # Safety
    ///
    /// Only called by genirq as the callback of the same name in `Self::VTABLE`, with the
    /// `irq_data` of an interrupt this chip is installed on.
    unsafe extern "C" fn mask_ack(irqd: *mut bindings::irq_data) {
        // SAFETY: As in `startup`.
        let (d, data) = unsafe { callback_args::<T>(irqd) };
        let Some(data) = data else {
            data_gone(T::NAME, "irq_mask_ack", d);
            mask_parent_of_orphan(d);
            return;
        };
        T::mask_ack(data, d)
    }

    /// # Safety
    ///
    /// Only called by genirq as the callback of the same name in `Self::VTABLE`, with the
    /// `irq_data` of an interrupt this chip is installed on.
    unsafe extern "C" fn unmask(irqd: *mut bindings::irq_data) {
        // SAFETY: As in `startup`.
        let (d, data) = unsafe { callback_args::<T>(irqd) };
        let Some(data) = data else {
            data_gone(T::NAME, "irq_unmask", d);
            return;
        };
        T::unmask(data, d)
    }

    /// # Safety
    ///
    /// Only called by genirq as the callback of the same name in `Self::VTABLE`, with the
    /// `irq_data` of an interrupt this chip is installed on.
    unsafe extern "C" fn eoi(irqd: *mut bindings::irq_data) {
        // SAFETY: As in `startup`.
        let (d, data) = unsafe { callback_args::<T>(irqd) };
        let Some(data) = data else {
            data_gone(T::NAME, "irq_eoi", d);
            eoi_parent_of_orphan(d);
            return;
        };
        T::eoi(data, d)
    }

    /// # Safety
    ///
    /// Only called by genirq as the callback of the same name in `Self::VTABLE`, with the
    /// `irq_data` of an interrupt this chip is installed on.
    unsafe extern "C" fn set_affinity(
        irqd: *mut bindings::irq_data,
        mask: *const bindings::cpumask,
        force: bool,
    ) -> c_int {
        // SAFETY: As in `startup`.
        let (d, data) = unsafe { callback_args::<T>(irqd) };
        let Some(data) = data else {
            data_gone(T::NAME, "irq_set_affinity", d);
            return EINVAL.to_errno();
        };
        // SAFETY: genirq passes a valid cpumask for the duration of the call.
        let mask = unsafe { Cpumask::from_raw(mask) };
        // SAFETY: genirq calls `irq_set_affinity` with the descriptor lock held
        // (`irq_do_set_affinity()` and the hierarchy's `irq_chip_set_affinity_parent()`).
        let d = unsafe { LockedIrqData::from_raw(d.as_raw()) };
        // INVARIANT: `d` is the `irq_data` genirq passed to this `irq_set_affinity`, with the
        // lock held; the context lives in this frame and is only lent to `T::set_affinity`.
        let ctx = SetAffinityCtx {
            irqd: d,
            _not_send: NotThreadSafe,
        };
        from_result(|| Ok(T::set_affinity(data, &ctx, mask, force)? as c_int))
    }

    /// # Safety
    ///
    /// Only called by genirq as the callback of the same name in `Self::VTABLE`, with the
    /// `irq_data` of an interrupt this chip is installed on.
    unsafe extern "C" fn retrigger(irqd: *mut bindings::irq_data) -> c_int {
        // SAFETY: As in `startup`.
        let (d, data) = unsafe { callback_args::<T>(irqd) };
        let Some(data) = data else {
            data_gone(T::NAME, "irq_retrigger", d);
            return 0;
        };
        c_int::from(T::retrigger(data, d))
    }

    /// # Safety
    ///
    /// Only called by genirq as the callback of the same name in `Self::VTABLE`, with the
    /// `irq_data` of an interrupt this chip is installed on.
    unsafe extern "C" fn set_type(irqd: *mut bindings::irq_data, ty: c_uint) -> c_int {
        // SAFETY: As in `startup`.
        let (d, data) = unsafe { callback_args::<T>(irqd) };
        let Some(data) = data else {
            data_gone(T::NAME, "irq_set_type", d);
            return EINVAL.to_errno();
        };
        // SAFETY: genirq calls `irq_set_type` with the descriptor lock held
        // (`__irq_set_trigger()` and the hierarchy's `irq_chip_set_type_parent()`).
        let d = unsafe { LockedIrqData::from_raw(d.as_raw()) };
        from_result(|| {
            T::set_type(data, d, TriggerType::try_from(ty)?)?;
            Ok(bindings::IRQ_SET_MASK_OK as c_int)
        })
    }

    /// # Safety
    ///
    /// Only called by genirq as the callback of the same name in `Self::VTABLE`, with the
    /// `irq_data` of an interrupt this chip is installed on.
    unsafe extern "C" fn set_wake(irqd: *mut bindings::irq_data, on: c_uint) -> c_int {
        // SAFETY: As in `startup`.
        let (d, data) = unsafe { callback_args::<T>(irqd) };
        let Some(data) = data else {
            data_gone(T::NAME, "irq_set_wake", d);
            return EINVAL.to_errno();
        };
        from_result(|| {
            T::set_wake(data, d, on != 0)?;
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Only called by genirq as the callback of the same name in `Self::VTABLE`, with the
    /// `irq_data` of an interrupt this chip is installed on.
    unsafe extern "C" fn get_irqchip_state(
        irqd: *mut bindings::irq_data,
        which: bindings::irqchip_irq_state,
        state: *mut bool,
    ) -> c_int {
        // SAFETY: As in `startup`.
        let (d, data) = unsafe { callback_args::<T>(irqd) };
        let Some(data) = data else {
            data_gone(T::NAME, "irq_get_irqchip_state", d);
            return EINVAL.to_errno();
        };
        from_result(|| {
            let value = T::get_irqchip_state(data, d, ChipState::try_from(which)?)?;
            // SAFETY: genirq passes a valid pointer to write the state to.
            unsafe { *state = value };
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Only called by genirq as the callback of the same name in `Self::VTABLE`, with the
    /// `irq_data` of an interrupt this chip is installed on.
    unsafe extern "C" fn set_irqchip_state(
        irqd: *mut bindings::irq_data,
        which: bindings::irqchip_irq_state,
        state: bool,
    ) -> c_int {
        // SAFETY: As in `startup`.
        let (d, data) = unsafe { callback_args::<T>(irqd) };
        let Some(data) = data else {
            data_gone(T::NAME, "irq_set_irqchip_state", d);
            return EINVAL.to_errno();
        };
        from_result(|| {
            T::set_irqchip_state(data, d, ChipState::try_from(which)?, state)?;
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Only called by genirq as the callback of the same name in `Self::VTABLE`, with the
    /// `irq_data` of an interrupt this chip is installed on.
    unsafe extern "C" fn set_vcpu_affinity(
        irqd: *mut bindings::irq_data,
        vcpu: *mut c_void,
    ) -> c_int {
        // SAFETY: As in `startup`.
        let (d, data) = unsafe { callback_args::<T>(irqd) };
        let Some(data) = data else {
            data_gone(T::NAME, "irq_set_vcpu_affinity", d);
            return EINVAL.to_errno();
        };
        // SAFETY: `irq_set_vcpu_affinity()` calls it under `irq_get_desc_lock()`.
        let d = unsafe { LockedIrqData::assume_locked(d) };
        // INVARIANT: `d` is the `irq_data` genirq passed to this `irq_set_vcpu_affinity`, with
        // the lock held; the context lives in this frame and is only lent to
        // `T::set_vcpu_affinity`.
        let ctx = SetVcpuAffinityCtx {
            irqd: d,
            _not_send: NotThreadSafe,
        };
        from_result(|| {
            T::set_vcpu_affinity(data, &ctx, VcpuInfo(vcpu))?;
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Only called by genirq as the callback of the same name in `Self::VTABLE`, with the
    /// `irq_data` of an interrupt this chip is installed on.
    unsafe extern "C" fn compose_msi_msg(
        irqd: *mut bindings::irq_data,
        msg: *mut bindings::msi_msg,
    ) {
        // SAFETY: As in `startup`.
        let (d, data) = unsafe { callback_args::<T>(irqd) };
        let Some(data) = data else {
            data_gone(T::NAME, "irq_compose_msi_msg", d);
            return;
        };
        match T::compose_msi_msg(data, d) {
            // SAFETY: genirq passes a valid, writable `msi_msg`.
            Ok(m) => unsafe { bindings::msi_msg_set(msg, m.address_lo, m.address_hi, m.data) },
            // Unwritten: the caller's buffer, not a message made up here (see
            // `Chip::compose_msi_msg`).
            Err(e) => compose_failed(T::NAME, d, e),
        }
    }

    /// # Safety
    ///
    /// Only called by genirq as the callback of the same name in `Self::VTABLE`, with the
    /// `irq_data` of an interrupt this chip is installed on.
    unsafe extern "C" fn ipi_send_single(irqd: *mut bindings::irq_data, cpu: c_uint) {
        // SAFETY: As in `startup`.
        let (d, data) = unsafe { callback_args::<T>(irqd) };
        let Some(data) = data else {
            data_gone(T::NAME, "ipi_send_single", d);
            return;
        };
        if let Some(cpu) = CpuId::from_u32(cpu) {
            T::ipi_send_single(data, d, cpu)
        }
    }

    /// # Safety
    ///
    /// Only called by genirq as the callback of the same name in `Self::VTABLE`, with the
    /// `irq_data` of an interrupt this chip is installed on.
    unsafe extern "C" fn ipi_send_mask(
        irqd: *mut bindings::irq_data,
        mask: *const bindings::cpumask,
    ) {
        // SAFETY: As in `startup`.
        let (d, data) = unsafe { callback_args::<T>(irqd) };
        let Some(data) = data else {
            data_gone(T::NAME, "ipi_send_mask", d);
            return;
        };
        // SAFETY: genirq passes a valid cpumask for the duration of the call.
        T::ipi_send_mask(data, d, unsafe { Cpumask::from_raw(mask) })
    }

    const VTABLE: bindings::irq_chip = bindings::irq_chip {
        name: {
            // A chip that asks for its EOI in the thread (`unmask_threaded_irq()` calls
            // `irq_eoi` without a NULL check) or only for handled interrupts must have `eoi`.
            let eoi_flags =
                (bindings::IRQCHIP_EOI_THREADED | bindings::IRQCHIP_EOI_IF_HANDLED) as c_ulong;
            assert!(
                !(T::HAS_EOI && T::EOI_PARENT),
                "a chip with EOI_PARENT must not implement `eoi`"
            );
            assert!(
                T::HAS_EOI || T::EOI_PARENT || T::FLAGS.as_raw() & eoi_flags == 0,
                "a chip with EoiThreaded or EoiIfHandled must implement `eoi`"
            );
            // `__irq_move_irq()` masks and unmasks a MOVE_DEFERRED interrupt around the move
            // through its top-level chip, without a NULL check.
            let move_deferred = bindings::IRQCHIP_MOVE_DEFERRED as c_ulong;
            assert!(
                (T::HAS_MASK && T::HAS_UNMASK) || T::FLAGS.as_raw() & move_deferred == 0,
                "a chip with MoveDeferred must implement `mask` and `unmask`"
            );
            core::ptr::from_ref(T::NAME).cast::<c_char>()
        },
        irq_startup: if T::HAS_STARTUP {
            Some(Self::startup)
        } else {
            None
        },
        irq_shutdown: if T::HAS_SHUTDOWN {
            Some(Self::shutdown)
        } else {
            None
        },
        irq_enable: if T::HAS_ENABLE {
            Some(Self::enable)
        } else {
            None
        },
        irq_disable: if T::HAS_DISABLE {
            Some(Self::disable)
        } else {
            None
        },
        irq_ack: if T::HAS_ACK { Some(Self::ack) } else { None },
        irq_mask: if T::HAS_MASK { Some(Self::mask) } else { None },
        irq_mask_ack: if T::HAS_MASK_ACK {
            Some(Self::mask_ack)
        } else {
            None
        },
        irq_unmask: if T::HAS_UNMASK {
            Some(Self::unmask)
        } else {
            None
        },
        irq_eoi: if T::HAS_EOI {
            Some(Self::eoi)
        } else if T::EOI_PARENT {
            eoi_parent()
        } else {
            None
        },
        irq_set_affinity: if T::HAS_SET_AFFINITY {
            Some(Self::set_affinity)
        } else {
            None
        },
        irq_retrigger: if T::HAS_RETRIGGER {
            Some(Self::retrigger)
        } else {
            None
        },
        irq_set_type: if T::HAS_SET_TYPE {
            Some(Self::set_type)
        } else {
            None
        },
        irq_set_wake: if T::HAS_SET_WAKE {
            Some(Self::set_wake)
        } else {
            None
        },
        irq_get_irqchip_state: if T::HAS_GET_IRQCHIP_STATE {
            Some(Self::get_irqchip_state)
        } else {
            None
        },
        irq_set_irqchip_state: if T::HAS_SET_IRQCHIP_STATE {
            Some(Self::set_irqchip_state)
        } else {
            None
        },
        irq_set_vcpu_affinity: if T::HAS_SET_VCPU_AFFINITY {
            Some(Self::set_vcpu_affinity)
        } else {
            None
        },
        irq_compose_msi_msg: if T::HAS_COMPOSE_MSI_MSG {
            Some(Self::compose_msi_msg)
        } else {
            None
        },
        ipi_send_single: if T::HAS_IPI_SEND_SINGLE {
            Some(Self::ipi_send_single)
        } else {
            None
        },
        ipi_send_mask: if T::HAS_IPI_SEND_MASK {
            Some(Self::ipi_send_mask)
        } else {
            None
        },
        flags: T::FLAGS.with(ChipFlag::Immutable).as_raw(),
        ..pin_init::zeroed()
    };

    /// Returns the constant `struct irq_chip` of `T`.
    pub const fn build() -> &'static bindings::irq_chip {
        &Self::VTABLE
    }
}
