// SPDX-License-Identifier: GPL-2.0

//! Interrupt controller chips: the provider side of genirq.
//!
//! An interrupt controller driver describes its hardware operations (mask, unmask, ack, EOI, ...)
//! by implementing [`Chip`]. [`ChipVtable`] turns an implementation into a constant,
//! `IRQCHIP_IMMUTABLE` `struct irq_chip` that a `Domain` installs on the
//! interrupts it maps.
//!
//! C header: [`include/linux/irq.h`](srctree/include/linux/irq.h)

use core::marker::PhantomData;

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
    prelude::*, //
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
        /// Affinity changes are deferred to the next interrupt, applied by the chip's `ack`
        /// (`IRQCHIP_MOVE_DEFERRED`).
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
            Self::Pending => bindings::irqchip_irq_state_IRQCHIP_STATE_PENDING,
            Self::Active => bindings::irqchip_irq_state_IRQCHIP_STATE_ACTIVE,
            Self::Masked => bindings::irqchip_irq_state_IRQCHIP_STATE_MASKED,
            Self::LineLevel => bindings::irqchip_irq_state_IRQCHIP_STATE_LINE_LEVEL,
        }
    }
}

impl TryFrom<bindings::irqchip_irq_state> for ChipState {
    type Error = Error;

    /// Converts a raw `IRQCHIP_STATE_*` value; any other value is `EINVAL`.
    fn try_from(raw: bindings::irqchip_irq_state) -> Result<Self> {
        Ok(match raw {
            bindings::irqchip_irq_state_IRQCHIP_STATE_PENDING => Self::Pending,
            bindings::irqchip_irq_state_IRQCHIP_STATE_ACTIVE => Self::Active,
            bindings::irqchip_irq_state_IRQCHIP_STATE_MASKED => Self::Masked,
            bindings::irqchip_irq_state_IRQCHIP_STATE_LINE_LEVEL => Self::LineLevel,
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

/// The hardware operations of an interrupt controller (`struct irq_chip`).
///
/// Implement it on a marker type; [`ChipVtable`] builds the constant `struct irq_chip`. Each
/// callback receives the chip data, [`Chip::Data`], which the `Domain` that
/// installed the chip owns and which outlives every interrupt the chip is installed on, and the
/// [`IrqData`] of the interrupt.
///
/// # Context
///
/// The callbacks run with interrupts disabled, in hard IRQ context or in the thread that changes
/// the line's state, mostly with the descriptor's raw spinlock (`desc->lock`) held; the
/// exceptions are `ipi_send_*`, `compose_msi_msg` when MSI descriptors are set up, the
/// `mask`/`ack`/`unmask`/`eoi` calls of `chained_irq_enter()`/`chained_irq_exit()` on a parent
/// interrupt and of the per-CPU flows. They must not sleep or allocate with `GFP_KERNEL`.
///
/// The lock is in the types: `set_type` and `set_affinity`, which genirq always calls with it
/// held, receive a [`LockedIrqData`], whose methods are the operations C allows only under the
/// lock. `ack` (like `mask`, `unmask` and `eoi`) does not: flow handlers call it with the lock
/// held, but `chained_irq_enter()`, the per-CPU flows and drivers calling chip callbacks from
/// their handlers (after `handle_irq_event()` dropped the lock) do not, and nothing tells the
/// callee which.
///
/// C code that calls a Rust chip's callbacks directly, a C child level forwarding to its Rust
/// parent, must do so as genirq does: `set_type` and `set_affinity` with the descriptor lock
/// held (or before the interrupt is visible, while its domain allocates it).
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
/// use kernel::irq::{Chip, ChipState, IrqData, LockedIrqData, SetAffinity, TriggerType};
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
///         d: &LockedIrqData,
///         mask: &Cpumask,
///         _force: bool,
///     ) -> Result<SetAffinity> {
///         if mask.empty() {
///             return Err(EINVAL);
///         }
///         // The hardware delivers to any CPU of the mask; only the lock holder may say so.
///         d.update_effective_affinity(mask);
///         Ok(SetAffinity::Ok)
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
    fn ack(_data: &Self::Data, _irqd: &IrqData) {
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
    /// Descriptor lock held.
    fn set_affinity(
        _data: &Self::Data,
        _irqd: &LockedIrqData,
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
    /// Called with the descriptor lock held (`irq_set_vcpu_affinity()` takes it).
    fn set_vcpu_affinity(_data: &Self::Data, _irqd: &LockedIrqData, _vcpu: VcpuInfo) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Composes the MSI message of the interrupt (`irq_compose_msi_msg`).
    fn compose_msi_msg(_data: &Self::Data, _irqd: &IrqData, _msg: &mut MsiMsg) {
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

/// The constant `struct irq_chip` of a [`Chip`] implementation.
///
/// Whoever installs the table on an interrupt guarantees that the interrupt's `chip_data` is null
/// or points to a `T::Data` that outlives the installation: `Domain` installs
/// it with its own host data; C code that installs it (VT-d's posted-MSI chip) with the data
/// type it declares.
pub struct ChipVtable<T: Chip>(PhantomData<T>);

/// Recovers the chip data and [`IrqData`] of a callback; `None` if the chip data is gone (an
/// interrupt being torn down by `irq_domain_reset_irq_data()`).
///
/// # Safety
///
/// `irqd` must be a valid `irq_data` for the duration of `'a` whose `chip_data` is null or points
/// to a valid `T::Data`, as [`ChipVtable`]'s installers guarantee.
unsafe fn callback_args<'a, T: Chip>(
    irqd: *mut bindings::irq_data,
) -> Option<(&'a T::Data, &'a IrqData)> {
    // SAFETY: Per the function's safety requirements `irqd` is valid for `'a`.
    let d = unsafe { IrqData::from_raw(irqd) };
    // A volatile read (`READ_ONCE()`): `irq_domain_reset_irq_data()` may clear it concurrently.
    // SAFETY: Per the function's safety requirements `irqd` is valid.
    let data = unsafe { core::ptr::read_volatile(&raw const (*irqd).chip_data) }.cast::<T::Data>();
    if data.is_null() {
        return None;
    }
    // SAFETY: Per the function's safety requirements a non-null `chip_data` points to a valid
    // `T::Data` that outlives the interrupt, hence `'a`.
    Some((unsafe { &*data }, d))
}

impl<T: Chip> ChipVtable<T> {
    /// # Safety
    ///
    /// Only called by genirq as the callback of the same name in `Self::VTABLE`, with the
    /// `irq_data` of an interrupt this chip is installed on.
    unsafe extern "C" fn startup(irqd: *mut bindings::irq_data) -> c_uint {
        // SAFETY: genirq calls chip callbacks with a valid `irq_data` of an interrupt this chip
        // is installed on, whose `chip_data` is a `T::Data` (see `ChipVtable`).
        let Some((data, d)) = (unsafe { callback_args::<T>(irqd) }) else {
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
        let Some((data, d)) = (unsafe { callback_args::<T>(irqd) }) else {
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
        let Some((data, d)) = (unsafe { callback_args::<T>(irqd) }) else {
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
        let Some((data, d)) = (unsafe { callback_args::<T>(irqd) }) else {
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
        let Some((data, d)) = (unsafe { callback_args::<T>(irqd) }) else {
            return;
        };
        T::ack(data, d)
    }

    /// # Safety
    ///
    /// Only called by genirq as the callback of the same name in `Self::VTABLE`, with the
    /// `irq_data` of an interrupt this chip is installed on.
    unsafe extern "C" fn mask(irqd: *mut bindings::irq_data) {
        // SAFETY: As in `startup`.
        let Some((data, d)) = (unsafe { callback_args::<T>(irqd) }) else {
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
        let Some((data, d)) = (unsafe { callback_args::<T>(irqd) }) else {
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
        let Some((data, d)) = (unsafe { callback_args::<T>(irqd) }) else {
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
        let Some((data, d)) = (unsafe { callback_args::<T>(irqd) }) else {
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
        let Some((data, d)) = (unsafe { callback_args::<T>(irqd) }) else {
            return EINVAL.to_errno();
        };
        // SAFETY: genirq passes a valid cpumask for the duration of the call.
        let mask = unsafe { Cpumask::from_raw(mask) };
        // SAFETY: genirq calls `irq_set_affinity` with the descriptor lock held
        // (`irq_do_set_affinity()` and the hierarchy's `irq_chip_set_affinity_parent()`).
        let d = unsafe { LockedIrqData::from_raw(d.as_raw()) };
        from_result(|| Ok(T::set_affinity(data, d, mask, force)? as c_int))
    }

    /// # Safety
    ///
    /// Only called by genirq as the callback of the same name in `Self::VTABLE`, with the
    /// `irq_data` of an interrupt this chip is installed on.
    unsafe extern "C" fn retrigger(irqd: *mut bindings::irq_data) -> c_int {
        // SAFETY: As in `startup`.
        let Some((data, d)) = (unsafe { callback_args::<T>(irqd) }) else {
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
        let Some((data, d)) = (unsafe { callback_args::<T>(irqd) }) else {
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
        let Some((data, d)) = (unsafe { callback_args::<T>(irqd) }) else {
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
        let Some((data, d)) = (unsafe { callback_args::<T>(irqd) }) else {
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
        let Some((data, d)) = (unsafe { callback_args::<T>(irqd) }) else {
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
        let Some((data, d)) = (unsafe { callback_args::<T>(irqd) }) else {
            return EINVAL.to_errno();
        };
        // SAFETY: `irq_set_vcpu_affinity()` calls it under `irq_get_desc_lock()`.
        let d = unsafe { LockedIrqData::assume_locked(d) };
        from_result(|| {
            T::set_vcpu_affinity(data, d, VcpuInfo(vcpu))?;
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
        let Some((data, d)) = (unsafe { callback_args::<T>(irqd) }) else {
            return;
        };
        let mut m = MsiMsg::default();
        T::compose_msi_msg(data, d, &mut m);
        // SAFETY: genirq passes a valid, writable `msi_msg`.
        unsafe { bindings::msi_msg_set(msg, m.address_lo, m.address_hi, m.data) };
    }

    /// # Safety
    ///
    /// Only called by genirq as the callback of the same name in `Self::VTABLE`, with the
    /// `irq_data` of an interrupt this chip is installed on.
    unsafe extern "C" fn ipi_send_single(irqd: *mut bindings::irq_data, cpu: c_uint) {
        // SAFETY: As in `startup`.
        let Some((data, d)) = (unsafe { callback_args::<T>(irqd) }) else {
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
        let Some((data, d)) = (unsafe { callback_args::<T>(irqd) }) else {
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
                T::HAS_EOI || T::FLAGS.as_raw() & eoi_flags == 0,
                "a chip with EoiThreaded or EoiIfHandled must implement `eoi`"
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
        irq_eoi: if T::HAS_EOI { Some(Self::eoi) } else { None },
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
