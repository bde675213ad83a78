// SPDX-License-Identifier: GPL-2.0

//! The Rust GICv3 driver's side of the C shim `irq-gic-v3-select.c`: the frames it mapped, the
//! probe's tokens, the C functions the driver calls, and its entry points.
//!
//! C header: [`drivers/irqchip/irq-gic-v3-rust.h`](srctree/drivers/irqchip/irq-gic-v3-rust.h).

use super::{
    its::ItsNode,
    sysreg::{
        CpuIf,
        RootIf, //
    },
};
use crate::{
    bindings,
    cpu::CpuId,
    cpumask::Cpumask,
    ffi::{
        c_int,
        c_uint,
        c_void, //
    },
    interrupt::LocalInterruptDisabled,
    io::{
        Mmio,
        MmioRaw,
        Region, //
    },
    irq::{
        Domain,
        DomainOps, //
    },
    prelude::*,
    types::NotThreadSafe,
};
use core::{
    cell::Cell,
    ptr, //
};

/// Size of a distributor frame and of each of a redistributor's frames (`SZ_64K`).
pub const FRAME: usize = 0x10000;

/// A 64 KiB frame of GIC registers, mapped for the kernel's lifetime: once the shim has handed
/// its mappings to the Rust probe, it never unmaps them, whatever the probe returns (see
/// [`Driver::probe`]).
pub type Frame = Mmio<'static, Region<FRAME>>;

/// Byte offset of `GICD_ICFGR` (and `GICR_ICFGR0`) in its frame.
const ICFGR: usize = 0xc00;

/// A 64 KiB frame that holds the banks of per-interrupt bits and fields (the distributor, or a
/// redistributor's `SGI_base` frame).
///
/// # Invariants
///
/// `addr` is the address of the frame `io` maps.
#[derive(Clone, Copy)]
pub struct Bank {
    io: Frame,
    addr: usize,
}

impl Bank {
    /// The frame's registers.
    #[inline]
    pub fn io(&self) -> Frame {
        self.io
    }

    /// Maps the raw frame at `addr` (`size` bytes, at least one frame).
    ///
    /// # Safety
    ///
    /// `addr..addr + size` is device memory mapped for the kernel's lifetime.
    unsafe fn new(addr: usize, size: usize) -> Result<Bank> {
        let raw = MmioRaw::<Region<FRAME>>::new_region(addr, size)?;
        // INVARIANT: `io` maps the frame at `addr`.
        Ok(Bank {
            // SAFETY: Mapped for the kernel's lifetime (the function's safety requirements).
            io: unsafe { Mmio::from_raw(raw) },
            addr,
        })
    }

    /// Programs the trigger of interrupt `index` of the frame's `GICD_ICFGR` bank under
    /// `irq-gic-common.c`'s controller lock (`gic_configure_irq()`): edge for an edge `ty`
    /// (`IRQ_TYPE_*`), level otherwise.
    ///
    /// Any context (a raw spinlock). Returns `EINVAL` for an index outside the bank, or when
    /// the GIC refuses the change (a secure interrupt, say).
    pub fn configure_irq(&self, index: u32, ty: u32) -> Result {
        if index >= 1024 {
            return Err(EINVAL);
        }
        // SAFETY: `self.addr` is the address of the mapped frame `self.io` (type invariant);
        // `gic_configure_irq()` reads and writes the `index / 16`th word of the bank at `base`,
        // 64 words at most, inside the frame, under its own lock.
        crate::error::to_result(unsafe {
            bindings::gic_configure_irq(
                index,
                ty,
                core::ptr::without_provenance_mut(self.addr + ICFGR),
            )
        })
    }
}

/// A redistributor region mapped by the shim.
///
/// # Invariants
///
/// `base..base + size` is device memory mapped for the kernel's lifetime, and `phys` its
/// physical address.
pub struct RedistRegion {
    base: usize,
    size: usize,
    phys: u64,
}

impl RedistRegion {
    /// The redistributor at byte `offset` of the region: its `RD_base` and `SGI_base` frames.
    ///
    /// Returns `EINVAL` if the two frames do not lie inside the region.
    pub fn redist(&self, offset: usize) -> Result<Redist> {
        let end = offset.checked_add(2 * FRAME).ok_or(EINVAL)?;
        if end > self.size {
            return Err(EINVAL);
        }
        let rd_addr = self.base + offset;
        // SAFETY: `RD_base` lies in the region (checked above), mapped for the kernel's
        // lifetime (type invariant).
        let rd = unsafe { Bank::new(rd_addr, FRAME)? };
        // SAFETY: `SGI_base`, the next frame, lies in the region too.
        let sgi = unsafe { Bank::new(rd_addr + FRAME, FRAME)? };
        // INVARIANT: `rd_addr` is the address of the frame `rd` maps, and `phys` its physical
        // address (`self.phys` is the region's).
        Ok(Redist {
            rd: rd.io,
            rd_addr,
            sgi,
            phys: self.phys + offset as u64,
        })
    }

    /// The `VLPI_base` frame of the GICv4 redistributor at byte `offset` of the region, its
    /// third (`GICR_VPROPBASER`, `GICR_VPENDBASER`).
    ///
    /// Returns `EINVAL` if the redistributor's four frames do not lie inside the region.
    pub fn vlpi(&self, offset: usize) -> Result<Frame> {
        let end = offset.checked_add(4 * FRAME).ok_or(EINVAL)?;
        if end > self.size {
            return Err(EINVAL);
        }
        // SAFETY: `VLPI_base`, two frames after `RD_base`, lies in the region (checked above),
        // mapped for the kernel's lifetime (type invariant).
        let vlpi = unsafe { Bank::new(self.base + offset + 2 * FRAME, FRAME)? };
        Ok(vlpi.io)
    }

    /// The region's size in bytes.
    pub fn size(&self) -> usize {
        self.size
    }
}

/// One CPU's redistributor: its `RD_base` frame (control, `GICR_TYPER`, `GICR_WAKER`) and its
/// `SGI_base` frame (the SGI and PPI enable, pending, active, priority and configuration banks).
///
/// # Invariants
///
/// `rd_addr` is the address of the frame `rd` maps, part of a region mapped for the kernel's
/// lifetime, and `phys` its physical address.
#[derive(Clone, Copy)]
pub struct Redist {
    rd: Frame,
    rd_addr: usize,
    /// `SGI_base`.
    pub sgi: Bank,
    phys: u64,
}

impl Redist {
    /// `RD_base`.
    #[inline]
    pub fn rd(&self) -> Frame {
        self.rd
    }

    /// The physical address of `RD_base`.
    #[inline]
    pub fn phys(&self) -> u64 {
        self.phys
    }

    /// Records this redistributor as `cpu`'s in the shim's table of found redistributors
    /// (`rd_base`, `phys_base`), which the shim hands to the ITS driver's `struct rdists` for
    /// each CPU as it comes up: the boot CPU's before the ITS starts, another's in its CPU
    /// hotplug STARTING callback, before `its_cpu_init()`, as C's `gic_populate_rdist()` does
    /// (the ITS's GICv4.1 code takes a redistributor in `struct rdists` for one whose CPU it
    /// initialised).
    ///
    /// Probe only (`_probe`): the shim reads the table after the probe.
    pub fn publish(&self, cpu: CpuId, _probe: &Probe) {
        // SAFETY: `cpu` is a possible CPU (`CpuId` invariant), and the shim's table has an
        // entry for every possible CPU; `Probe` exists only while the probe runs (its
        // invariant), on the boot CPU before the shim reads the table (after the probe, and in
        // CPU hotplug callbacks it registers after the probe); `rd_addr` is a mapping that
        // lives for the kernel's lifetime (type invariant), as the ITS expects.
        unsafe {
            bindings::gic_v3_rust_set_rdist(
                cpu.as_u32(),
                core::ptr::without_provenance_mut(self.rd_addr),
                self.phys,
            )
        };
    }
}

/// The regions the shim mapped: the distributor and the redistributor regions.
pub struct Regions {
    /// The distributor (`GICD_*`).
    pub dist: Bank,
    /// The redistributor regions, in device-tree order.
    pub redist: KVec<RedistRegion>,
    /// `redistributor-stride` (0: none given).
    pub stride: u64,
}

impl Regions {
    /// Builds the [`Regions`] of the raw mappings the shim passed.
    ///
    /// # Safety
    ///
    /// `dist` is a mapping of `dist_size` bytes and `regions` points to `nr` readable entries
    /// describing mappings, all of them for the kernel's lifetime.
    unsafe fn from_shim(
        dist: *mut c_void,
        dist_size: u64,
        regions: *const bindings::gic_v3_rust_region,
        nr: u32,
        stride: u64,
    ) -> Result<Regions> {
        let dist_size = usize::try_from(dist_size).map_err(|_| EINVAL)?;
        // SAFETY: The shim mapped `dist_size` bytes at `dist` for the kernel's lifetime (the
        // function's safety requirements).
        let dist = unsafe { Bank::new(dist.addr(), dist_size)? };
        let mut redist = KVec::with_capacity(nr as usize, GFP_KERNEL)?;
        for i in 0..nr as usize {
            // SAFETY: `regions` points to `nr` readable entries (the function's safety
            // requirements).
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
}

/// The probe's context: what only the probe may do ([`Redist::publish`], [`Probe::retain`],
/// [`Probe::alloc_ipis`]), the boot CPU's [`CpuIf`] and the driver's [`RootIf`].
///
/// # Invariants
///
/// Exists only during one call of `__entry::init()`, which calls [`Driver::probe`] once, on
/// the boot CPU with interrupts disabled, before the shim starts the ITS; the kernel does not
/// use pseudo-NMIs. `domain` is null or the domain [`RootNode::create_domain`] created in this
/// probe.
pub struct Probe {
    retained: Cell<bool>,
    domain: Cell<*mut bindings::irq_domain>,
    _not_send: NotThreadSafe,
}

impl Probe {
    /// Says that the probe has programmed the GIC: the shim must then not start the C driver,
    /// also if the probe fails. [`RootNode::create_domain`] says it too.
    pub fn retain(&self) {
        self.retained.set(true);
    }

    /// The boot CPU's CPU interface.
    pub fn cpu_if(&self) -> &CpuIf {
        // SAFETY: The probe runs on the boot CPU with interrupts disabled, for a kernel without
        // pseudo-NMIs (the shim starts the C driver for them), as the GIC's driver (type
        // invariant), for at least as long as `self` is borrowed.
        unsafe { CpuIf::assume_owned() }
    }

    /// The interrupt path of the CPU interface, for the driver's chips (`irq_eoi`,
    /// `ipi_send_mask`) to keep.
    pub fn root_if(&self) -> &'static RootIf {
        // SAFETY: `Probe` exists only in the GIC driver's probe (type invariant), which keeps the
        // reference for its chips' callbacks.
        unsafe { RootIf::assume_root() }
    }

    /// Allocates the 8 IPIs, SGIs 0 to 7 (the specifier `<0>`, 8 interrupts), in `domain`,
    /// which must be the domain [`RootNode::create_domain`] created in this probe
    /// ([`Domain::alloc_static_irqs`]): the only way to make the [`Ipis`] the shim hands to
    /// `set_smp_ipi_range()`.
    ///
    /// In the probe. Returns `EINVAL` for another domain, or the allocation's error.
    pub fn alloc_ipis<T: DomainOps>(&self, domain: &'static Domain<'static, T>) -> Result<Ipis> {
        if self.domain.get().is_null() || domain.as_raw() != self.domain.get() {
            return Err(EINVAL);
        }
        let base = domain.alloc_static_irqs(&[0], IPI_NR)?;
        // INVARIANT: `alloc_static_irqs()` allocated `IPI_NR` interrupts from `base` in
        // `domain`, never freed; the domain is never removed (`Domain::new_root`).
        Ok(Ipis {
            base,
            domain: domain.as_raw(),
        })
    }
}

/// The number of IPIs the shim hands to the arm64 SMP code (`set_smp_ipi_range()`).
const IPI_NR: u32 = 8;

/// The IPIs of the GIC: 8 consecutive interrupts allocated in its root domain, never freed
/// ([`Probe::alloc_ipis`]).
///
/// # Invariants
///
/// The interrupts `base..base + 8` exist for the kernel's lifetime and belong to `domain`, a
/// root domain made by [`RootNode::create_domain`].
pub struct Ipis {
    base: u32,
    domain: *mut bindings::irq_domain,
}

impl Ipis {
    /// The first of the 8 IPI virqs.
    pub fn base(&self) -> u32 {
        self.base
    }
}

/// How the firmware described the GIC.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Firmware {
    /// A device-tree `arm,gic-v3` node: interrupt specifiers are its `#interrupt-cells`.
    DeviceTree,
    /// The MADT's GIC distributor entry: interrupt specifiers are ACPI GSIs, `<gsi type>`.
    Acpi,
}

/// The GIC's firmware node (its device-tree node, or on ACPI the irqchip fwnode the shim made
/// for its MADT distributor entry), on which the probe creates the root domain.
///
/// # Invariants
///
/// `fwnode` is such a firmware node, described by `firmware`, on which no wired domain exists
/// yet and which is not freed while a domain is on it; only the probe's entry point makes a
/// `RootNode`, once per node, with `probe` the [`Probe`] of that probe.
pub struct RootNode<'a> {
    fwnode: *mut bindings::fwnode_handle,
    firmware: Firmware,
    probe: &'a Probe,
}

impl RootNode<'_> {
    /// How the firmware described the GIC: what the root domain's specifiers look like.
    pub fn firmware(&self) -> Firmware {
        self.firmware
    }

    /// Creates the root domain on the node ([`Domain::new_root`]), consuming it: one wired
    /// domain per node.
    ///
    /// On success the probe is committed ([`Probe::retain`]): the domain, which holds the
    /// driver's data, lives for the kernel's lifetime on the node, so the shim does not start
    /// the C driver on it, also if the probe then fails.
    ///
    /// Boot, process context. Errors as [`Domain::new_root`].
    pub fn create_domain<T: DomainOps>(
        self,
        hwirq_max: usize,
        data: impl PinInit<T, Error>,
    ) -> Result<&'static Domain<'static, T>> {
        // SAFETY: `self.fwnode` is a firmware node that is not freed while a domain is on it,
        // without a wired domain (type invariant); `self` is consumed, so this runs once for it.
        let domain = unsafe { Domain::new_root(self.fwnode, hwirq_max, data) }?;
        self.probe.retain();
        // INVARIANT: The domain this probe created.
        self.probe.domain.set(domain.as_raw());
        Ok(domain)
    }
}

/// What a successful probe returns to the shim.
pub struct Probed<T: DomainOps + 'static> {
    /// The root domain (the ITS or GICv2m stack on it): the one [`RootNode::create_domain`]
    /// created in this probe, else the probe fails with `EINVAL`.
    pub domain: &'static Domain<'static, T>,
    /// The IPIs ([`Probe::alloc_ipis`]); `None` leaves the kernel without IPIs (no SMP).
    pub ipis: Option<Ipis>,
    /// Whether the distributor supports LPIs (then the shim starts the ITS, if the boot CPU's
    /// redistributor was published: [`Redist::publish`]).
    pub lpis: bool,
    /// Whether EOImode=1 is used (the root handler to install).
    pub split_eoi: bool,
    /// The distributor priority of normal interrupts (for `its_init()`).
    pub prio: u8,
    /// `GICD_TYPER` (for the ITS's `struct rdists`).
    pub gicd_typer: u32,
    /// `GICD_TYPER2` (for the ITS's `struct rdists`).
    pub gicd_typer2: u32,
    /// Every redistributor has direct LPI support (`rdists.has_direct_lpi`).
    pub direct_lpi: bool,
    /// Every redistributor has virtual LPIs, GICv4 (`rdists.has_vlpis`).
    pub vlpis: bool,
    /// Every redistributor has GICv4.1's vPE IDs (`rdists.has_rvpeid`).
    pub rvpeid: bool,
    /// Every redistributor reports `GICR_VPENDBASER.Dirty` (`rdists.has_vpend_valid_dirty`).
    pub vpend_valid_dirty: bool,
}

/// A GICv3 driver started by the shim: the bodies of its entry points, which
/// [`gic_v3_driver!`](crate::gic_v3_driver) generates.
pub trait Driver {
    /// The root domain's operations.
    type Ops: DomainOps + 'static;

    /// Probes the GIC of a device-tree node or of the MADT (`gic_of_init()`,
    /// `gic_acpi_init()`): `node` to create the root domain on ([`RootNode::firmware`] says
    /// which), `regions` the shim mapped. Calls [`Probe::retain`] once it has programmed
    /// the GIC ([`RootNode::create_domain`] does it too). Returning an error before either
    /// makes the shim start the C driver (with a line saying why unless `EOPNOTSUPP`); after
    /// either, the shim fails loudly and the kernel has no interrupt controller.
    ///
    /// The regions stay mapped for the kernel's lifetime, whatever the probe returns: the
    /// [`Frame`]s are `Copy` and `'static`, so the shim cannot know whether one escaped.
    ///
    /// Boot, once, on the boot CPU, interrupts disabled.
    fn probe(probe: &Probe, node: RootNode<'_>, regions: Regions) -> Result<Probed<Self::Ops>>;

    /// The root interrupt handler's body (`gic_handle_irq()`): `SPLIT` for EOImode=1, with the
    /// CPU interface's interrupt path `root_if` for the call.
    ///
    /// Hard IRQ context, interrupts disabled.
    fn handle_irq<const SPLIT: bool>(irqs_off: &LocalInterruptDisabled, root_if: &RootIf);

    /// The CPU hotplug STARTING callback (`gic_starting_cpu()`), after a successful probe.
    ///
    /// On `cpu` itself, interrupts disabled.
    fn starting_cpu(cpu: CpuId, cpu_if: &CpuIf) -> Result;

    /// The CPU hotplug PREPARE check (`gic_check_rdist()`): whether `cpu` may come up.
    ///
    /// Process context, on the controlling CPU.
    fn check_cpu(cpu: CpuId) -> bool;

    /// The CPU PM notifier (`gic_cpu_pm_notifier()`): `exit` from a low-power state (or a
    /// failed entry), else entry.
    ///
    /// On `cpu` itself, interrupts disabled.
    fn cpu_pm(cpu: CpuId, exit: bool, cpu_if: &CpuIf);

    /// Probes the ITS `its` (`its_probe_one()`, `its_init()`), after a successful probe that
    /// reported LPIs and no GICv4, when the Rust ITS is selected (`irqchip.gicv3_its=rust`):
    /// sets up its tables and command queue, the redistributors' LPI tables and the boot CPU's
    /// collection, and creates its MSI parent domain ([`ItsNode::create_domain`]) on the root
    /// domain. The other CPUs' LPIs and collections are set up by
    /// [`Driver::starting_cpu`].
    ///
    /// Returning an error before [`ItsNode::create_domain`] succeeded makes the shim start the C
    /// ITS driver instead, with a line saying why unless `EOPNOTSUPP`; the ITS must then be
    /// disabled again and the boot CPU's LPIs off, as C finds them. An error after it is only
    /// said: the ITS is this driver's.
    ///
    /// Boot, once, on the boot CPU, interrupts disabled.
    fn its_probe(its: ItsNode<'_>) -> Result;
}

/// The MPIDR_EL1 of logical CPU `cpu` (`cpu_logical_map()`).
pub fn cpu_mpidr(cpu: CpuId) -> u64 {
    // SAFETY: `cpu` is a valid CPU number (`CpuId` invariant), an index of `__cpu_logical_map`.
    unsafe { bindings::cpu_logical_map(cpu.as_u32()) }
}

/// Whether the kernel was entered at EL2 (`is_hyp_mode_available()`): the GIC then runs with
/// EOImode=1, split priority drop and deactivation.
pub fn hyp_mode_available() -> bool {
    // SAFETY: Reads boot-time state only.
    unsafe { bindings::gic_v3_rust_hyp_mode_available() }
}

/// Whether the command line asked for the strict flow (`irqchip.gicv3_flow=strict`, the
/// default; `fasteoi` turns it off).
pub fn strict_flow_requested() -> bool {
    // SAFETY: Reads boot-time state only.
    unsafe { bindings::gic_v3_rust_strict_flow() }
}

/// Whether the command line hides the LPIs (`irqchip.gicv3_nolpi`, the kdump kernel's escape
/// hatch, as `gic_dist_supports_lpis()` reads it).
pub fn nolpi_requested() -> bool {
    // SAFETY: Reads boot-time state only.
    unsafe { bindings::gic_v3_rust_nolpi() }
}

/// The mask of online CPUs (`cpu_online_mask`).
pub fn online_mask() -> &'static Cpumask {
    // SAFETY: `__cpu_online_mask` is a valid cpumask for the kernel's lifetime; hotplug changes
    // it with atomic bit operations, which the reads here race with benignly (as C's).
    unsafe { Cpumask::from_raw(&raw const bindings::__cpu_online_mask) }
}

/// The constant cpumask of only `cpu` (`cpumask_of()`).
pub fn cpumask_of(cpu: CpuId) -> &'static Cpumask {
    // SAFETY: `cpumask_of()` of a valid CPU number (`CpuId` invariant) points into a constant
    // table of cpumasks.
    unsafe { Cpumask::from_raw(bindings::cpumask_of(cpu.as_u32())) }
}

/// The CPUs of `mask`, in order (`for_each_cpu()`).
pub fn cpus_in(mask: &Cpumask) -> impl Iterator<Item = CpuId> + '_ {
    let nbits = crate::cpu::nr_cpu_ids() as usize;
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

/// The bodies of the entry points [`gic_v3_driver!`](crate::gic_v3_driver) generates.
#[doc(hidden)]
pub mod __entry {
    use super::*;

    /// `rust_gicv3_init()`.
    ///
    /// # Safety
    ///
    /// Called once, at boot on the boot CPU with interrupts disabled, by the shim's
    /// `gic_v3_rust_of_init()` or `gic_v3_rust_acpi_init()`, on a kernel without pseudo-NMIs,
    /// before the ITS is started: `fwnode` is the GIC's device-tree node (`acpi` false) or the
    /// irqchip fwnode of its MADT distributor entry (`acpi` true), without a domain, not freed
    /// while a domain is on it; `dist` maps `dist_size` bytes and `regions` points to `nr`
    /// regions, all mapped for the kernel's lifetime; `out` is valid for writes.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn init<D: Driver>(
        fwnode: *mut bindings::fwnode_handle,
        acpi: bool,
        dist: *mut c_void,
        _dist_phys: u64,
        dist_size: u64,
        regions: *const bindings::gic_v3_rust_region,
        nr: u32,
        stride: u64,
        out: *mut bindings::gic_v3_rust_probe,
    ) -> c_int {
        // INVARIANT: This is the one probe, on the boot CPU with interrupts disabled, before the
        // ITS, without pseudo-NMIs (the function's safety requirements); `probe` is dropped
        // before this function returns; no domain was created yet.
        let probe = Probe {
            retained: Cell::new(false),
            domain: Cell::new(ptr::null_mut()),
            _not_send: NotThreadSafe,
        };
        // SAFETY: The shim's mappings (the function's safety requirements).
        let r = unsafe { Regions::from_shim(dist, dist_size, regions, nr, stride) }.and_then(
            |regions| {
                // INVARIANT: `fwnode` is the GIC's firmware node as `acpi` says, without a
                // domain, not freed while a domain is on it (the function's safety
                // requirements); this is its only `RootNode`.
                let node = RootNode {
                    fwnode,
                    firmware: if acpi {
                        Firmware::Acpi
                    } else {
                        Firmware::DeviceTree
                    },
                    probe: &probe,
                };
                D::probe(&probe, node, regions)
            },
        );
        let retained = probe.retained.get();
        let domain = probe.domain.get();
        let (o, ret) = match r {
            // The domain the probe created, not one made elsewhere.
            Ok(p) if !domain.is_null() && p.domain.as_raw() == domain => (
                bindings::gic_v3_rust_probe {
                    domain,
                    // IPIs allocated in this domain only (`Ipis` invariant: they exist).
                    ipi_base: p
                        .ipis
                        .filter(|i| i.domain == domain)
                        .and_then(|i| c_int::try_from(i.base).ok())
                        .unwrap_or(0),
                    lpis: p.lpis,
                    split_eoi: p.split_eoi,
                    prio: p.prio,
                    gicd_typer: p.gicd_typer,
                    gicd_typer2: p.gicd_typer2,
                    direct_lpi: p.direct_lpi,
                    vlpis: p.vlpis,
                    rvpeid: p.rvpeid,
                    vpend_valid_dirty: p.vpend_valid_dirty,
                    retained,
                },
                0,
            ),
            Ok(_) => {
                pr_err!("GICv3: the probe returned a domain it did not create\n");
                (
                    bindings::gic_v3_rust_probe {
                        retained,
                        ..Default::default()
                    },
                    EINVAL.to_errno(),
                )
            }
            Err(e) => (
                bindings::gic_v3_rust_probe {
                    retained,
                    ..Default::default()
                },
                e.to_errno(),
            ),
        };
        // SAFETY: `out` is valid for writes (the function's safety requirements).
        unsafe { out.write(o) };
        ret
    }

    /// `gic_v3_rust_handle_irq()` (`SPLIT`) and `gic_v3_rust_handle_irq_eoimode0()`.
    ///
    /// # Safety
    ///
    /// Only called by the arm64 interrupt entry code (`handle_arch_irq`): hard IRQ context,
    /// interrupts disabled, after `irq_enter()`.
    #[inline(always)]
    pub unsafe fn handle_irq<D: Driver, const SPLIT: bool>() {
        // SAFETY: Interrupts stay disabled for the whole root handler (the function's safety
        // requirements).
        let irqs_off = unsafe { LocalInterruptDisabled::assume_disabled() };
        // SAFETY: The GIC driver's root handler entry point (the function's safety
        // requirements), lending the reference to the driver's root handler for the call.
        let root_if = unsafe { RootIf::assume_root() };
        D::handle_irq::<SPLIT>(irqs_off, root_if);
    }

    /// `rust_gicv3_starting_cpu()`.
    ///
    /// # Safety
    ///
    /// Called by the shim's CPU hotplug STARTING callback on CPU `cpu` itself, interrupts
    /// disabled, after a successful probe (so without pseudo-NMIs).
    pub unsafe fn starting_cpu<D: Driver>(cpu: c_uint) -> c_int {
        let Some(cpu) = CpuId::from_u32(cpu) else {
            return EINVAL.to_errno();
        };
        // SAFETY: The driver's STARTING callback, on the CPU being set up, interrupts disabled,
        // without pseudo-NMIs (the function's safety requirements), for this call.
        let cpu_if = unsafe { CpuIf::assume_owned() };
        match D::starting_cpu(cpu, cpu_if) {
            Ok(()) => 0,
            Err(e) => e.to_errno(),
        }
    }

    /// `rust_gicv3_check_cpu()`.
    ///
    /// # Safety
    ///
    /// Called by the CPU hotplug core (the shim's PREPARE state) after a successful probe.
    pub unsafe fn check_cpu<D: Driver>(cpu: c_uint) -> c_int {
        match CpuId::from_u32(cpu) {
            Some(cpu) if D::check_cpu(cpu) => 0,
            _ => EINVAL.to_errno(),
        }
    }

    /// `rust_gicv3_its_init()`.
    ///
    /// # Safety
    ///
    /// Called once, at boot on the boot CPU with interrupts disabled, by the shim's
    /// `gic_v3_rust_start()` after a successful probe: `fwnode` is the ITS's device-tree node or
    /// the irqchip fwnode of its MADT entry, without a domain, which the shim frees only if this
    /// returns non-zero; `base` maps its `size` bytes of frames at `phys` for the kernel's
    /// lifetime.
    pub unsafe fn its_init<D: Driver>(
        fwnode: *mut bindings::fwnode_handle,
        base: *mut c_void,
        phys: u64,
        size: u64,
    ) -> c_int {
        // SAFETY: Mapped for the kernel's lifetime (the function's safety requirements).
        let io = match unsafe { crate::irq::gic_v3::its::its_frame(base, size) } {
            Ok(io) => io,
            Err(e) => return e.to_errno(),
        };
        let created = Cell::new(false);
        // INVARIANT: As the function's safety requirements say; 0 is returned below once
        // `created` is set, so the shim keeps the fwnode.
        let node = ItsNode {
            fwnode,
            io,
            phys,
            created: &created,
        };
        match D::its_probe(node) {
            Ok(()) => 0,
            Err(e) if created.get() => {
                pr_err!(
                    "GICv3: ITS probe error {} after its domain was made: the ITS stays Rust's\n",
                    e.to_errno()
                );
                0
            }
            Err(e) => e.to_errno(),
        }
    }

    /// `rust_gicv3_cpu_pm()`.
    ///
    /// # Safety
    ///
    /// Called by the shim's CPU PM notifier on the CPU changing state, interrupts disabled,
    /// after a successful probe (so without pseudo-NMIs).
    pub unsafe fn cpu_pm<D: Driver>(exit: bool) {
        // SAFETY: The driver's CPU PM notifier, on the CPU changing state, interrupts disabled,
        // without pseudo-NMIs (the function's safety requirements), for this call.
        let cpu_if = unsafe { CpuIf::assume_owned() };
        D::cpu_pm(CpuId::current(), exit, cpu_if);
    }
}

/// Defines the C entry points of the Rust GICv3 driver `$driver` (a [`Driver`]), the functions
/// `drivers/irqchip/irq-gic-v3-rust.h` declares and the shim calls: `rust_gicv3_init()`,
/// the root handlers `gic_v3_rust_handle_irq()` (EOImode=1) and
/// `gic_v3_rust_handle_irq_eoimode0()` (in `.irqentry.text`, as `__exception_irq_entry` places
/// C's `gic_handle_irq()`), `rust_gicv3_starting_cpu()`, `rust_gicv3_check_cpu()` and
/// `rust_gicv3_cpu_pm()`. Each is checked against the header's prototype, as `bindgen`
/// translates it: a mismatch does not compile.
///
/// Once per kernel image (the symbols are global); only in code linked into the kernel image:
/// in a loadable module (`--cfg MODULE`) it does not compile, as
/// [`built_in_module!`](crate::built_in_module).
#[macro_export]
macro_rules! gic_v3_driver {
    ($driver:ty) => {
        #[cfg(MODULE)]
        ::core::compile_error!(
            "`kernel::gic_v3_driver!` in a loadable module: the GICv3 driver's entry points are \
             the kernel image's"
        );

        const _: () = {
            use $crate::{
                bindings,
                ffi::{
                    c_int,
                    c_uint,
                    c_void, //
                },
                irq::gic_v3::__entry,
            };

            /// The probe, called by the shim's `IRQCHIP_DECLARE()` and
            /// `IRQCHIP_ACPI_DECLARE()` init functions.
            ///
            /// # Safety
            ///
            /// As `__entry::init()`.
            #[no_mangle]
            #[allow(clippy::too_many_arguments)]
            unsafe extern "C" fn rust_gicv3_init(
                fwnode: *mut bindings::fwnode_handle,
                acpi: bool,
                dist: *mut c_void,
                dist_phys: u64,
                dist_size: u64,
                regions: *const bindings::gic_v3_rust_region,
                nr: u32,
                stride: u64,
                out: *mut bindings::gic_v3_rust_probe,
            ) -> c_int {
                // SAFETY: The shim calls it as `__entry::init()` requires (the function's
                // safety requirements).
                unsafe {
                    __entry::init::<$driver>(
                        fwnode, acpi, dist, dist_phys, dist_size, regions, nr, stride, out,
                    )
                }
            }

            /// The root interrupt handler in EOImode=1, installed with `set_handle_irq()`. Its
            /// type is `handle_arch_irq`'s (`void (*)(struct pt_regs *)`), which kCFI checks.
            ///
            /// # Safety
            ///
            /// Only called by the arm64 interrupt entry code.
            #[no_mangle]
            #[link_section = ".irqentry.text"]
            unsafe extern "C" fn gic_v3_rust_handle_irq(_regs: *mut bindings::pt_regs) {
                // SAFETY: Called by the interrupt entry code (the function's safety
                // requirements).
                unsafe { __entry::handle_irq::<$driver, true>() }
            }

            /// The root interrupt handler in EOImode=0.
            ///
            /// # Safety
            ///
            /// Only called by the arm64 interrupt entry code.
            #[no_mangle]
            #[link_section = ".irqentry.text"]
            unsafe extern "C" fn gic_v3_rust_handle_irq_eoimode0(_regs: *mut bindings::pt_regs) {
                // SAFETY: Called by the interrupt entry code (the function's safety
                // requirements).
                unsafe { __entry::handle_irq::<$driver, false>() }
            }

            /// The CPU hotplug STARTING callback's Rust part.
            ///
            /// # Safety
            ///
            /// As `__entry::starting_cpu()`.
            #[no_mangle]
            unsafe extern "C" fn rust_gicv3_starting_cpu(cpu: c_uint) -> c_int {
                // SAFETY: The shim calls it as `__entry::starting_cpu()` requires.
                unsafe { __entry::starting_cpu::<$driver>(cpu) }
            }

            /// The CPU hotplug PREPARE check, a `cpuhp_setup_state_nocalls()` callback.
            ///
            /// # Safety
            ///
            /// As `__entry::check_cpu()`.
            #[no_mangle]
            unsafe extern "C" fn rust_gicv3_check_cpu(cpu: c_uint) -> c_int {
                // SAFETY: The hotplug core calls it as `__entry::check_cpu()` requires.
                unsafe { __entry::check_cpu::<$driver>(cpu) }
            }

            /// The CPU PM notifier's Rust part.
            ///
            /// # Safety
            ///
            /// As `__entry::cpu_pm()`.
            #[no_mangle]
            unsafe extern "C" fn rust_gicv3_cpu_pm(exit: bool) {
                // SAFETY: The shim's notifier calls it as `__entry::cpu_pm()` requires.
                unsafe { __entry::cpu_pm::<$driver>(exit) }
            }

            /// The ITS probe, called by the shim after the GIC's.
            ///
            /// # Safety
            ///
            /// As `__entry::its_init()`.
            #[no_mangle]
            unsafe extern "C" fn rust_gicv3_its_init(
                fwnode: *mut bindings::fwnode_handle,
                base: *mut c_void,
                phys: u64,
                size: u64,
            ) -> c_int {
                // SAFETY: The shim calls it as `__entry::its_init()` requires.
                unsafe { __entry::its_init::<$driver>(fwnode, base, phys, size) }
            }

            // The definitions have the header's prototypes: each pair below has one type.
            let _ = [
                bindings::rust_gicv3_its_init as unsafe extern "C" fn(_, _, _, _) -> _,
                rust_gicv3_its_init,
            ];
            let _ = [
                bindings::rust_gicv3_init as unsafe extern "C" fn(_, _, _, _, _, _, _, _, _) -> _,
                rust_gicv3_init,
            ];
            let _ = [
                bindings::gic_v3_rust_handle_irq as unsafe extern "C" fn(_),
                gic_v3_rust_handle_irq,
                gic_v3_rust_handle_irq_eoimode0,
            ];
            let _ = [
                bindings::gic_v3_rust_handle_irq_eoimode0 as unsafe extern "C" fn(_),
                gic_v3_rust_handle_irq_eoimode0,
            ];
            let _ = [
                bindings::rust_gicv3_starting_cpu as unsafe extern "C" fn(_) -> _,
                rust_gicv3_starting_cpu,
            ];
            let _ = [
                bindings::rust_gicv3_check_cpu as unsafe extern "C" fn(_) -> _,
                rust_gicv3_check_cpu,
            ];
            let _ = [
                bindings::rust_gicv3_cpu_pm as unsafe extern "C" fn(_),
                rust_gicv3_cpu_pm,
            ];
        };
    };
}
