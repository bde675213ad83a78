// SPDX-License-Identifier: GPL-2.0

//! Interrupt domains: translation from hardware interrupt numbers (hwirq) to Linux interrupt
//! numbers (virq), and the hierarchy of controllers an interrupt passes through.
//!
//! C header: [`include/linux/irqdomain.h`](srctree/include/linux/irqdomain.h)

use core::{
    marker::PhantomData,
    ptr::NonNull, //
};

use crate::{
    error::{
        from_err_ptr,
        from_result,
        to_result,
        VTABLE_DEFAULT_ERROR, //
    },
    irq::{
        chip::{
            Chip,
            ChipVtable, //
        },
        data::{
            ChainedHandler,
            FlowHandler,
            IrqDesc,
            TriggerType, //
        },
        IrqRequest,
    },
    prelude::*,
    str::CStr, //
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
/// `map`, `unmap`, `xlate`, `translate`, `alloc` and `free` run in process context with the
/// domain's mutex held (they may sleep); `activate`/`deactivate` may run with the descriptor
/// lock held and must not sleep.
///
/// C header: [`include/linux/irqdomain.h`](srctree/include/linux/irqdomain.h).
#[vtable]
pub trait DomainOps: Sized + Send + Sync {
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

    /// Frees `nr` interrupts starting at `virq` (`free`). Defaults to
    /// `irq_domain_free_irqs_common()` (resets this level, frees the parent's).
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
}

/// What [`DomainOps::map`] uses to set up the mapping of one interrupt.
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
    pub fn set_chip_and_handler<C: Chip<Data = T>>(&self, flow: FlowHandler) {
        set_info::<T, C>(self.domain, self.virq, self.hwirq, flow)
    }
}

/// What [`DomainOps::alloc`] and [`DomainOps::free`] use to set up a hierarchy level.
pub struct Allocator<'a, T: DomainOps> {
    domain: *mut bindings::irq_domain,
    _p: PhantomData<&'a T>,
}

fn set_info<T: DomainOps, C: Chip<Data = T>>(
    domain: *mut bindings::irq_domain,
    virq: u32,
    hwirq: usize,
    flow: FlowHandler,
) {
    // SAFETY: `domain` is a live domain whose `host_data` is a `T` (invariant of `Domain`) that
    // outlives every interrupt of the domain, so `C`'s callbacks may borrow it as `C::Data`;
    // `virq` belongs to `domain` (the core called the domain operation for it).
    unsafe {
        bindings::irq_domain_set_info(
            domain,
            virq,
            hwirq,
            ChipVtable::<C>::build(),
            (*domain).host_data,
            flow.as_raw(),
            core::ptr::null_mut(),
            core::ptr::null(),
        )
    }
}

impl<T: DomainOps> Allocator<'_, T> {
    /// Installs the chip `C`, whose chip data is this domain's host data, and a flow handler on
    /// `virq` at this level (`irq_domain_set_info`).
    pub fn set_info<C: Chip<Data = T>>(&self, virq: u32, hwirq: usize, flow: FlowHandler) {
        set_info::<T, C>(self.domain, virq, hwirq, flow)
    }

    /// Installs the chip `C` on `virq` at this level, leaving the flow handler to the top
    /// level (`irq_domain_set_hwirq_and_chip`).
    pub fn set_hwirq_and_chip<C: Chip<Data = T>>(&self, virq: u32, hwirq: usize) -> Result {
        // SAFETY: As in `set_info`.
        to_result(unsafe {
            bindings::irq_domain_set_hwirq_and_chip(
                self.domain,
                virq,
                hwirq,
                ChipVtable::<C>::build(),
                (*self.domain).host_data,
            )
        })
    }

    /// Allocates the parent domain's level of `nr` interrupts at `virq`, for the parent's
    /// specifier cells `params` (`irq_domain_alloc_irqs_parent`).
    ///
    /// Returns `ENODEV` for a domain without parent, `EINVAL` for too many cells, or the
    /// parent's error.
    pub fn alloc_parent(&self, virq: u32, nr: u32, params: &[u32]) -> Result {
        // SAFETY: `self.domain` is live for the duration of the operation.
        let parent = unsafe { (*self.domain).parent };
        if parent.is_null() {
            return Err(ENODEV);
        }
        // SAFETY: A non-null parent outlives its children (`Domain`'s lifetime parameter).
        let mut spec = FwSpec::new(unsafe { (*parent).fwnode }, params)?;
        // SAFETY: `self.domain` is live, `virq..virq + nr` are being allocated in it, and
        // `spec` is the `irq_fwspec` argument the parent (a Rust domain) expects.
        to_result(unsafe {
            bindings::irq_domain_alloc_irqs_parent(
                self.domain,
                virq,
                nr,
                core::ptr::from_mut(&mut spec.0).cast(),
            )
        })
    }
}

/// An interrupt domain owned by Rust; removing it is dropping it.
///
/// `'p` is the lifetime of the parent domain of a hierarchy (`'static` for root domains).
///
/// # Invariants
///
/// - `self.domain` is a live `irq_domain` created by `irq_domain_instantiate()` whose
///   `host_data` points to `*self.data` and whose ops are `DomainVtable::<T>`.
/// - `self.fwnode` is the domain's named fwnode, owned by `self`.
/// - Every hwirq of the domain is below `self.hwirq_max`.
pub struct Domain<'p, T: DomainOps> {
    domain: NonNull<bindings::irq_domain>,
    fwnode: *mut bindings::fwnode_handle,
    hwirq_max: usize,
    data: Pin<KBox<T>>,
    _parent: PhantomData<&'p ()>,
}

// SAFETY: The domain is usable from any thread; the C side locks internally, `T: Send + Sync`.
unsafe impl<T: DomainOps> Send for Domain<'_, T> {}
// SAFETY: All `&self` methods call thread-safe genirq functions; `T: Sync`.
unsafe impl<T: DomainOps> Sync for Domain<'_, T> {}

impl<T: DomainOps> Domain<'static, T> {
    /// Creates a linear domain of `size` hwirqs (`irq_domain_create_linear`).
    ///
    /// Process context. Returns `ENOMEM` or the error of `irq_domain_instantiate()`.
    pub fn new_linear(name: &CStr, size: u32, data: impl PinInit<T, Error>) -> Result<Self> {
        Self::instantiate(name, size, size as usize, core::ptr::null_mut(), data)
    }

    /// Creates a tree (radix) domain for sparse hwirqs below `hwirq_max`
    /// (`irq_domain_create_tree`).
    ///
    /// Process context. Returns `ENOMEM` or the error of `irq_domain_instantiate()`.
    pub fn new_tree(name: &CStr, hwirq_max: usize, data: impl PinInit<T, Error>) -> Result<Self> {
        Self::instantiate(name, 0, hwirq_max, core::ptr::null_mut(), data)
    }
}

impl<'p, T: DomainOps> Domain<'p, T> {
    /// Creates a hierarchical domain of `size` hwirqs below `parent`
    /// (`irq_domain_create_hierarchy`). `T` must implement [`DomainOps::alloc`].
    ///
    /// Process context. Returns `ENOMEM` or the error of `irq_domain_instantiate()`.
    #[cfg(CONFIG_IRQ_DOMAIN_HIERARCHY)]
    pub fn new_hierarchy<P: DomainOps>(
        name: &CStr,
        parent: &'p Domain<'_, P>,
        size: u32,
        data: impl PinInit<T, Error>,
    ) -> Result<Self> {
        Self::instantiate(name, size, size as usize, parent.domain.as_ptr(), data)
    }

    fn instantiate(
        name: &CStr,
        size: u32,
        hwirq_max: usize,
        parent: *mut bindings::irq_domain,
        data: impl PinInit<T, Error>,
    ) -> Result<Self> {
        let data = KBox::pin_init(data, GFP_KERNEL)?;
        // SAFETY: `name` is a valid C string; the core copies it.
        let fwnode = unsafe { bindings::irq_domain_alloc_named_fwnode(name.as_char_ptr()) };
        if fwnode.is_null() {
            return Err(ENOMEM);
        }
        let info = bindings::irq_domain_info {
            fwnode,
            size,
            hwirq_max,
            ops: DomainVtable::<T>::build(),
            host_data: core::ptr::from_ref::<T>(&data).cast_mut().cast(),
            #[cfg(CONFIG_IRQ_DOMAIN_HIERARCHY)]
            parent,
            ..pin_init::zeroed()
        };
        #[cfg(not(CONFIG_IRQ_DOMAIN_HIERARCHY))]
        let _ = parent;
        // SAFETY: `info` is fully initialised; `host_data` points into a pinned box that
        // `Self` owns and drops only after removing the domain.
        let domain = match from_err_ptr(unsafe { bindings::irq_domain_instantiate(&info) }) {
            Ok(d) => d,
            Err(e) => {
                // SAFETY: `fwnode` was allocated above and is not used by any domain.
                unsafe { bindings::irq_domain_free_fwnode(fwnode) };
                return Err(e);
            }
        };
        // INVARIANT: `domain` was just instantiated with `host_data` = `data`, `fwnode` and
        // `hwirq_max`.
        Ok(Self {
            domain: NonNull::new(domain).ok_or(ENOMEM)?,
            fwnode,
            hwirq_max,
            data,
            _parent: PhantomData,
        })
    }

    /// Returns the host data.
    pub fn data(&self) -> &T {
        &self.data
    }

    /// Returns the raw `irq_domain` pointer.
    pub fn as_raw(&self) -> *mut bindings::irq_domain {
        self.domain.as_ptr()
    }

    /// Maps `hwirq`, calling [`DomainOps::map`] (`irq_create_mapping`) for a simple domain.
    ///
    /// Process context. Returns `EINVAL` if `hwirq` is out of range or the mapping fails.
    pub fn create_mapping(&self, hwirq: usize) -> Result<Mapping<'_>> {
        if hwirq >= self.hwirq_max {
            return Err(EINVAL);
        }
        // SAFETY: `self.domain` is live (type invariant).
        let virq = unsafe { bindings::irq_create_mapping(self.as_raw(), hwirq) };
        if virq == 0 {
            return Err(EINVAL);
        }
        // INVARIANT: `virq` was just mapped in this domain.
        Ok(Mapping {
            virq,
            _d: PhantomData,
        })
    }

    /// Maps the interrupt of specifier `params`, calling [`DomainOps::xlate`] or
    /// [`DomainOps::translate`], then `map` or `alloc` (`irq_create_fwspec_mapping`).
    ///
    /// Process context. Returns `EINVAL` if the specifier is refused or the mapping fails.
    pub fn create_fwspec_mapping(&self, params: &[u32]) -> Result<Mapping<'_>> {
        let mut spec = FwSpec::new(self.fwnode, params)?;
        // SAFETY: `spec` is a valid specifier for this domain's fwnode.
        let virq = unsafe { bindings::irq_create_fwspec_mapping(&mut spec.0) };
        if virq == 0 {
            return Err(EINVAL);
        }
        // INVARIANT: `virq` was just mapped in this domain.
        Ok(Mapping {
            virq,
            _d: PhantomData,
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
    /// Hard IRQ context (a chained handler or a root handler), interrupts disabled. Returns
    /// `EINVAL` if `hwirq` is not mapped.
    pub fn handle_irq(&self, hwirq: usize) -> Result {
        // SAFETY: `self.domain` is live (type invariant).
        to_result(unsafe { bindings::generic_handle_domain_irq(self.as_raw(), hwirq) })
    }

    /// Runs the flow handler of `hwirq` with interrupts disabled around it
    /// (`generic_handle_domain_irq_safe`).
    ///
    /// Any context. Returns `EINVAL` if `hwirq` is not mapped.
    pub fn handle_irq_safe(&self, hwirq: usize) -> Result {
        // SAFETY: `self.domain` is live (type invariant).
        to_result(unsafe { bindings::generic_handle_domain_irq_safe(self.as_raw(), hwirq) })
    }
}

impl<T: DomainOps> Drop for Domain<'_, T> {
    fn drop(&mut self) {
        // Dispose of mappings whose `Mapping` was leaked, so that no descriptor keeps pointing
        // at the removed domain.
        for hwirq in 0..self.hwirq_max {
            if let Some(virq) = self.find_mapping(hwirq) {
                // SAFETY: `virq` is mapped in this live domain.
                unsafe { bindings::irq_dispose_mapping(virq) };
            }
        }
        // SAFETY: The domain is live and has no mappings left (type invariant, loop above); a
        // child domain borrows `self` (`'p`) so none is left either.
        unsafe { bindings::irq_domain_remove(self.as_raw()) };
        // SAFETY: The fwnode is owned by `self` and no longer used by the removed domain.
        unsafe { bindings::irq_domain_free_fwnode(self.fwnode) };
    }
}

/// A mapped interrupt of a [`Domain`]; dropping it disposes of the mapping.
///
/// # Invariants
///
/// `self.virq` is a mapped interrupt of a domain that outlives `'d`.
pub struct Mapping<'d> {
    virq: u32,
    _d: PhantomData<&'d ()>,
}

impl<'d> Mapping<'d> {
    /// Returns the Linux interrupt number (virq).
    pub fn irq(&self) -> u32 {
        self.virq
    }

    /// Returns a request for registering a handler on this interrupt with
    /// [`Registration`](super::Registration) or
    /// [`ThreadedRegistration`](super::ThreadedRegistration).
    pub fn request(&self) -> IrqRequest<'_> {
        // SAFETY: `self.virq` is mapped and stays mapped for the borrow of `self`.
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
    /// Process context. The handler is removed when the returned [`Chained`] is dropped.
    pub fn set_chained_handler<'a, H: ChainedHandler>(&'a self, handler: &'a H) -> Chained<'a, H> {
        // SAFETY: `self.virq` is mapped; `handler` outlives the returned `Chained`, which removes
        // the handler and waits for running instances before the borrow ends.
        unsafe {
            bindings::irq_set_chained_handler_and_data(
                self.virq,
                Some(chained_trampoline::<H>),
                core::ptr::from_ref(handler).cast_mut().cast(),
            )
        };
        // INVARIANT: The handler was just installed on `self.virq`.
        Chained {
            virq: self.virq,
            _h: PhantomData,
        }
    }
}

impl Drop for Mapping<'_> {
    fn drop(&mut self) {
        // SAFETY: `self.virq` is mapped (type invariant) and no `IrqRequest` borrowed from `self`
        // (hence no registration) is left.
        unsafe { bindings::irq_dispose_mapping(self.virq) };
    }
}

/// A chained flow handler installed on a parent interrupt.
///
/// # Invariants
///
/// A [`ChainedHandler`] `H`, borrowed for `'a`, is the chained handler of `self.virq`.
pub struct Chained<'a, H: ChainedHandler> {
    virq: u32,
    _h: PhantomData<&'a H>,
}

impl<H: ChainedHandler> Drop for Chained<'_, H> {
    fn drop(&mut self) {
        // SAFETY: `self.virq` is mapped for `'a` (type invariant); removing the handler and
        // synchronising ensures no CPU still runs the handler with the borrowed data.
        unsafe {
            bindings::irq_set_chained_handler_and_data(self.virq, None, core::ptr::null_mut());
            bindings::synchronize_irq(self.virq);
        }
    }
}

/// The C-callable chained flow handler of a [`ChainedHandler`].
///
/// # Safety
///
/// Only installed by [`Mapping::set_chained_handler`], whose handler data is a `&H` valid until
/// the [`Chained`] is dropped; called by genirq with the descriptor it was installed on.
unsafe extern "C" fn chained_trampoline<H: ChainedHandler>(desc: *mut bindings::irq_desc) {
    // SAFETY: genirq calls the chained handler with the valid descriptor it was installed on.
    let desc = unsafe { IrqDesc::from_raw(desc) };
    // SAFETY: The handler data was set to a `&H` in `Mapping::set_chained_handler`, valid until
    // `Chained` is dropped.
    let handler = unsafe { &*bindings::irq_desc_get_handler_data(desc.as_raw()).cast::<H>() };
    handler.handle(desc);
}

struct DomainVtable<T: DomainOps>(PhantomData<T>);

/// # Safety
///
/// `d` must be a live domain created by [`Domain`] for `T`.
unsafe fn host<'a, T: DomainOps>(d: *mut bindings::irq_domain) -> &'a T {
    // SAFETY: `host_data` points to the `T` the `Domain` owns (type invariant of `Domain`).
    unsafe { &*(*d).host_data.cast::<T>() }
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
            t.map(&mapper, hw)?;
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Only called by genirq as the operation of the same name in `Self::VTABLE`, for a
    /// domain created by [`Domain`] for `T`.
    unsafe extern "C" fn unmap(d: *mut bindings::irq_domain, virq: c_uint) {
        // SAFETY: As in `map`.
        unsafe { host::<T>(d) }.unmap(virq)
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
            // SAFETY: Rust hierarchical domains are allocated with `irq_fwspec` arguments (see
            // `DomainOps::alloc`).
            let spec = unsafe { FwSpec::from_raw(arg.cast()) }?;
            t.alloc(
                &Allocator {
                    domain: d,
                    _p: PhantomData,
                },
                virq,
                nr,
                spec,
            )?;
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Only called by genirq as the operation of the same name in `Self::VTABLE`, for a
    /// domain created by [`Domain`] for `T`.
    unsafe extern "C" fn free(d: *mut bindings::irq_domain, virq: c_uint, nr: c_uint) {
        if T::HAS_FREE {
            // SAFETY: As in `map`.
            let t = unsafe { host::<T>(d) };
            t.free(
                &Allocator {
                    domain: d,
                    _p: PhantomData,
                },
                virq,
                nr,
            )
        } else {
            // SAFETY: `virq..virq + nr` were allocated in the live domain `d`.
            unsafe { bindings::irq_domain_free_irqs_common(d, virq, nr) }
        }
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
        // SAFETY: The core passes the valid `irq_data` of this domain's level.
        let irqd = unsafe { crate::irq::IrqData::from_raw(irqd) };
        from_result(|| {
            t.activate(irqd, reserve)?;
            Ok(0)
        })
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

    const VTABLE: bindings::irq_domain_ops = bindings::irq_domain_ops {
        map: if T::HAS_MAP { Some(Self::map) } else { None },
        unmap: if T::HAS_UNMAP {
            Some(Self::unmap)
        } else {
            None
        },
        xlate: if T::HAS_XLATE {
            Some(Self::xlate)
        } else {
            None
        },
        translate: if T::HAS_TRANSLATE {
            Some(Self::translate)
        } else {
            None
        },
        alloc: if T::HAS_ALLOC {
            Some(Self::alloc)
        } else {
            None
        },
        free: if T::HAS_ALLOC { Some(Self::free) } else { None },
        activate: if T::HAS_ACTIVATE {
            Some(Self::activate)
        } else {
            None
        },
        deactivate: if T::HAS_DEACTIVATE {
            Some(Self::deactivate)
        } else {
            None
        },
        ..pin_init::zeroed()
    };

    const fn build() -> &'static bindings::irq_domain_ops {
        &Self::VTABLE
    }
}
