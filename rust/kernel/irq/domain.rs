// SPDX-License-Identifier: GPL-2.0

//! Interrupt domains: translation from hardware interrupt numbers (hwirq) to Linux interrupt
//! numbers (virq), and the hierarchy of controllers an interrupt passes through.
//!
//! C header: [`include/linux/irqdomain.h`](srctree/include/linux/irqdomain.h)

use core::{
    marker::PhantomData,
    mem::ManuallyDrop,
    ptr::NonNull, //
};

use crate::{
    error::{
        from_err_ptr,
        from_result,
        to_result,
        VTABLE_DEFAULT_ERROR, //
    },
    interrupt::LocalInterruptDisabled,
    irq::{
        chained::{
            ChainedHandler,
            ChainedIrqGuard, //
        },
        chip::{
            Chip,
            ChipVtable, //
        },
        data::TriggerType,
        desc::IrqDesc,
        flow::FlowHandler,
        IrqRequest,
    },
    new_mutex,
    prelude::*,
    str::CStr,
    sync::{
        rcu,
        Mutex, //
    },
    types::Opaque,
    xarray::{
        AllocKind,
        XArray, //
    },
};

mod module_ref;
pub(crate) use module_ref::ModuleRef;

mod release;
use release::{
    drop_boxed,
    release_after_grace_period,
    BoxedData, //
};

#[cfg(CONFIG_OF)]
mod of;
#[cfg(CONFIG_OF)]
pub use of::{
    OfIrq,
    OfThreadedIrq, //
};

#[cfg(CONFIG_GENERIC_MSI_IRQ)]
mod msi;
#[cfg(CONFIG_GENERIC_MSI_IRQ)]
pub use msi::{
    ForeignDomain,
    MsiAllocInfo,
    MsiDoorbell,
    MsiParentOps, //
};

#[cfg(all(CONFIG_X86_LOCAL_APIC, CONFIG_GENERIC_MSI_IRQ))]
mod x86;
#[cfg(all(CONFIG_X86_LOCAL_APIC, CONFIG_GENERIC_MSI_IRQ))]
pub use x86::{
    apic_dest_mode_logical,
    PciRequester,
    VectorCfg,
    X86AllocType, //
};

/// The maximum number of cells of an interrupt specifier (`IRQ_DOMAIN_IRQ_SPEC_PARAMS`).
pub const FWSPEC_MAX_PARAMS: usize = 16;

/// An interrupt specifier as a domain receives it (`struct irq_fwspec`): its cells.
///
/// # Invariants
///
/// `self.0.param_count <= FWSPEC_MAX_PARAMS`.
#[repr(transparent)]
pub struct FwSpec(bindings::irq_fwspec);

impl FwSpec {
    /// Builds a specifier for `fwnode` from `params`; more than [`FWSPEC_MAX_PARAMS`] cells is
    /// `EINVAL`.
    fn new(fwnode: *mut bindings::fwnode_handle, params: &[u32]) -> Result<Self> {
        if params.len() > FWSPEC_MAX_PARAMS {
            return Err(EINVAL);
        }
        let mut spec = bindings::irq_fwspec {
            fwnode,
            // Bounded by `FWSPEC_MAX_PARAMS` above.
            param_count: params.len() as c_int,
            ..pin_init::zeroed()
        };
        spec.param[..params.len()].copy_from_slice(params);
        // INVARIANT: `param_count` was checked against `FWSPEC_MAX_PARAMS`.
        Ok(Self(spec))
    }

    /// # Safety
    ///
    /// `ptr` must point to a valid `irq_fwspec` for `'a`.
    unsafe fn from_raw<'a>(ptr: *const bindings::irq_fwspec) -> Result<&'a Self> {
        // SAFETY: `FwSpec` is a transparent wrapper; the caller guarantees validity.
        let spec: &Self = unsafe { &*ptr.cast() };
        let n = usize::try_from(spec.0.param_count).map_err(|_| EINVAL)?;
        if n > FWSPEC_MAX_PARAMS {
            return Err(EINVAL);
        }
        // INVARIANT: `param_count` was checked against `FWSPEC_MAX_PARAMS`.
        Ok(spec)
    }

    /// Returns the raw `irq_fwspec` pointer, for C functions that read a specifier
    /// (`x86_fwspec_is_ioapic()`).
    pub fn as_raw(&self) -> *const bindings::irq_fwspec {
        &self.0
    }

    /// Returns the cells of the specifier.
    pub fn params(&self) -> &[u32] {
        // Cannot truncate or exceed the array: `param_count <= FWSPEC_MAX_PARAMS` (invariant).
        &self.0.param[..self.0.param_count as usize]
    }
}

/// Operations of an interrupt domain (`struct irq_domain_ops`), implemented by the domain's
/// host data.
///
/// Simple (linear or tree) domains implement [`DomainOps::map`] and optionally
/// [`DomainOps::xlate`]; hierarchical domains implement [`DomainOps::alloc`] and
/// [`DomainOps::translate`], and may implement `free`, `activate` and `deactivate`.
///
/// # Context
///
/// `map`, `unmap`, `alloc` and `free` run in process context with the domain's mutex held (they
/// may sleep); `xlate` and `translate` run in process context without it, and may also be called
/// by [`Domain::create_fwspec_mapping`]; `activate`/`deactivate` may run with the descriptor lock
/// held and must not sleep.
///
/// C header: [`include/linux/irqdomain.h`](srctree/include/linux/irqdomain.h).
///
/// The host data is `'static`: a [`Domain`] may be leaked (`mem::forget`), and then genirq keeps
/// calling these operations and the chip callbacks with it forever.
#[vtable]
pub trait DomainOps: Sized + Send + Sync + 'static {
    /// Sets up a new mapping of `hwirq` (`map`): install a chip with
    /// [`Mapper::set_chip_and_handler`].
    fn map(&self, _mapper: &Mapper<'_, Self>, _hwirq: usize) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Tears down the mapping of `virq` (`unmap`).
    fn unmap(&self, _virq: u32) {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Translates the cells of a specifier into (hwirq, trigger type) for a simple domain
    /// (`xlate`). Defaults to one cell holding the hwirq.
    fn xlate(&self, _params: &[u32]) -> Result<(usize, TriggerType)> {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Translates a specifier into (hwirq, trigger type) for a hierarchical domain
    /// (`translate`).
    fn translate(&self, _fwspec: &FwSpec) -> Result<(usize, TriggerType)> {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Allocates `nr` interrupts starting at `virq` for the specifier `fwspec` (`alloc`):
    /// allocate the parent's levels with [`Allocator::alloc_parent`] and install chips with
    /// [`Allocator::set_info`].
    ///
    /// On an error, the parent levels it allocated and the per-interrupt data it installed are
    /// released for it (genirq leaves that to the failing level). In a domain with a parent,
    /// each interrupt's parent level must be allocated, once, when `alloc` returns success; a
    /// top-level chip must have the callbacks its flow calls. Otherwise the allocation is undone
    /// and fails with `EINVAL`.
    ///
    /// Rust hierarchical domains take `struct irq_fwspec` allocation arguments only, as
    /// `irq_create_fwspec_mapping()` and Rust child domains pass.
    fn alloc(
        &self,
        _alloc: &Allocator<'_, Self>,
        _virq: u32,
        _nr: u32,
        _fwspec: &FwSpec,
    ) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Allocates `nr` interrupts starting at `virq` for the MSI allocation argument `info`
    /// (`alloc` of a domain allocated with `msi_alloc_info_t`, on x86 the `struct
    /// irq_alloc_info` of the vector domain): allocate the parent's levels with
    /// [`Allocator::alloc_parent_info`] and install chips with [`Allocator::set_info`] or
    /// [`Allocator::set_info_boxed`].
    ///
    /// A domain implements `alloc` or `alloc_info`, not both; one with `alloc_info` is allocated
    /// with [`Domain::alloc_irqs`] (and by child domains that pass `msi_alloc_info_t`), and
    /// [`Domain::create_fwspec_mapping`] refuses it.
    #[cfg(CONFIG_GENERIC_MSI_IRQ)]
    fn alloc_info(
        &self,
        _alloc: &Allocator<'_, Self>,
        _virq: u32,
        _nr: u32,
        _info: &MsiAllocInfo,
    ) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Prepares the allocation of `nvec` interrupts of a device on this MSI parent domain
    /// (`msi_domain_ops::msi_prepare`), from the allocation argument `info` the child's
    /// `msi_prepare` filled (on a GICv3 ITS, the DeviceID in `scratchpad[0]`): set up what the
    /// device's interrupts share, which [`DomainOps::alloc_info`] then finds through `info`.
    ///
    /// Only for domains created with [`Domain::new_msi_parent`], which requires it. Process
    /// context (the device's MSI lock held), may sleep.
    #[cfg(CONFIG_GENERIC_MSI_IRQ)]
    fn msi_prepare(&self, _nvec: u32, _info: &MsiAllocInfo) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Undoes [`DomainOps::msi_prepare`] for `info` once the device's interrupts are freed
    /// (`msi_domain_ops::msi_teardown`). Process context, may sleep.
    #[cfg(CONFIG_GENERIC_MSI_IRQ)]
    fn msi_teardown(&self, _info: &MsiAllocInfo) {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Frees `nr` interrupts starting at `virq` (`free`). Defaults to
    /// [`Allocator::free_boxed`] (`irq_domain_free_irqs_common()`: resets this level, frees the
    /// parent's; and releases per-interrupt data); an
    /// implementation undoes what its `alloc` did, then calls [`Allocator::free_common`] or
    /// [`Allocator::free_parent`].
    ///
    /// Parent levels it leaves allocated are freed when it returns: a parent keeps state that
    /// refers to the interrupt's descriptor (the x86 vector domain's per-CPU vector table) until
    /// its level is freed, and genirq frees the descriptor next.
    fn free(&self, _alloc: &Allocator<'_, Self>, _virq: u32, _nr: u32) {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Activates an interrupt (`activate`), e.g. programs the routing entry.
    fn activate(&self, _irqd: &crate::irq::IrqData, _reserve: bool) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Deactivates an interrupt (`deactivate`).
    fn deactivate(&self, _irqd: &crate::irq::IrqData) {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Whether this domain serves the specifier `fwspec` on bus `bus_token` (`select`), when
    /// genirq looks a domain up by specifier (`irq_find_matching_fwspec()`): an x86 interrupt
    /// remapping unit claims the IO-APICs and HPETs in its device scope this way. Without it, a
    /// domain is found by its firmware node and bus token (an MSI parent: by its children's
    /// bus, `msi_lib_irq_domain_select()`).
    ///
    /// C asks every domain with `select` on each lookup, for any node (`irq_find_host()`,
    /// `irq_create_fwspec_mapping()`): a domain that answers could get C's mappings and child
    /// domains. Only the `unsafe` constructors, whose callers answer for what C finds, take a
    /// `T` with it; the others, which create a named fwnode of their own, refuse it with
    /// `EINVAL`.
    ///
    /// It is asked only about lookups whose domain is then given the arguments this domain
    /// takes: for `DOMAIN_BUS_WIRED` (specifiers) if it implements [`DomainOps::alloc`] or
    /// none, for any other bus (`msi_alloc_info_t`) if it implements `alloc_info`; the others
    /// are answered `false` without asking it.
    ///
    /// Process context, the domain list's mutex held: must not sleep on genirq's locks.
    fn select(&self, _fwspec: &FwSpec, _bus_token: bindings::irq_domain_bus_token) -> bool {
        build_error!(VTABLE_DEFAULT_ERROR)
    }
}

/// Whether domains with operations `T` allocate (`alloc` or `alloc_info`): hierarchy levels.
const fn allocates<T: DomainOps>() -> bool {
    #[cfg(CONFIG_GENERIC_MSI_IRQ)]
    if T::HAS_ALLOC_INFO {
        return true;
    }
    T::HAS_ALLOC
}

/// Whether domains with operations `T` take `msi_alloc_info_t` allocation arguments.
const fn takes_msi_info<T: DomainOps>() -> bool {
    #[cfg(CONFIG_GENERIC_MSI_IRQ)]
    if T::HAS_ALLOC_INFO {
        return true;
    }
    false
}

/// `irq_domain` flag of a Rust [`Domain`] whose parent takes `msi_alloc_info_t` arguments: a
/// flag of the range genirq reserves for domain owners (`IRQ_DOMAIN_FLAG_NONCORE`).
const FLAG_PARENT_TAKES_MSI_INFO: u32 = bindings::IRQ_DOMAIN_FLAG_NONCORE;

/// What [`DomainOps::map`] uses to set up the mapping of one interrupt.
///
/// # Invariants
///
/// `domain` is a live domain created by [`Domain`] for `T`, in which the core is mapping `virq`
/// at `hwirq`, for `'a` (the `map` call).
pub struct Mapper<'a, T: DomainOps> {
    domain: *mut bindings::irq_domain,
    virq: u32,
    hwirq: usize,
    _p: PhantomData<&'a T>,
}

impl<T: DomainOps> Mapper<'_, T> {
    /// Returns the Linux interrupt number being mapped.
    pub fn virq(&self) -> u32 {
        self.virq
    }

    /// Installs the chip `C`, whose chip data is this domain's host data, and a flow handler
    /// (`irq_domain_set_info`).
    ///
    /// Returns `EINVAL` if `C` lacks a callback the flow calls (see [`FlowHandler::check`]).
    pub fn set_chip_and_handler<C: Chip<Data = T>>(&self, flow: FlowHandler) -> Result {
        flow.check::<C>()?;
        // A mapped interrupt has no parent level to forward the EOI to.
        if C::EOI_PARENT {
            return Err(EINVAL);
        }
        // SAFETY: The core called `map` for `self.virq` and `self.hwirq` of the live `domain`.
        unsafe { set_info::<T, C>(self.domain, self.virq, self.hwirq, flow) }
    }

    /// Marks the interrupt as masked by its active state, as
    /// [`Allocator::set_masked_by_active`] does for hierarchy levels.
    pub fn set_masked_by_active(&self) -> Result {
        // SAFETY: `self.virq` is being mapped: its descriptor exists.
        let d = unsafe { bindings::irq_get_irq_data(self.virq) };
        if d.is_null() {
            return Err(EINVAL);
        }
        // SAFETY: `d` is the live `irq_data` of the interrupt being mapped.
        unsafe { bindings::irq_data_set_masked_by_active(d, true) };
        Ok(())
    }
}

/// What [`DomainOps::alloc`] and [`DomainOps::free`] use to set up a hierarchy level: only the
/// interrupts `virq..virq + nr` the core is allocating or freeing.
///
/// # Invariants
///
/// `domain` is a live domain created by [`Domain`] for `T`, in which the core is allocating or
/// freeing `virq..virq + nr`, for `'a` (the `alloc` or `free` call).
pub struct Allocator<'a, T: DomainOps> {
    domain: *mut bindings::irq_domain,
    virq: u32,
    nr: u32,
    _p: PhantomData<&'a T>,
}

/// Installs chip `C` with the domain's host data and `flow` on `virq`.
///
/// # Safety
///
/// `domain` is a live domain created by [`Domain`] for `T`, and `virq` is being mapped or
/// allocated in it by the core, at `hwirq`.
unsafe fn set_info<T: DomainOps, C: Chip<Data = T>>(
    domain: *mut bindings::irq_domain,
    virq: u32,
    hwirq: usize,
    flow: FlowHandler,
) -> Result {
    if flow.is_percpu_devid() {
        // SAFETY: `virq` is being set up by the core (the function's safety requirements); the
        // per-CPU flow handler needs the per-CPU enable mask this allocates.
        to_result(unsafe { bindings::irq_set_percpu_devid(virq) })?;
    }
    // SAFETY: `domain` is live (the function's safety requirements).
    let chip_data = core::ptr::from_ref::<T>(unsafe { host::<T>(domain) });
    // SAFETY: `domain` is live and its host data's `T` (invariant of `Domain`) outlives every
    // interrupt of the domain, so `C`'s callbacks may borrow it as `C::Data`; `virq` belongs to
    // `domain` (the function's safety requirements).
    unsafe {
        bindings::irq_domain_set_info(
            domain,
            virq,
            hwirq,
            ChipVtable::<C>::build(),
            chip_data.cast_mut().cast(),
            flow.as_raw(),
            core::ptr::null_mut(),
            core::ptr::null(),
        )
    };
    Ok(())
}

/// Clears `IRQD_MASKED_BY_ACTIVE` of `virq`, whose mapping is being torn down or failed: its
/// descriptor may outlive the mapping (a legacy domain, preallocated descriptors), and the next
/// mapping must not inherit the strict flow. Takes the descriptor lock.
fn clear_masked_by_active(virq: u32) {
    // SAFETY: `virq` is being mapped or unmapped: its descriptor exists.
    let irqd = unsafe { bindings::irq_get_irq_data(virq) };
    if !irqd.is_null() {
        // SAFETY: `irqd` is the live `irq_data` of `virq`; the helper takes its descriptor lock.
        unsafe { bindings::irq_data_set_masked_by_active(irqd, false) };
    }
}

/// Whether a top-level chip with (`ack`, `eoi`) has the callbacks `handler` calls without a NULL
/// check: `ack` for the edge flow, `ack` and `eoi` for `handle_fasteoi_ack_irq()`, `eoi` for the
/// fasteoi flows and any flow not known here; the level, simple, per-CPU, untracked and bad
/// flows check what they call.
fn flow_has_top_callbacks(handler: bindings::irq_flow_handler_t, ack: bool, eoi: bool) -> bool {
    let is = |f: FlowHandler| f.is(handler);
    // Functions defined once: their addresses identify them.
    let is_c = |f: unsafe extern "C" fn(*mut bindings::irq_desc)| {
        Some(f as usize) == handler.map(|p| p as usize)
    };
    if is(FlowHandler::Edge) || is(FlowHandler::RustEdge) {
        return ack;
    }
    #[cfg(CONFIG_IRQ_FASTEOI_HIERARCHY_HANDLERS)]
    if is_c(bindings::handle_fasteoi_ack_irq) {
        return ack && eoi;
    }
    let checks_all = [
        FlowHandler::Level,
        FlowHandler::Simple,
        FlowHandler::Bad,
        FlowHandler::PercpuDevid,
        FlowHandler::RustPercpuDevid,
    ]
    .into_iter()
    .any(is)
        || is_c(bindings::handle_percpu_irq)
        || is_c(bindings::handle_untracked_irq);
    checks_all || eoi
}

impl<T: DomainOps> Allocator<'_, T> {
    /// The allocator of the core's `alloc`/`free` call for `virq..virq + nr` in `domain`.
    fn new(domain: *mut bindings::irq_domain, virq: u32, nr: u32) -> Self {
        Self {
            domain,
            virq,
            nr,
            _p: PhantomData,
        }
    }

    /// Checks that `virq..virq + nr` lies in the interrupts being allocated and `hwirq` in the
    /// domain's range.
    fn check(&self, virq: u32, nr: u32, hwirq: usize) -> Result {
        let end = virq.checked_add(nr).ok_or(EINVAL)?;
        // SAFETY: `self.domain` is live for the duration of the operation.
        let hwirq_max = unsafe { (*self.domain).hwirq_max };
        // The core's range cannot overflow (`virq + nr` interrupts were allocated).
        let limit = self.virq.saturating_add(self.nr);
        if virq < self.virq || end > limit || hwirq >= hwirq_max {
            return Err(EINVAL);
        }
        Ok(())
    }

    /// Installs the chip `C`, whose chip data is this domain's host data, and a flow handler on
    /// `virq` at this level (`irq_domain_set_info`).
    ///
    /// Returns `EINVAL` for a `virq` outside the allocation, a `hwirq` outside the domain, or a
    /// chip that lacks a callback the flow calls.
    pub fn set_info<C: Chip<Data = T>>(
        &self,
        virq: u32,
        hwirq: usize,
        flow: FlowHandler,
    ) -> Result {
        self.check(virq, 1, hwirq)?;
        self.check_eoi_parent::<C>(virq)?;
        flow.check::<C>()?;
        // SAFETY: `virq` is being allocated in the live `self.domain` (checked above).
        unsafe { set_info::<T, C>(self.domain, virq, hwirq, flow) }
    }

    /// Installs the chip `C` on `virq` at this level, leaving the flow handler to the top
    /// level (`irq_domain_set_hwirq_and_chip`).
    ///
    /// Returns `EINVAL` for a `virq` outside the allocation or a `hwirq` outside the domain. A
    /// top-level chip that lacks a callback the flow calls (`eoi` for a fasteoi flow, `ack`
    /// for the edge flow) fails the whole allocation with `EINVAL` once `alloc` returns.
    pub fn set_hwirq_and_chip<C: Chip<Data = T>>(&self, virq: u32, hwirq: usize) -> Result {
        self.check(virq, 1, hwirq)?;
        self.check_eoi_parent::<C>(virq)?;
        let chip_data = core::ptr::from_ref::<T>(self.host());
        // SAFETY: As in `set_info`.
        to_result(unsafe {
            bindings::irq_domain_set_hwirq_and_chip(
                self.domain,
                virq,
                hwirq,
                ChipVtable::<C>::build(),
                chip_data.cast_mut().cast(),
            )
        })
    }

    /// The `irq_data` of `virq` at this level, checked to lie in the allocation.
    fn level_data(&self, virq: u32) -> Result<*mut bindings::irq_data> {
        self.check(virq, 1, 0)?;
        // SAFETY: `self.domain` is live and `virq` is being allocated in it (checked above).
        let d = unsafe { bindings::irq_domain_get_irq_data(self.domain, virq) };
        if d.is_null() {
            return Err(EINVAL);
        }
        Ok(d)
    }

    /// Marks `virq` as handled only from its own interrupt context
    /// (`irqd_set_handle_enforce_irqctx`): software retriggers, which would break a controller's
    /// acknowledge/EOI order (the GIC's), are refused by genirq.
    ///
    /// Returns `EINVAL` for a `virq` outside the allocation.
    pub fn set_handle_enforce_irqctx(&self, virq: u32) -> Result {
        self.set_states(virq, &[IrqdState::HandleEnforceIrqctx])
    }

    /// Marks `virq` as masked by its active state (`irqd_set_masked_by_active`): between its
    /// acknowledge and its deactivation the controller does not signal it again (a GIC
    /// interrupt with an active state, in EOImode=1). The Rust fasteoi flow
    /// ([`FlowHandler::RustFastEoi`]) then runs a ONESHOT threaded interrupt without masking it
    /// and deactivates it (`irq_eoi`) when its last thread is done.
    ///
    /// Only for interrupts with an active state whose `irq_eoi` deactivates them and does not
    /// also drop the running priority (it then runs in the thread, on any CPU): never for LPIs
    /// or EOImode=0.
    ///
    /// Returns `EINVAL` for a `virq` outside the allocation.
    pub fn set_masked_by_active(&self, virq: u32) -> Result {
        let d = self.level_data(virq)?;
        // SAFETY: `d` is the live `irq_data` of an interrupt being allocated.
        unsafe { bindings::irq_data_set_masked_by_active(d, true) };
        Ok(())
    }

    /// Marks `virq` as routed to a single CPU at a time (`irqd_set_single_target`).
    ///
    /// Returns `EINVAL` for a `virq` outside the allocation.
    pub fn set_single_target(&self, virq: u32) -> Result {
        self.set_states(virq, &[IrqdState::SingleTarget])
    }

    /// Sets each of `states` on `virq` at this level (`irqd_set_*()`), with one lookup of its
    /// `irq_data`.
    ///
    /// Returns `EINVAL` for a `virq` outside the allocation.
    pub fn set_states(&self, virq: u32, states: &[IrqdState]) -> Result {
        let d = self.level_data(virq)?;
        for s in states {
            // SAFETY: `d` is the live `irq_data` of an interrupt being allocated.
            unsafe {
                match s {
                    IrqdState::SingleTarget => bindings::irqd_set_single_target(d),
                    IrqdState::HandleEnforceIrqctx => bindings::irqd_set_handle_enforce_irqctx(d),
                    IrqdState::AffinityOnActivate => bindings::irqd_set_affinity_on_activate(d),
                    IrqdState::ResendWhenInProgress => {
                        bindings::irqd_set_resend_when_in_progress(d)
                    }
                }
            }
        }
        Ok(())
    }

    /// Refuses a chip whose EOI is its parent level's ([`Chip::EOI_PARENT`]) on `virq` unless
    /// its parent level is allocated with a chip that has `irq_eoi`: `EINVAL` (the chip's
    /// `irq_eoi` is `irq_chip_eoi_parent()`, which follows the parent unchecked).
    fn check_eoi_parent<C: Chip>(&self, virq: u32) -> Result {
        if !C::EOI_PARENT {
            return Ok(());
        }
        let d = self.level_data(virq)?;
        #[cfg(CONFIG_IRQ_DOMAIN_HIERARCHY)]
        {
            // SAFETY: `d` is the live `irq_data` of an interrupt being allocated.
            let d = unsafe { crate::irq::IrqData::from_raw(d) };
            d.parent_has_eoi().map_err(|_| EINVAL)
        }
        #[cfg(not(CONFIG_IRQ_DOMAIN_HIERARCHY))]
        {
            let _ = d;
            Err(EINVAL)
        }
    }

    /// The hwirq of `virq` at this level (`irq_domain_get_irq_data()->hwirq`), as `alloc` set
    /// it: what a `free` undoes its hardware state by.
    ///
    /// Returns `EINVAL` for a `virq` outside the allocation.
    pub fn hwirq(&self, virq: u32) -> Result<usize> {
        let d = self.level_data(virq)?;
        // SAFETY: `d` is the live `irq_data` of an interrupt being allocated or freed.
        Ok(unsafe { (*d).hwirq })
    }

    /// Allocates the parent domain's level of `nr` interrupts at `virq`, for the parent's
    /// specifier cells `params` (`irq_domain_alloc_irqs_parent`).
    ///
    /// Returns `ENODEV` for a domain without parent, `EINVAL` for interrupts outside the
    /// allocation or too many cells, or the parent's error.
    pub fn alloc_parent(&self, virq: u32, nr: u32, params: &[u32]) -> Result {
        self.check(virq, nr, 0)?;
        // SAFETY: `self.domain` is live for the duration of the operation.
        let parent = unsafe { (*self.domain).parent };
        if parent.is_null() {
            return Err(ENODEV);
        }
        if self.parent_takes_msi_info() {
            return Err(EINVAL);
        }
        // SAFETY: A non-null parent outlives its children (see `Domain`).
        let mut spec = FwSpec::new(unsafe { (*parent).fwnode }, params)?;
        self.claim_parents(virq, nr)?;
        // SAFETY: `self.domain` is live, `virq..virq + nr` are being allocated in it (checked
        // above), and `spec` is the `irq_fwspec` argument the parent, a Rust domain with `alloc`
        // (checked by the flag above), expects.
        let res = to_result(unsafe {
            bindings::irq_domain_alloc_irqs_parent(
                self.domain,
                virq,
                nr,
                core::ptr::from_mut(&mut spec.0).cast(),
            )
        });
        if res.is_err() {
            self.unclaim_parents(virq, nr);
        }
        res
    }

    /// Before the parent allocates `virq..virq + nr` (a `check()`ed range): records them,
    /// refusing interrupts whose parent level this domain already allocated (`EBUSY`: a second
    /// allocation would leave the first one's state behind in the parent). Allocates first, so
    /// that `ENOMEM` comes before any parent level exists.
    fn claim_parents(&self, virq: u32, nr: u32) -> Result {
        let mut records = KVec::with_capacity(nr as usize, GFP_KERNEL)?;
        for v in virq..virq + nr {
            records.push(KBox::new(v, GFP_KERNEL)?, GFP_KERNEL)?;
        }
        let mut parents = self.state().parents.lock();
        if (virq..virq + nr).any(|v| parents.get(v as usize).is_some()) {
            return Err(EBUSY);
        }
        for (v, record) in (virq..).zip(records) {
            if let Err(e) = parents.store(v as usize, record, GFP_KERNEL) {
                for u in virq..v {
                    drop(parents.remove(u as usize));
                }
                return Err(e.into());
            }
        }
        Ok(())
    }

    /// Drops the records of `virq..virq + nr` (a `check()`ed range) after the parent refused
    /// to allocate them.
    fn unclaim_parents(&self, virq: u32, nr: u32) {
        let mut parents = self.state().parents.lock();
        for v in virq..virq + nr {
            drop(parents.remove(v as usize));
        }
    }

    /// Frees the parent levels of `virq..virq + nr` (a `check()`ed range) that this domain
    /// allocated and has not freed, each once. The lock is not held across the parent's `free`,
    /// which may be a Rust domain's taking its own.
    fn free_parents(&self, virq: u32, nr: u32) {
        for v in virq..virq + nr {
            let record = self.state().parents.lock().remove(v as usize);
            if record.is_some() {
                // SAFETY: `self.domain` is live and has a parent, which allocated its level of
                // `v` for this domain (recorded) and has not freed it (the record is taken
                // once).
                unsafe { bindings::irq_domain_free_irqs_parent(self.domain, v, 1) };
            }
        }
    }

    /// Drops records of `virq..virq + nr` left from an earlier interrupt: genirq is allocating
    /// them, so no level of this domain exists for them. C frees `irq_data` without this
    /// domain's `free` when it trims a hierarchy, or when a C child fails without freeing its
    /// parent level.
    fn drop_stale_parents(&self, virq: u32, nr: u32) {
        let mut parents = self.state().parents.lock();
        for v in virq..virq.saturating_add(nr) {
            if parents.remove(v as usize).is_some() {
                pr_warn!("irq: stale parent level record of irq {} dropped\n", v);
            }
        }
    }

    /// Whether the parent levels of every interrupt of this allocation are allocated, in a
    /// domain with a parent.
    fn parents_complete(&self) -> bool {
        // SAFETY: `self.domain` is live for the duration of the operation.
        if unsafe { (*self.domain).parent }.is_null() {
            return true;
        }
        let parents = self.state().parents.lock();
        (self.virq..self.virq + self.nr).all(|v| parents.get(v as usize).is_some())
    }

    /// Resets this level of `virq..virq + nr` (a `check()`ed range), as
    /// `irq_domain_free_irqs_common()` does before it frees the parent's.
    fn reset_level(&self, virq: u32, nr: u32) {
        for v in virq..virq + nr {
            // SAFETY: `self.domain` is live and `v` is being freed in it.
            let d = unsafe { bindings::irq_domain_get_irq_data(self.domain, v) };
            if !d.is_null() {
                // SAFETY: `d` is this level's live `irq_data` of `v`.
                unsafe { bindings::irq_domain_reset_irq_data(d) };
            }
        }
    }

    /// Clears `IRQD_MASKED_BY_ACTIVE` of `virq..virq + nr` (a `check()`ed range), whose
    /// descriptors may outlive this allocation (`!CONFIG_SPARSE_IRQ` keeps the state word).
    fn clear_masked_by_active(&self, virq: u32, nr: u32) {
        for v in virq..virq + nr {
            clear_masked_by_active(v);
        }
    }

    /// Undoes what a failed `alloc` left: releases the per-interrupt data it installed and
    /// frees the parent levels it allocated and did not free itself, each exactly once. No CPU
    /// reaches either: the interrupts were never activated.
    fn undo_failed_alloc(&self) {
        self.clear_masked_by_active(self.virq, self.nr);
        let boxed = self.state().take_boxed(self.virq, self.nr);
        if !boxed.is_empty() {
            release_after_grace_period::<T::OwnerModule>(boxed);
        }
        self.free_parents(self.virq, self.nr);
    }

    /// Checks, once `alloc` succeeded, that the top-level chip of each interrupt this domain
    /// is the top of has the callbacks its flow calls unconditionally: a parent level may have
    /// installed the flow before or after this level's chip, so neither call could check it.
    /// `EINVAL` otherwise.
    fn check_top_chips(&self) -> Result {
        for virq in self.virq..self.virq + self.nr {
            // SAFETY: `self.domain` is live and allocates `virq`.
            let d = unsafe { bindings::irq_domain_get_irq_data(self.domain, virq) };
            if d.is_null() {
                continue;
            }
            // SAFETY: `d` is the live `irq_data` of an interrupt being allocated, so its
            // descriptor and, if set, its top-level chip are live; its flow handler and chips
            // are set by the levels of this allocation, in this call chain.
            let (top, handler, ack, eoi) = unsafe {
                let desc = bindings::irq_data_to_desc(d);
                let chip = (*desc).irq_data.chip.as_ref();
                (
                    core::ptr::eq(&raw const (*desc).irq_data, d),
                    (*desc).handle_irq,
                    chip.is_some_and(|c| c.irq_ack.is_some()),
                    chip.is_some_and(|c| c.irq_eoi.is_some()),
                )
            };
            if top && !flow_has_top_callbacks(handler, ack, eoi) {
                return Err(EINVAL);
            }
        }
        Ok(())
    }

    /// The domain's host data.
    fn host(&self) -> &T {
        // SAFETY: `self.domain` is a live domain created by `Domain` for `T` for the duration of
        // the operation.
        unsafe { host::<T>(self.domain) }
    }

    /// The domain's Rust state.
    fn state(&self) -> &DomainState {
        // SAFETY: As in `host`.
        unsafe { host_state::<T>(self.domain) }
    }

    /// Whether the parent takes `msi_alloc_info_t` arguments (set when the domain was created).
    fn parent_takes_msi_info(&self) -> bool {
        // SAFETY: `self.domain` is live for the duration of the operation.
        let flags = unsafe { (*self.domain).flags };
        flags & FLAG_PARENT_TAKES_MSI_INFO != 0
    }

    /// Allocates the parent domain's level of `nr` interrupts at `virq` with the MSI allocation
    /// argument `info` this level received (`irq_domain_alloc_irqs_parent`).
    ///
    /// Returns `ENODEV` for a domain without parent, `EINVAL` for interrupts outside the
    /// allocation or a parent that takes firmware specifiers, or the parent's error.
    #[cfg(CONFIG_GENERIC_MSI_IRQ)]
    pub fn alloc_parent_info(&self, virq: u32, nr: u32, info: &MsiAllocInfo) -> Result {
        self.check(virq, nr, 0)?;
        // SAFETY: `self.domain` is live for the duration of the operation.
        if unsafe { (*self.domain).parent }.is_null() {
            return Err(ENODEV);
        }
        if !self.parent_takes_msi_info() {
            return Err(EINVAL);
        }
        self.claim_parents(virq, nr)?;
        // SAFETY: `virq..virq + nr` are being allocated in the live `self.domain` (checked
        // above); its parent takes `msi_alloc_info_t` arguments (the flag, set at creation from
        // the parent's type), which `info` is.
        let res = to_result(unsafe {
            bindings::irq_domain_alloc_irqs_parent(self.domain, virq, nr, info.as_raw().cast())
        });
        if res.is_err() {
            self.unclaim_parents(virq, nr);
        }
        res
    }

    /// Installs the chip `C` on `virq` at this level with per-interrupt chip data `data`, and a
    /// flow handler (`irq_domain_set_info`).
    ///
    /// The data belongs to the interrupt until [`Allocator::free_boxed`] releases it when the
    /// interrupt is freed, or the domain's removal does.
    ///
    /// Returns `EINVAL` for a `virq` outside the allocation, a `hwirq` outside the domain, or a
    /// chip that lacks a callback the flow calls, and `ENOMEM`.
    pub fn set_info_boxed<C: Chip>(
        &self,
        virq: u32,
        hwirq: usize,
        flow: FlowHandler,
        data: impl PinInit<C::Data, Error>,
    ) -> Result
    where
        C::Data: Send,
    {
        self.check(virq, 1, hwirq)?;
        self.check_eoi_parent::<C>(virq)?;
        flow.check::<C>()?;
        let data = self.keep_boxed::<C>(virq, data)?;
        if flow.is_percpu_devid() {
            // SAFETY: `virq` is being allocated in `self.domain` (checked above).
            to_result(unsafe { bindings::irq_set_percpu_devid(virq) })?;
        }
        // SAFETY: `virq` is being allocated in the live `self.domain` (checked above); the chip
        // data is a `C::Data` that outlives the installation (released only after the chip is
        // gone and a grace period), as `ChipVtable` requires.
        unsafe {
            bindings::irq_domain_set_info(
                self.domain,
                virq,
                hwirq,
                ChipVtable::<C>::build(),
                data.cast(),
                flow.as_raw(),
                core::ptr::null_mut(),
                core::ptr::null(),
            )
        };
        Ok(())
    }

    /// Installs the chip `C` on `virq` at this level with per-interrupt chip data `data`,
    /// leaving the flow handler to the top level (`irq_domain_set_hwirq_and_chip`): an
    /// intermediate level such as a GICv3 ITS's, whose interrupts each need their own data. The
    /// data is released as [`Allocator::set_info_boxed`]'s is.
    ///
    /// Returns `EINVAL` for a `virq` outside the allocation or a `hwirq` outside the domain, and
    /// `ENOMEM`.
    pub fn set_chip_boxed<C: Chip>(
        &self,
        virq: u32,
        hwirq: usize,
        data: impl PinInit<C::Data, Error>,
    ) -> Result
    where
        C::Data: Send,
    {
        self.check(virq, 1, hwirq)?;
        self.check_eoi_parent::<C>(virq)?;
        let data = self.keep_boxed::<C>(virq, data)?;
        // SAFETY: As in `set_info_boxed`.
        to_result(unsafe {
            bindings::irq_domain_set_hwirq_and_chip(
                self.domain,
                virq,
                hwirq,
                ChipVtable::<C>::build(),
                data.cast(),
            )
        })
    }

    /// Allocates `data` and records it as `virq`'s per-interrupt data, which `free_boxed` or the
    /// domain's removal releases; returns where it lives, never moved.
    fn keep_boxed<C: Chip>(
        &self,
        virq: u32,
        data: impl PinInit<C::Data, Error>,
    ) -> Result<*mut C::Data>
    where
        C::Data: Send,
    {
        let data = KBox::pin_init(data, GFP_KERNEL)?;
        let mut boxed = self.state().boxed.lock();
        boxed.reserve(1, GFP_KERNEL)?;
        // SAFETY: The data is never moved out of its allocation: `free_boxed` or the domain's
        // removal drops it in place through `drop_boxed`.
        let data = KBox::into_raw(unsafe { Pin::into_inner_unchecked(data) });
        // INVARIANT: `data` came from `KBox::into_raw()`, `drop` is its type's dropper.
        let entry = BoxedData {
            virq,
            data: data.cast(),
            drop: drop_boxed::<C::Data>,
        };
        // Within the capacity reserved above.
        boxed.push(entry, GFP_KERNEL)?;
        Ok(data)
    }

    /// Resets this level of `nr` interrupts at `virq`, frees the parent domain's levels, and
    /// drops the per-interrupt data [`Allocator::set_info_boxed`] installed on them once no CPU
    /// can be in a chip callback of them (after an RCU grace period, in a work item, so that
    /// the domain's mutex is not held across it): what a [`DomainOps::free`] of a domain with
    /// per-interrupt data calls. The default `free` does the same.
    ///
    /// Process context. Returns `EINVAL` for interrupts outside the ones being freed (nothing
    /// is freed then).
    pub fn free_boxed(&self, virq: u32, nr: u32) -> Result {
        self.check(virq, nr, 0)?;
        let boxed = self.state().take_boxed(virq, nr);
        // Reset this level and free the parent's, as `irq_domain_free_irqs_common()` does.
        self.reset_level(virq, nr);
        self.free_parents(virq, nr);
        self.clear_masked_by_active(virq, nr);
        if !boxed.is_empty() {
            // The data's drop is code of `T`'s module: keep it loaded until it ran.
            release_after_grace_period::<T::OwnerModule>(boxed);
        }
        Ok(())
    }

    /// Resets this level of `nr` interrupts at `virq` and frees the parent domain's levels
    /// (`irq_domain_free_irqs_common`): what a [`DomainOps::free`] calls last.
    ///
    /// Returns `EINVAL` for interrupts outside the ones being freed.
    pub fn free_common(&self, virq: u32, nr: u32) -> Result {
        self.check(virq, nr, 0)?;
        self.reset_level(virq, nr);
        self.free_parents(virq, nr);
        self.clear_masked_by_active(virq, nr);
        Ok(())
    }

    /// Frees the parent domain's levels of `nr` interrupts at `virq`, leaving this level to the
    /// caller (`irq_domain_free_irqs_parent`). Levels this domain did not allocate, or already
    /// freed, are left alone.
    ///
    /// An `alloc` that fails after [`Allocator::alloc_parent`] need not call it: the parent
    /// levels it allocated and did not free (with this, [`Allocator::free_common`] or
    /// [`Allocator::free_boxed`]) are freed when it returns the error, each once.
    ///
    /// Returns `ENODEV` for a domain without parent and `EINVAL` for interrupts outside the ones
    /// being freed.
    pub fn free_parent(&self, virq: u32, nr: u32) -> Result {
        self.check(virq, nr, 0)?;
        // SAFETY: `self.domain` is live for the duration of the operation.
        if unsafe { (*self.domain).parent }.is_null() {
            return Err(ENODEV);
        }
        self.free_parents(virq, nr);
        Ok(())
    }
}

/// State of a [`Domain`] beside the C domain.
#[pin_data]
struct DomainState {
    /// The virqs owned by live [`Mapping`]s of the domain. Locked across the "one owner per
    /// interrupt" check and the mapping: the core returns an existing mapping instead of failing
    /// (a `translate` that answered differently the second time, for one).
    #[pin]
    owned: Mutex<KVec<u32>>,
    /// The per-interrupt chip data [`Allocator::set_info_boxed`] installed at this level, until
    /// [`Allocator::free_boxed`] (or the domain's removal) releases it.
    #[pin]
    boxed: Mutex<KVec<BoxedData>>,
    /// The interrupts whose parent levels this domain allocated ([`Allocator::alloc_parent`],
    /// [`Allocator::alloc_parent_info`]) and has not freed, by virq (an XArray: an ITS records
    /// one per LPI). Each is freed once, by the `free` trampoline if `DomainOps::free` left it: a
    /// parent keeps state that refers to the interrupt's descriptor until then.
    #[pin]
    parents: XArray<KBox<u32>>,
}

/// A state bit of an interrupt's `irq_data` that the domain allocating it sets
/// ([`Allocator::set_states`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IrqdState {
    /// Routed to a single CPU at a time (`irqd_set_single_target()`).
    SingleTarget,
    /// Handled only from its own interrupt context (`irqd_set_handle_enforce_irqctx()`):
    /// software retriggers, which would break a controller's acknowledge/EOI order (the GIC's),
    /// are refused by genirq.
    HandleEnforceIrqctx,
    /// Its affinity is applied when it is activated (`irqd_set_affinity_on_activate()`); one
    /// set before then is only recorded.
    AffinityOnActivate,
    /// Resent when it fires while its handler still runs on another CPU
    /// (`irqd_set_resend_when_in_progress()`): an interrupt whose affinity moves without an
    /// active state to hold it back, such as a GICv3 LPI, would otherwise be lost then.
    ResendWhenInProgress,
}

/// Whether the MSI message of the interrupt can be composed, as far as level `irqd` decides: `true`
/// unless the interrupt is an MSI (it has an MSI descriptor), `irqd` is the level whose chip
/// `irq_chip_compose_msi_msg()` uses (the topmost with `irq_compose_msi_msg`), and that chip
/// wrote nothing.
///
/// The MSI domain above activates after this level (`__irq_domain_activate_irq()` activates the
/// parents first) and then writes what `irq_chip_compose_msi_msg()` composed into its zeroed
/// buffer to the device, whatever the chip did: a Rust chip whose `compose_msi_msg` fails writes
/// nothing, so the device would be given a zero address and data. The chip is called as the MSI
/// domain is about to call it, in the same context, into buffers poisoned with two different
/// patterns: a chip that wrote neither cannot compose. Composing has no side effects (genirq
/// composes again at every affinity change).
///
/// # Safety
///
/// `irqd` is a valid `irq_data` of an interrupt being activated, as genirq passes to `activate`.
#[cfg(CONFIG_GENERIC_MSI_IRQ)]
unsafe fn msi_composes(irqd: *mut bindings::irq_data) -> bool {
    // SAFETY: `irqd` is valid (the caller's contract); `common` is its descriptor's common data.
    if unsafe { (*(*irqd).common).msi_desc }.is_null() {
        return true;
    }
    // The level `irq_chip_compose_msi_msg()` uses: the topmost whose chip composes.
    // SAFETY: `irqd` is valid; its interrupt's top-level `irq_data` is its descriptor's.
    let mut level = unsafe { bindings::irq_get_irq_data((*irqd).irq) };
    while !level.is_null() {
        // SAFETY: `level` is a valid level of the interrupt's hierarchy (top-level, or a
        // `parent_data` of one), whose chip, if any, is a valid `irq_chip`.
        let compose = unsafe {
            let chip = (*level).chip;
            if chip.is_null() {
                None
            } else {
                (*chip).irq_compose_msi_msg
            }
        };
        if let Some(compose) = compose {
            if level != irqd {
                return true;
            }
            for poison in [0xa5a5_a5a5u32, 0x5a5a_5a5a] {
                // `bindings::msi_msg` is opaque: storage for two `struct msi_msg` (three 32-bit
                // words each: level-triggered MSIs compose two), suitably aligned.
                let mut buf = [0u64; 4];
                let msg = buf.as_mut_ptr().cast::<bindings::msi_msg>();
                let (mut lo, mut hi, mut data) = (0u32, 0u32, 0u32);
                // SAFETY: `msg` points to storage for a `msi_msg`, which the helpers and the
                // chip write and read; `irqd` is valid and `compose` is its chip's callback,
                // which genirq calls in this context.
                unsafe {
                    bindings::msi_msg_set(msg, poison, poison, poison);
                    compose(irqd, msg);
                    bindings::msi_msg_get(msg, &mut lo, &mut hi, &mut data);
                }
                if [lo, hi, data] != [poison; 3] {
                    return true;
                }
            }
            return false;
        }
        // SAFETY: As above.
        level = unsafe { (*level).parent_data };
    }
    true
}

/// Without MSI support nothing composes MSI messages.
///
/// # Safety
///
/// None: `irqd` is not used.
#[cfg(not(CONFIG_GENERIC_MSI_IRQ))]
unsafe fn msi_composes(_irqd: *mut bindings::irq_data) -> bool {
    true
}

/// The host data of a [`Domain`] (`irq_domain->host_data`): the domain's `T`, which is also the
/// chip data of the chips installed with it, and the Rust state the operations need.
///
/// `repr(C)`, the MSI domain information first: an MSI parent domain's host data is, for the
/// core and for C child domains, its `struct msi_domain_info` (`msi_get_domain_info()`); other
/// domains leave it zeroed.
#[repr(C)]
#[pin_data]
struct HostData<T> {
    #[cfg(CONFIG_GENERIC_MSI_IRQ)]
    msi: Opaque<bindings::msi_domain_info>,
    state: Pin<KBox<DomainState>>,
    #[pin]
    data: T,
}

impl DomainState {
    /// Allocates the state of a new domain.
    ///
    /// Deliberately not generic: the lock classes of `owned` and `boxed` are defined by
    /// `new_mutex!` here, once, in the `kernel` crate. Expanded in the generic
    /// `Domain::<T>::instantiate()`, its `static` key would still be one item, but its name (a
    /// `c_str!` constant) would be emitted by every crate that instantiates `Domain<T>` (e.g. the
    /// doctests): lockdep then finds one key under two name pointers and warns ("Looking for
    /// class ... but found a different class ... with the same key"). `inline(never)` keeps
    /// rustc from instantiating it in other crates.
    #[inline(never)]
    fn new() -> Result<Pin<KBox<Self>>> {
        KBox::pin_init(
            pin_init!(DomainState {
                owned <- new_mutex!(KVec::new(), "irq_domain_owned"),
                boxed <- new_mutex!(KVec::new(), "irq_domain_boxed"),
                parents <- XArray::new(AllocKind::Alloc),
            }),
            GFP_KERNEL,
        )
    }

    /// Releases all per-interrupt data left. Nothing may use it any more.
    fn release_all(&self) {
        let mut boxed = self.boxed.lock();
        while let Some(e) = boxed.pop() {
            e.release();
        }
    }

    /// Takes the per-interrupt data of `virq..virq + nr` out of the registry; what cannot be
    /// moved for want of memory stays for the domain's removal.
    fn take_boxed(&self, virq: u32, nr: u32) -> KVec<BoxedData> {
        let range = virq..virq.saturating_add(nr);
        let mut taken = KVec::new();
        let mut boxed = self.boxed.lock();
        // Room for what is taken only: freeing one vector of a device with many allocates a
        // handful of entries, not the whole registry.
        let n = boxed.iter().filter(|b| range.contains(&b.virq)).count();
        if n == 0 || taken.reserve(n, GFP_KERNEL).is_err() {
            return taken;
        }
        let mut i = 0;
        while i < boxed.len() && taken.len() < n {
            if range.contains(&boxed[i].virq) {
                if let Ok(e) = boxed.remove(i) {
                    // Within the capacity reserved above.
                    let _ = taken.push(e, GFP_KERNEL);
                }
            } else {
                i += 1;
            }
        }
        taken
    }
}

/// An interrupt domain owned by Rust; removing it is dropping it.
///
/// `'p` is the lifetime of the parent domain of a hierarchy (`'static` for root domains).
///
/// # Examples
///
/// A controller of 8 lines whose mask bits live in atomics, its chip and its linear domain:
///
/// ```
/// use kernel::irq::{Chip, ChipFlag, ChipFlags, Domain, DomainOps, FlowHandler, IrqData, Mapper};
/// use kernel::sync::atomic::{Atomic, Relaxed};
///
/// struct Ctrl {
///     masked: [Atomic<u32>; 8],
/// }
///
/// struct CtrlChip;
///
/// #[vtable]
/// impl Chip for CtrlChip {
///     type Data = Ctrl;
///     const NAME: &'static CStr = c"doc-ctrl";
///     const FLAGS: ChipFlags = ChipFlags::of(ChipFlag::SkipSetWake);
///
///     fn mask(c: &Ctrl, d: &IrqData) {
///         c.masked[d.hwirq()].store(1, Relaxed);
///     }
///
///     fn unmask(c: &Ctrl, d: &IrqData) {
///         c.masked[d.hwirq()].store(0, Relaxed);
///     }
///
///     fn eoi(_c: &Ctrl, _d: &IrqData) {}
/// }
///
/// #[vtable]
/// impl DomainOps for Ctrl {
///     fn map(&self, mapper: &Mapper<'_, Self>, _hwirq: usize) -> Result {
///         mapper.set_chip_and_handler::<CtrlChip>(FlowHandler::FastEoi)
///     }
/// }
///
/// // The chip has `eoi` but no `ack`: fasteoi fits, edge does not.
/// FlowHandler::FastEoi.check::<CtrlChip>()?;
/// assert_eq!(FlowHandler::Edge.check::<CtrlChip>(), Err(EINVAL));
///
/// let ctrl = Ctrl { masked: [const { Atomic::new(1) }; 8] };
/// let domain = Domain::new_linear(c"doc-ctrl", 8, Ok::<_, Error>(ctrl))?;
/// let line = domain.create_mapping(3)?;
/// assert_eq!(domain.find_mapping(3), Some(line.irq()));
/// // One owner per interrupt; out-of-range hwirqs are refused.
/// assert_eq!(domain.create_mapping(3).err(), Some(EBUSY));
/// assert_eq!(domain.create_mapping(8).err(), Some(EINVAL));
/// drop(line);
/// assert_eq!(domain.find_mapping(3), None);
/// # Ok::<(), Error>(())
/// ```
///
/// # Invariants
///
/// - `self.domain` is a live `irq_domain` created by `irq_domain_instantiate()` whose
///   `host_data` points to `*self.data` (a `HostData<T>`) and whose ops are `DomainVtable::<T>`.
/// - `self.fwnode` is the domain's fwnode: if `self.owns_fwnode`, its named fwnode, owned by
///   `self`; otherwise the firmware node it borrows, which outlives it: for a domain of which
///   only a `&'static` reference exists (it is never dropped, so never removed), one its owner
///   never frees; for one its creator owns, one its owner frees only after the domain is
///   removed.
/// - `self.hwirq_max` is the domain's `hwirq_max`.
/// - `self.owner` references the module of `T`'s code (`T::OwnerModule`), which the domain's
///   operations and chips are.
pub struct Domain<'p, T: DomainOps> {
    domain: NonNull<bindings::irq_domain>,
    fwnode: *mut bindings::fwnode_handle,
    owns_fwnode: bool,
    hwirq_max: usize,
    data: ManuallyDrop<Pin<KBox<HostData<T>>>>,
    owner: ManuallyDrop<ModuleRef>,
    _parent: PhantomData<&'p ()>,
}

// SAFETY: The domain is usable from any thread; the C side locks internally, `T: Send + Sync`,
// and the state is a mutex.
unsafe impl<T: DomainOps> Send for Domain<'_, T> {}
// SAFETY: All `&self` methods call thread-safe genirq functions or lock `state`; `T: Sync`.
unsafe impl<T: DomainOps> Sync for Domain<'_, T> {}

/// `hwirq_max` of a domain whose size the C core leaves open (`~0U`, a radix tree).
const HWIRQ_MAX_UNBOUNDED: usize = c_uint::MAX as usize;

impl<T: DomainOps> Domain<'static, T> {
    /// Creates a linear domain of `size` hwirqs (`irq_domain_create_linear`).
    ///
    /// Process context. Returns `EINVAL` for a size of 0, `ENOMEM`, or the error of
    /// `irq_domain_instantiate()`.
    pub fn new_linear(name: &CStr, size: u32, data: impl PinInit<T, Error>) -> Result<Self> {
        if size == 0 {
            return Err(EINVAL);
        }
        Self::instantiate(Fwnode::Named(name), size, size as usize, None, data)
    }

    /// Creates a tree (radix) domain for sparse hwirqs below `hwirq_max`
    /// (`irq_domain_create_tree`, with the bound C leaves open).
    ///
    /// Process context. Returns `EINVAL` for a `hwirq_max` of 0, `ENOMEM`, or the error of
    /// `irq_domain_instantiate()`.
    pub fn new_tree(name: &CStr, hwirq_max: usize, data: impl PinInit<T, Error>) -> Result<Self> {
        if hwirq_max == 0 {
            return Err(EINVAL);
        }
        Self::instantiate(Fwnode::Named(name), 0, hwirq_max, None, data)
    }

    /// Creates the root domain of an interrupt controller on the firmware node `fwnode` (its
    /// device-tree node, or on ACPI an irqchip fwnode), a tree for hwirqs below `hwirq_max` on
    /// the wired bus (`irq_domain_create_tree()`, then
    /// `irq_domain_update_bus_token(DOMAIN_BUS_WIRED)`), as a
    /// root irqchip's probe does. Device-tree interrupt specifiers naming the node map through
    /// it, and C child domains (a GICv3 ITS, say) can be stacked on it.
    ///
    /// The domain lives for the kernel's lifetime: it is never removed, and the returned
    /// reference is `'static`, which the root interrupt handler and C code may keep. `T` must
    /// implement [`DomainOps::alloc`] (a hierarchy's root).
    ///
    /// Process context (early boot included: the slab allocator is all it needs). Returns
    /// `EINVAL` for a `hwirq_max` of 0 or a `T` without `alloc`, `ENOMEM`, or the error of
    /// `irq_domain_instantiate()`.
    ///
    /// C source: `gic_init_bases()` in
    /// [`drivers/irqchip/irq-gic-v3.c`](srctree/drivers/irqchip/irq-gic-v3.c).
    ///
    /// # Safety
    ///
    /// `fwnode` is a valid firmware node that is not freed while a domain is on it: from a
    /// successful return on, never (the domain is never removed); after an error it may be
    /// (the node of a flattened device tree is never freed; an irqchip fwnode of ACPI's is freed
    /// by its owner only if this failed). No other domain of the wired bus is created on it.
    /// `T`'s [`DomainOps::select`], if any, answers only for this controller's specifiers.
    pub unsafe fn new_root(
        fwnode: *mut bindings::fwnode_handle,
        hwirq_max: usize,
        data: impl PinInit<T, Error>,
    ) -> Result<&'static Self> {
        if hwirq_max == 0 || !T::HAS_ALLOC {
            return Err(EINVAL);
        }
        // The box first: once the domain exists, nothing may fail (dropping it would remove it
        // and free the borrowed fwnode).
        let slot = KBox::<Self>::new_uninit(GFP_KERNEL)?;
        let domain = Self::instantiate(Fwnode::Root(fwnode), 0, hwirq_max, None, data)?;
        // The domain is never removed: the box is leaked, so its `Drop` never runs.
        Ok(KBox::leak(KBox::write(slot, domain)))
    }

    /// Creates an MSI parent domain on the firmware node `fwnode` below the Rust domain
    /// `parent`, for hwirqs below `hwirq_max` (radix tree): the level under the per-device MSI
    /// domains of PCI/MSI and platform MSI, as a GICv3 ITS's is (`its_init_domain()`,
    /// `msi_create_parent_irq_domain()`). `ops` says which buses' device domains it takes, their
    /// chips' names and flags, and how their `msi_prepare` reaches this domain's
    /// [`DomainOps::msi_prepare`].
    ///
    /// The domain is selected on `ops`' bus token and found through `fwnode` (`msi-parent`,
    /// `msi-map`); its host data is also its `struct msi_domain_info`. It lives for the kernel's
    /// lifetime, as [`Domain::new_root`]'s. `T` must implement [`DomainOps::alloc_info`],
    /// [`DomainOps::msi_prepare`] and [`DomainOps::msi_teardown`].
    ///
    /// `domain_flags`: `IRQ_DOMAIN_FLAG_ISOLATED_MSI` (the parent tells devices apart, so VFIO may
    /// assign them) and `IRQ_DOMAIN_FLAG_MSI_IMMUTABLE` (a message never changes once composed),
    /// as the hardware allows.
    ///
    /// Process context (early boot included). Returns `EINVAL` for a `hwirq_max` of 0, another
    /// flag, or a `T` that lacks one of those operations, `ENOMEM`, or the error of
    /// `irq_domain_instantiate()`.
    ///
    /// # Safety
    ///
    /// `fwnode` is a valid firmware node that is never freed once this succeeded (and may be
    /// after an error); no other domain of `ops`' bus is created on it. `T`'s
    /// [`DomainOps::select`], if any, answers only for this domain's children.
    #[cfg(CONFIG_GENERIC_MSI_IRQ)]
    #[cfg_attr(not(CONFIG_ARM_GIC_V3_RUST), allow(dead_code))] // Its first user is the GICv3 ITS.
    pub(crate) unsafe fn new_msi_parent<P: DomainOps>(
        fwnode: *mut bindings::fwnode_handle,
        parent: &'static Domain<'static, P>,
        hwirq_max: usize,
        ops: &'static MsiParentOps,
        domain_flags: u32,
        data: impl PinInit<T, Error>,
    ) -> Result<&'static Self> {
        // The core and C child domains read the host data as the `msi_domain_info`.
        const { assert!(core::mem::offset_of!(HostData<T>, msi) == 0) };
        if hwirq_max == 0 || !T::HAS_ALLOC_INFO || !T::HAS_MSI_PREPARE || !T::HAS_MSI_TEARDOWN {
            return Err(EINVAL);
        }
        let known =
            bindings::IRQ_DOMAIN_FLAG_ISOLATED_MSI | bindings::IRQ_DOMAIN_FLAG_MSI_IMMUTABLE;
        if domain_flags & !known != 0 {
            return Err(EINVAL);
        }
        let flags = domain_flags
            | if takes_msi_info::<P>() {
                FLAG_PARENT_TAKES_MSI_INFO
            } else {
                0
            };
        let slot = KBox::<Self>::new_uninit(GFP_KERNEL)?;
        let domain = Self::instantiate(
            Fwnode::MsiParent(fwnode, ops),
            0,
            hwirq_max,
            Some((parent.as_raw(), flags)),
            data,
        )?;
        // Never removed, as a root domain: the box is leaked, its `Drop` never runs.
        Ok(KBox::leak(KBox::write(slot, domain)))
    }

    /// Allocates `nr` consecutive interrupts for the specifier `params` that are never freed
    /// (`irq_domain_alloc_irqs()`): a root controller's IPIs, say, which the architecture's SMP
    /// code takes over (`set_smp_ipi_range()` on arm64). Returns the first virq.
    ///
    /// Only for domains that live for the kernel's lifetime ([`Domain::new_root`]). Process
    /// context. Returns `EINVAL` for a domain without [`DomainOps::alloc`], an `nr` of 0 or a
    /// refused specifier, or the error of the allocation.
    pub fn alloc_static_irqs(&'static self, params: &[u32], nr: u32) -> Result<u32> {
        if !T::HAS_ALLOC || nr == 0 {
            return Err(EINVAL);
        }
        let mut spec = FwSpec::new(self.fwnode, params)?;
        // SAFETY: `self.domain` is live (type invariant) and allocates with `irq_fwspec`
        // arguments (`T::HAS_ALLOC`), which `spec` is; the interrupts are never freed, so no
        // `Mapping` owns them.
        let virq = unsafe {
            bindings::__irq_domain_alloc_irqs(
                self.as_raw(),
                -1,
                nr,
                bindings::NUMA_NO_NODE,
                core::ptr::from_mut(&mut spec.0).cast(),
                false,
                core::ptr::null(),
            )
        };
        to_result(virq)?;
        if virq == 0 {
            return Err(EINVAL);
        }
        Ok(virq as u32)
    }
}

/// The firmware node a [`Domain`] is created on.
enum Fwnode<'a> {
    /// A named fwnode allocated for the domain and freed with it.
    Named(&'a CStr),
    /// An existing node the domain borrows forever (a root domain's device-tree node).
    Root(*mut bindings::fwnode_handle),
    /// An existing node an MSI parent domain borrows forever (a GICv3 ITS's node).
    #[cfg(CONFIG_GENERIC_MSI_IRQ)]
    #[cfg_attr(not(CONFIG_ARM_GIC_V3_RUST), allow(dead_code))]
    // Its first user is the GICv3 ITS.
    MsiParent(*mut bindings::fwnode_handle, &'static MsiParentOps),
}

impl<'p, T: DomainOps> Domain<'p, T> {
    /// Creates a hierarchical domain below `parent` (`irq_domain_create_hierarchy`): a linear
    /// revmap of `size` hwirqs, or with `size == 0`, as in C, a radix tree for hwirqs up to
    /// `~0U` (the 24-bit LPI space of a GICv3 ITS, say). `T` must implement
    /// [`DomainOps::alloc`].
    ///
    /// Process context. Returns `EINVAL` if `T` has no `alloc`, `ENOMEM`, or the error of
    /// `irq_domain_instantiate()`.
    #[cfg(CONFIG_IRQ_DOMAIN_HIERARCHY)]
    pub fn new_hierarchy<P: DomainOps>(
        name: &CStr,
        parent: &'p Domain<'_, P>,
        size: u32,
        data: impl PinInit<T, Error>,
    ) -> Result<Self> {
        Self::new_child(name, parent.as_raw(), takes_msi_info::<P>(), size, data)
    }

    /// Creates a hierarchical domain below the C domain `parent`, e.g.
    /// [`ForeignDomain::x86_vector`], as [`Domain::new_hierarchy`] does below a Rust one. `T`
    /// must implement [`DomainOps::alloc_info`] or [`DomainOps::alloc`]; its levels allocate the
    /// parent's with [`Allocator::alloc_parent_info`].
    ///
    /// Process context. Returns `EINVAL` if `T` allocates nothing, `ENOMEM`, or the error of
    /// `irq_domain_instantiate()`.
    #[cfg(CONFIG_GENERIC_MSI_IRQ)]
    pub fn new_hierarchy_on(
        name: &CStr,
        parent: &'p ForeignDomain,
        size: u32,
        data: impl PinInit<T, Error>,
    ) -> Result<Self> {
        Self::new_child(name, parent.as_raw(), true, size, data)
    }

    #[cfg(CONFIG_IRQ_DOMAIN_HIERARCHY)]
    fn new_child(
        name: &CStr,
        parent: *mut bindings::irq_domain,
        parent_takes_msi_info: bool,
        size: u32,
        data: impl PinInit<T, Error>,
    ) -> Result<Self> {
        if !allocates::<T>() {
            return Err(EINVAL);
        }
        let hwirq_max = if size == 0 {
            HWIRQ_MAX_UNBOUNDED
        } else {
            size as usize
        };
        let flags = if parent_takes_msi_info {
            FLAG_PARENT_TAKES_MSI_INFO
        } else {
            0
        };
        Self::instantiate(
            Fwnode::Named(name),
            size,
            hwirq_max,
            Some((parent, flags)),
            data,
        )
    }

    fn instantiate(
        node: Fwnode<'_>,
        size: u32,
        hwirq_max: usize,
        parent: Option<(*mut bindings::irq_domain, u32)>,
        data: impl PinInit<T, Error>,
    ) -> Result<Self> {
        #[cfg(CONFIG_GENERIC_MSI_IRQ)]
        let msi_parent = match node {
            Fwnode::MsiParent(_, ops) => Some(ops),
            _ => None,
        };
        #[cfg(CONFIG_GENERIC_MSI_IRQ)]
        if msi_parent.is_none() && T::HAS_MSI_PREPARE {
            // Only an MSI parent's children call `msi_prepare`.
            return Err(EINVAL);
        }
        // Without the MSI library, no child would find it (`msi_lib_irq_domain_select()`)
        // unless it selects itself.
        #[cfg(all(CONFIG_GENERIC_MSI_IRQ, not(CONFIG_IRQ_MSI_LIB)))]
        if msi_parent.is_some() && !T::HAS_SELECT {
            return Err(EOPNOTSUPP);
        }
        // C asks a domain with `select` about every lookup (see `DomainOps::select`): only the
        // `unsafe` constructors, which borrow a firmware node C knows, may create one.
        if T::HAS_SELECT && matches!(node, Fwnode::Named(_)) {
            return Err(EINVAL);
        }
        // One allocation argument type: a `T` with both would have specifiers read as
        // `msi_alloc_info_t`.
        if T::HAS_ALLOC && takes_msi_info::<T>() {
            return Err(EINVAL);
        }
        let owner = ModuleRef::get(crate::module::this_module::<T::OwnerModule>())?;
        let state = DomainState::new()?;
        let data = KBox::pin_init(
            try_pin_init!(HostData {
                #[cfg(CONFIG_GENERIC_MSI_IRQ)]
                msi: Opaque::new(bindings::msi_domain_info {
                    ops: if msi_parent.is_some() {
                        MsiVtable::<T>::build()
                    } else {
                        core::ptr::null_mut()
                    },
                    ..pin_init::zeroed()
                }),
                state,
                data <- data,
            }? Error),
            GFP_KERNEL,
        )?;
        let (fwnode, owned, bus_token) = match node {
            Fwnode::Named(name) => {
                // SAFETY: `name` is a valid C string; the core copies it.
                let fwnode = unsafe { bindings::irq_domain_alloc_named_fwnode(name.as_char_ptr()) };
                if fwnode.is_null() {
                    return Err(ENOMEM);
                }
                (fwnode, true, bindings::irq_domain_bus_token::DOMAIN_BUS_ANY)
            }
            Fwnode::Root(fwnode) => (
                fwnode,
                false,
                bindings::irq_domain_bus_token::DOMAIN_BUS_WIRED,
            ),
            // As `msi_create_parent_irq_domain()`, whose other step (a linear revmap as large
            // as `hwirq_max`) an LPI-sized domain cannot afford: the bus it is selected on.
            #[cfg(CONFIG_GENERIC_MSI_IRQ)]
            Fwnode::MsiParent(fwnode, ops) => (fwnode, false, ops.bus_select_token()),
        };
        #[cfg(CONFIG_GENERIC_MSI_IRQ)]
        let parent_flags = parent.map_or(0, |(_, f)| f)
            | if msi_parent.is_some() {
                bindings::IRQ_DOMAIN_FLAG_MSI_PARENT
            } else {
                0
            };
        #[cfg(not(CONFIG_GENERIC_MSI_IRQ))]
        let parent_flags = parent.map_or(0, |(_, f)| f);
        let info = bindings::irq_domain_info {
            fwnode,
            size,
            hwirq_max,
            ops: DomainVtable::<T>::build(),
            host_data: core::ptr::from_ref::<HostData<T>>(&data).cast_mut().cast(),
            #[cfg(CONFIG_IRQ_DOMAIN_HIERARCHY)]
            parent: parent.map_or(core::ptr::null_mut(), |(p, _)| p),
            domain_flags: parent_flags,
            bus_token,
            ..pin_init::zeroed()
        };
        // SAFETY: `info` is fully initialised; `host_data` points into a pinned box that
        // `Self` owns and drops only after removing the domain.
        let domain = match from_err_ptr(unsafe { bindings::irq_domain_instantiate(&info) })
            .and_then(|d| NonNull::new(d).ok_or(ENOMEM))
        {
            Ok(d) => d,
            Err(e) => {
                if owned {
                    // SAFETY: `fwnode` was allocated above and is not used by any domain.
                    unsafe { bindings::irq_domain_free_fwnode(fwnode) };
                }
                return Err(e);
            }
        };
        #[cfg(CONFIG_GENERIC_MSI_IRQ)]
        if let Some(ops) = msi_parent {
            // SAFETY: `domain` was just created and is not yet visible to any child; `ops` is
            // `'static`.
            unsafe { (*domain.as_ptr()).msi_parent_ops = ops.as_raw() };
        }
        // INVARIANT: `domain` was just instantiated with `host_data` = `data`, `fwnode` and
        // `hwirq_max`.
        Ok(Self {
            domain,
            fwnode,
            owns_fwnode: owned,
            hwirq_max,
            data: ManuallyDrop::new(data),
            owner: ManuallyDrop::new(owner),
            _parent: PhantomData,
        })
    }

    /// Returns the host data (the `T` of the domain).
    pub fn data(&self) -> &T {
        &self.data.data
    }

    /// Returns the raw `irq_domain` pointer.
    ///
    /// C code may map interrupts of the domain through it (firmware specifiers) and stack child
    /// domains on it; [`Domain::try_remove`] refuses to remove the domain while such a mapping
    /// has an action or such a child exists.
    pub fn as_raw(&self) -> *mut bindings::irq_domain {
        self.domain.as_ptr()
    }

    /// Maps `hwirq`, calling [`DomainOps::map`] (`irq_create_mapping`) for a simple domain.
    ///
    /// Process context. Returns `EINVAL` if `hwirq` is out of range, the domain is hierarchical
    /// (map those with [`Domain::create_fwspec_mapping`]) or the mapping fails, and `EBUSY` if
    /// `hwirq` is already mapped (each interrupt has one [`Mapping`] owner).
    pub fn create_mapping(&self, hwirq: usize) -> Result<Mapping<'_>> {
        if allocates::<T>() {
            // `irq_create_mapping()` would associate the hwirq without running `alloc`: a
            // descriptor without chip at this level.
            return Err(EINVAL);
        }
        // SAFETY: `self.domain` is live (type invariant).
        self.map_owned(hwirq, || unsafe {
            bindings::irq_create_mapping(self.as_raw(), hwirq)
        })
    }

    /// Maps the interrupt of specifier `params`, calling [`DomainOps::xlate`] or
    /// [`DomainOps::translate`], then `map` or `alloc` (`irq_create_fwspec_mapping`).
    ///
    /// Process context. Returns `EINVAL` if the specifier is refused, if C would map it in
    /// another domain (whose `select` claims this domain's node), or if the mapping fails, and
    /// `EBUSY` if its hwirq is already mapped.
    pub fn create_fwspec_mapping(&self, params: &[u32]) -> Result<Mapping<'_>> {
        if takes_msi_info::<T>() {
            // Its `alloc` takes `msi_alloc_info_t`, not a specifier.
            return Err(EINVAL);
        }
        let mut spec = FwSpec::new(self.fwnode, params)?;
        // The hwirq, as the core will translate it, to refuse a second owner up front.
        let hwirq = if T::HAS_TRANSLATE {
            self.data().translate(&spec)?.0
        } else if T::HAS_XLATE {
            self.data().xlate(params)?.0
        } else {
            *params.first().ok_or(EINVAL)? as usize
        };
        // Refused up front if C would map it in another domain (a C domain's `select` claiming
        // this domain's node, newer ones asked first): a mapping made there would not be this
        // domain's to own, nor the caller's to dispose of. `map_owned` checks the result again,
        // for a domain registered meanwhile.
        if !self.finds_itself(&mut spec) {
            return Err(EINVAL);
        }
        // SAFETY: `spec` is a valid specifier for this domain's fwnode.
        self.map_owned(hwirq, || unsafe {
            bindings::irq_create_fwspec_mapping(&mut spec.0)
        })
    }

    /// Allocates one interrupt in a domain that implements [`DomainOps::alloc_info`], with the
    /// MSI allocation argument `info` (`irq_domain_alloc_irqs`): its `alloc_info` and those of
    /// its parents set it up.
    ///
    /// Process context. Returns `EINVAL` for a domain without `alloc_info`, or the error of the
    /// allocation.
    #[cfg(CONFIG_GENERIC_MSI_IRQ)]
    pub fn alloc_irqs(&self, info: &MsiAllocInfo) -> Result<Mapping<'_>> {
        if !takes_msi_info::<T>() {
            return Err(EINVAL);
        }
        // SAFETY: `self.domain` is live (type invariant); its `alloc` takes `msi_alloc_info_t`
        // (checked above), which `info` is.
        let virq = unsafe {
            bindings::__irq_domain_alloc_irqs(
                self.as_raw(),
                -1,
                1,
                bindings::NUMA_NO_NODE,
                info.as_raw().cast(),
                false,
                core::ptr::null(),
            )
        };
        to_result(virq)?;
        let virq = virq as u32;
        let mut owned = self.data.state.owned.lock();
        if let Err(e) = owned.push(virq, GFP_KERNEL) {
            drop(owned);
            // SAFETY: `virq` was just allocated by this call and nobody else owns it.
            unsafe { bindings::irq_dispose_mapping(virq) };
            return Err(e.into());
        }
        // INVARIANT: `virq` was just allocated in this domain, a new interrupt, recorded as
        // owned by this `Mapping`.
        Ok(Mapping {
            virq,
            owned: &self.data.state.owned,
        })
    }

    /// Whether C looks this domain up for `spec`, as `irq_create_fwspec_mapping()` does
    /// (`fwspec_to_domain()`: the wired bus, then any).
    fn finds_itself(&self, spec: &mut FwSpec) -> bool {
        fwspec_domain(spec) == self.as_raw()
    }

    fn map_owned(&self, hwirq: usize, map: impl FnOnce() -> c_uint) -> Result<Mapping<'_>> {
        if hwirq >= self.hwirq_max {
            return Err(EINVAL);
        }
        let mut owned = self.data.state.owned.lock();
        if self.find_mapping(hwirq).is_some() {
            return Err(EBUSY);
        }
        owned.reserve(1, GFP_KERNEL)?;
        let virq = map();
        if virq == 0 {
            return Err(EINVAL);
        }
        let ours = {
            // Another domain's mapping may be disposed of meanwhile: its descriptor is freed
            // after a grace period.
            let _rcu = rcu::read_lock();
            // SAFETY: No requirements; the descriptor, if any, lives until the RCU unlock.
            let top = unsafe { bindings::irq_get_irq_data(virq) };
            // SAFETY: `top` is null or the top-level `irq_data` of `virq`, live until the RCU
            // unlock.
            !top.is_null() && unsafe { (*top).domain } == self.as_raw()
        };
        if !ours {
            // Another domain answered the lookup (a C domain's `select` registered since
            // `finds_itself()`): not this domain's to own or dispose of, so it is left mapped
            // there (leaked, if it is new).
            return Err(EINVAL);
        }
        if owned.contains(&virq) {
            // The core found an existing mapping after all: it has its owner.
            return Err(EBUSY);
        }
        // Within the capacity reserved above.
        owned.push(virq, GFP_KERNEL)?;
        // INVARIANT: `virq` is mapped in this domain and recorded as owned by this `Mapping`
        // only (it was not in `owned`, which the lock keeps consistent).
        Ok(Mapping {
            virq,
            owned: &self.data.state.owned,
        })
    }

    /// Returns the virq `hwirq` is mapped to, if any (`irq_find_mapping`).
    ///
    /// Any context.
    pub fn find_mapping(&self, hwirq: usize) -> Option<u32> {
        // SAFETY: `self.domain` is live (type invariant).
        let virq = unsafe { bindings::irq_find_mapping(self.as_raw(), hwirq) };
        (virq != 0).then_some(virq)
    }

    /// Runs the flow handler of `hwirq` (`generic_handle_domain_irq`).
    ///
    /// Hard IRQ context (a chained handler or a root handler), interrupts disabled as
    /// `irqs_off` proves. Returns `EINVAL` if `hwirq` is not mapped.
    #[inline]
    pub fn handle_irq(&self, hwirq: usize, _irqs_off: &LocalInterruptDisabled) -> Result {
        // SAFETY: `self.domain` is live (type invariant); interrupts are disabled, so the
        // descriptor looked up under RCU stays valid while its flow handler runs.
        let r = unsafe { bindings::generic_handle_domain_irq(self.as_raw(), hwirq) };
        // Not `to_result()`, an out-of-line call on the path of every interrupt.
        if r == 0 {
            Ok(())
        } else {
            Err(Error::from_errno(r))
        }
    }

    /// Runs the flow handler of `hwirq` with interrupts disabled around it
    /// (`generic_handle_domain_irq_safe`).
    ///
    /// Any context but NMI. Returns `EINVAL` if `hwirq` is not mapped.
    pub fn handle_irq_safe(&self, hwirq: usize) -> Result {
        // SAFETY: `self.domain` is live (type invariant); the C function disables interrupts.
        to_result(unsafe { bindings::generic_handle_domain_irq_safe(self.as_raw(), hwirq) })
    }

    /// Removes the domain: disposes of every mapping left in it (leaked [`Mapping`]s and those
    /// C code made), removes the C domain and, after an RCU grace period, frees the host data.
    ///
    /// Process context; sleeps. Returns the domain back with `EBUSY` if a mapping of it still
    /// has an action (a handler C code requested, a leaked registration or chained handler) or a
    /// C child domain is stacked on it, and with `ENOMEM` if the mappings cannot be listed.
    /// Dropping a domain that cannot be removed leaks it with an error message.
    pub fn try_remove(self) -> core::result::Result<(), (Error, Self)> {
        crate::task::might_sleep();
        let mut this = ManuallyDrop::new(self);
        match this.remove() {
            Ok(()) => Ok(()),
            Err(e) => Err((e, ManuallyDrop::into_inner(this))),
        }
    }

    /// The body of [`Domain::try_remove`] and of the drop; on error nothing has changed.
    fn remove(&mut self) -> Result {
        // SAFETY: `self.domain` is live (type invariant) and no `Mapping` of it is alive: they
        // borrow `self`, and leaked ones never use their interrupt again.
        unsafe { dispose_all(self.as_raw()) }?;
        // SAFETY: The domain is live and has no mappings and no child domains left.
        unsafe { bindings::irq_domain_remove(self.as_raw()) };
        if self.owns_fwnode {
            // SAFETY: The fwnode is owned by `self` and no longer used by the removed domain.
            unsafe { bindings::irq_domain_free_fwnode(self.fwnode) };
        }
        // A flow handler that started before its interrupt was disposed of may still call a chip
        // callback, which reads the host data as chip data: `handle_fasteoi_irq()` loads the
        // chip before it takes `desc->lock` (and uses that copy to EOI a line without action),
        // the `synchronize_irq()` of `irq_domain_disassociate()` only waits for handlers already
        // in progress, and linear and tree domains leave `chip_data` set. Flow handlers run with
        // interrupts disabled, an RCU read-side critical section, as genirq relies on when it
        // frees descriptors (`irq_desc_free_rcu()`): wait for them before freeing the data.
        // SAFETY: Process context.
        unsafe { bindings::synchronize_rcu() };
        // Per-interrupt data that no `free` released.
        self.data.state.release_all();
        // SAFETY: The domain that pointed at the host data is removed; it is not used again.
        unsafe { ManuallyDrop::drop(&mut self.data) };
        // Last: nothing refers to the module's code any more.
        // SAFETY: As for `self.data`.
        unsafe { ManuallyDrop::drop(&mut self.owner) };
        Ok(())
    }
}

/// Disposes of every mapping of `domain`, unless one of them has an action or a child domain is
/// stacked on `domain` (`EBUSY`); `ENOMEM` if the mappings cannot be listed. On error nothing
/// has changed.
///
/// Walks the allocated descriptors (O(`nr_irqs`), not O(`hwirq_max`)): the mappings of leaked
/// [`Mapping`]s and those C code made on [`Domain::as_raw`]. Not generic, so that the C functions
/// it calls need no export to modules.
///
/// # Safety
///
/// `domain` is a live domain created by [`Domain`], and nothing uses its mappings any more.
#[inline(never)]
unsafe fn dispose_all(domain: *mut bindings::irq_domain) -> Result {
    #[cfg(CONFIG_IRQ_DOMAIN_HIERARCHY)]
    // SAFETY: `domain` is live (the function's safety requirements).
    if unsafe { bindings::irq_domain_has_children(domain) } {
        // A Rust child borrows its parent: this is a C child, or a leaked Rust one. A C child
        // created after this check is not seen: C finds no domain of `new_linear()`,
        // `new_tree()` or `new_hierarchy()` (their fwnodes are their own, and they have no
        // `select`), and the callers of `new_msi_parent_on()` promise that nothing looks theirs
        // up once it may be dropped.
        return Err(EBUSY);
    }
    let mut virqs = KVec::new();
    // SAFETY: No requirements.
    let nr_irqs = unsafe { bindings::irq_get_nr_irqs() };
    // SAFETY: No requirements; returns `nr_irqs` or more when there is no next interrupt.
    let mut virq = unsafe { bindings::irq_get_next_irq(0) };
    while virq < nr_irqs {
        let mine = {
            // Descriptors are freed after an RCU grace period (`delayed_free_desc()`): the one
            // looked up stays valid in the read-side critical section.
            let _rcu = rcu::read_lock();
            // SAFETY: Any virq may be looked up; a non-null result is valid under RCU.
            let irqd = unsafe { bindings::irq_get_irq_data(virq) };
            // SAFETY: `irqd` is valid if non-null (above).
            !irqd.is_null() && unsafe { (*irqd).domain } == domain
        };
        if mine {
            // SAFETY: Any virq may be queried.
            if unsafe { bindings::irq_has_action(virq) } {
                return Err(EBUSY);
            }
            virqs.push(virq, GFP_KERNEL)?;
        }
        // SAFETY: As above.
        virq = unsafe { bindings::irq_get_next_irq(virq + 1) };
    }
    for virq in virqs {
        // Still this domain's: C code may have disposed of it meanwhile (its bug), and another
        // domain reused the number.
        let mine = {
            let _rcu = rcu::read_lock();
            // SAFETY: As in the walk above.
            let irqd = unsafe { bindings::irq_get_irq_data(virq) };
            // SAFETY: As in the walk above.
            !irqd.is_null() && unsafe { (*irqd).domain } == domain
        };
        if mine {
            // SAFETY: `virq` is mapped in the live `domain`, had no action, and nothing uses it
            // (the function's safety requirements).
            unsafe { bindings::irq_dispose_mapping(virq) };
        }
    }
    Ok(())
}

impl<T: DomainOps> Drop for Domain<'_, T> {
    /// Process context; sleeps (mutexes, an RCU grace period). A domain that
    /// [`Domain::try_remove`] refuses to remove is leaked (the C domain, its host data, its
    /// fwnode and its module reference stay), rather than free what genirq or C code still
    /// uses.
    fn drop(&mut self) {
        crate::task::might_sleep();
        if let Err(e) = self.remove() {
            pr_err!(
                "irq: leaking interrupt domain {:?}: {:?}\n",
                // SAFETY: The domain is live (not removed: `remove` failed).
                unsafe { CStr::from_char_ptr((*self.as_raw()).name) },
                e
            );
        }
    }
}

/// A mapped interrupt of a [`Domain`]; dropping it disposes of the mapping.
///
/// # Invariants
///
/// `self.virq` is a mapped interrupt of a domain that outlives `'d`, recorded in that domain's
/// `owned` list, whose only owner is `self`.
pub struct Mapping<'d> {
    virq: u32,
    owned: &'d Mutex<KVec<u32>>,
}

impl<'d> Mapping<'d> {
    /// Returns the Linux interrupt number (virq).
    pub fn irq(&self) -> u32 {
        self.virq
    }

    /// Gives up ownership of the mapping without disposing of it, and returns its virq: the
    /// caller now disposes of it (`irq_dispose_mapping()`) before the domain goes, or leaks it.
    /// Disposing of an interrupt of a hierarchy frees its parent levels at once: the caller
    /// waits for flows that may still walk them, as the drop of a `Mapping` does (a grace period
    /// after installing `handle_bad_irq`), or disposes of it only once it can no longer fire.
    ///
    /// Process context (a mutex).
    pub fn into_raw(self) -> u32 {
        let virq = self.virq;
        self.owned.lock().retain(|v| *v != virq);
        core::mem::forget(self);
        virq
    }

    /// Returns the interrupt's descriptor, e.g. to take its lock with [`IrqDesc::lock`].
    pub fn desc(&self) -> &IrqDesc {
        // SAFETY: `self.virq` is mapped (type invariant), so it has a descriptor, which stays
        // allocated until `self` disposes of the mapping.
        unsafe { IrqDesc::from_raw(bindings::irq_to_desc(self.virq)) }
    }

    /// Returns a request for registering a handler on this interrupt with
    /// [`Registration`](super::Registration) or
    /// [`ThreadedRegistration`](super::ThreadedRegistration).
    pub fn request(&self) -> IrqRequest<'_> {
        // SAFETY: `self.virq` is mapped and, as `self` is its only owner, stays mapped for the
        // borrow of `self`.
        unsafe { IrqRequest::from_virq(self.virq) }
    }

    /// Sets the trigger type of the line (`irq_set_irq_type`).
    ///
    /// Process context. Returns the chip's error, e.g. `EINVAL` for a type it does not support.
    pub fn set_trigger_type(&self, ty: TriggerType) -> Result {
        // SAFETY: `self.virq` is mapped (type invariant).
        to_result(unsafe { bindings::irq_set_irq_type(self.virq, ty.as_raw()) })
    }

    /// Makes [`Mapping::disable`] mask the line at once instead of lazily on the next
    /// interrupt (`IRQ_DISABLE_UNLAZY`).
    pub fn set_disable_unlazy(&self) {
        // `IRQ_*` status flags are the low bits of an `unsigned long`.
        let set = bindings::IRQ_DISABLE_UNLAZY as c_ulong;
        // SAFETY: `self.virq` is mapped (type invariant).
        unsafe { bindings::irq_modify_status(self.virq, 0, set) };
    }

    /// Disables the line and waits for running handlers (`disable_irq`). Calls nest.
    ///
    /// Process context; may sleep.
    pub fn disable(&self) {
        // SAFETY: `self.virq` is mapped (type invariant).
        unsafe { bindings::disable_irq(self.virq) };
    }

    /// Undoes one [`Mapping::disable`] (`enable_irq`).
    pub fn enable(&self) {
        // SAFETY: `self.virq` is mapped (type invariant).
        unsafe { bindings::enable_irq(self.virq) };
    }

    /// Installs `handler` as the chained flow handler of this (parent) interrupt.
    ///
    /// Process context. The module of `H` (`H::OwnerModule`) stays loaded while the handler is
    /// installed; `ENODEV` if it is being unloaded. The handler is removed when the returned
    /// [`Chained`] is dropped; if that is leaked, so is the handler, which stays installed.
    ///
    /// Returns `EINVAL` if the interrupt's chip can neither EOI nor mask and unmask, which
    /// `chained_irq_enter()` and `chained_irq_exit()` need, and `EBUSY` if the interrupt has an
    /// action: a chained handler still installed (its [`Chained`] leaked, which releases the
    /// borrow of `self`) or a leaked registration. Replacing either would change the handler
    /// data under a CPU that may be running the old handler.
    pub fn set_chained_handler<H: ChainedHandler + 'static>(
        &mut self,
        handler: KBox<H>,
    ) -> Result<Chained<'_, H>> {
        // SAFETY: `self.virq` is mapped (type invariant). An installed chained handler is an
        // action (`chained_action`) until it is uninstalled.
        if unsafe { bindings::irq_has_action(self.virq) } {
            return Err(EBUSY);
        }
        // SAFETY: `self.virq` is mapped (type invariant).
        let irqd = unsafe { bindings::irq_get_irq_data(self.virq) };
        // SAFETY: A mapped interrupt has valid `irq_data`, whose `chip` is null or valid.
        let chip = unsafe { (*irqd).chip.as_ref() }.ok_or(EINVAL)?;
        if chip.irq_eoi.is_none() && (chip.irq_mask.is_none() || chip.irq_unmask.is_none()) {
            return Err(EINVAL);
        }
        // The trampoline and `H::handle` are code of `H`'s module: a leaked `Chained` keeps it.
        let owner = ModuleRef::get(crate::module::this_module::<H::OwnerModule>())?;
        let handler = KBox::into_raw(handler);
        // SAFETY: `self.virq` is mapped and exclusively borrowed (no registration on it can
        // exist); `handler` stays valid until `Chained` drops it after uninstalling, or forever
        // if `Chained` is leaked.
        unsafe {
            bindings::irq_set_chained_handler_and_data(
                self.virq,
                Some(chained_trampoline::<H>),
                handler.cast(),
            )
        };
        // INVARIANT: The handler was just installed on `self.virq` with `handler` as data.
        Ok(Chained {
            virq: self.virq,
            handler,
            owner: ManuallyDrop::new(owner),
            _m: PhantomData,
        })
    }
}

impl Drop for Mapping<'_> {
    /// Process context; sleeps (`irq_dispose_mapping()`). Never drop a `Mapping` from a handler
    /// or with a spinlock held.
    ///
    /// An interrupt that still has an action (a registration or chained handler borrowed from
    /// the mapping and leaked) is not disposed of: its descriptor would be freed under the
    /// action. The domain's removal refuses it in turn. An interrupt of a hierarchy waits for
    /// an RCU grace period first (see `quiesce_hierarchy()`): one per dropped mapping.
    fn drop(&mut self) {
        crate::task::might_sleep();
        // SAFETY: `self.virq` is mapped (type invariant).
        if unsafe { bindings::irq_has_action(self.virq) } {
            pr_err!(
                "irq: leaking mapping of irq {}: it has an action\n",
                self.virq
            );
            return;
        }
        let virq = self.virq;
        // SAFETY: `virq` is mapped and owned by `self` only (type invariant).
        if !unsafe { quiesce_hierarchy(virq) } {
            pr_err!(
                "irq: leaking mapping of irq {}: requested while it was disposed of\n",
                virq
            );
            return;
        }
        // Held across the disposal: a concurrent `map_owned` whose core call finds this mapping
        // still alive must see it owned.
        let mut owned = self.owned.lock();
        owned.retain(|v| *v != virq);
        // SAFETY: `self.virq` is mapped and owned by `self` only (type invariant), and has no
        // action left.
        unsafe { bindings::irq_dispose_mapping(virq) };
        drop(owned);
    }
}

/// The domain C maps the specifier `spec` in (`fwspec_to_domain()` for a specifier with a fwnode:
/// the wired bus, then any), null if none. No reference is taken on it: the caller answers for
/// its use, or only compares it.
fn fwspec_domain(spec: &mut FwSpec) -> *mut bindings::irq_domain {
    let mut found = core::ptr::null_mut();
    for bus in [
        bindings::irq_domain_bus_token::DOMAIN_BUS_WIRED,
        bindings::irq_domain_bus_token::DOMAIN_BUS_ANY,
    ] {
        // SAFETY: `spec` is a valid specifier.
        found = unsafe { bindings::irq_find_matching_fwspec(&mut spec.0, bus) };
        if !found.is_null() {
            break;
        }
    }
    found
}

/// Makes the flows of `virq`, an interrupt about to be disposed of, end before its parent levels
/// in a hierarchy are freed; `false` if it was requested meanwhile (then nothing has changed and
/// it must not be disposed of).
///
/// genirq frees the parent levels' `irq_data` at once (`irq_domain_free_irq_data()`), with no
/// grace period. `irq_domain_remove_irq()` installs `handle_bad_irq()` and waits for handlers in
/// progress (`synchronize_irq()`) first, but not for a flow that found the interrupt and has not
/// taken its lock yet (a chained handler injecting its hwirq with [`Domain::handle_irq`] on
/// another CPU, say): `handle_fasteoi_irq()` loads the chip before the lock and, without an
/// action, EOIs through it (`irq_chip_eoi_parent()`, [`IrqData::parent`](crate::irq::IrqData)),
/// and the per-CPU flows take no lock. So `handle_bad_irq()` is installed here, under the lock
/// (without the chip callbacks `irq_set_handler()` would make), and the flows already running
/// are waited for: flow handlers run with interrupts disabled, an RCU read-side critical
/// section. The interrupt is made unrequestable first (`IRQ_NOREQUEST`, as
/// `irq_domain_remove_irq()` does), and if a request got in anyway (C mapping and requesting the
/// same interrupt meanwhile), the flow handler and the flag are put back. Nothing is done for an
/// interrupt of one level, whose `irq_data` is its descriptor's.
///
/// Process context; sleeps (a grace period) for an interrupt of a hierarchy.
///
/// # Safety
///
/// `virq` is allocated until the caller disposes of it.
unsafe fn quiesce_hierarchy(virq: u32) -> bool {
    #[cfg(CONFIG_IRQ_DOMAIN_HIERARCHY)]
    {
        // SAFETY: `virq` is allocated (the function's safety requirements).
        let desc = unsafe { IrqDesc::from_raw(bindings::irq_to_desc(virq)) };
        let top = desc.irq_data().as_raw();
        // SAFETY: `top` is the descriptor's `irq_data`; the hierarchy does not change while the
        // interrupt is allocated.
        if unsafe { (*top).parent_data }.is_null() {
            return true;
        }
        // `IRQ_*` status flags are the low bits of an `unsigned long`.
        let noreq = bindings::IRQ_NOREQUEST;
        // SAFETY: `virq` is allocated.
        let had_noreq = unsafe { bindings::irq_check_status_bit(virq, noreq) };
        // SAFETY: As above.
        unsafe { bindings::irq_modify_status(virq, 0, noreq as c_ulong) };
        let old = {
            let _lock = desc.lock();
            // SAFETY: `desc->lock` is held.
            let old = unsafe { (*desc.as_raw()).handle_irq };
            // SAFETY: `desc->lock` is held, as `irq_set_handler_locked()` requires;
            // `handle_bad_irq()` is a flow handler that calls no chip callback.
            unsafe { bindings::irq_set_handler_locked(top, Some(bindings::handle_bad_irq)) };
            old
        };
        // SAFETY: Process context (the caller's drop).
        unsafe { bindings::synchronize_rcu() };
        // SAFETY: `virq` is allocated.
        if unsafe { bindings::irq_has_action(virq) } {
            {
                let _lock = desc.lock();
                // SAFETY: `desc->lock` is held; `old` was the interrupt's flow handler.
                unsafe { bindings::irq_set_handler_locked(top, old) };
            }
            if !had_noreq {
                // SAFETY: `virq` is allocated.
                unsafe { bindings::irq_modify_status(virq, noreq as c_ulong, 0) };
            }
            return false;
        }
    }
    #[cfg(not(CONFIG_IRQ_DOMAIN_HIERARCHY))]
    let _ = virq;
    true
}

/// A chained flow handler installed on a parent interrupt; dropping it uninstalls the handler
/// and frees it once no CPU runs it anymore.
///
/// # Invariants
///
/// `self.handler` comes from `KBox::into_raw()` and is the handler data of the chained handler
/// `chained_trampoline::<H>` of `self.virq`, mapped for `'a`.
pub struct Chained<'a, H: ChainedHandler> {
    virq: u32,
    handler: *mut H,
    owner: ManuallyDrop<ModuleRef>,
    _m: PhantomData<&'a mut ()>,
}

impl<H: ChainedHandler> Drop for Chained<'_, H> {
    /// Process context; sleeps (an RCU grace period).
    fn drop(&mut self) {
        crate::task::might_sleep();
        // Uninstall the flow handler first and leave the handler data as it is: the chained
        // flow runs without `desc->lock`, so a CPU that loaded `desc->handle_irq` (the
        // trampoline) before this update may read the handler data after it. Passing null here
        // (the data is written before the handler) would let that CPU dereference null.
        // SAFETY: `self.virq` is mapped (type invariant); `self.handler` is still valid.
        unsafe { bindings::irq_set_chained_handler_and_data(self.virq, None, self.handler.cast()) };
        // Chained handlers run in hard IRQ context with interrupts disabled, an RCU read-side
        // critical section: once the grace period ends, no CPU runs the trampoline any more.
        // (`synchronize_irq()` would not do: chained flows never set `IRQD_IRQ_INPROGRESS`.)
        // SAFETY: Process context.
        unsafe { bindings::synchronize_rcu() };
        // Nothing reads the handler data now (`handle_bad_irq` does not): clear it before
        // freeing what it points to.
        // SAFETY: `self.virq` is mapped (type invariant). It only fails for an unallocated
        // interrupt.
        let _ = unsafe { bindings::irq_set_handler_data(self.virq, core::ptr::null_mut()) };
        // SAFETY: `self.handler` came from `KBox::into_raw()` (type invariant) and nothing uses
        // it anymore.
        drop(unsafe { KBox::from_raw(self.handler) });
        // SAFETY: Not used again; the handler's code is no longer reachable.
        unsafe { ManuallyDrop::drop(&mut self.owner) };
    }
}

/// The C-callable chained flow handler of a [`ChainedHandler`].
///
/// # Safety
///
/// Only installed by [`Mapping::set_chained_handler`], whose handler data is an `H` valid until
/// the [`Chained`] has uninstalled it; called by genirq, in hard IRQ context with interrupts
/// disabled, with the descriptor it was installed on.
unsafe extern "C" fn chained_trampoline<H: ChainedHandler>(desc: *mut bindings::irq_desc) {
    // SAFETY: genirq calls the chained handler with the valid descriptor it was installed on.
    let desc = unsafe { IrqDesc::from_raw(desc) };
    // SAFETY: The handler data is an `H` valid while installed (see the function's safety).
    let handler = unsafe { &*bindings::irq_desc_get_handler_data(desc.as_raw()).cast::<H>() };
    // SAFETY: Chained flow handlers run with interrupts disabled.
    let irqs_off = unsafe { LocalInterruptDisabled::assume_disabled() };
    // SAFETY: This is the chained flow installed on `desc`, in its hard IRQ; its chip was checked
    // at installation (`Mapping::set_chained_handler`).
    let parent = unsafe { ChainedIrqGuard::new(desc) };
    handler.handle(&parent, irqs_off);
    drop(parent);
}

struct DomainVtable<T: DomainOps>(PhantomData<T>);

/// The `msi_domain_ops` of an MSI parent domain for `T` ([`Domain::new_msi_parent`]).
#[cfg(CONFIG_GENERIC_MSI_IRQ)]
struct MsiVtable<T: DomainOps>(PhantomData<T>);

#[cfg(CONFIG_GENERIC_MSI_IRQ)]
impl<T: DomainOps> MsiVtable<T> {
    /// # Safety
    ///
    /// Only called by the MSI core or a child domain as `msi_prepare` of `Self::OPS`, for an
    /// MSI parent domain `d` created by [`Domain`] for `T`, with a valid allocation argument.
    unsafe extern "C" fn msi_prepare(
        d: *mut bindings::irq_domain,
        _dev: *mut bindings::device,
        nvec: c_int,
        info: *mut bindings::msi_alloc_info_t,
    ) -> c_int {
        // SAFETY: `d` is a live domain created by `Domain` for `T` (the function's safety
        // requirements).
        let t = unsafe { host::<T>(d) };
        // SAFETY: `info` is valid for the call; `MsiAllocInfo` is transparent over it.
        let info = unsafe { &*info.cast::<MsiAllocInfo>() };
        from_result(|| {
            t.msi_prepare(u32::try_from(nvec).map_err(|_| EINVAL)?, info)?;
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// As for `msi_prepare`, as `msi_teardown`.
    unsafe extern "C" fn msi_teardown(
        d: *mut bindings::irq_domain,
        info: *mut bindings::msi_alloc_info_t,
    ) {
        // SAFETY: As in `msi_prepare`.
        let t = unsafe { host::<T>(d) };
        // SAFETY: As in `msi_prepare`.
        t.msi_teardown(unsafe { &*info.cast::<MsiAllocInfo>() });
    }

    const OPS: bindings::msi_domain_ops = bindings::msi_domain_ops {
        msi_prepare: if T::HAS_MSI_PREPARE {
            Some(Self::msi_prepare)
        } else {
            None
        },
        msi_teardown: if T::HAS_MSI_TEARDOWN {
            Some(Self::msi_teardown)
        } else {
            None
        },
        ..pin_init::zeroed()
    };

    /// The operations, as `msi_domain_info::ops` points to them: never written through (only
    /// domains created by `msi_create_irq_domain()` with `MSI_FLAG_USE_DEF_DOM_OPS` have theirs
    /// filled in by the core).
    const fn build() -> *mut bindings::msi_domain_ops {
        let ops: &'static bindings::msi_domain_ops = &Self::OPS;
        core::ptr::from_ref(ops).cast_mut()
    }
}

/// # Safety
///
/// `d` must be a live domain created by [`Domain`] for `T`.
unsafe fn host<'a, T: DomainOps>(d: *mut bindings::irq_domain) -> &'a T {
    // SAFETY: `host_data` points to the `HostData<T>` the `Domain` owns (type invariant of
    // `Domain`).
    unsafe { &(*(*d).host_data.cast::<HostData<T>>()).data }
}

/// # Safety
///
/// `d` must be a live domain created by [`Domain`] for `T`.
unsafe fn host_state<'a, T: DomainOps>(d: *mut bindings::irq_domain) -> &'a DomainState {
    // SAFETY: As in `host`.
    unsafe { &(*(*d).host_data.cast::<HostData<T>>()).state }
}

impl<T: DomainOps> DomainVtable<T> {
    /// # Safety
    ///
    /// Only called by genirq as the operation of the same name in `Self::VTABLE`, for a
    /// domain created by [`Domain`] for `T`.
    unsafe extern "C" fn map(
        d: *mut bindings::irq_domain,
        virq: c_uint,
        hw: bindings::irq_hw_number_t,
    ) -> c_int {
        // SAFETY: The core calls domain ops with the live domain they belong to.
        let t = unsafe { host::<T>(d) };
        let mapper = Mapper {
            domain: d,
            virq,
            hwirq: hw,
            _p: PhantomData,
        };
        from_result(|| {
            // A failed map is not unmapped: the state bit its `set_masked_by_active` may have
            // set must not outlive it.
            t.map(&mapper, hw)
                .inspect_err(|_| clear_masked_by_active(virq))?;
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Only called by genirq as the operation of the same name in `Self::VTABLE`, for a
    /// domain created by [`Domain`] for `T`.
    unsafe extern "C" fn unmap(d: *mut bindings::irq_domain, virq: c_uint) {
        if T::HAS_UNMAP {
            // SAFETY: As in `map`.
            unsafe { host::<T>(d) }.unmap(virq)
        }
        // The core removed the chip and handler and synchronized the interrupt first.
        clear_masked_by_active(virq);
    }

    /// # Safety
    ///
    /// Only called by genirq as the operation of the same name in `Self::VTABLE`, for a
    /// domain created by [`Domain`] for `T`.
    unsafe extern "C" fn xlate(
        d: *mut bindings::irq_domain,
        _node: *mut bindings::device_node,
        intspec: *const u32,
        intsize: c_uint,
        out_hwirq: *mut bindings::irq_hw_number_t,
        out_type: *mut c_uint,
    ) -> c_int {
        // SAFETY: As in `map`.
        let t = unsafe { host::<T>(d) };
        from_result(|| {
            if intspec.is_null() {
                return Err(EINVAL);
            }
            // SAFETY: The core passes `intsize` valid cells at `intspec`.
            let cells = unsafe { core::slice::from_raw_parts(intspec, intsize as usize) };
            let (hwirq, ty) = t.xlate(cells)?;
            // SAFETY: `d` is live.
            if hwirq >= unsafe { (*d).hwirq_max } {
                return Err(EINVAL);
            }
            // SAFETY: The core passes valid output pointers.
            unsafe {
                *out_hwirq = hwirq;
                *out_type = ty.as_raw();
            }
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Only called by genirq as the operation of the same name in `Self::VTABLE`, for a
    /// domain created by [`Domain`] for `T`.
    unsafe extern "C" fn translate(
        d: *mut bindings::irq_domain,
        fwspec: *mut bindings::irq_fwspec,
        out_hwirq: *mut bindings::irq_hw_number_t,
        out_type: *mut c_uint,
    ) -> c_int {
        // SAFETY: As in `map`.
        let t = unsafe { host::<T>(d) };
        from_result(|| {
            // SAFETY: The core passes a valid specifier.
            let spec = unsafe { FwSpec::from_raw(fwspec) }?;
            let (hwirq, ty) = t.translate(spec)?;
            // SAFETY: `d` is live.
            if hwirq >= unsafe { (*d).hwirq_max } {
                return Err(EINVAL);
            }
            // SAFETY: The core passes valid output pointers.
            unsafe {
                *out_hwirq = hwirq;
                *out_type = ty.as_raw();
            }
            Ok(0)
        })
    }

    /// The `translate` of a domain that takes `msi_alloc_info_t`: `EINVAL`, no specifier maps
    /// in it.
    ///
    /// # Safety
    ///
    /// Only called by genirq as `translate` in `Self::VTABLE`; it reads nothing.
    unsafe extern "C" fn refuse_translate(
        _d: *mut bindings::irq_domain,
        _fwspec: *mut bindings::irq_fwspec,
        _out_hwirq: *mut bindings::irq_hw_number_t,
        _out_type: *mut c_uint,
    ) -> c_int {
        EINVAL.to_errno()
    }

    /// # Safety
    ///
    /// Only called by genirq as the operation of the same name in `Self::VTABLE`, for a
    /// domain created by [`Domain`] for `T`.
    unsafe extern "C" fn alloc(
        d: *mut bindings::irq_domain,
        virq: c_uint,
        nr: c_uint,
        arg: *mut c_void,
    ) -> c_int {
        // SAFETY: As in `map`.
        let t = unsafe { host::<T>(d) };
        from_result(|| {
            if arg.is_null() {
                return Err(EINVAL);
            }
            let alloc = Allocator::new(d, virq, nr);
            alloc.drop_stale_parents(virq, nr);
            #[cfg(CONFIG_GENERIC_MSI_IRQ)]
            if T::HAS_ALLOC_INFO {
                // SAFETY: A domain with `alloc_info` is allocated with `msi_alloc_info_t`
                // arguments only (`Domain::alloc_irqs`, children whose parent flag says so;
                // `create_fwspec_mapping` refuses it), valid for the call.
                let info = unsafe { &*arg.cast::<MsiAllocInfo>() };
                let res = t.alloc_info(&alloc, virq, nr, info);
                // SAFETY: As for `alloc` below.
                return unsafe { Self::finish_alloc(d, &alloc, res) };
            }
            // SAFETY: Other Rust hierarchical domains are allocated with `irq_fwspec` arguments
            // (see `DomainOps::alloc`).
            let spec = unsafe { FwSpec::from_raw(arg.cast()) }?;
            let res = t.alloc(&alloc, virq, nr, spec);
            // SAFETY: `d` is a domain created by `Domain` for `T` allocating `virq..virq + nr`
            // with `alloc`, which just returned.
            unsafe { Self::finish_alloc(d, &alloc, res) }
        })
    }

    /// Completes an allocation: on `alloc`'s error, undoes what it left; on success, frees it
    /// again (through `free`, as genirq would) if a top-level chip lacks a callback its flow
    /// calls.
    ///
    /// # Safety
    ///
    /// `d` is a domain created by [`Domain`] for `T`, allocating the interrupts of `alloc`,
    /// whose `alloc` or `alloc_info` returned `res`.
    unsafe fn finish_alloc(
        d: *mut bindings::irq_domain,
        alloc: &Allocator<'_, T>,
        res: Result,
    ) -> Result<c_int> {
        if let Err(e) = res {
            alloc.undo_failed_alloc();
            return Err(e);
        }
        let checked = if alloc.parents_complete() {
            alloc.check_top_chips()
        } else {
            // A level below has no parent level for some interrupt (never allocated, or freed
            // again): activating it would reach a parent without its state.
            Err(EINVAL)
        };
        if let Err(e) = checked {
            // `alloc` succeeded for these interrupts of `d` (the function's safety
            // requirements): `free` undoes it, once per interrupt whose level exists, as
            // genirq's `irq_domain_free_irqs_hierarchy()` calls it.
            for virq in alloc.virq..alloc.virq + alloc.nr {
                // SAFETY: `d` is live and allocating `virq`.
                if !unsafe { bindings::irq_domain_get_irq_data(d, virq) }.is_null() {
                    // SAFETY: As above.
                    unsafe { Self::free(d, virq, 1) };
                }
            }
            return Err(e);
        }
        Ok(0)
    }

    /// # Safety
    ///
    /// Only called by genirq as the operation of the same name in `Self::VTABLE`, for a
    /// domain created by [`Domain`] for `T`.
    unsafe extern "C" fn free(d: *mut bindings::irq_domain, virq: c_uint, nr: c_uint) {
        let alloc = Allocator::<T>::new(d, virq, nr);
        if T::HAS_FREE {
            // SAFETY: As in `map`.
            let t = unsafe { host::<T>(d) };
            t.free(&alloc, virq, nr);
        } else {
            // `irq_domain_free_irqs_common()`, and the release of per-interrupt data. Cannot
            // fail: the range is the core's.
            let _ = alloc.free_boxed(virq, nr);
        }
        // The parent levels `free` left: genirq frees the descriptors next.
        alloc.free_parents(virq, nr);
    }

    /// # Safety
    ///
    /// Only called by genirq as the operation of the same name in `Self::VTABLE`, for a
    /// domain created by [`Domain`] for `T`.
    unsafe extern "C" fn activate(
        d: *mut bindings::irq_domain,
        irqd: *mut bindings::irq_data,
        reserve: bool,
    ) -> c_int {
        // SAFETY: As in `map`.
        let t = unsafe { host::<T>(d) };
        let raw = irqd;
        // SAFETY: The core passes the valid `irq_data` of this domain's level.
        let irqd = unsafe { crate::irq::IrqData::from_raw(irqd) };
        if T::HAS_ACTIVATE {
            if let Err(e) = t.activate(irqd, reserve) {
                return e.to_errno();
            }
        }
        // SAFETY: `raw` is the valid `irq_data` genirq passed, of an interrupt being activated.
        if unsafe { msi_composes(raw) } {
            return 0;
        }
        crate::pr_err!(
            "irq {}: its chip cannot compose its MSI message: not activated\n",
            irqd.irq()
        );
        if T::HAS_DEACTIVATE {
            t.deactivate(irqd);
        }
        EINVAL.to_errno()
    }

    /// # Safety
    ///
    /// Only called by genirq as the operation of the same name in `Self::VTABLE`, for a
    /// domain created by [`Domain`] for `T`.
    unsafe extern "C" fn deactivate(d: *mut bindings::irq_domain, irqd: *mut bindings::irq_data) {
        // SAFETY: As in `map`.
        let t = unsafe { host::<T>(d) };
        // SAFETY: As in `activate`.
        t.deactivate(unsafe { crate::irq::IrqData::from_raw(irqd) })
    }

    /// # Safety
    ///
    /// Only called by genirq as the operation of the same name in `Self::VTABLE`, for a
    /// domain created by [`Domain`] for `T`, with a valid specifier.
    unsafe extern "C" fn select(
        d: *mut bindings::irq_domain,
        fwspec: *mut bindings::irq_fwspec,
        bus_token: bindings::irq_domain_bus_token,
    ) -> c_int {
        // Only the lookups whose answer is then given the allocation arguments `alloc` or
        // `alloc_info` takes. A domain found for `DOMAIN_BUS_WIRED` gets a specifier: the one
        // `irq_create_fwspec_mapping()` maps, or its C children's (`irq_find_host()`). Those found
        // for the MSI buses get `msi_alloc_info_t` (an IO-APIC's or HPET's parent is looked up
        // for `DOMAIN_BUS_GENERIC_MSI`). The others (`DOMAIN_BUS_WAKEUP`, whose users pass
        // specifiers, `DOMAIN_BUS_IPI`) are answered for no domain: what their C users pass is
        // theirs to say. `DOMAIN_BUS_ANY` lookups never ask `select`; for them, an
        // `alloc_info` domain refuses to translate (`VTABLE`).
        use bindings::irq_domain_bus_token as Bus;
        let answers = if takes_msi_info::<T>() {
            matches!(
                bus_token,
                Bus::DOMAIN_BUS_GENERIC_MSI
                    | Bus::DOMAIN_BUS_PCI_MSI
                    | Bus::DOMAIN_BUS_PLATFORM_MSI
                    | Bus::DOMAIN_BUS_NEXUS
                    | Bus::DOMAIN_BUS_TI_SCI_INTA_MSI
                    | Bus::DOMAIN_BUS_VMD_MSI
                    | Bus::DOMAIN_BUS_PCI_DEVICE_MSI
                    | Bus::DOMAIN_BUS_PCI_DEVICE_MSIX
                    | Bus::DOMAIN_BUS_DMAR
                    | Bus::DOMAIN_BUS_AMDVI
                    | Bus::DOMAIN_BUS_DEVICE_MSI
                    | Bus::DOMAIN_BUS_WIRED_TO_MSI
            )
        } else {
            bus_token == Bus::DOMAIN_BUS_WIRED
        };
        if !answers {
            return 0;
        }
        // SAFETY: As in `map`.
        let t = unsafe { host::<T>(d) };
        // SAFETY: The core passes a valid specifier for the call.
        let Ok(fwspec) = (unsafe { FwSpec::from_raw(fwspec) }) else {
            return 0;
        };
        c_int::from(t.select(fwspec, bus_token))
    }

    const VTABLE: bindings::irq_domain_ops = bindings::irq_domain_ops {
        map: if T::HAS_MAP { Some(Self::map) } else { None },
        // Always: it also clears `IRQD_MASKED_BY_ACTIVE`, which `Mapper::set_masked_by_active`
        // set on a descriptor that may outlive the mapping.
        unmap: if T::HAS_MAP || T::HAS_UNMAP {
            Some(Self::unmap)
        } else {
            None
        },
        xlate: if T::HAS_XLATE {
            Some(Self::xlate)
        } else {
            None
        },
        // A domain that takes `msi_alloc_info_t` translates no specifier: the one caller of
        // `translate`, `irq_create_fwspec_mapping()`, would pass the specifier to its `alloc`
        // (found by its fwnode for `DOMAIN_BUS_ANY`, without `select`).
        translate: if takes_msi_info::<T>() {
            Some(Self::refuse_translate)
        } else if T::HAS_TRANSLATE {
            Some(Self::translate)
        } else {
            None
        },
        alloc: if allocates::<T>() {
            Some(Self::alloc)
        } else {
            None
        },
        free: if allocates::<T>() {
            Some(Self::free)
        } else {
            None
        },
        // Always: an MSI whose message this level composes is refused if the chip cannot compose
        // one, before the MSI domain above writes its buffer to the device (`msi_composes`).
        activate: Some(Self::activate),
        deactivate: if T::HAS_DEACTIVATE {
            Some(Self::deactivate)
        } else {
            None
        },
        // A domain's own `select`; else an MSI parent with `msi_prepare` is found by its
        // children's bus.
        #[cfg(CONFIG_IRQ_MSI_LIB)]
        select: if T::HAS_SELECT {
            Some(Self::select)
        } else if T::HAS_MSI_PREPARE {
            Some(bindings::msi_lib_irq_domain_select)
        } else {
            None
        },
        #[cfg(not(CONFIG_IRQ_MSI_LIB))]
        select: if T::HAS_SELECT {
            Some(Self::select)
        } else {
            None
        },
        ..pin_init::zeroed()
    };

    const fn build() -> &'static bindings::irq_domain_ops {
        &Self::VTABLE
    }
}
