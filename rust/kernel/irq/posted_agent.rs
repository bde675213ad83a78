// SPDX-License-Identifier: GPL-2.0

//! A software posting agent for posted MSIs: interrupts of the x86 vector domain whose MSIs are
//! posted by software, exactly as VT-d posts them.
//!
//! QEMU's intel-iommu never emulates posted interrupts, so tests, samples and benchmarks of the
//! posted-MSI notification handler play the IOMMU.
//! [`PostedDomain`](crate::irq::posted_agent::PostedDomain) is an interrupt domain below the x86
//! vector domain whose chip, "POSTED-AGENT", behaves like VT-d's "INTEL-IR-POST": the posted-MSI
//! `ack` (`intel_ack_posted_msi_irq()`, the Rust or the C one as selected at boot) and affinity
//! changes that rewrite the interrupt's remapping entry (IRTE).
//! [`PostedIrq::post`](crate::irq::posted_agent::PostedIrq::post) then does what the IOMMU does
//! for an MSI that hits a posted IRTE: read the IRTE, atomically set the vector's PIR bit in the
//! target CPU's posted-interrupt descriptor, set ON unless ON or SN is set, and send the
//! notification interrupt only if it set ON.
//!
//! C sources: `intel_ir_chip_post_msi` and `intel_ir_set_affinity()` in
//! [`drivers/iommu/intel/irq_remapping.c`](srctree/drivers/iommu/intel/irq_remapping.c), the
//! posted-MSI handling in [`arch/x86/kernel/irq.c`](srctree/arch/x86/kernel/irq.c).

use crate::{
    cpu::CpuId,
    cpumask::Cpumask,
    error::{
        from_err_ptr,
        from_result,
        to_result, //
    },
    interrupt::local_interrupt_disable,
    irq::{
        posted::{
            self,
            Vector, //
        },
        Chip,
        ChipVtable,
        Flags,
        FlowHandler,
        Handler,
        IrqData,
        IrqRequest,
        LockedIrqData,
        Registration,
        SetAffinity, //
    },
    prelude::*,
    sync::Arc,
};
use core::{
    ptr::NonNull,
    sync::atomic::{
        AtomicU64,
        Ordering::{
            Acquire,
            Relaxed,
            Release, //
        },
    },
};

/// The remapping entry of a posted interrupt: where the agent posts its MSIs.
///
/// Bits 0..8 hold the vector, bits 32..64 the CPU, `VALID` says the entry is in use and `BUSY`
/// that a post is reading it. Rewriting the entry waits for a post in flight, as
/// VT-d's interrupt-entry-cache invalidation waits for the interrupts being remapped: once an
/// affinity change has rewritten the IRTE, no post can still land on the old (CPU, vector), so
/// the vector domain's cleanup of the old vector, which checks the old CPU's IRR and PIR, misses
/// nothing.
struct Irte(AtomicU64);

impl Irte {
    const VALID: u64 = 1 << 30;
    const BUSY: u64 = 1 << 31;

    fn new() -> Self {
        Self(AtomicU64::new(0))
    }

    fn encode(cpu: CpuId, vector: Vector) -> u64 {
        Self::VALID | u64::from(cpu.as_u32()) << 32 | u64::from(vector.as_u32())
    }

    fn decode(v: u64) -> Option<(CpuId, Vector)> {
        if v & Self::VALID == 0 {
            return None;
        }
        let cpu = CpuId::from_u32((v >> 32) as u32)?;
        let vector = Vector::new((v & 0xff) as u32).ok()?;
        Some((cpu, vector))
    }

    /// Takes the entry (sets `BUSY`), waiting while a post or a rewrite holds it; returns its
    /// value. Callers have interrupts disabled, so the holder never waits for this CPU.
    fn lock(&self) -> u64 {
        let mut cur = self.0.load(Relaxed);
        loop {
            if cur & Self::BUSY != 0 {
                core::hint::spin_loop();
                cur = self.0.load(Relaxed);
                continue;
            }
            match self
                .0
                .compare_exchange_weak(cur, cur | Self::BUSY, Acquire, Relaxed)
            {
                Ok(_) => return cur,
                Err(now) => cur = now,
            }
        }
    }

    /// Rewrites the entry with `new` once no post holds it.
    fn write(&self, new: u64) {
        self.lock();
        self.0.store(new & !Self::BUSY, Release);
    }

    /// Points the entry at where the vector domain routes `irqd` now: its effective CPU and its
    /// vector (`intel_ir_reconfigure_irte()`). Invalidates the entry if the interrupt has no
    /// vector.
    ///
    /// Called with the descriptor lock held, from the chip's `set_affinity` and the domain's
    /// `activate`.
    fn update(&self, irqd: &IrqData) {
        // SAFETY: `irqd` is an interrupt of a `PostedDomain`, whose root is the x86 vector
        // domain: `irqd_cfg()` returns its vector configuration, which the vector domain sets at
        // allocation and clears only when freeing it, or NULL.
        let cfg = unsafe { bindings::irqd_cfg(irqd.as_raw()) };
        // SAFETY: A non-NULL `cfg` is valid; the descriptor lock the caller holds keeps it stable.
        let vector = unsafe { cfg.as_ref() }.map_or(0, |cfg| cfg.vector);
        // SAFETY: The effective affinity mask lives as long as the interrupt.
        let mask = unsafe { bindings::irq_data_get_effective_affinity_mask(irqd.as_raw()) };
        // SAFETY: `mask` is a valid cpumask.
        let cpu = CpuId::from_u32(unsafe { bindings::cpumask_first(mask) });
        match (cpu, Vector::new(vector)) {
            // A device vector, not a system one such as the shutdown vector of managed
            // interrupts: the demux loop runs device vectors only.
            (Some(cpu), Ok(v)) if vector < posted::FIRST_SYSTEM_VECTOR => {
                self.write(Self::encode(cpu, v))
            }
            _ => self.write(0),
        }
    }

    /// Posts the MSI as VT-d does; see [`PostedIrq::post`].
    fn post(&self) -> Result<Posted> {
        let _irqs_off = local_interrupt_disable();
        let entry = self.lock();
        let ret = Self::decode(entry).ok_or(ENXIO).map(|(cpu, vector)| {
            let pid = posted::PiDesc::of_cpu(cpu);
            let new = pid.set_pir(vector);
            let notified = pid.test_and_set_on_unless_sn();
            if notified {
                posted::send_notification(cpu);
            }
            Posted {
                cpu,
                vector,
                new,
                notified,
            }
        });
        self.0.store(entry, Release);
        ret
    }
}

/// What [`PostedIrq::post`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Posted {
    /// The CPU whose descriptor the MSI was posted to.
    pub cpu: CpuId,
    /// The vector posted.
    pub vector: Vector,
    /// The vector's PIR bit was clear: the post adds one handler run.
    pub new: bool,
    /// The post set ON and sent the notification interrupt.
    pub notified: bool,
}

/// The posted-MSI chip of the agent: "POSTED-AGENT".
struct PostedAgentChip;

#[vtable]
impl Chip for PostedAgentChip {
    type Data = Irte;
    const NAME: &'static CStr = c"POSTED-AGENT";

    /// No-ops: the agent's interrupts model MSIs without per-vector masking, which a device
    /// sends whatever genirq's mask state; `__irq_move_irq()` calls them around a deferred
    /// affinity change, which the IRTE rewrite makes safe unmasked (see [`Irte`]).
    fn mask(_irte: &Irte, _irqd: &IrqData) {}

    fn unmask(_irte: &Irte, _irqd: &IrqData) {}

    /// The posted-MSI `ack`: applies a pending affinity change, no EOI.
    fn ack(_irte: &Irte, irqd: &IrqData, _locked: Option<&LockedIrqData>) {
        // SAFETY: Called as the `irq_ack` genirq invoked for `irqd`, as
        // `intel_ack_posted_msi_irq()` (Rust or C) expects; the Rust one checks the lock itself.
        unsafe { bindings::intel_ack_posted_msi_irq(irqd.as_raw()) }
    }

    /// Moves the interrupt: the vector domain assigns the new vector, the IRTE is rewritten, the
    /// old vector is cleaned up (`intel_ir_set_affinity()`).
    fn set_affinity(
        irte: &Irte,
        irqd: &LockedIrqData,
        mask: &Cpumask,
        force: bool,
    ) -> Result<SetAffinity> {
        // SAFETY: Called with the descriptor lock held, on an interrupt with a parent (the
        // vector domain's level).
        let ret =
            unsafe { bindings::irq_chip_set_affinity_parent(irqd.as_raw(), mask.as_raw(), force) };
        to_result(ret)?;
        if ret as u32 == bindings::IRQ_SET_MASK_OK_DONE {
            return Ok(SetAffinity::Done);
        }
        irte.update(irqd);
        // SAFETY: As in `Irte::update`; the old vector is freed once it is not pending in the
        // old CPU's IRR or PIR, and no post can reach it any more (see `Irte`).
        unsafe { bindings::vector_schedule_cleanup(bindings::irqd_cfg(irqd.as_raw())) };
        Ok(SetAffinity::Done)
    }

    fn retrigger(_irte: &Irte, irqd: &IrqData) -> bool {
        // SAFETY: `irqd` is valid and has a parent that can retrigger (the vector domain).
        unsafe { bindings::irq_chip_retrigger_hierarchy(irqd.as_raw()) != 0 }
    }
}

/// The `irq_domain_ops` of [`PostedDomain`].
struct Ops;

impl Ops {
    const VTABLE: bindings::irq_domain_ops = bindings::irq_domain_ops {
        alloc: Some(Self::alloc),
        free: Some(Self::free),
        activate: Some(Self::activate),
        deactivate: Some(Self::deactivate),
        ..pin_init::zeroed()
    };

    /// # Safety
    ///
    /// Only called by genirq as the `alloc` of a domain created by [`PostedDomain::new`], with
    /// the `irq_alloc_info` argument of the x86 vector domain.
    unsafe extern "C" fn alloc(
        d: *mut bindings::irq_domain,
        virq: c_uint,
        nr: c_uint,
        arg: *mut c_void,
    ) -> c_int {
        from_result(|| {
            // `PostedIrq` allocates one interrupt at a time.
            if nr != 1 {
                return Err(EINVAL);
            }
            let irte = KBox::new(Irte::new(), GFP_KERNEL)?;
            // SAFETY: `d` is live and `virq` is being allocated in it; the vector domain takes
            // the `irq_alloc_info` the caller passed.
            to_result(unsafe { bindings::irq_domain_alloc_irqs_parent(d, virq, nr, arg) })?;
            // SAFETY: `virq` is being allocated in `d`; the chip data is the `Irte` box, which
            // `free` reclaims, and which `PostedAgentChip`'s callbacks borrow while the
            // interrupt exists.
            unsafe {
                bindings::irq_domain_set_info(
                    d,
                    virq,
                    virq as bindings::irq_hw_number_t,
                    ChipVtable::<PostedAgentChip>::build(),
                    KBox::into_raw(irte).cast(),
                    FlowHandler::Edge.as_raw(),
                    core::ptr::null_mut(),
                    c"edge".as_char_ptr(),
                )
            };
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Only called by genirq as the `free` of a domain created by [`PostedDomain::new`].
    unsafe extern "C" fn free(d: *mut bindings::irq_domain, virq: c_uint, nr: c_uint) {
        for i in 0..nr {
            // SAFETY: `virq + i` was allocated in `d`.
            let irqd = unsafe { bindings::irq_domain_get_irq_data(d, virq + i) };
            if irqd.is_null() {
                continue;
            }
            // SAFETY: `irqd` is valid; its chip data, if any, is the box `alloc` leaked.
            let irte = unsafe { (*irqd).chip_data }.cast::<Irte>();
            // SAFETY: The interrupt is being freed: no chip callback runs any more.
            unsafe { bindings::irq_domain_reset_irq_data(irqd) };
            if !irte.is_null() {
                // SAFETY: `irte` came from `KBox::into_raw` in `alloc`, and nothing refers to it
                // any more.
                drop(unsafe { KBox::from_raw(irte) });
            }
        }
        // SAFETY: Frees the parent's (vector domain's) level of the interrupts.
        unsafe { bindings::irq_domain_free_irqs_parent(d, virq, nr) };
    }

    /// # Safety
    ///
    /// Only called by genirq as the `activate` of a domain created by [`PostedDomain::new`],
    /// after the vector domain's level was activated.
    unsafe extern "C" fn activate(
        _d: *mut bindings::irq_domain,
        irqd: *mut bindings::irq_data,
        _reserve: bool,
    ) -> c_int {
        // SAFETY: genirq passes a valid `irq_data` of this domain, with the descriptor lock held.
        let irqd = unsafe { IrqData::from_raw(irqd) };
        // SAFETY: The chip data of this domain's interrupts is their `Irte` (see `alloc`).
        if let Some(irte) = unsafe { (*irqd.as_raw()).chip_data.cast::<Irte>().as_ref() } {
            irte.update(irqd);
        }
        0
    }

    /// # Safety
    ///
    /// Only called by genirq as the `deactivate` of a domain created by [`PostedDomain::new`].
    unsafe extern "C" fn deactivate(_d: *mut bindings::irq_domain, irqd: *mut bindings::irq_data) {
        // SAFETY: As in `activate`.
        if let Some(irte) = unsafe { (*irqd).chip_data.cast::<Irte>().as_ref() } {
            irte.write(0);
        }
    }
}

/// An interrupt domain of the posting agent, below the x86 vector domain.
///
/// # Invariants
///
/// `domain` is a live domain instantiated with `fwnode` and `Ops`, removed only by `drop`.
pub struct PostedDomain {
    domain: NonNull<bindings::irq_domain>,
    fwnode: NonNull<bindings::fwnode_handle>,
}

// SAFETY: The domain is only used through genirq functions, which lock it themselves.
unsafe impl Send for PostedDomain {}
// SAFETY: As for `Send`.
unsafe impl Sync for PostedDomain {}

impl PostedDomain {
    /// Creates a domain named `name` below the x86 vector domain.
    ///
    /// Process context.
    ///
    /// # Errors
    ///
    /// `ENODEV` without a vector domain, `ENOMEM`, or the error of `irq_domain_instantiate()`.
    pub fn new(name: &CStr) -> Result<Arc<Self>> {
        // SAFETY: Reads a pointer set once during early boot.
        let parent = unsafe { bindings::x86_vector_domain };
        if parent.is_null() {
            return Err(ENODEV);
        }
        // SAFETY: `name` is a valid C string; the core copies it.
        let fwnode =
            NonNull::new(unsafe { bindings::irq_domain_alloc_named_fwnode(name.as_char_ptr()) })
                .ok_or(ENOMEM)?;
        let info = bindings::irq_domain_info {
            fwnode: fwnode.as_ptr(),
            size: 0,
            hwirq_max: !0,
            ops: &Ops::VTABLE,
            parent,
            ..pin_init::zeroed()
        };
        // SAFETY: `info` is fully initialised; the ops are static.
        let domain = from_err_ptr(unsafe { bindings::irq_domain_instantiate(&info) })
            .and_then(|d| NonNull::new(d).ok_or(ENOMEM));
        let domain = match domain {
            Ok(d) => d,
            Err(e) => {
                // SAFETY: `fwnode` was allocated above and no domain uses it.
                unsafe { bindings::irq_domain_free_fwnode(fwnode.as_ptr()) };
                return Err(e);
            }
        };
        // INVARIANT: `domain` was just instantiated with `fwnode` and `Ops`.
        Ok(Arc::new(Self { domain, fwnode }, GFP_KERNEL)?)
    }
}

impl PostedDomain {
    /// Allocates one interrupt routed to `cpu`; returns it and its `Irte`.
    fn alloc_irq(&self, cpu: CpuId) -> Result<(Allocated, NonNull<Irte>)> {
        if !cpu_online(cpu) {
            return Err(EINVAL);
        }
        let mask = cpumask_of(cpu);
        let mut info = core::mem::MaybeUninit::<bindings::irq_alloc_info>::zeroed();
        // SAFETY: `info` is writable storage for an `irq_alloc_info`; `mask` is valid.
        unsafe { bindings::init_irq_alloc_info(info.as_mut_ptr(), mask.as_raw()) };
        // SAFETY: The domain is live (type invariant); `info` is the argument its parent, the
        // vector domain, takes.
        let virq = unsafe {
            bindings::__irq_domain_alloc_irqs(
                self.domain.as_ptr(),
                -1,
                1,
                bindings::NUMA_NO_NODE,
                info.as_mut_ptr().cast(),
                false,
                core::ptr::null(),
            )
        };
        to_result(virq)?;
        let alloc = Allocated {
            virq: u32::try_from(virq).map_err(|_| EINVAL)?,
        };
        // SAFETY: Any interrupt number may be looked up.
        let irqd = unsafe { bindings::irq_get_irq_data(alloc.virq) };
        if irqd.is_null() {
            return Err(EINVAL);
        }
        // SAFETY: `irqd` is the valid top-level `irq_data` of the interrupt, this domain's level,
        // whose chip data is its `Irte` box (see `Ops::alloc`).
        let irte = NonNull::new(unsafe { (*irqd).chip_data }.cast::<Irte>()).ok_or(EINVAL)?;
        Ok((alloc, irte))
    }
}

/// Routes interrupt `virq` to `cpu` (`irq_set_affinity()`).
fn set_affinity_of(virq: u32, cpu: CpuId) -> Result {
    // SAFETY: Any interrupt number may be passed; the mask is valid.
    to_result(unsafe { bindings::irq_set_affinity(virq, cpumask_of(cpu).as_raw()) })
}

impl Drop for PostedDomain {
    fn drop(&mut self) {
        // SAFETY: Every `PostedIrq` holds an `Arc` of the domain and frees its interrupt before
        // dropping it, so the domain is empty; it was instantiated with `fwnode` (invariant).
        unsafe {
            bindings::irq_domain_remove(self.domain.as_ptr());
            bindings::irq_domain_free_fwnode(self.fwnode.as_ptr());
        }
    }
}

/// An interrupt allocated in a [`PostedDomain`], requested with a handler of type `T`.
struct Allocated {
    virq: u32,
}

impl Drop for Allocated {
    fn drop(&mut self) {
        // SAFETY: `virq` was allocated by `PostedDomain::alloc_irq` and is freed only here.
        unsafe { bindings::irq_domain_free_irqs(self.virq, 1) };
    }
}

/// A posted interrupt of the agent: allocated from the x86 vector domain through a
/// [`PostedDomain`], requested with a handler of type `T`, and posted by [`PostedIrq::post`].
///
/// Dropping it frees the handler, then the interrupt.
///
/// # Examples
///
/// ```
/// use core::sync::atomic::{AtomicU32, Ordering::Relaxed};
/// use kernel::{
///     cpu::CpuId,
///     irq::{posted_agent::{PostedDomain, PostedIrq}, Handler, IrqReturn},
///     time::{delay::fsleep, Delta, Instant, Monotonic},
/// };
///
/// #[pin_data]
/// struct Count {
///     runs: AtomicU32,
/// }
///
/// impl Handler for Count {
///     fn handle(&self) -> IrqReturn {
///         self.runs.fetch_add(1, Relaxed);
///         IrqReturn::Handled
///     }
/// }
///
/// let domain = PostedDomain::new(c"doctest-posted-agent")?;
/// let cpu = CpuId::from_u32(0).ok_or(EINVAL)?;
/// let count = try_pin_init!(Count { runs: AtomicU32::new(0) });
/// let irq = PostedIrq::new(&domain, cpu, c"doctest-posted-agent", count)?;
/// assert_eq!(irq.target().map(|(c, _)| c), Some(cpu));
///
/// // One MSI: a new PIR bit on CPU 0, and the notification.
/// let posted = irq.post()?;
/// assert!(posted.cpu == cpu && posted.new && posted.notified);
///
/// // The notification handler runs the interrupt's handler, once.
/// let start = Instant::<Monotonic>::now();
/// while irq.handler().runs.load(Relaxed) == 0 && start.elapsed().as_millis() < 1000 {
///     fsleep(Delta::from_millis(1));
/// }
/// fsleep(Delta::from_millis(10));
/// assert_eq!(irq.handler().runs.load(Relaxed), 1);
/// # Ok::<(), Error>(())
/// ```
///
/// # Invariants
///
/// `irte` is the chip data of `alloc.virq`, valid while the interrupt is allocated.
pub struct PostedIrq<T: Handler + 'static> {
    // Field order is drop order: the handler, the interrupt, then the domain.
    reg: Pin<KBox<Registration<'static, T>>>,
    alloc: Allocated,
    irte: NonNull<Irte>,
    _domain: Arc<PostedDomain>,
}

// SAFETY: `irte` is only used for shared access to its atomic word; the registration is `Sync`
// for a `Handler` (which is `Sync`).
unsafe impl<T: Handler + 'static> Sync for PostedIrq<T> {}

/// Returns whether `cpu` is online; it may change right after.
fn cpu_online(cpu: CpuId) -> bool {
    // SAFETY: `__cpu_online_mask` is a valid cpumask for the kernel's lifetime.
    unsafe { Cpumask::from_raw(&raw const bindings::__cpu_online_mask) }.test(cpu)
}

/// Returns the constant cpumask of only `cpu` (`cpumask_of()`).
fn cpumask_of(cpu: CpuId) -> &'static Cpumask {
    // SAFETY: `cpumask_of()` of a valid CPU id points into a constant table of cpumasks.
    unsafe { Cpumask::from_raw(bindings::cpumask_of(cpu.as_u32())) }
}

impl<T: Handler + 'static> PostedIrq<T> {
    /// Allocates an interrupt of `domain` routed to `cpu` and requests it (`request_irq()`) with
    /// `handler` under `name`.
    ///
    /// The interrupt is requested with `IRQF_NOBALANCING`: irqbalance and
    /// `/proc/irq/*/smp_affinity` leave it alone, so only its owner moves it
    /// ([`PostedIrq::set_affinity`]); and with `IRQF_NO_THREAD`: `handler` runs in the
    /// notification's demux loop, once per harvested PIR bit, also with `threadirqs` (a
    /// forced-threaded handler would run later, and its wake-ups coalesce). `handler` therefore
    /// always runs in hard-IRQ context, `PREEMPT_RT` included: it must not take locks that sleep
    /// there (`SpinLock` does on `PREEMPT_RT`; use atomics or a raw spinlock).
    ///
    /// Process context.
    ///
    /// # Errors
    ///
    /// `EINVAL` for an offline `cpu`, `ENOSPC` when `cpu` has no free vector, `ENOMEM`, or the
    /// error of `request_irq()` or of the initialiser.
    pub fn new(
        domain: &Arc<PostedDomain>,
        cpu: CpuId,
        name: &'static CStr,
        handler: impl PinInit<T, Error> + 'static,
    ) -> Result<Self> {
        let (alloc, irte) = domain.alloc_irq(cpu)?;
        let virq = alloc.virq;
        // SAFETY: `virq` stays allocated until `alloc` drops, after the registration (field
        // order), so the request is valid for the registration's lifetime.
        let request = unsafe { IrqRequest::from_virq(virq) };
        // SAFETY: The registration is never forgotten: it lives in a box owned by `Self`, and if
        // `Self` is forgotten, the box leaks with it, keeping the interrupt allocated and the
        // handler valid. (In a module, a forgotten `PostedIrq` outlives the module's code and
        // `name`, like any leaked `'static` registration.)
        let reg = KBox::pin_init(
            unsafe {
                Registration::new(
                    request,
                    Flags::NOBALANCING | Flags::NO_THREAD,
                    name,
                    handler,
                )
            },
            GFP_KERNEL,
        )?;
        // INVARIANT: `irte` is the chip data of the interrupt `alloc` owns.
        let this = Self {
            reg,
            alloc,
            irte,
            _domain: domain.clone(),
        };
        this.set_affinity(cpu)?;
        Ok(this)
    }

    /// Returns the Linux interrupt number.
    pub fn irq(&self) -> u32 {
        self.alloc.virq
    }

    /// Returns the handler.
    pub fn handler(&self) -> &T {
        self.reg.handler()
    }

    fn irte(&self) -> &Irte {
        // SAFETY: Valid while the interrupt is allocated (type invariant), i.e. while `self`
        // lives.
        unsafe { self.irte.as_ref() }
    }

    /// Returns where the interrupt's MSIs are posted now: (CPU, vector), or `None` while it has
    /// no vector.
    pub fn target(&self) -> Option<(CpuId, Vector)> {
        Irte::decode(self.irte().0.load(Relaxed) & !Irte::BUSY)
    }

    /// Posts one MSI of the interrupt as VT-d does: reads the IRTE, atomically sets the vector's
    /// bit in the target CPU's PIR, then sets ON unless ON or SN is set, and sends the
    /// notification interrupt if it set ON.
    ///
    /// Any context but NMI: it disables interrupts for the post, and waits for an affinity
    /// change rewriting the IRTE on another CPU.
    ///
    /// # Errors
    ///
    /// `ENXIO` if the interrupt has no vector (not activated).
    pub fn post(&self) -> Result<Posted> {
        self.irte().post()
    }

    /// Routes the interrupt to `cpu` (`irq_set_affinity()`): the vector domain picks a vector
    /// there and the IRTE follows.
    ///
    /// Process context, or atomic context but NMI. A move the vector domain cannot make at once
    /// (the previous move's vector still being cleaned up) is left pending until the interrupt
    /// next fires, as genirq does; [`PostedIrq::target`] tells where it is routed now.
    ///
    /// # Errors
    ///
    /// `EINVAL` for an offline `cpu`, or the vector domain's error.
    pub fn set_affinity(&self, cpu: CpuId) -> Result {
        set_affinity_of(self.alloc.virq, cpu)
    }
}
