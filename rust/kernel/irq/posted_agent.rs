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
    error::to_result,
    interrupt::local_interrupt_disable,
    irq::{
        posted::{
            self,
            Vector, //
        },
        AckCtx,
        Allocator,
        Chip,
        ChipFlag,
        ChipFlags,
        Domain,
        DomainOps,
        Flags,
        FlowHandler,
        ForeignDomain,
        Handler,
        IrqData,
        IrqRequest,
        MsiAllocInfo,
        Registration,
        SetAffinity,
        SetAffinityCtx, //
    },
    prelude::*,
    sync::Arc,
    ThisModule,
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
        let ret = Self::decode(entry).ok_or(ENXIO).and_then(|(cpu, vector)| {
            let pid = posted::PiDesc::of_cpu(cpu);
            let new = pid.set_pir(vector);
            let notified = pid.test_and_set_on_unless_sn();
            if notified {
                // Not expected to fail: the entry names online CPUs only (the vector domain
                // moves the interrupt off a CPU going offline, in `stop_machine()`, which waits
                // for this CPU while its interrupts are off).
                posted::send_notification(cpu)?;
            }
            Ok(Posted {
                cpu,
                vector,
                new,
                notified,
            })
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
///
/// Without `MOVE_DEFERRED` (the agent of [`PostedDomain::new`]) affinity changes take the path
/// of VT-d's posted MSIs: the PCI/MSI chip above INTEL-IR-POST is not `IRQCHIP_MOVE_DEFERRED`
/// (`x86_init_dev_msi_info()` sets it only for a PCI/MSI domain right on the vector domain), so
/// `irq_set_affinity()` moves the interrupt at once, in the caller's context, through the
/// remapping chip's `set_affinity` (`intel_ir_set_affinity()`: new vector, IRTE rewrite, cleanup
/// of the old vector). Only when the vector domain is busy with the cleanup of the previous move
/// (`-EBUSY`) does genirq defer the move to the next interrupt's `ack`. With `MOVE_DEFERRED`
/// (for tests of that path alone) every move waits for the next `ack`.
struct PostedAgentChip<const MOVE_DEFERRED: bool>;

#[vtable]
impl<const MOVE_DEFERRED: bool> Chip for PostedAgentChip<MOVE_DEFERRED> {
    type Data = Irte;
    const NAME: &'static CStr = c"POSTED-AGENT";
    const FLAGS: ChipFlags = if MOVE_DEFERRED {
        ChipFlags::of(ChipFlag::MoveDeferred)
    } else {
        ChipFlags::empty()
    };

    /// No-ops: the agent's interrupts model MSIs without per-vector masking, which a device
    /// sends whatever genirq's mask state; `__irq_move_irq()` calls them around a move applied
    /// at `ack`, which the IRTE rewrite makes safe unmasked (see [`Irte`]).
    fn mask(_irte: &Irte, _irqd: &IrqData) {}

    fn unmask(_irte: &Irte, _irqd: &IrqData) {}

    /// The posted-MSI `ack`: applies a pending affinity change, no EOI.
    fn ack(_irte: &Irte, irqd: &AckCtx<'_>) {
        // The agent's interrupts have the edge flow (`AgentOps::alloc_info`), which calls
        // `irq_ack` with the descriptor lock held in the interrupt's hard IRQ, and nothing else
        // calls it: what the posted-MSI acks require.
        // The Rust ack directly, as the Rust INTEL-IR-POST chip does.
        #[cfg(CONFIG_X86_POSTED_MSI_RUST)]
        if posted::rust_selected() {
            // SAFETY: See above.
            unsafe { posted::ack(irqd) };
            return;
        }
        // SAFETY: See above.
        unsafe { bindings::intel_ack_posted_msi_irq(irqd.as_raw()) }
    }

    /// Moves the interrupt: the vector domain assigns the new vector, the IRTE is rewritten, the
    /// old vector is cleaned up (`intel_ir_set_affinity()`).
    fn set_affinity(
        irte: &Irte,
        irqd: &SetAffinityCtx<'_>,
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

/// Returns the [`Irte`] of `irqd`, an interrupt level of an agent domain (`irqd.domain` is one):
/// its chip data, which [`AgentOps::alloc_info`] installs, or `None` once it is torn down.
///
/// # Safety
///
/// `irqd` is the level of an interrupt of a [`PostedDomain`]'s domain.
unsafe fn irte_of(irqd: &IrqData) -> Option<&Irte> {
    // SAFETY: `irqd` is valid (type invariant of `IrqData`).
    let data = unsafe { core::ptr::read_volatile(&raw const (*irqd.as_raw()).chip_data) };
    // SAFETY: The agent's level installs `PostedAgentChip` with a boxed `Irte` as chip data on
    // every interrupt (the function's safety requirements), valid until a grace period after the
    // reset that clears it (`Allocator::free_boxed`), which outlasts `irqd`'s use here.
    unsafe { data.cast::<Irte>().as_ref() }
}

/// The operations of [`PostedDomain`]'s domain: one interrupt per allocation, its level's chip
/// [`PostedAgentChip`] with the interrupt's [`Irte`] as per-interrupt chip data.
struct AgentOps {
    /// The chip is `IRQCHIP_MOVE_DEFERRED`: affinity changes wait for the next `ack`.
    move_deferred: bool,
}

#[vtable]
impl DomainOps for AgentOps {
    fn alloc_info(
        &self,
        alloc: &Allocator<'_, Self>,
        virq: u32,
        nr: u32,
        info: &MsiAllocInfo,
    ) -> Result {
        // `PostedIrq` allocates one interrupt at a time.
        if nr != 1 {
            return Err(EINVAL);
        }
        alloc.alloc_parent_info(virq, nr, info)?;
        let res = if self.move_deferred {
            alloc.set_info_boxed::<PostedAgentChip<true>>(
                virq,
                virq as usize,
                FlowHandler::Edge,
                Ok::<_, Error>(Irte::new()),
            )
        } else {
            alloc.set_info_boxed::<PostedAgentChip<false>>(
                virq,
                virq as usize,
                FlowHandler::Edge,
                Ok::<_, Error>(Irte::new()),
            )
        };
        if res.is_err() {
            // The vector domain's level is allocated: give it back.
            let _ = alloc.free_parent(virq, nr);
        }
        res
    }

    fn free(&self, alloc: &Allocator<'_, Self>, virq: u32, nr: u32) {
        // Resets the level, frees the vector domain's, then the `Irte`s after a grace period.
        let _ = alloc.free_boxed(virq, nr);
    }

    /// Points the IRTE at the vector the vector domain's activation assigned.
    fn activate(&self, irqd: &IrqData, _reserve: bool) -> Result {
        // SAFETY: genirq activates this domain's level of its interrupts.
        if let Some(irte) = unsafe { irte_of(irqd) } {
            irte.update(irqd);
        }
        Ok(())
    }

    fn deactivate(&self, irqd: &IrqData) {
        // SAFETY: As in `activate`.
        if let Some(irte) = unsafe { irte_of(irqd) } {
            irte.write(0);
        }
    }
}

/// An interrupt domain of the posting agent, below the x86 vector domain.
pub struct PostedDomain {
    domain: Domain<'static, AgentOps>,
}

impl PostedDomain {
    /// Creates a domain named `name` below the x86 vector domain, whose interrupts move as VT-d's
    /// posted MSIs do: `irq_set_affinity()` applies the move at once, in the caller's context
    /// (see [`PostedIrq::set_affinity`]).
    ///
    /// Process context.
    ///
    /// # Errors
    ///
    /// `ENODEV` without a vector domain, `ENOMEM`, or the error of `irq_domain_instantiate()`.
    pub fn new(name: &CStr) -> Result<Arc<Self>> {
        Self::new_mode(name, false)
    }

    /// As [`PostedDomain::new`]; with `move_deferred`, the agent's chip is
    /// `IRQCHIP_MOVE_DEFERRED`: every affinity change waits for the interrupt's next `ack`.
    fn new_mode(name: &CStr, move_deferred: bool) -> Result<Arc<Self>> {
        let parent = ForeignDomain::x86_vector().ok_or(ENODEV)?;
        let ops = AgentOps { move_deferred };
        let domain = Domain::new_hierarchy_on(name, parent, 0, Ok::<_, Error>(ops))?;
        Ok(Arc::new(Self { domain }, GFP_KERNEL)?)
    }

    /// Allocates one interrupt routed to `cpu`; returns it and its `Irte`.
    fn alloc_irq(&self, cpu: CpuId) -> Result<(Allocated, NonNull<Irte>)> {
        if !posted::cpu_online(cpu) {
            return Err(EINVAL);
        }
        let mapping = self
            .domain
            .alloc_irqs(&MsiAllocInfo::new(Some(cpumask_of(cpu))))?;
        // SAFETY: The top level of the interrupt just allocated is this domain's.
        let irte = unsafe { irte_of(mapping.desc().irq_data()) }
            .map(NonNull::from)
            .ok_or(EINVAL)?;
        // The `PostedIrq` that gets it keeps the domain (an `Arc`) until it disposed of it.
        let alloc = Allocated {
            virq: mapping.into_raw(),
        };
        Ok((alloc, irte))
    }
}

/// Routes interrupt `virq` to `cpu` (`irq_set_affinity()`).
fn set_affinity_of(virq: u32, cpu: CpuId) -> Result {
    // SAFETY: Any interrupt number may be passed; the mask is valid.
    to_result(unsafe { bindings::irq_set_affinity(virq, cpumask_of(cpu).as_raw()) })
}

/// An interrupt allocated in a [`PostedDomain`], requested with a handler of type `T`.
struct Allocated {
    virq: u32,
}

impl Drop for Allocated {
    fn drop(&mut self) {
        // SAFETY: `virq` was allocated by `PostedDomain::alloc_irq`, whose domain the owning
        // `PostedIrq` keeps alive until after this, and is disposed of only here.
        unsafe { bindings::irq_dispose_mapping(self.virq) };
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
/// // The module of the handler's code: `crate::LocalModule` (here the doctests', built in).
/// let irq = PostedIrq::new::<crate::LocalModule>(&domain, cpu, c"doctest-posted-agent", count)?;
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
    // Field order is drop order: the handler, the interrupt, the domain, then the module of the
    // handler's code.
    reg: Pin<KBox<Registration<'static, T>>>,
    alloc: Allocated,
    irte: NonNull<Irte>,
    _domain: Arc<PostedDomain>,
    _owner: crate::irq::domain::ModuleRef,
}

// SAFETY: `irte` is only used for shared access to its atomic word; the registration is `Sync`
// for a `Handler` (which is `Sync`).
unsafe impl<T: Handler + 'static> Sync for PostedIrq<T> {}

/// Returns the constant cpumask of only `cpu` (`cpumask_of()`).
fn cpumask_of(cpu: CpuId) -> &'static Cpumask {
    // SAFETY: `cpumask_of()` of a valid CPU id points into a constant table of cpumasks.
    unsafe { Cpumask::from_raw(bindings::cpumask_of(cpu.as_u32())) }
}

impl<T: Handler + 'static> PostedIrq<T> {
    /// Allocates an interrupt of `domain` routed to `cpu` and requests it (`request_irq()`) with
    /// `handler` under `name`, for the code of module `M` (the caller's `crate::LocalModule`, which
    /// `module!` or [`built_in_module!`](crate::built_in_module!) defines; it stays loaded while
    /// the interrupt is requested: a leaked `PostedIrq` keeps it).
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
    /// `EINVAL` for an offline `cpu`, `ENOSPC` when `cpu` has no free vector, `ENODEV` for a
    /// module being unloaded, `ENOMEM`, or the error of `request_irq()` or of the initialiser.
    pub fn new<M: crate::ModuleMetadata>(
        domain: &Arc<PostedDomain>,
        cpu: CpuId,
        name: &'static CStr,
        handler: impl PinInit<T, Error> + 'static,
    ) -> Result<Self> {
        let module = crate::module::this_module::<M>();
        Self::new_flags(module, domain, cpu, name, handler, Flags::NOBALANCING)
    }

    /// As [`PostedIrq::new`], but requested without `IRQF_NOBALANCING`: an interrupt balancer
    /// (or a write of `/proc/irq/N/smp_affinity`) may move it, as it may a device's MSI. The
    /// load of an interrupt balancer's test.
    pub fn new_movable<M: crate::ModuleMetadata>(
        domain: &Arc<PostedDomain>,
        cpu: CpuId,
        name: &'static CStr,
        handler: impl PinInit<T, Error> + 'static,
    ) -> Result<Self> {
        let module = crate::module::this_module::<M>();
        Self::new_flags(module, domain, cpu, name, handler, Flags::TRIGGER_NONE)
    }

    fn new_flags(
        module: &'static ThisModule,
        domain: &Arc<PostedDomain>,
        cpu: CpuId,
        name: &'static CStr,
        handler: impl PinInit<T, Error> + 'static,
        balance: Flags,
    ) -> Result<Self> {
        let owner = crate::irq::domain::ModuleRef::get(module)?;
        let (alloc, irte) = domain.alloc_irq(cpu)?;
        let virq = alloc.virq;
        // SAFETY: `virq` stays allocated until `alloc` drops, after the registration (field
        // order), so the request is valid for the registration's lifetime.
        let request = unsafe { IrqRequest::from_virq(virq) };
        // SAFETY: The registration is never forgotten apart from `Self`: it lives in a box owned
        // by `Self`, and if `Self` is forgotten, the box leaks with it, keeping the interrupt
        // allocated, the handler (`'static`) valid, and the module of its code and `name`
        // loaded (`owner`).
        let reg = KBox::pin_init(
            unsafe { Registration::new(request, balance | Flags::NO_THREAD, name, handler) },
            GFP_KERNEL,
        )?;
        // INVARIANT: `irte` is the chip data of the interrupt `alloc` owns.
        let this = Self {
            reg,
            alloc,
            irte,
            _domain: domain.clone(),
            _owner: owner,
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

    /// Routes the interrupt to `cpu` (`irq_set_affinity()`), as for VT-d's posted MSIs: at once,
    /// in the caller's context, the vector domain picks a vector there, the IRTE follows and the
    /// old vector's cleanup is scheduled; posts already past the IRTE land on the old vector,
    /// which the cleanup waits for. While the cleanup of the previous move is still pending, the
    /// vector domain is busy and genirq defers the move to the interrupt's next `ack`.
    /// [`PostedIrq::target`] tells where it is routed now.
    ///
    /// Process context, or atomic context but NMI.
    ///
    /// # Errors
    ///
    /// `EINVAL` for an offline `cpu`, or the vector domain's error (`ENOSPC`).
    pub fn set_affinity(&self, cpu: CpuId) -> Result {
        set_affinity_of(self.alloc.virq, cpu)
    }
}

/// The posting agent for the C KUnit suite of posted-MSI delivery
/// (`arch/x86/kernel/posted_msi_test.c`), which requests and counts its interrupts itself: one
/// agent for the Rust and the C tests.
#[cfg(CONFIG_X86_POSTED_MSI_KUNIT_TEST)]
mod c_api {
    use super::*;

    /// Creates an agent domain named `name` below the x86 vector domain; returns it as a handle
    /// for the other functions, or null. Its interrupts move as VT-d's posted MSIs do
    /// ([`PostedDomain::new`]), or, with `move_deferred`, only at their next `ack`
    /// (`IRQCHIP_MOVE_DEFERRED`). Process context.
    ///
    /// # Safety
    ///
    /// `name` is a valid C string for the call.
    #[no_mangle]
    unsafe extern "C" fn posted_msi_agent_create(
        name: *const c_char,
        move_deferred: bool,
    ) -> *mut c_void {
        // SAFETY: `name` is a valid C string (the function's safety requirements).
        let name = unsafe { CStr::from_char_ptr(name) };
        PostedDomain::new_mode(name, move_deferred).map_or(core::ptr::null_mut(), |d| {
            Arc::into_raw(d).cast_mut().cast()
        })
    }

    /// Removes the domain of `handle`, whose interrupts must all be freed. Process context.
    ///
    /// # Safety
    ///
    /// `handle` comes from `posted_msi_agent_create()` and is not used afterwards.
    #[no_mangle]
    unsafe extern "C" fn posted_msi_agent_destroy(handle: *mut c_void) {
        // SAFETY: `handle` came from `Arc::into_raw()` in `posted_msi_agent_create()`.
        drop(unsafe { Arc::from_raw(handle.cast::<PostedDomain>()) });
    }

    /// Allocates one interrupt of the domain routed to `cpu`; returns its virq or a negative
    /// error (`EINVAL` for an offline CPU). Process context.
    ///
    /// # Safety
    ///
    /// `handle` comes from `posted_msi_agent_create()` and is live.
    #[no_mangle]
    unsafe extern "C" fn posted_msi_agent_alloc(handle: *mut c_void, cpu: c_uint) -> c_int {
        // SAFETY: `handle` is a live `PostedDomain` (the function's safety requirements).
        let domain = unsafe { &*handle.cast::<PostedDomain>() };
        let res = CpuId::from_u32(cpu)
            .ok_or(EINVAL)
            .and_then(|cpu| domain.alloc_irq(cpu));
        match res {
            Ok((alloc, _)) => {
                let virq = alloc.virq;
                // Ownership goes to the caller, who frees it with `posted_msi_agent_free()`.
                core::mem::forget(alloc);
                virq as c_int
            }
            Err(e) => e.to_errno(),
        }
    }

    /// Frees interrupt `virq`, which `posted_msi_agent_alloc()` returned. Process context.
    ///
    /// # Safety
    ///
    /// `virq` comes from `posted_msi_agent_alloc()` of a live domain, has no action, and is
    /// not used afterwards.
    #[no_mangle]
    unsafe extern "C" fn posted_msi_agent_free(virq: c_uint) {
        drop(Allocated { virq });
    }

    /// Posts one MSI of interrupt `virq` as VT-d does (see [`PostedIrq::post`]); `*newly` tells
    /// whether its PIR bit was clear. Returns 1 if the post sent the notification, 0 if not,
    /// `-ENXIO` without a vector, `-EINVAL` for an interrupt that is not of the domain of
    /// `handle`. Any context but NMI.
    ///
    /// `virq` may be any number: one freed meanwhile (or never allocated) is refused.
    ///
    /// # Safety
    ///
    /// `handle` comes from `posted_msi_agent_create()` and is live; `newly` is valid for writes.
    #[no_mangle]
    unsafe extern "C" fn posted_msi_agent_post(
        handle: *mut c_void,
        virq: c_uint,
        newly: *mut bool,
    ) -> c_int {
        // SAFETY: `handle` is a live `PostedDomain` (the function's safety requirements).
        let domain = unsafe { &*handle.cast::<PostedDomain>() };
        // Descriptors are freed after an RCU grace period, the agent's `Irte`s too
        // (`Allocator::free_boxed`): both stay valid until the end of the post, even if the
        // interrupt is freed meanwhile.
        let _rcu = crate::sync::rcu::read_lock();
        // SAFETY: Any virq may be looked up; a non-null result is valid under RCU (above).
        let irqd = unsafe { bindings::irq_get_irq_data(virq) };
        // SAFETY: A non-null `irqd` is valid (as just said).
        if irqd.is_null() || unsafe { (*irqd).domain } != domain.domain.as_raw() {
            return EINVAL.to_errno();
        }
        // SAFETY: Valid under RCU (above).
        let irqd = unsafe { IrqData::from_raw(irqd) };
        // SAFETY: `irqd` is the top level of an interrupt of `domain` (checked above).
        let Some(irte) = (unsafe { irte_of(irqd) }) else {
            return EINVAL.to_errno();
        };
        match irte.post() {
            Ok(p) => {
                // SAFETY: `newly` is valid for writes (the function's safety requirements).
                unsafe { *newly = p.new };
                c_int::from(p.notified)
            }
            Err(e) => e.to_errno(),
        }
    }

    /// Posts `vector` to `cpu`'s posted-interrupt descriptor as VT-d does, with no interrupt
    /// behind it; `*newly` tells whether the PIR bit was clear. Returns 1 if the post sent the
    /// notification, 0 if not, `-EINVAL` for a vector outside 32..=255 or a CPU that is not
    /// online (nothing posted). Any context but NMI.
    ///
    /// # Safety
    ///
    /// `newly` is valid for writes.
    #[no_mangle]
    unsafe extern "C" fn posted_msi_agent_post_vector(
        cpu: c_uint,
        vector: c_uint,
        newly: *mut bool,
    ) -> c_int {
        let (Some(cpu), Ok(vector)) = (CpuId::from_u32(cpu), Vector::new(vector)) else {
            return EINVAL.to_errno();
        };
        // Interrupts off: `cpu`, found online, stays so until the notification is sent
        // (offlining it clears its online bit in `stop_machine()`, which waits for this CPU).
        let _irqs_off = local_interrupt_disable();
        if !posted::cpu_online(cpu) {
            return EINVAL.to_errno();
        }
        let pid = posted::PiDesc::of_cpu(cpu);
        // SAFETY: `newly` is valid for writes (the function's safety requirements).
        unsafe { *newly = pid.set_pir(vector) };
        let notified = pid.test_and_set_on_unless_sn();
        if notified {
            if let Err(e) = posted::send_notification(cpu) {
                return e.to_errno();
            }
        }
        c_int::from(notified)
    }

    /// Sends the posted-MSI notification to `cpu` ([`posted::send_notification`]), whatever its
    /// descriptor holds. Returns 0, or `-EINVAL` for a CPU that is not online (nothing sent).
    /// Any context but NMI.
    #[no_mangle]
    extern "C" fn posted_msi_agent_notify(cpu: c_uint) -> c_int {
        let res = CpuId::from_u32(cpu).ok_or(EINVAL);
        match res.and_then(posted::send_notification) {
            Ok(()) => 0,
            Err(e) => e.to_errno(),
        }
    }
}
