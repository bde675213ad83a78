// SPDX-License-Identifier: GPL-2.0

//! Device-tree consumers of interrupt domains: an interrupt of a device-tree interrupt controller
//! (a C one, or the Rust GICv3), mapped from its specifier and requested, for code that has no
//! device of its own (samples, benchmarks).
//!
//! C header: [`include/linux/of_irq.h`](srctree/include/linux/of_irq.h)

use super::*;

/// An interrupt of a device-tree interrupt controller (a C one, or the Rust GICv3), mapped from
/// a specifier on the controller's node (`irq_create_fwspec_mapping()`) and requested with a
/// handler: a spare SPI for a test or a benchmark, say. Dropping it frees the handler and
/// disposes of the mapping.
///
/// # Examples
///
/// ```no_run
/// use core::sync::atomic::{AtomicU32, Ordering::Relaxed};
/// use kernel::irq::{ChipState, Flags, Handler, IrqReturn, OfIrq};
///
/// struct Count {
///     n: AtomicU32,
/// }
///
/// impl Handler for Count {
///     fn handle(&self) -> IrqReturn {
///         self.n.fetch_add(1, Relaxed);
///         IrqReturn::Handled
///     }
/// }
///
/// # fn test() -> Result {
/// // SPI 200 of the GICv3, edge-triggered (IRQ_TYPE_EDGE_RISING), for the handler's code in
/// // this crate's module.
/// let irq = OfIrq::request::<crate::LocalModule>(
///     c"arm,gic-v3",
///     &[0, 200, 1],
///     Flags::NO_THREAD,
///     c"example",
///     try_init!(Count {
///         n: AtomicU32::new(0),
///     }? Error),
/// )?;
/// // Inject it.
/// irq.set_irqchip_state(ChipState::Pending, true)?;
/// # Ok(()) }
/// ```
pub struct OfIrq<T: crate::irq::Handler + 'static> {
    // Field order is drop order: the handler, the mapping, then the module of the handler's
    // code.
    reg: Pin<KBox<crate::irq::Registration<'static, T>>>,
    mapping: OfMapping,
    _owner: ModuleRef,
}

/// The mapping of an [`OfIrq`].
///
/// # Invariants
///
/// `self.virq` is an interrupt this object mapped and owns (it was not mapped before), and
/// `self.node` a device-tree node it holds a reference on.
struct OfMapping {
    virq: u32,
    node: *mut bindings::device_node,
}

// SAFETY: The interrupt and the node reference may be released on any thread.
unsafe impl Send for OfMapping {}
// SAFETY: `&OfMapping` only reads the interrupt number.
unsafe impl Sync for OfMapping {}

impl OfMapping {
    /// Maps the interrupt of specifier `params` of the first interrupt controller compatible
    /// with `compatible`; see [`OfIrq::request`].
    fn new(compatible: &CStr, params: &[u32]) -> Result<Self> {
        // One mapping at a time, so that two `OfIrq`s cannot both find the same interrupt
        // unmapped below and then share (and each dispose of) one mapping: a concurrent one is
        // refused with `EBUSY`.
        static MAPPING: core::sync::atomic::AtomicBool = core::sync::atomic::AtomicBool::new(false);
        if MAPPING.swap(true, core::sync::atomic::Ordering::Acquire) {
            return Err(EBUSY);
        }
        let _unlock = crate::types::ScopeGuard::new(|| {
            MAPPING.store(false, core::sync::atomic::Ordering::Release)
        });
        // SAFETY: `compatible` is a valid C string; the returned node, if any, carries a
        // reference that `self` (or the error path) drops.
        let node = unsafe {
            bindings::of_find_compatible_node(
                core::ptr::null_mut(),
                core::ptr::null(),
                compatible.as_char_ptr(),
            )
        };
        if node.is_null() {
            return Err(ENODEV);
        }
        // SAFETY: `node` is valid; its fwnode is embedded in it.
        let fwnode = unsafe { &raw mut (*node).fwnode };
        let put = crate::types::ScopeGuard::new(|| {
            // SAFETY: `node` carries the reference taken above (`of_node_put()`).
            unsafe { bindings::fwnode_handle_put(fwnode) }
        });
        // Only the platform's interrupt controller, whose domain is never removed: another
        // controller's (a GPIO expander's, say) goes with its driver's unbind, disposing of its
        // mappings, this one's included, under it, and the domain is used below and by the
        // mapping without a reference on it (C consumers have a device link instead).
        if !is_root_intc(node) {
            return Err(EINVAL);
        }
        let mut spec = FwSpec::new(fwnode, params)?;
        // The domain `irq_create_fwspec_mapping()` will use.
        let d = fwspec_domain(&mut spec);
        if d.is_null() {
            return Err(ENODEV);
        }
        // SAFETY: `d` was just found live and is a domain of the root interrupt controller's node
        // (checked above; C would not find a removed domain), which is never removed.
        // `translate` only reads the specifier.
        let translate = unsafe { (*(*d).ops).translate }.ok_or(EINVAL)?;
        let (mut hwirq, mut ty) = (0, 0);
        // SAFETY: As above; the outputs are valid for writes.
        to_result(unsafe { translate(d, &mut spec.0, &mut hwirq, &mut ty) })?;
        // Refuse an interrupt somebody else mapped: it would lose it when `self` is dropped. (C
        // code mapping the same interrupt between this check and the mapping below would share
        // it: use an interrupt no device uses.)
        // SAFETY: `d` is live.
        if unsafe { bindings::irq_find_mapping(d, hwirq) } != 0 {
            return Err(EBUSY);
        }
        // SAFETY: `spec` is a valid specifier.
        let virq = unsafe { bindings::irq_create_fwspec_mapping(&mut spec.0) };
        if virq == 0 {
            return Err(EINVAL);
        }
        put.dismiss();
        // INVARIANT: `virq` was not mapped before (checked above) and was just mapped; `node`
        // carries a reference.
        Ok(Self { virq, node })
    }
}

/// Whether `node` is the platform's interrupt controller: the interrupt parent of the tree's root
/// (`of_irq_find_parent(of_root)`), a root interrupt controller (`IRQCHIP_DECLARE()`), whose
/// domain is never removed.
fn is_root_intc(node: *mut bindings::device_node) -> bool {
    // SAFETY: `of_root` is written once, when the tree is unflattened, before modules and
    // initcalls run; null without a device tree.
    let root = unsafe { core::ptr::read_volatile(&raw const bindings::of_root) };
    if root.is_null() {
        return false;
    }
    let mut len: c_int = 0;
    // SAFETY: `root` is the live root node (never freed); `len` is valid for writes.
    let prop =
        unsafe { bindings::of_get_property(root, c"interrupt-parent".as_char_ptr(), &mut len) }
            .cast::<u32>();
    // A phandle is one cell; a shorter property (a malformed tree) is not one.
    if prop.is_null() || len < 4 {
        return false;
    }
    // SAFETY: `prop` points to `len` (at least 4) bytes of the property's value, which lives as
    // long as the node; a 32-bit big-endian cell, possibly unaligned.
    let phandle = u32::from_be(unsafe { prop.read_unaligned() });
    // SAFETY: No requirements; the returned node, if any, carries a reference, put below.
    let parent = unsafe { bindings::of_find_node_by_phandle(phandle) };
    if parent.is_null() {
        return false;
    }
    // SAFETY: `parent` carries the reference taken above; putting its fwnode is
    // `of_node_put()`.
    unsafe { bindings::fwnode_handle_put(&raw mut (*parent).fwnode) };
    parent == node
}

impl Drop for OfMapping {
    fn drop(&mut self) {
        crate::task::might_sleep();
        // SAFETY: `self.virq` is mapped (type invariant).
        if unsafe { bindings::irq_has_action(self.virq) } {
            // Its own handler was freed first (field order of `OfIrq`): this is C's, which
            // mapped the same interrupt meanwhile and shares it. Its descriptor must live on.
            pr_err!(
                "irq: leaking mapping of irq {}: it has an action\n",
                self.virq
            );
        } else {
            // SAFETY: `self.virq` is mapped and owned by `self` (type invariant), with no
            // action left.
            unsafe { bindings::irq_dispose_mapping(self.virq) };
        }
        // SAFETY: `self.node` carries a reference (type invariant); putting its fwnode is
        // `of_node_put()`.
        unsafe { bindings::fwnode_handle_put(&raw mut (*self.node).fwnode) };
    }
}

impl<T: crate::irq::Handler + 'static> OfIrq<T> {
    /// Maps the interrupt of specifier `params` of the first interrupt controller compatible
    /// with `compatible` and requests it with `handler` (`request_irq()`, `flags`, `name`).
    ///
    /// The object holds a reference on module `M`, the module of `handler`'s code (the caller's
    /// `crate::LocalModule`, which `module!` or `kernel::built_in_module!()` defines): leaked
    /// (`mem::forget`), it keeps the interrupt, its handler and the module.
    ///
    /// Only the platform's interrupt controller is served (the interrupt parent of the device
    /// tree's root: a GIC, say), whose domain is never removed; another controller's goes with
    /// its driver, under the interrupt.
    ///
    /// Process context. Returns `ENODEV` without such a node or domain or for a module being
    /// unloaded, `EINVAL` for a node that is not the platform's interrupt controller or a
    /// specifier the controller refuses, `EBUSY` if the interrupt is already mapped (its owner
    /// would lose it on drop), `ENOMEM`, or the error of `request_irq()` or of the initialiser.
    pub fn request<M: crate::ModuleMetadata>(
        compatible: &CStr,
        params: &[u32],
        flags: crate::irq::Flags,
        name: &'static CStr,
        handler: impl PinInit<T, Error> + 'static,
    ) -> Result<Self> {
        let module = crate::module::this_module::<M>();
        let (reg, mapping, owner) = OfMapping::request(module, compatible, params, |request| {
            // SAFETY: The registration is never forgotten apart from `Self`: it lives in a box
            // owned by `Self`, and if `Self` is forgotten, the box leaks with it, keeping the
            // interrupt mapped, the handler (`'static`) valid and the module of its code and
            // `name` loaded.
            KBox::pin_init(
                unsafe { crate::irq::Registration::new(request, flags, name, handler) },
                GFP_KERNEL,
            )
        })?;
        Ok(Self {
            reg,
            mapping,
            _owner: owner,
        })
    }

    /// Returns the Linux interrupt number (virq).
    pub fn irq(&self) -> u32 {
        self.mapping.virq
    }

    /// Returns the handler.
    pub fn handler(&self) -> &T {
        self.reg.handler()
    }

    /// Sets the interrupt's state in the controller (`irq_set_irqchip_state()`): makes it
    /// pending (injects it), active or masked.
    ///
    /// Any context but NMI (takes the descriptor lock). Returns the chip's error, e.g. `EINVAL`
    /// for a state it does not have.
    pub fn set_irqchip_state(&self, which: crate::irq::ChipState, val: bool) -> Result {
        self.mapping.set_irqchip_state(which, val)
    }

    /// Sets the interrupt's affinity (`irq_set_affinity()`).
    ///
    /// Process context. Returns the error of `irq_set_affinity()` (`EINVAL` for a mask without
    /// an online CPU).
    pub fn set_affinity(&self, mask: &crate::cpumask::Cpumask) -> Result {
        self.mapping.set_affinity(mask)
    }
}

impl OfMapping {
    /// Takes a reference on `module`, maps the interrupt (see [`OfIrq::request`]) and makes its
    /// registration with `register`; the caller keeps the three in this order, so that the
    /// registration drops first, then the mapping, then the module reference.
    fn request<R>(
        module: &'static crate::ThisModule,
        compatible: &CStr,
        params: &[u32],
        register: impl FnOnce(IrqRequest<'static>) -> Result<Pin<KBox<R>>>,
    ) -> Result<(Pin<KBox<R>>, Self, ModuleRef)> {
        crate::task::might_sleep();
        let owner = ModuleRef::get(module)?;
        let mapping = Self::new(compatible, params)?;
        // SAFETY: `mapping.virq` stays mapped until `mapping` drops, after the registration (the
        // callers' field order), so the request is valid for the registration's lifetime.
        let request = unsafe { IrqRequest::from_virq(mapping.virq) };
        Ok((register(request)?, mapping, owner))
    }

    fn set_irqchip_state(&self, which: crate::irq::ChipState, val: bool) -> Result {
        // SAFETY: `self.virq` is mapped (type invariant).
        to_result(unsafe { bindings::irq_set_irqchip_state(self.virq, which.as_raw(), val) })
    }

    fn set_affinity(&self, mask: &crate::cpumask::Cpumask) -> Result {
        crate::task::might_sleep();
        // SAFETY: `self.virq` is mapped (type invariant); `mask` is a valid cpumask.
        to_result(unsafe { bindings::irq_set_affinity(self.virq, mask.as_raw()) })
    }
}

/// An interrupt of a device-tree interrupt controller requested with a threaded handler: as
/// [`OfIrq`], with `request_threaded_irq()` (a `ONESHOT` one for a benchmark of the threaded
/// path, say). Dropping it frees the handler, which waits for its thread, and disposes of the
/// mapping.
pub struct OfThreadedIrq<T: crate::irq::ThreadedHandler + 'static> {
    // Field order is drop order, as for `OfIrq`.
    reg: Pin<KBox<crate::irq::ThreadedRegistration<'static, T>>>,
    mapping: OfMapping,
    _owner: ModuleRef,
}

impl<T: crate::irq::ThreadedHandler + 'static> OfThreadedIrq<T> {
    /// As [`OfIrq::request`], with a threaded handler (`request_threaded_irq()`).
    ///
    /// Process context. Returns what [`OfIrq::request`] returns.
    pub fn request<M: crate::ModuleMetadata>(
        compatible: &CStr,
        params: &[u32],
        flags: crate::irq::Flags,
        name: &'static CStr,
        handler: impl PinInit<T, Error> + 'static,
    ) -> Result<Self> {
        let module = crate::module::this_module::<M>();
        let (reg, mapping, owner) = OfMapping::request(module, compatible, params, |request| {
            // SAFETY: As in `OfIrq::request`: the registration lives in a box owned by `Self`,
            // and leaks with it.
            KBox::pin_init(
                unsafe { crate::irq::ThreadedRegistration::new(request, flags, name, handler) },
                GFP_KERNEL,
            )
        })?;
        Ok(Self {
            reg,
            mapping,
            _owner: owner,
        })
    }

    /// Returns the Linux interrupt number (virq).
    pub fn irq(&self) -> u32 {
        self.mapping.virq
    }

    /// Returns the handler.
    pub fn handler(&self) -> &T {
        self.reg.handler()
    }

    /// As [`OfIrq::set_irqchip_state`].
    pub fn set_irqchip_state(&self, which: crate::irq::ChipState, val: bool) -> Result {
        self.mapping.set_irqchip_state(which, val)
    }

    /// As [`OfIrq::set_affinity`].
    pub fn set_affinity(&self, mask: &crate::cpumask::Cpumask) -> Result {
        self.mapping.set_affinity(mask)
    }
}
