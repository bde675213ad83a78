// SPDX-License-Identifier: GPL-2.0

//! The hardware and C interfaces of the Rust GICv3 driver: the only `unsafe` code of the driver.
//!
//! - The GIC CPU interface's system registers (`ICC_*_EL1`), each access a safe function around
//!   one `msr`/`mrs`, and the barriers the driver orders them with.
//! - The distributor and redistributor frames as [`kernel::io::Mmio`] views of the regions the
//!   C probe shim mapped for the kernel's lifetime.
//! - The entry points C calls: the probe (`rust_gicv3_of_init()`), the root interrupt handler
//!   (`gic_v3_rust_handle_irq()`), the CPU hotplug STARTING callback
//!   (`rust_gicv3_starting_cpu()`).
//! - The C functions the driver calls: `cpu_logical_map()`, `is_hyp_mode_available()`,
//!   `gic_configure_irq()` of `irq-gic-common.c`, and the shim's redistributor table for the ITS.
//!
//! C sources: [`arch/arm64/include/asm/arch_gicv3.h`](srctree/arch/arm64/include/asm/arch_gicv3.h),
//! [`arch/arm64/include/asm/sysreg.h`](srctree/arch/arm64/include/asm/sysreg.h),
//! [`drivers/irqchip/irq-gic-v3-select.c`](srctree/drivers/irqchip/irq-gic-v3-select.c).

use core::{
    arch::asm,
    sync::atomic::{
        AtomicPtr,
        Ordering::Relaxed, //
    },
};

use kernel::{
    bindings,
    cpu::CpuId,
    cpumask::Cpumask,
    ffi::{
        c_int,
        c_uint,
        c_void, //
    },
    io::{
        Mmio,
        MmioRaw,
        Region, //
    },
    prelude::*, //
};

/// Size of a distributor frame and of each of a redistributor's two frames (`SZ_64K`).
pub(crate) const FRAME: usize = 0x10000;

/// A 64 KiB frame of GIC registers.
pub(crate) type Frame = Mmio<'static, Region<FRAME>>;

/// Writes a system register by its `S<op0>_<op1>_C<n>_C<m>_<op2>` name.
macro_rules! msr {
    ($reg:literal, $val:expr) => {
        // SAFETY: Writing this GIC CPU interface register has no effect on memory safety: it
        // changes interrupt delivery (priority drop, deactivation, masks, SGI generation), which
        // the driver controls. `nostack`: no stack use.
        unsafe { asm!(concat!("msr ", $reg, ", {0}"), in(reg) $val, options(nostack)) }
    };
}

/// Reads a system register by its `S<op0>_<op1>_C<n>_C<m>_<op2>` name.
macro_rules! mrs {
    ($reg:literal) => {{
        let v: u64;
        // SAFETY: Reading this GIC CPU interface register has no effect on memory safety (an
        // IAR read acknowledges the interrupt it returns, which the driver then handles).
        unsafe { asm!(concat!("mrs {0}, ", $reg), out(reg) v, options(nostack)) };
        v
    }};
}

/// The root handler's accesses to the CPU interface: behind a trait so that KUnit can run
/// [`handle_one`](super::handle_one) against a recording fake and check the order of the
/// register writes.
pub(crate) trait CpuInterface {
    /// Reads `ICC_IAR1_EL1` (acknowledges the highest-priority pending Group 1 interrupt), then
    /// `dsb sy` as `gic_read_iar_common()`.
    fn read_iar1(&self) -> u32;
    /// Writes `ICC_EOIR1_EL1`: priority drop (EOImode=1), or priority drop and deactivation
    /// (EOImode=0).
    fn write_eoir1(&self, intid: u32);
    /// Writes `ICC_DIR_EL1` (deactivation in EOImode=1), then `isb` as `gic_write_dir()`.
    fn write_dir(&self, intid: u32);
    /// An instruction synchronisation barrier (`isb`).
    fn isb(&self);
}

/// The GIC CPU interface of the current CPU, through its system registers.
#[derive(Clone, Copy)]
pub(crate) struct Sysregs;

impl CpuInterface for Sysregs {
    #[inline(always)]
    fn read_iar1(&self) -> u32 {
        let v = mrs!("S3_0_C12_C12_0");
        dsb_sy();
        v as u32
    }

    #[inline(always)]
    fn write_eoir1(&self, intid: u32) {
        msr!("S3_0_C12_C12_1", u64::from(intid));
    }

    #[inline(always)]
    fn write_dir(&self, intid: u32) {
        msr!("S3_0_C12_C11_1", u64::from(intid));
        isb();
    }

    #[inline(always)]
    fn isb(&self) {
        isb();
    }
}

/// `isb`: instruction synchronisation barrier.
#[inline(always)]
pub(crate) fn isb() {
    // SAFETY: A barrier; also a compiler barrier (no `nomem`).
    unsafe { asm!("isb", options(nostack, preserves_flags)) };
}

/// `dsb sy`: full-system data synchronisation barrier.
#[inline(always)]
pub(crate) fn dsb_sy() {
    // SAFETY: A barrier; also a compiler barrier (no `nomem`).
    unsafe { asm!("dsb sy", options(nostack, preserves_flags)) };
}

/// `dsb ishst`: stores to Normal memory complete in the inner-shareable domain.
#[inline(always)]
pub(crate) fn dsb_ishst() {
    // SAFETY: A barrier; also a compiler barrier (no `nomem`).
    unsafe { asm!("dsb ishst", options(nostack, preserves_flags)) };
}

/// `ICC_CTLR_EL1`.
pub(crate) fn read_ctlr() -> u64 {
    mrs!("S3_0_C12_C12_4")
}

/// `ICC_CTLR_EL1`, then `isb` as `gic_write_ctlr()`.
pub(crate) fn write_ctlr(v: u64) {
    msr!("S3_0_C12_C12_4", v);
    isb();
}

/// `ICC_PMR_EL1`.
pub(crate) fn read_pmr() -> u64 {
    mrs!("S3_0_C4_C6_0")
}

/// `ICC_PMR_EL1`.
pub(crate) fn write_pmr(v: u64) {
    msr!("S3_0_C4_C6_0", v);
}

/// `ICC_BPR1_EL1`.
pub(crate) fn write_bpr1(v: u64) {
    msr!("S3_0_C12_C12_3", v);
}

/// `ICC_IGRPEN1_EL1`, then `isb` as `gic_write_grpen1()`.
pub(crate) fn write_igrpen1(v: u64) {
    msr!("S3_0_C12_C12_7", v);
    isb();
}

/// `ICC_SGI1R_EL1`: generates an SGI.
#[inline(always)]
pub(crate) fn write_sgi1r(v: u64) {
    msr!("S3_0_C12_C11_5", v);
}

/// Clears the active priority registers `ICC_AP0R<n>_EL1` (Group 0, `group0`) or
/// `ICC_AP1R<n>_EL1` (Group 1) for `n < count` (`count` of 1, 2 or 4, from the priority bits).
pub(crate) fn clear_apr(group0: bool, count: u32) {
    match (group0, count) {
        (true, 4) => {
            msr!("S3_0_C12_C8_7", 0u64);
            msr!("S3_0_C12_C8_6", 0u64);
            msr!("S3_0_C12_C8_5", 0u64);
            msr!("S3_0_C12_C8_4", 0u64);
        }
        (true, 2) => {
            msr!("S3_0_C12_C8_5", 0u64);
            msr!("S3_0_C12_C8_4", 0u64);
        }
        (true, _) => msr!("S3_0_C12_C8_4", 0u64),
        (false, 4) => {
            msr!("S3_0_C12_C9_3", 0u64);
            msr!("S3_0_C12_C9_2", 0u64);
            msr!("S3_0_C12_C9_1", 0u64);
            msr!("S3_0_C12_C9_0", 0u64);
        }
        (false, 2) => {
            msr!("S3_0_C12_C9_1", 0u64);
            msr!("S3_0_C12_C9_0", 0u64);
        }
        (false, _) => msr!("S3_0_C12_C9_0", 0u64),
    }
}

/// Sets `ICC_SRE_EL1.SRE` (system-register access to the CPU interface) and returns whether it
/// is set (`gic_enable_sre()`): a hypervisor can keep it clear.
pub(crate) fn enable_sre() -> bool {
    const SRE: u64 = 1 << 0;
    let v = mrs!("S3_0_C12_C12_5");
    if v & SRE != 0 {
        return true;
    }
    msr!("S3_0_C12_C12_5", v | SRE);
    isb();
    mrs!("S3_0_C12_C12_5") & SRE != 0
}

/// The MPIDR_EL1 of logical CPU `cpu` (`cpu_logical_map()`).
pub(crate) fn cpu_mpidr(cpu: CpuId) -> u64 {
    // SAFETY: `cpu` is a valid CPU number (`CpuId` invariant), an index of `__cpu_logical_map`.
    unsafe { cpu_logical_map(cpu.as_u32()) }
}

/// Whether the kernel was entered at EL2 (`is_hyp_mode_available()`): the GIC then runs with
/// EOImode=1, split priority drop and deactivation.
pub(crate) fn hyp_mode_available() -> bool {
    // SAFETY: Reads boot-time state only.
    unsafe { gic_v3_rust_hyp_mode_available() }
}

/// Whether the command line asked for the strict flow (`irqchip.gicv3_flow=strict`, the
/// default; `fasteoi` turns it off).
pub(crate) fn strict_flow_requested() -> bool {
    // SAFETY: Reads boot-time state only.
    unsafe { gic_v3_rust_strict_flow() }
}

/// The mask of online CPUs (`cpu_online_mask`).
pub(crate) fn online_mask() -> &'static Cpumask {
    // SAFETY: `__cpu_online_mask` is a valid cpumask for the kernel's lifetime; hotplug changes
    // it with atomic bit operations, which the reads here race with benignly (as C's).
    unsafe { Cpumask::from_raw(&raw const bindings::__cpu_online_mask) }
}

/// The constant cpumask of only `cpu` (`cpumask_of()`).
pub(crate) fn cpumask_of(cpu: CpuId) -> &'static Cpumask {
    // SAFETY: `cpumask_of()` of a valid CPU number points into a constant table of cpumasks.
    unsafe { Cpumask::from_raw(bindings::cpumask_of(cpu.as_u32())) }
}

extern "C" {
    // `drivers/irqchip/irq-gic-common.h`, a header private to drivers/irqchip.
    fn gic_configure_irq(irq: c_uint, ty: c_uint, base: *mut c_void) -> c_int;
    // `drivers/irqchip/irq-gic-v3-select.c`.
    fn gic_v3_rust_set_rdist(cpu: c_uint, rd_base: *mut c_void, phys_base: u64);
    fn gic_v3_rust_hyp_mode_available() -> bool;
    fn gic_v3_rust_strict_flow() -> bool;
    // `arch/arm64/include/asm/smp.h`.
    fn cpu_logical_map(cpu: c_uint) -> u64;
}

/// A 64 KiB frame that holds the banks of per-interrupt bits and fields (the distributor, or a
/// redistributor's `SGI_base` frame): its registers, and its address for `gic_configure_irq()`.
#[derive(Clone, Copy)]
pub(crate) struct Bank {
    /// The frame's registers.
    pub(crate) io: Frame,
    addr: usize,
}

impl Bank {
    /// Programs the trigger of interrupt `index` of the frame's `GICD_ICFGR` bank under
    /// `irq-gic-common.c`'s controller lock (`gic_configure_irq()`): edge for an edge `ty`,
    /// level otherwise. Returns `EINVAL` for an index outside the bank, or when the GIC refuses
    /// the change (a secure interrupt, say).
    pub(crate) fn configure_irq(&self, index: u32, ty: u32) -> Result {
        const GICD_ICFGR: usize = 0xc00;
        if index >= 1024 {
            return Err(EINVAL);
        }
        // SAFETY: `self.addr` is the address of the mapped frame `self.io` (see `Bank::new`),
        // whose `GICD_ICFGR` bank holds the `index / 16`th word (64 at most); the C function
        // serialises its read-modify-write with the other users of the bank.
        kernel::error::to_result(unsafe {
            gic_configure_irq(
                index,
                ty,
                core::ptr::without_provenance_mut(self.addr + GICD_ICFGR),
            )
        })
    }
}

/// Maps the raw frame at `addr` (`size` bytes, at least one frame).
///
/// # Safety
///
/// `addr..addr + size` is mapped device memory that is never unmapped.
unsafe fn bank(addr: usize, size: usize) -> Result<Bank> {
    let raw = MmioRaw::<Region<FRAME>>::new_region(addr, size)?;
    Ok(Bank {
        // SAFETY: Mapped for the kernel's lifetime (the function's safety requirements).
        io: unsafe { Mmio::from_raw(raw) },
        addr,
    })
}

/// A redistributor region mapped by the probe shim for the kernel's lifetime.
///
/// # Invariants
///
/// `base..base + size` is mapped device memory (`of_iomap()`) that is never unmapped, and
/// `phys` its physical address.
pub(crate) struct RedistRegion {
    base: usize,
    size: usize,
    phys: u64,
}

impl RedistRegion {
    /// The redistributor at byte `offset` of the region: its `RD_base` and `SGI_base` frames.
    ///
    /// Returns `EINVAL` if the two frames do not lie inside the region.
    pub(crate) fn redist(&self, offset: usize) -> Result<Redist> {
        let end = offset.checked_add(2 * FRAME).ok_or(EINVAL)?;
        if end > self.size {
            return Err(EINVAL);
        }
        // SAFETY: Both frames lie in the region (checked above), mapped for the kernel's
        // lifetime (type invariant).
        let (rd, sgi) = unsafe {
            (
                bank(self.base + offset, FRAME)?,
                bank(self.base + offset + FRAME, FRAME)?,
            )
        };
        Ok(Redist {
            rd: rd.io,
            rd_addr: rd.addr,
            sgi,
            phys: self.phys + offset as u64,
        })
    }

    /// The region's size in bytes.
    pub(crate) fn size(&self) -> usize {
        self.size
    }
}

/// One CPU's redistributor: its `RD_base` frame (control, `GICR_TYPER`, `GICR_WAKER`) and its
/// `SGI_base` frame (the SGI and PPI enable, pending, active, priority and configuration banks).
#[derive(Clone, Copy)]
pub(crate) struct Redist {
    /// `RD_base`.
    pub(crate) rd: Frame,
    rd_addr: usize,
    /// `SGI_base`.
    pub(crate) sgi: Bank,
    /// Physical address of `RD_base`.
    pub(crate) phys: u64,
}

impl Redist {
    /// Records this redistributor as `cpu`'s in the C `struct rdists` of the ITS driver
    /// (`rd_base`, `phys_base`, its lock).
    pub(crate) fn publish(&self, cpu: CpuId) {
        // SAFETY: `cpu` is a possible CPU; the shim's table has an entry for every possible CPU
        // and only the boot CPU (at probe) writes it, before the ITS uses it.
        unsafe {
            gic_v3_rust_set_rdist(
                cpu.as_u32(),
                core::ptr::without_provenance_mut(self.rd_addr),
                self.phys,
            )
        };
    }
}

/// The regions the shim mapped: the distributor and the redistributor regions.
pub(crate) struct Regions {
    /// The distributor (`GICD_*`).
    pub(crate) dist: Bank,
    /// The redistributor regions, in device-tree order.
    pub(crate) redist: KVec<RedistRegion>,
    /// `redistributor-stride` (0: none given).
    pub(crate) stride: u64,
}

/// One mapped region as the shim passes it.
#[repr(C)]
pub(crate) struct RawRegion {
    base: *mut c_void,
    phys: u64,
    size: u64,
}

/// What the probe returns to the shim.
#[repr(C)]
pub(crate) struct ProbeOut {
    /// The root domain (for `its_init()`).
    domain: *mut bindings::irq_domain,
    /// The first of the 8 IPI virqs (for `set_smp_ipi_range()`).
    ipi_base: c_int,
    /// Whether the distributor supports LPIs (then the shim starts the ITS).
    lpis: bool,
    /// Whether EOImode=1 is used (the root handler to install).
    split_eoi: bool,
    /// The distributor priority of normal interrupts (for `its_init()`).
    prio: u8,
    /// `GICD_TYPER` and `GICD_TYPER2` (for the ITS's `struct rdists`).
    gicd_typer: u32,
    gicd_typer2: u32,
    /// Every redistributor has direct LPI support (`rdists.has_direct_lpi`).
    direct_lpi: bool,
    /// Set, also on failure, once the GIC is programmed: the mappings must stay.
    retained: bool,
}

// The shim's `struct gic_v3_rust_probe` and `struct gic_v3_rust_region` have these layouts
// (asserted there too).
const _: () = assert!(core::mem::size_of::<ProbeOut>() == 32);
const _: () = assert!(core::mem::offset_of!(ProbeOut, gicd_typer2) == 20);
const _: () = assert!(core::mem::offset_of!(ProbeOut, retained) == 25);
const _: () = assert!(core::mem::size_of::<RawRegion>() == 24);

/// The result of a successful probe.
pub(crate) struct Probed {
    pub(crate) domain: *mut bindings::irq_domain,
    pub(crate) ipi_base: u32,
    pub(crate) lpis: bool,
    pub(crate) split_eoi: bool,
    pub(crate) prio: u8,
    pub(crate) gicd_typer: u32,
    pub(crate) gicd_typer2: u32,
    pub(crate) direct_lpi: bool,
}

/// Probes the GICv3 of a device-tree node: called by the shim's `IRQCHIP_DECLARE` init function
/// when `irqchip.gicv3=rust` (the default), with the regions it mapped.
///
/// # Safety
///
/// Called once, at boot on the boot CPU with interrupts disabled, by
/// `gic_v3_rust_of_init()`: `fwnode` is the GIC's device-tree node; `dist` is its distributor
/// mapping of `dist_size` bytes at `dist_phys`; `regions` points to `nr` redistributor regions
/// mapped for the kernel's lifetime; `out` is valid for writes.
#[no_mangle]
unsafe extern "C" fn rust_gicv3_of_init(
    fwnode: *mut bindings::fwnode_handle,
    dist: *mut c_void,
    _dist_phys: u64,
    dist_size: u64,
    regions: *const RawRegion,
    nr: u32,
    stride: u64,
    out: *mut ProbeOut,
) -> c_int {
    // SAFETY: The shim's mappings (the function's safety requirements).
    let regions = match unsafe { build_regions(dist, dist_size, regions, nr, stride) } {
        Ok(r) => r,
        Err(e) => return e.to_errno(),
    };
    let mut retained = false;
    // INVARIANT: `fwnode` is the GIC's device-tree node, never freed (the function's safety
    // requirements); the shim probes each node once.
    let r = super::probe(RootNode(fwnode), regions, &mut retained);
    let out_val = match &r {
        Ok(p) => ProbeOut {
            domain: p.domain,
            ipi_base: p.ipi_base as c_int,
            lpis: p.lpis,
            split_eoi: p.split_eoi,
            prio: p.prio,
            gicd_typer: p.gicd_typer,
            gicd_typer2: p.gicd_typer2,
            direct_lpi: p.direct_lpi,
            retained,
        },
        Err(_) => ProbeOut {
            domain: core::ptr::null_mut(),
            ipi_base: 0,
            lpis: false,
            split_eoi: false,
            prio: 0,
            gicd_typer: 0,
            gicd_typer2: 0,
            direct_lpi: false,
            retained,
        },
    };
    // SAFETY: `out` is valid for writes (the function's safety requirements).
    unsafe { out.write(out_val) };
    match r {
        Ok(_) => 0,
        Err(e) => e.to_errno(),
    }
}

/// The GIC's device-tree node, on which the probe creates the root domain.
///
/// # Invariants
///
/// `self.0` is the firmware node of a device-tree node that is never freed, on which no wired
/// domain exists yet; only [`rust_gicv3_of_init`] creates it, once per node.
pub(crate) struct RootNode(*mut bindings::fwnode_handle);

impl RootNode {
    /// Creates the root domain on the node ([`Domain::new_root`](kernel::irq::Domain::new_root)),
    /// consuming it: one wired domain per node.
    pub(crate) fn create_domain(
        self,
        hwirq_max: usize,
        data: impl PinInit<super::Gic, Error>,
    ) -> Result<&'static kernel::irq::Domain<'static, super::Gic>> {
        // SAFETY: `self.0` is a device-tree node that is never freed, without a wired domain
        // (type invariant); `self` is consumed, so this runs once for it.
        unsafe { kernel::irq::Domain::new_root(self.0, hwirq_max, data) }
    }
}

/// Builds the [`Regions`] of the raw mappings the shim passed.
///
/// # Safety
///
/// As for [`rust_gicv3_of_init`]: the mappings live for the kernel's lifetime and `regions`
/// points to `nr` entries.
unsafe fn build_regions(
    dist: *mut c_void,
    dist_size: u64,
    regions: *const RawRegion,
    nr: u32,
    stride: u64,
) -> Result<Regions> {
    let dist_size = usize::try_from(dist_size).map_err(|_| EINVAL)?;
    // SAFETY: The shim mapped `dist_size` bytes at `dist` for the kernel's lifetime (the
    // caller's safety requirements).
    let dist = unsafe { bank(dist.addr(), dist_size)? };
    let mut redist = KVec::with_capacity(nr as usize, GFP_KERNEL)?;
    for i in 0..nr as usize {
        // SAFETY: `regions` points to `nr` entries (the caller's safety requirements).
        let r = unsafe { &*regions.add(i) };
        let size = usize::try_from(r.size).map_err(|_| EINVAL)?;
        // INVARIANT: The shim mapped the region for the kernel's lifetime.
        redist.push(
            RedistRegion {
                base: r.base.addr(),
                size,
                phys: r.phys,
            },
            GFP_KERNEL,
        )?;
    }
    Ok(Regions {
        dist,
        redist,
        stride,
    })
}

/// The root domain's `irq_domain`, for the root handler: set by [`set_root`] before the shim
/// installs the handler (on the boot CPU, secondaries start later), never changed after.
static ROOT_DOMAIN: AtomicPtr<bindings::irq_domain> = AtomicPtr::new(core::ptr::null_mut());

/// Publishes the root domain to the root handler.
pub(crate) fn set_root(domain: &'static kernel::irq::Domain<'static, super::Gic>) {
    ROOT_DOMAIN.store(domain.as_raw(), Relaxed);
}

/// Runs the flow handler of `intid` in the root domain (`generic_handle_domain_irq()`):
/// whether it was mapped and handled.
#[inline(always)]
fn dispatch(intid: u32) -> bool {
    let d = ROOT_DOMAIN.load(Relaxed);
    // SAFETY: A non-null `d` is the root domain, which lives for the kernel's lifetime
    // (`Domain::new_root`); this runs in the root handler, interrupts disabled, so the
    // descriptor found under RCU stays valid while its flow handler runs.
    !d.is_null() && unsafe { bindings::generic_handle_domain_irq(d, intid as usize) } == 0
}

/// The root interrupt handler, installed with `set_handle_irq()` by the shim when the GIC runs
/// in EOImode=1 (split priority drop and deactivation). In `.irqentry.text`, as
/// `__exception_irq_entry` places C's `gic_handle_irq()`; its type is `handle_arch_irq`'s
/// (`void (*)(struct pt_regs *)`), which kCFI checks.
///
/// # Safety
///
/// Only called by the arm64 interrupt entry code (`handle_arch_irq`): hard IRQ context,
/// interrupts disabled, after `irq_enter()`.
#[no_mangle]
#[link_section = ".irqentry.text"]
unsafe extern "C" fn gic_v3_rust_handle_irq(_regs: *mut bindings::pt_regs) {
    super::handle_one::<_, true>(&Sysregs, dispatch);
}

/// The root interrupt handler for EOImode=0 (a kernel entered at EL1).
///
/// # Safety
///
/// As [`gic_v3_rust_handle_irq`].
#[no_mangle]
#[link_section = ".irqentry.text"]
unsafe extern "C" fn gic_v3_rust_handle_irq_eoimode0(_regs: *mut bindings::pt_regs) {
    super::handle_one::<_, false>(&Sysregs, dispatch);
}

/// The CPU PM notifier's body (the shim's `cpu_pm` notifier): `exit` is `CPU_PM_EXIT` or
/// `CPU_PM_ENTER_FAILED`, else `CPU_PM_ENTER`.
///
/// # Safety
///
/// Called by the shim's notifier on the CPU changing state, interrupts disabled.
#[no_mangle]
unsafe extern "C" fn rust_gicv3_cpu_pm(exit: bool) {
    super::cpu_pm(CpuId::current(), exit);
}

/// The CPUs of `mask`, in order (`for_each_cpu()`).
pub(crate) fn cpus_in(mask: &Cpumask) -> impl Iterator<Item = CpuId> + '_ {
    let nbits = kernel::cpu::nr_cpu_ids() as usize;
    let mut next = 0usize;
    core::iter::from_fn(move || {
        if next >= nbits {
            return None;
        }
        // SAFETY: `mask` is a valid cpumask of at least `nr_cpu_ids` bits; `_find_next_bit()`
        // reads `nbits` bits from it.
        let cpu = unsafe { bindings::_find_next_bit((*mask.as_raw()).bits.as_ptr(), nbits, next) }
            as usize;
        if cpu >= nbits {
            next = nbits;
            return None;
        }
        next = cpu + 1;
        CpuId::from_u32(cpu as u32)
    })
}

/// The CPU hotplug STARTING callback (`CPUHP_AP_IRQ_GIC_STARTING`), run by the shim's
/// `gic_v3_rust_starting_cpu()` on the incoming CPU before its ITS part.
///
/// # Safety
///
/// Called on CPU `cpu` itself, interrupts disabled, after the probe succeeded.
#[no_mangle]
unsafe extern "C" fn rust_gicv3_starting_cpu(cpu: c_uint) -> c_int {
    match CpuId::from_u32(cpu) {
        Some(cpu) => match super::starting_cpu(cpu) {
            Ok(()) => 0,
            Err(e) => e.to_errno(),
        },
        None => EINVAL.to_errno(),
    }
}

/// The hotplug PREPARE check (`CPUHP_BP_PREPARE_DYN`, on the controlling CPU): a CPU without a
/// redistributor is refused (`EINVAL`) before it can fail in its STARTING callback, which must
/// not fail (`gic_check_rdist()`).
///
/// # Safety
///
/// Called by the CPU hotplug core after the probe succeeded.
#[no_mangle]
unsafe extern "C" fn rust_gicv3_check_cpu(cpu: c_uint) -> c_int {
    match CpuId::from_u32(cpu) {
        Some(cpu) if super::has_redist(cpu) => 0,
        _ => EINVAL.to_errno(),
    }
}
