// SPDX-License-Identifier: GPL-2.0

//! ARM GICv3 as the arm64 root interrupt controller, in Rust (device tree and ACPI).
//!
//! The distributor, the redistributors, the CPU interface, SGIs (IPIs), PPIs and SPIs, split
//! priority drop/deactivation (EOImode=1) when the kernel entered at EL2, CPU hotplug, and LPIs
//! for the C ITS driver stacked on the domain. The C shim `irq-gic-v3-select.c` owns the one
//! `IRQCHIP_DECLARE()` for `"arm,gic-v3"` and the init function of the MADT's GIC distributor
//! entry (`IRQCHIP_ACPI_DECLARE()`), maps the registers and starts this driver or the C one
//! (`irqchip.gicv3=rust|c`); the ITS (`irq-gic-v3-its.c`) stays C. On ACPI the root domain
//! translates GSIs (`translate_acpi()`) instead of device-tree specifiers.
//!
//! On a GICv4 the vPEs, their doorbells and the vLPIs are the C ITS driver's, on this driver's
//! domain: this driver finds what the redistributors support for it (`struct rdists`) and cleans
//! a GICv4.1 redistributor up at boot, as C does.
//!
//! Not supported: pseudo-NMIs, errata workarounds, PPI partitions (a `ppi-partitions` node),
//! extended SPIs and message-based SPIs: the shim then starts the C driver (the Rust probe
//! refuses the last two with `EOPNOTSUPP` before touching the GIC). So it does for
//! any probe error: every one comes before the probe commits (creates the root domain, then
//! programs the GIC), after which nothing fails. Extended PPIs are reset on each CPU, as C does,
//! and left unused (a specifier naming one, a GSI in their range on ACPI, or a PPI partition,
//! is `EINVAL`). `irqchip.gicv3_nolpi` hides the LPIs (no ITS).
//!
//! The driver has no `unsafe` code: the system registers, the register frames, the C functions
//! it calls and its C entry points are in [`kernel::irq::gic_v3`], whose
//! [`gic_v3_driver!`](kernel::gic_v3_driver) macro generates the entry points for [`GicV3`].
//!
//! C source: [`drivers/irqchip/irq-gic-v3.c`](srctree/drivers/irqchip/irq-gic-v3.c), whose
//! function names the items here mirror.

use kernel::{
    bindings,
    cpu::{
        nr_cpu_ids,
        CpuId, //
    },
    cpumask::Cpumask,
    io::{
        poll::read_poll_timeout_atomic,
        register,
        Io, //
    },
    irq::{
        Allocator,
        Chip,
        ChipFlag,
        ChipFlags,
        ChipState,
        Domain,
        DomainOps,
        FlowHandler,
        FwSpec,
        IrqData,
        LockedIrqData,
        SetAffinity,
        SetAffinityCtx,
        SetVcpuAffinityCtx,
        TriggerType,
        VcpuInfo, //
    },
    prelude::*,
    sync::SetOnce,
    time::Delta, //
};

// `crate::LocalModule`, the owner of this driver's code that `#[vtable]` impls name: the kernel
// image (`ARM_GIC_V3_RUST` is `bool`).
kernel::built_in_module!();

/// The prefix of the driver's messages.
const __LOG_PREFIX: &[u8] = b"GICv3 (Rust)\0";

use kernel::irq::gic_v3::{
    self,
    sysreg::{
        self,
        CpuIf,
        RootIf, //
    },
    Bank,
    Firmware,
    Frame,
    Probe,
    Redist,
    Regions,
    RootNode, //
};

kernel::gic_v3_driver!(GicV3);

// The ITS (`irqchip.gicv3_its=rust`).
#[path = "irq_gic_v3_rust/its.rs"]
mod its;

/// The driver: the bodies of its C entry points.
struct GicV3;

impl gic_v3::Driver for GicV3 {
    type Ops = Gic;

    fn probe(probe: &Probe, node: RootNode<'_>, regions: Regions) -> Result<gic_v3::Probed<Gic>> {
        self::probe(probe, node, regions)
    }

    #[inline(always)]
    fn handle_irq<const SPLIT: bool>(
        irqs_off: &kernel::interrupt::LocalInterruptDisabled,
        root_if: &RootIf,
    ) {
        handle_one::<_, SPLIT>(&Sysregs(root_if), |intid| {
            ROOT.as_ref()
                .is_some_and(|d| d.handle_irq(intid as usize, irqs_off).is_ok())
        });
    }

    fn starting_cpu(cpu: CpuId, cpu_if: &CpuIf) -> Result {
        starting_cpu(cpu, cpu_if)
    }

    fn check_cpu(cpu: CpuId) -> bool {
        has_redist(cpu)
    }

    fn cpu_pm(cpu: CpuId, exit: bool, cpu_if: &CpuIf) {
        cpu_pm(cpu, exit, cpu_if);
    }

    fn its_probe(its: gic_v3::ItsNode<'_>) -> Result {
        its::node::probe(its)
    }
}

/// The root handler's accesses to the CPU interface: behind a trait so that KUnit can run
/// [`handle_one`] against a recording fake and check the order of the register writes.
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

/// The GIC CPU interface of the current CPU, through its system registers ([`sysreg`]): the
/// interrupt path the root handler's entry point lends ([`RootIf`]).
#[derive(Clone, Copy)]
struct Sysregs<'a>(&'a RootIf);

impl CpuInterface for Sysregs<'_> {
    #[inline(always)]
    fn read_iar1(&self) -> u32 {
        self.0.read_iar1()
    }

    #[inline(always)]
    fn write_eoir1(&self, intid: u32) {
        self.0.write_eoir1(intid);
    }

    #[inline(always)]
    fn write_dir(&self, intid: u32) {
        self.0.write_dir(intid);
    }

    #[inline(always)]
    fn isb(&self) {
        sysreg::isb();
    }
}

register! {
    /// Distributor control.
    GICD_CTLR(u32) @ 0x0000 {
        /// Register write pending.
        31:31 rwp => bool;
        /// SGIs without active state.
        8:8 nassgireq => bool;
        /// Security disabled (single security state).
        6:6 ds => bool;
        /// Affinity routing, non-secure.
        4:4 are_ns => bool;
        /// Group 1 (non-secure) enable, affinity routing.
        1:1 enable_g1a => bool;
        /// `EnableGrp1` (non-secure view); `EnableGrp0` with a single security state.
        0:0 enable_g1 => bool;
    }

    /// Interrupt controller type.
    GICD_TYPER(u32) @ 0x0004 {
        /// Range selector support.
        26:26 rss => bool;
        /// Interrupt ID bits, minus one.
        23:19 id_bits;
        /// LPIs supported.
        17:17 lpis => bool;
        /// Message-based SPIs.
        16:16 mbis => bool;
        /// Extended SPI range.
        8:8 espi => bool;
        /// Number of SPIs: 32 * (n + 1) interrupt IDs.
        4:0 it_lines;
    }

    /// Interrupt controller type 2.
    GICD_TYPER2(u32) @ 0x000c {
        /// SGIs without active state supported.
        8:8 nassgicap => bool;
    }

    /// Peripheral ID 2 (of the distributor and of a redistributor's `RD_base`).
    GIC_PIDR2(u32) @ 0xffe8 {
        /// Architecture revision: 3 for GICv3, 4 for GICv4.
        7:4 arch;
    }

    /// SPI routing (`GICD_IROUTER<n>`, n >= 32): the target CPU's affinity. Accessed with the
    /// 64-bit accessors of [`write_irouter`] (the frame type only guarantees 4-byte alignment).
    GICD_IROUTER(u64)[1020, stride = 8] @ 0x6000 {
        39:0 affinity;
    }

    /// Redistributor control.
    GICR_CTLR(u32) @ 0x0000 {
        /// Register write pending.
        3:3 rwp => bool;
        /// LPI invalidation registers supported (a subset of direct LPI).
        2:2 ir => bool;
    }

    /// Redistributor type, read with [`read_gicr_typer`].
    GICR_TYPER(u64) @ 0x0008 {
        /// The affinity of the redistributor's CPU (Aff3.Aff2.Aff1.Aff0).
        63:32 affinity;
        /// PPIs: 0 for 16, else extended PPIs.
        31:27 ppi_num;
        /// GICv4.1: the vPE ID registers, `GICR_VPENDBASER` in the 4.1 layout.
        7:7 rvpeid => bool;
        /// The last redistributor of its region.
        4:4 last => bool;
        /// Direct LPI injection (`GICR_SETLPIR` and friends).
        3:3 direct_lpi => bool;
        /// GICv4.1: `GICR_VPENDBASER.Dirty` reports the vPE's pending table parse.
        2:2 dirty => bool;
        /// Virtual LPIs (then the redistributor has four frames).
        1:1 vlpis => bool;
    }

    /// Redistributor power management.
    GICR_WAKER(u32) @ 0x0014 {
        /// All interfaces to the CPU are quiescent.
        2:2 children_asleep => bool;
        /// The CPU is asleep.
        1:1 processor_sleep => bool;
    }
}

/// Banks of one bit per interrupt (distributor, or a redistributor's `SGI_base` for SGIs/PPIs):
/// the byte offsets of `GICD_IGROUPR`, `GICD_ISENABLER` and so on.
mod bank {
    pub(super) const IGROUPR: usize = 0x080;
    pub(super) const ISENABLER: usize = 0x100;
    pub(super) const ICENABLER: usize = 0x180;
    pub(super) const ISPENDR: usize = 0x200;
    pub(super) const ICPENDR: usize = 0x280;
    pub(super) const ISACTIVER: usize = 0x300;
    pub(super) const ICACTIVER: usize = 0x380;
    /// One byte per interrupt.
    pub(super) const IPRIORITYR: usize = 0x400;
    /// Two bits per interrupt.
    pub(super) const ICFGR: usize = 0xc00;
}

/// SGIs are interrupt IDs 0..16, PPIs 16..32, SPIs 32..1020, LPIs from 8192.
const SGI_NR: usize = 16;
const SPI_BASE: usize = 32;
const SPI_END: usize = 1020;
const LPI_BASE: usize = 8192;

/// The `param[0]` of an ITS's specifier for an LPI (`GIC_IRQ_TYPE_LPI`).
const GIC_IRQ_TYPE_LPI: u32 = 0xa110_c8ed;

/// Device-tree interrupt types (`param[0]`): SPI and PPI.
const DT_SPI: u32 = 0;
const DT_PPI: u32 = 1;

/// `ICC_PMR_EL1` when interrupts are unmasked (`DEFAULT_PMR_VALUE`).
const DEFAULT_PMR: u64 = 0xf0;
/// The priority of normal interrupts (`GICV3_PRIO_IRQ`).
const PRIO_IRQ: u8 = 0xc0;

/// `ICC_CTLR_EL1` fields.
const ICC_CTLR_EOIMODE_DROP: u64 = 1 << 1;
const ICC_CTLR_PRI_BITS_SHIFT: u32 = 8;
const ICC_CTLR_RSS: u64 = 1 << 18;
const ICC_CTLR_EXT_RANGE: u64 = 1 << 19;

/// RWP and `GICR_WAKER` waits: 1 s in steps of 1 us, as upstream.
const POLL_DELAY: Delta = Delta::from_micros(1);
const POLL_TRIES: usize = 1_000_000;

/// The root domain, set once by [`probe`] before the root handler is installed.
static ROOT: SetOnce<&'static Domain<'static, Gic>> = SetOnce::new();

/// The driver's state: the domain's host data, and the chips' data.
///
/// Immutable after the probe (the CPU interface of each CPU is set up by that CPU).
pub(crate) struct Gic {
    dist: Bank,
    /// The CPU interface's interrupt path, for `irq_eoi` and `ipi_send_mask`.
    root_if: &'static RootIf,
    /// The redistributor of each possible CPU, by CPU number.
    redists: KVec<Option<Redist>>,
    /// EOImode=1: the root handler drops the priority, `irq_eoi` deactivates.
    split_eoi: bool,
    /// The strict flow (`irqchip.gicv3_flow=strict`, the default): SPIs are marked masked by
    /// their active state in EOImode=1.
    strict_flow: bool,
    /// Interrupt IDs below this are implemented SGIs, PPIs and SPIs (at most 1020).
    nr_lines: usize,
    /// How the firmware described the GIC: the form of the root domain's specifiers.
    firmware: Firmware,
    /// The private interrupts each CPU's redistributor resets: SGIs, PPIs and extended PPIs (32,
    /// 64 or 96; extended PPIs are reset, not used).
    nr_private: usize,
    /// Whether LPIs are supported (an ITS may sit on top).
    lpis: bool,
    /// The distributor priority of every interrupt (and of LPIs, in their configuration).
    prio: u8,
    /// INTID bits (`GICD_TYPER.IDbits + 1`): the LPIs' range.
    id_bits: u32,
    /// `GICD_TYPER.RSS`.
    has_rss: bool,
    /// `GICD_CTLR.DS`: one security state (the redistributors then sleep in CPU suspend).
    security_disabled: bool,
}

/// Where an interrupt ID lives.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Range {
    Sgi,
    Ppi,
    Spi,
    Lpi,
}

/// The range of interrupt ID `hwirq` (`__get_intid_range()`), `None` for a reserved one.
fn range_of(hwirq: usize) -> Option<Range> {
    match hwirq {
        0..SGI_NR => Some(Range::Sgi),
        SGI_NR..SPI_BASE => Some(Range::Ppi),
        SPI_BASE..SPI_END => Some(Range::Spi),
        LPI_BASE.. => Some(Range::Lpi),
        _ => None,
    }
}

/// The affinity of `cpu` as `GICD_IROUTER` and `ICC_SGI1R_EL1` take it, Aff3 at bits 39:32
/// (`gic_cpu_to_affinity()`).
fn cpu_affinity(cpu: CpuId) -> u64 {
    gic_v3::cpu_mpidr(cpu) & 0xff_00ff_ffff
}

/// The 32-bit affinity `GICR_TYPER[63:32]` holds for `aff` (Aff3.Aff2.Aff1.Aff0).
fn redist_affinity(aff: u64) -> u32 {
    (((aff >> 32) & 0xff) << 24 | (aff & 0xff_ffff)) as u32
}

/// The `ICC_SGI1R_EL1` value that sends SGI `sgi` to the CPUs of `tlist` in the cluster
/// `cluster` (an affinity with Aff0 & 0xf cleared) (`gic_send_sgi()`).
fn sgi1r(cluster: u64, tlist: u16, sgi: u32) -> u64 {
    let aff1 = (cluster >> 8) & 0xff;
    let aff2 = (cluster >> 16) & 0xff;
    let aff3 = (cluster >> 32) & 0xff;
    let rs = (cluster & 0xf0) >> 4;
    aff3 << 48 | rs << 44 | aff2 << 32 | u64::from(sgi & 0xf) << 24 | aff1 << 16 | u64::from(tlist)
}

/// Translates a device-tree specifier of the GIC (`gic_irq_domain_translate()`): one cell for
/// an SGI (the IPIs), three or four for an SPI or PPI (`<type number flags [partition]>`), and
/// the ITS's `<GIC_IRQ_TYPE_LPI hwirq type>`. Returns `EINVAL` for a bad cell count, type,
/// number or trigger, an extended SPI/PPI, or a PPI partition, which this driver refuses.
fn translate(params: &[u32], nr_lines: usize) -> Result<(usize, TriggerType)> {
    match *params {
        [sgi] if (sgi as usize) < SGI_NR => Ok((sgi as usize, TriggerType::EdgeRising)),
        [kind, number, flags] | [kind, number, flags, 0] => {
            let hwirq = match kind {
                DT_SPI if (number as usize) < nr_lines.saturating_sub(SPI_BASE) => {
                    number as usize + SPI_BASE
                }
                DT_PPI if (number as usize) < SPI_BASE - SGI_NR => number as usize + SGI_NR,
                GIC_IRQ_TYPE_LPI if number as usize >= LPI_BASE => number as usize,
                _ => return Err(EINVAL),
            };
            let ty = TriggerType::try_from(flags & bindings::IRQ_TYPE_SENSE_MASK)?;
            if ty == TriggerType::None {
                // Broken device trees are broken, but they boot with the C driver: keep the
                // type the line has.
                kernel::pr_warn_once!("interrupt {hwirq} without trigger type in the DT\n");
            }
            Ok((hwirq, ty))
        }
        _ => Err(EINVAL),
    }
}

/// Translates an ACPI specifier of the GIC (`gic_irq_domain_translate()` on an irqchip fwnode):
/// one cell for an SGI (the IPIs), else `<gsi type>`, the GSI being the interrupt ID of a PPI or
/// SPI (`acpi_register_gsi()`) or of an LPI (the ITS's allocations). Returns `EINVAL` for a bad
/// cell count or trigger, a GSI below 16 (C's "Illegal GSI"), beyond the implemented SPIs, an
/// extended SPI or PPI, or between them and the LPIs.
fn translate_acpi(params: &[u32], nr_lines: usize) -> Result<(usize, TriggerType)> {
    match *params {
        [sgi] if (sgi as usize) < SGI_NR => Ok((sgi as usize, TriggerType::EdgeRising)),
        [gsi, flags] => {
            let hwirq = gsi as usize;
            if !(SGI_NR..nr_lines).contains(&hwirq) && hwirq < LPI_BASE {
                if hwirq < SGI_NR {
                    pr_err!("[Firmware Bug]: illegal GSI{} translation request\n", gsi);
                }
                return Err(EINVAL);
            }
            let ty = TriggerType::try_from(flags & bindings::IRQ_TYPE_SENSE_MASK)?;
            if ty == TriggerType::None {
                // C warns and goes on (`WARN_ON(*type == IRQ_TYPE_NONE)`): the line keeps its
                // type.
                kernel::pr_warn_once!("GSI {gsi} without trigger type\n");
            }
            Ok((hwirq, ty))
        }
        _ => Err(EINVAL),
    }
}

/// The CPU an SPI with affinity `mask` is routed to (`gic_set_affinity()`): the first CPU of
/// `mask` with `force`, else the first that is also in `online`. `EINVAL` if there is none.
fn select_target(mask: &Cpumask, online: &Cpumask, force: bool) -> Result<CpuId> {
    gic_v3::cpus_in(mask)
        .find(|&c| force || online.test(c))
        .ok_or(EINVAL)
}

/// Batches SGI targets into `ICC_SGI1R_EL1` writes (`gic_compute_target_list()`): consecutive
/// CPUs of one cluster (affinities equal but for Aff0[3:0]) share a write; `emit` gets each
/// (cluster, target list).
fn batch_sgi_targets(affs: impl Iterator<Item = u64>, mut emit: impl FnMut(u64, u16)) {
    let mut pending: Option<(u64, u16)> = None;
    for aff in affs {
        let cluster = aff & !0xf;
        let bit = 1u16 << (aff & 0xf);
        pending = match pending {
            Some((c, tlist)) if c == cluster => Some((c, tlist | bit)),
            Some((c, tlist)) => {
                emit(c, tlist);
                Some((cluster, bit))
            }
            None => Some((cluster, bit)),
        };
    }
    if let Some((c, tlist)) = pending {
        emit(c, tlist);
    }
}

/// The flow handler of an interrupt ID, written in Rust: per-CPU for SGIs and PPIs, fasteoi
/// otherwise.
fn flow_of(range: Range) -> FlowHandler {
    match range {
        Range::Sgi | Range::Ppi => FlowHandler::RustPercpuDevid,
        Range::Spi | Range::Lpi => FlowHandler::RustFastEoi,
    }
}

/// Whether an interrupt of `range` is masked by its active state between the priority drop and
/// the deactivate, so that the fasteoi flow may leave it unmasked for its threads (the strict
/// flow): SPIs, whose one active state any CPU may deactivate; not LPIs, which have none, nor
/// SGIs and PPIs, whose active state is banked per CPU (a thread on another CPU would deactivate
/// the wrong copy) and whose per-CPU flow never defers; and only in EOImode=1, where `irq_eoi`
/// deactivates without dropping the priority (in EOImode=0 it does both, and must run on the
/// CPU that took the interrupt, right away).
fn masked_by_active(range: Range, split_eoi: bool) -> bool {
    split_eoi && range == Range::Spi
}

/// Routes SPI `hwirq` to the CPU of affinity `aff` (`gic_write_irouter()`, a 64-bit relaxed
/// write). `EINVAL` for an interrupt ID without router.
fn write_irouter(dist: Frame, hwirq: usize, aff: u64) -> Result {
    const GICD_IROUTER_OFFSET: usize = 0x6000;
    if !(SPI_BASE..SPI_END).contains(&hwirq) {
        return Err(EINVAL);
    }
    let v = GICD_IROUTER::zeroed()
        .try_with_affinity(aff)
        .map_err(|_| EINVAL)?;
    dist.relaxed()
        .try_write64(v.into_raw(), GICD_IROUTER_OFFSET + hwirq * 8)
}

/// Reads `GICR_TYPER` of a redistributor (64 bits, `gic_read_typer()`).
fn read_gicr_typer(rd: Frame) -> Result<GICR_TYPER> {
    const GICR_TYPER_OFFSET: usize = 0x0008;
    Ok(GICR_TYPER::from(
        rd.relaxed().try_read64(GICR_TYPER_OFFSET)?,
    ))
}

/// Waits until `GICD_CTLR.RWP` clears: the distributor has applied the writes before.
fn dist_wait_for_rwp(dist: Frame) {
    if read_poll_timeout_atomic(
        || Ok(dist.relaxed().read(GICD_CTLR)),
        |c| !c.rwp(),
        POLL_DELAY,
        POLL_TRIES,
    )
    .is_err()
    {
        pr_err!("RWP timeout, gone fishing\n");
    }
}

/// Waits until `GICR_CTLR.RWP` of a redistributor clears.
fn redist_wait_for_rwp(rd: Frame) {
    if read_poll_timeout_atomic(
        || Ok(rd.relaxed().read(GICR_CTLR)),
        |c| !c.rwp(),
        POLL_DELAY,
        POLL_TRIES,
    )
    .is_err()
    {
        pr_err!("redistributor RWP timeout\n");
    }
}

impl Gic {
    /// Translates a specifier of the root domain, as the firmware that described the GIC
    /// writes them.
    fn translate(&self, params: &[u32]) -> Result<(usize, TriggerType)> {
        match self.firmware {
            Firmware::DeviceTree => translate(params, self.nr_lines),
            Firmware::Acpi => translate_acpi(params, self.nr_lines),
        }
    }

    /// The current CPU's redistributor. Interrupts are disabled in every caller (chip callbacks
    /// under the descriptor lock, hotplug STARTING callbacks), so the CPU does not change.
    fn this_redist(&self) -> Option<&Redist> {
        self.redists
            .get(CpuId::current().as_u32() as usize)
            .and_then(|r| r.as_ref())
    }

    /// The bank of `hwirq`: this CPU's `SGI_base` for SGIs/PPIs, the distributor for SPIs.
    fn bank_of(&self, hwirq: usize) -> Option<Bank> {
        match range_of(hwirq)? {
            Range::Sgi | Range::Ppi => self.this_redist().map(|r| r.sgi),
            Range::Spi if hwirq < self.nr_lines => Some(self.dist),
            _ => None,
        }
    }

    /// Sets `hwirq`'s bit in the one-bit-per-interrupt bank at `offset` (`gic_poke_irq()`).
    fn poke(&self, hwirq: usize, offset: usize) {
        if let Some(bank) = self.bank_of(hwirq) {
            // The bank index is below 32 (hwirq < 1020), inside the frame: the check holds.
            let _ = bank
                .io()
                .relaxed()
                .try_write32(1 << (hwirq % 32), offset + (hwirq / 32) * 4);
        }
    }

    /// Reads `hwirq`'s bit in the bank at `offset` (`gic_peek_irq()`).
    fn peek(&self, hwirq: usize, offset: usize) -> Result<bool> {
        let bank = self.bank_of(hwirq).ok_or(EINVAL)?;
        let v = bank.io().relaxed().try_read32(offset + (hwirq / 32) * 4)?;
        Ok(v & (1 << (hwirq % 32)) != 0)
    }

    /// Masks `hwirq` and waits for the (re)distributor to apply it (`gic_mask_irq()`).
    fn mask(&self, hwirq: usize) {
        match range_of(hwirq) {
            Some(Range::Sgi | Range::Ppi) => {
                self.poke(hwirq, bank::ICENABLER);
                if let Some(r) = self.this_redist() {
                    redist_wait_for_rwp(r.rd());
                }
            }
            Some(Range::Spi) if hwirq < self.nr_lines => {
                self.poke(hwirq, bank::ICENABLER);
                dist_wait_for_rwp(self.dist.io());
            }
            _ => {}
        }
    }

    /// Unmasks `hwirq` (`gic_unmask_irq()`): no RWP wait, as upstream.
    fn unmask(&self, hwirq: usize) {
        self.poke(hwirq, bank::ISENABLER);
    }

    /// `irq_set_type` (`gic_set_type()`): SGIs are edge-rising only; SPIs level-high or
    /// edge-rising; PPIs are configured in this CPU's redistributor, a refusal only warned
    /// about, as upstream.
    fn set_type(&self, hwirq: usize, ty: TriggerType) -> Result {
        let range = range_of(hwirq).ok_or(EINVAL)?;
        match range {
            Range::Sgi => {
                return if ty == TriggerType::EdgeRising {
                    Ok(())
                } else {
                    Err(EINVAL)
                }
            }
            Range::Spi if !matches!(ty, TriggerType::LevelHigh | TriggerType::EdgeRising) => {
                return Err(EINVAL)
            }
            Range::Lpi => return Err(EINVAL),
            _ => {}
        }
        let bank = self.bank_of(hwirq).ok_or(EINVAL)?;
        let r = bank.configure_irq(hwirq as u32, ty.as_raw());
        if r.is_err() && range == Range::Ppi {
            pr_warn!("PPI INTID{} is secure or misconfigured\n", hwirq);
            return Ok(());
        }
        r
    }

    /// `irq_set_affinity` of an SPI (`gic_set_affinity()`): routes it to one CPU of `mask`
    /// (the first; unless `force`, the first online one). `EINVAL` if there is none, or for an
    /// SGI/PPI/LPI.
    fn set_affinity(
        &self,
        irqd: &SetAffinityCtx<'_>,
        mask: &Cpumask,
        force: bool,
    ) -> Result<CpuId> {
        let hwirq = irqd.hwirq();
        if range_of(hwirq) != Some(Range::Spi) || hwirq >= self.nr_lines {
            return Err(EINVAL);
        }
        let cpu = select_target(mask, gic_v3::online_mask(), force)?;
        let enabled = self.peek(hwirq, bank::ISENABLER)?;
        if enabled {
            self.mask(hwirq);
        }
        let routed = write_irouter(self.dist.io(), hwirq, cpu_affinity(cpu));
        // If the interrupt was enabled, enable it again, also if the routing failed: the unmask
        // orders after the routing write (same device, relaxed accessors keep program order to
        // one endpoint).
        if enabled {
            self.unmask(hwirq);
        }
        routed?;
        irqd.update_effective_affinity(gic_v3::cpumask_of(cpu));
        Ok(cpu)
    }

    /// `irq_get_irqchip_state` (`gic_irq_get_irqchip_state()`): SGI/PPI/SPI only.
    fn get_state(&self, hwirq: usize, which: ChipState) -> Result<bool> {
        match which {
            ChipState::Pending => self.peek(hwirq, bank::ISPENDR),
            ChipState::Active => self.peek(hwirq, bank::ISACTIVER),
            ChipState::Masked => Ok(!self.peek(hwirq, bank::ISENABLER)?),
            ChipState::LineLevel => Err(EINVAL),
        }
    }

    /// `irq_set_irqchip_state` (`gic_irq_set_irqchip_state()`): SGI/PPI/SPI only.
    fn set_state(&self, hwirq: usize, which: ChipState, val: bool) -> Result {
        if self.bank_of(hwirq).is_none() {
            return Err(EINVAL);
        }
        let reg = match (which, val) {
            (ChipState::Pending, true) => bank::ISPENDR,
            (ChipState::Pending, false) => bank::ICPENDR,
            (ChipState::Active, true) => bank::ISACTIVER,
            (ChipState::Active, false) => bank::ICACTIVER,
            (ChipState::Masked, true) => {
                self.mask(hwirq);
                return Ok(());
            }
            (ChipState::Masked, false) => bank::ISENABLER,
            (ChipState::LineLevel, _) => return Err(EINVAL),
        };
        self.poke(hwirq, reg);
        // Read back so that the active state has taken effect and won't race with a
        // guest-driven deactivation.
        if reg == bank::ISACTIVER {
            self.peek(hwirq, reg)?;
        }
        Ok(())
    }

    /// `ipi_send_mask` (`gic_ipi_send_mask()`): one `ICC_SGI1R_EL1` write per cluster of
    /// consecutive CPUs in `mask`.
    fn ipi_send_mask(&self, sgi: usize, mask: &Cpumask) {
        if sgi >= SGI_NR {
            kernel::pr_err_once!("IPI through interrupt {sgi}, not an SGI\n");
            return;
        }
        // Stores to Normal memory (the IPI's message) must be visible to the other CPUs before
        // the SGI is sent.
        sysreg::dsb_ishst();
        batch_sgi_targets(gic_v3::cpus_in(mask).map(cpu_affinity), |c, tlist| {
            self.root_if.write_sgi1r(sgi1r(c, tlist, sgi as u32))
        });
        // Force the `ICC_SGI1R_EL1` writes to be executed.
        sysreg::isb();
    }

    /// Wakes up (`enable`) or puts to sleep this CPU's redistributor (`gic_enable_redist()`).
    fn enable_redist(r: &Redist, enable: bool) {
        let rd = r.rd().relaxed();
        let waker = rd.read(GICR_WAKER).with_processor_sleep(!enable);
        rd.write((), waker);
        // A redistributor without power management ignores the write.
        if !enable && !rd.read(GICR_WAKER).processor_sleep() {
            return;
        }
        if read_poll_timeout_atomic(
            || Ok(rd.read(GICR_WAKER)),
            |w| enable != w.children_asleep(),
            POLL_DELAY,
            POLL_TRIES,
        )
        .is_err()
        {
            pr_err!(
                "redistributor failed to {}...\n",
                if enable { "wakeup" } else { "sleep" }
            );
        }
    }

    /// CPU power management (`gic_cpu_pm_notifier()`): on exit from a power-down state (or a
    /// failed entry) the CPU interface lost its state and the redistributor may sleep; on entry
    /// with a single security state, the redistributor is put to sleep.
    ///
    /// On the CPU itself, interrupts disabled (`cpu_if`).
    fn cpu_pm(&self, cpu: CpuId, exit: bool, cpu_if: &CpuIf) {
        let Some(r) = self
            .redists
            .get(cpu.as_u32() as usize)
            .and_then(|r| r.as_ref())
        else {
            return;
        };
        if exit {
            if self.security_disabled {
                Self::enable_redist(r, true);
            }
            if !cpu_if.enable_sre() {
                pr_err!("unable to set SRE (disabled at EL2), panic ahead\n");
            }
            self.sys_reg_init(cpu, cpu_if);
        } else if self.security_disabled {
            cpu_if.write_igrpen1(0);
            Self::enable_redist(r, false);
        }
    }

    /// The redistributor of `cpu`, if it has one.
    fn redist_of(&self, cpu: CpuId) -> Option<&Redist> {
        self.redists
            .get(cpu.as_u32() as usize)
            .and_then(|r| r.as_ref())
    }

    /// Sets up this CPU's redistributor and CPU interface (`gic_cpu_init()`): `ENODEV` if it
    /// has no redistributor, else [`Gic::cpu_init_redist`].
    ///
    /// On `cpu` itself, interrupts disabled (`cpu_if`).
    fn cpu_init(&self, cpu: CpuId, cpu_if: &CpuIf) -> Result {
        let Some(r) = self.redist_of(cpu) else {
            pr_err!("CPU{}: no redistributor\n", cpu.as_u32());
            return Err(ENODEV);
        };
        self.cpu_init_redist(r, cpu, cpu_if);
        Ok(())
    }

    /// Sets up `cpu`'s redistributor `r` and CPU interface (`gic_cpu_init()` and
    /// `gic_cpu_sys_reg_init()`): its SGIs, PPIs and extended PPIs Group 1, disabled, inactive,
    /// at the driver's priority; PMR, BPR, EOImode, active priorities, Group 1 enable.
    /// Infallible: the probe runs it after it committed.
    ///
    /// On `cpu` itself, interrupts disabled (`cpu_if`).
    fn cpu_init_redist(&self, r: &Redist, cpu: CpuId, cpu_if: &CpuIf) {
        pr_info!(
            "CPU{}: found redistributor {:x} @{:#x}\n",
            cpu.as_u32(),
            cpu_affinity(cpu),
            r.phys()
        );
        Self::enable_redist(r, true);
        if self.nr_private > SPI_BASE && cpu_if.read_ctlr() & ICC_CTLR_EXT_RANGE == 0 {
            // C warns (`WARN()`) and goes on: the extended PPIs stay unused here anyway.
            pr_warn!(
                "CPU{}: extended PPIs, but no extended range in the CPU interface\n",
                cpu.as_u32()
            );
        }
        for (offset, value) in private_reset_writes(self.nr_private, self.prio) {
            write_in_frame(r.sgi.io(), offset, value);
        }
        redist_wait_for_rwp(r.rd());
        self.sys_reg_init(cpu, cpu_if);
    }

    /// `gic_cpu_sys_reg_init()`.
    fn sys_reg_init(&self, cpu: CpuId, cpu_if: &CpuIf) {
        let pribits = ((cpu_if.read_ctlr() >> ICC_CTLR_PRI_BITS_SHIFT) & 7) as u32 + 1;
        let group0 = has_group0(pribits, cpu_if);
        cpu_if.write_pmr(DEFAULT_PMR);
        // Firmware may leave BPR large enough to prevent preemption; 0 restores its reset value.
        cpu_if.write_bpr1(0);
        cpu_if.write_ctlr(if self.split_eoi {
            ICC_CTLR_EOIMODE_DROP
        } else {
            0
        });
        let count = match pribits {
            7 | 8 => 4,
            6 => 2,
            _ => 1,
        };
        // Always whack Group 0 before Group 1.
        if group0 {
            cpu_if.clear_apr(true, count);
            sysreg::isb();
        }
        cpu_if.clear_apr(false, count);
        sysreg::isb();
        cpu_if.write_igrpen1(1);
        let rs = (cpu_affinity(cpu) & 0xf0) >> 4;
        if rs != 0 && (!self.has_rss || cpu_if.read_ctlr() & ICC_CTLR_RSS == 0) {
            pr_crit!("CPU{} needs range selectors (RSS) for SGIs\n", cpu.as_u32());
        }
    }
}

/// Whether Group 0 is under the kernel's control (not EL3's) (`gic_has_group0()`): writing the
/// highest non-zero priority to PMR reads back as 0 when `SCR_EL3.FIQ` shifts it.
fn has_group0(pribits: u32, cpu_if: &CpuIf) -> bool {
    let old = cpu_if.read_pmr();
    cpu_if.write_pmr(1 << (8 - pribits));
    let v = cpu_if.read_pmr();
    cpu_if.write_pmr(old);
    v != 0
}

/// The CPU-interface sequence of one interrupt (`__gic_handle_irq()`), with the flow handler
/// call `dispatch` (which returns whether the interrupt was mapped and handled): the root
/// handler ([`GicV3`]'s `handle_irq()`, `gic_v3_rust_handle_irq()` in C), and what KUnit runs
/// against a recording fake.
///
/// Hard IRQ context, interrupts disabled.
#[inline(always)]
pub(crate) fn handle_one<C: CpuInterface, const SPLIT: bool>(
    cpu: &C,
    dispatch: impl FnOnce(u32) -> bool,
) {
    let intid = cpu.read_iar1();
    // 1020..=1023: spurious or special, nothing was acknowledged.
    if (1020..=1023).contains(&intid) {
        return;
    }
    // EOImode=1: the priority drop, so that other interrupts can be taken while this one is
    // handled (it stays active until its deactivation).
    if SPLIT {
        cpu.write_eoir1(intid);
    }
    // The IAR read (and the priority drop) complete before the handler's own system-register
    // and device accesses: the IAR may report an interrupt signalled after the exception was
    // taken, whose device state the handler must not read stale.
    cpu.isb();
    if !dispatch(intid) {
        deactivate_unhandled::<C, SPLIT>(cpu, intid);
    }
}

/// Deactivates an interrupt that no flow handler took (`gic_deactivate_unhandled()`), so that
/// it is not left active forever.
#[inline(never)]
fn deactivate_unhandled<C: CpuInterface, const SPLIT: bool>(cpu: &C, intid: u32) {
    kernel::pr_err_once!("unexpected interrupt {intid}\n");
    if SPLIT {
        // LPIs have no active state.
        if (intid as usize) < LPI_BASE {
            cpu.write_dir(intid);
        }
    } else {
        cpu.write_eoir1(intid);
        cpu.isb();
    }
}

/// The chip (`gic_chip`, `gic_eoimode1_chip`), for EOImode=1 (`SPLIT`: the root handler
/// dropped the priority, `irq_eoi` deactivates) or EOImode=0 (`irq_eoi` drops the priority and
/// deactivates). The callbacks differ in `mask`, `eoi` and `set_vcpu_affinity` only.
struct GicChip<const SPLIT: bool>;

/// Chip flags of both modes, as upstream.
const GIC_CHIP_FLAGS: ChipFlags = ChipFlags::of(ChipFlag::SetTypeMasked)
    .with(ChipFlag::SkipSetWake)
    .with(ChipFlag::MaskOnSuspend);

#[vtable]
impl<const SPLIT: bool> Chip for GicChip<SPLIT> {
    type Data = Gic;
    const NAME: &'static CStr = c"GICv3";
    const FLAGS: ChipFlags = GIC_CHIP_FLAGS;

    /// `gic_mask_irq()`; in EOImode=1 `gic_eoimode1_mask_irq()`: a forwarded interrupt is
    /// deactivated as well, so that it does not stay active with no guest left to deactivate
    /// it.
    fn mask(gic: &Gic, d: &IrqData) {
        gic.mask(d.hwirq());
        if SPLIT && d.is_forwarded_to_vcpu() {
            gic.poke(d.hwirq(), bank::ICACTIVER);
        }
    }

    fn unmask(gic: &Gic, d: &IrqData) {
        gic.unmask(d.hwirq());
    }

    /// EOImode=1, `gic_eoimode1_eoi_irq()`: deactivation (`ICC_DIR_EL1`), except for an LPI
    /// (no active state) or an interrupt forwarded to a vCPU (the guest deactivates it).
    /// EOImode=0, `gic_eoi_irq()`: `ICC_EOIR1_EL1`, then `isb` so the deactivation is done
    /// before the flow goes on.
    fn eoi(gic: &Gic, d: &IrqData) {
        let hwirq = d.hwirq();
        let cpu = Sysregs(gic.root_if);
        if SPLIT {
            if hwirq >= LPI_BASE || d.is_forwarded_to_vcpu() {
                return;
            }
            cpu.write_dir(hwirq as u32);
        } else {
            cpu.write_eoir1(hwirq as u32);
            cpu.isb();
        }
    }

    fn set_type(gic: &Gic, d: &LockedIrqData, ty: TriggerType) -> Result {
        gic.set_type(d.hwirq(), ty)
    }

    fn set_affinity(
        gic: &Gic,
        d: &SetAffinityCtx<'_>,
        mask: &Cpumask,
        force: bool,
    ) -> Result<SetAffinity> {
        gic.set_affinity(d, mask, force)?;
        Ok(SetAffinity::Done)
    }

    fn retrigger(gic: &Gic, d: &IrqData) -> bool {
        gic.set_state(d.hwirq(), ChipState::Pending, true).is_ok()
    }

    fn get_irqchip_state(gic: &Gic, d: &IrqData, which: ChipState) -> Result<bool> {
        gic.get_state(d.hwirq(), which)
    }

    fn set_irqchip_state(gic: &Gic, d: &IrqData, which: ChipState, val: bool) -> Result {
        gic.set_state(d.hwirq(), which, val)
    }

    fn ipi_send_mask(gic: &Gic, d: &IrqData, mask: &Cpumask) {
        gic.ipi_send_mask(d.hwirq(), mask);
    }

    /// `gic_irq_set_vcpu_affinity()`, EOImode=1 only (`ENOSYS` otherwise, as genirq returns for
    /// `gic_chip`, which has none): a PPI or SPI forwarded to a vCPU (the guest deactivates
    /// it); `EINVAL` for an SGI, `EBUSY` while the strict flow has deferred its deactivate to
    /// its threads (forwarded, the deferred `eoi` would skip it and leave it active for good).
    fn set_vcpu_affinity(_gic: &Gic, d: &SetVcpuAffinityCtx<'_>, vcpu: VcpuInfo) -> Result {
        if !SPLIT {
            return Err(ENOSYS);
        }
        if range_of(d.hwirq()) == Some(Range::Sgi) {
            return Err(EINVAL);
        }
        if d.is_eoi_deferred() {
            return Err(EBUSY);
        }
        d.set_forwarded_to_vcpu(!vcpu.as_raw().is_null());
        Ok(())
    }
}

#[vtable]
impl DomainOps for Gic {
    fn translate(&self, fwspec: &FwSpec) -> Result<(usize, TriggerType)> {
        self.translate(fwspec.params())
    }

    /// `gic_irq_domain_alloc()` and `gic_irq_domain_map()`.
    fn alloc(&self, alloc: &Allocator<'_, Self>, virq: u32, nr: u32, fwspec: &FwSpec) -> Result {
        let (hwirq, _) = self.translate(fwspec.params())?;
        let first = range_of(hwirq).ok_or(EINVAL)?;
        for i in 0..nr {
            let hw = hwirq + i as usize;
            let v = virq + i;
            let range = range_of(hw).ok_or(EINVAL)?;
            // A block may not cross from one range into another.
            if range != first || (range == Range::Lpi && !self.lpis) {
                return Err(EPERM);
            }
            let flow = flow_of(range);
            if self.split_eoi {
                alloc.set_info::<GicChip<true>>(v, hw, flow)?;
            } else {
                alloc.set_info::<GicChip<false>>(v, hw, flow)?;
            }
            if range == Range::Spi {
                alloc.set_single_target(v)?;
            }
            if self.strict_flow && masked_by_active(range, self.split_eoi) {
                alloc.set_masked_by_active(v)?;
            }
            // Software retriggers would break the acknowledge/EOI order.
            alloc.set_handle_enforce_irqctx(v)?;
        }
        Ok(())
    }
}

/// What [`find_redists`] found.
struct FoundRedists {
    /// The redistributor of each possible CPU, by CPU number.
    table: KVec<Option<Redist>>,
    /// What every redistributor supports (`__gic_update_rdist_properties()`).
    props: RdistProps,
    /// The PPIs that every redistributor implements (`gic_data.ppi_nr`): 16, or 48 or 80 with
    /// extended PPIs.
    nr_ppis: usize,
}

/// The PPIs of a redistributor whose `GICR_TYPER.PPInum` is `ppi_num` (`GICR_TYPER_NR_PPIS()`):
/// 16, plus 32 or 64 extended PPIs (interrupt IDs 1056 on) for `PPInum` 1 or 2.
fn nr_ppis(ppi_num: u32) -> usize {
    match ppi_num {
        1 | 2 => 16 + 32 * ppi_num as usize,
        _ => 16,
    }
}

/// What every redistributor supports, as `__gic_update_rdist_properties()` gathers it into
/// `struct rdists` for the ITS driver: direct LPI injection, and GICv4's virtual LPIs (the ITS
/// driver's vPEs, doorbells and vLPIs sit on this driver's domain; this driver only finds them
/// and cleans a GICv4.1 redistributor up at boot).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct RdistProps {
    /// `rdists.has_direct_lpi`: `GICR_TYPER.DirectLPI`, `GICR_CTLR.IR` or GICv4.1 on every one.
    direct_lpi: bool,
    /// `rdists.has_vlpis`: `GICR_TYPER.VLPIS` on every one.
    vlpis: bool,
    /// `rdists.has_rvpeid`: `GICR_TYPER.RVPEID` on every one (GICv4.1).
    rvpeid: bool,
    /// `rdists.has_vpend_valid_dirty`: `GICR_TYPER.Dirty` on every one.
    vpend_valid_dirty: bool,
}

impl RdistProps {
    /// Before the first redistributor: everything, as `gic_init_bases()` starts.
    const ALL: Self = Self {
        direct_lpi: true,
        vlpis: true,
        rvpeid: true,
        vpend_valid_dirty: true,
    };

    /// Takes in one redistributor, its `GICR_TYPER` and `GICR_CTLR.IR`.
    fn add(&mut self, typer: GICR_TYPER, ir: bool) {
        self.vlpis &= typer.vlpis();
        // RVPEID implies a form of DirectLPI, as CTLR.IR does a subset of it (C's comment).
        self.rvpeid &= typer.rvpeid();
        self.direct_lpi &= typer.direct_lpi() || ir || self.rvpeid;
        self.vpend_valid_dirty &= typer.dirty();
        // A GICv4.1 feature without vLPIs makes no sense: none of them (C warns, once).
        if self.rvpeid && !self.vlpis {
            pr_warn!("GICR_TYPER.RVPEID without VLPIS: no direct LPI, no vLPIs\n");
            self.direct_lpi = false;
            self.vlpis = false;
            self.rvpeid = false;
        }
    }
}

/// `GICR_VPROPBASER` (GICv4.1 layout), in the `VLPI_base` frame.
const GICR_VPROPBASER: usize = 0x0070;
/// `GICR_VPROPBASER.Valid` (GICv4.1).
const GICR_VPROPBASER_4_1_VALID: u64 = 1 << 63;
/// `GICR_VPENDBASER`, in the `VLPI_base` frame.
const GICR_VPENDBASER: usize = 0x0078;
/// `GICR_VPENDBASER.Valid`.
const GICR_VPENDBASER_VALID: u64 = 1 << 63;
/// `GICR_VPENDBASER.PendingLast` (bit 60 is `Dirty`, read-only).
const GICR_VPENDBASER_PENDING_LAST: u64 = 1 << 61;

/// A GICv4.1 redistributor's boot-time cleanup (`__gic_update_rdist_properties()`): a vPE a
/// previous kernel left resident is made non-resident, and the vPE table is marked invalid, so
/// that the ITS driver starts from a clean redistributor. 64-bit accesses, as C's
/// `gicr_read_vpendbaser()` on arm64 (the frame's accessors check their alignment at run time).
fn vpe_cleanup(vlpi: Frame) -> Result {
    let io = vlpi.relaxed();
    if io.try_read64(GICR_VPENDBASER)? & GICR_VPENDBASER_VALID != 0 {
        io.try_write64(GICR_VPENDBASER_PENDING_LAST, GICR_VPENDBASER)?;
    }
    let prop = io.try_read64(GICR_VPROPBASER)?;
    io.try_write64(prop & !GICR_VPROPBASER_4_1_VALID, GICR_VPROPBASER)
}

/// Finds the redistributor of every possible CPU: walks each region's redistributors (by the
/// `redistributor-stride`, else two or, with vLPIs, four frames) up to `GICR_TYPER.Last`,
/// matching `GICR_TYPER[63:32]` with the CPU's affinity (`gic_iterate_rdists()`,
/// `__gic_populate_rdist()`, `__gic_update_rdist_properties()`).
///
/// Only reads the GIC, but for a GICv4.1 redistributor's boot-time cleanup ([`vpe_cleanup`]).
/// Returns `EINVAL` for a redistributor whose frames (two, or four with vLPIs) do not lie inside
/// its region (a region too small, or a stride walking out of it), `ENOMEM`.
fn find_redists(regions: &Regions) -> Result<FoundRedists> {
    let n = nr_cpu_ids() as usize;
    let mut table = KVec::with_capacity(n, GFP_KERNEL)?;
    for _ in 0..n {
        table.push(None, GFP_KERNEL)?;
    }
    // `gic_update_rdist_properties()`: the fewest PPIs of any redistributor.
    let mut min_ppis = usize::MAX;
    let mut props = RdistProps::ALL;
    for (idx, region) in regions.redist.iter().enumerate() {
        let Ok(first) = region.redist(0) else {
            pr_err!(
                "redistributor region {} ({:#x} bytes) smaller than a redistributor\n",
                idx,
                region.size()
            );
            return Err(EINVAL);
        };
        let arch = first.rd().relaxed().read(GIC_PIDR2).arch().get();
        if arch != 3 && arch != 4 {
            pr_warn!("no redistributor in region {}\n", idx);
            break;
        }
        let mut offset = 0usize;
        while offset < region.size() {
            let Ok(r) = region.redist(offset) else {
                pr_err!(
                    "redistributor region {}: the redistributor at {:#x} ends beyond its {:#x} \
                     bytes\n",
                    idx,
                    offset,
                    region.size()
                );
                return Err(EINVAL);
            };
            let typer = read_gicr_typer(r.rd())?;
            let ppis = nr_ppis(typer.ppi_num().get() as u32);
            min_ppis = core::cmp::min(min_ppis, ppis);
            if typer.vlpis() {
                // GICv4: the `VLPI_base` frame, which the ITS driver programs, is the
                // redistributor's too.
                let Ok(vlpi) = region.vlpi(offset) else {
                    pr_err!(
                        "redistributor region {}: the GICv4 redistributor at {:#x} ends beyond \
                         its {:#x} bytes\n",
                        idx,
                        offset,
                        region.size()
                    );
                    return Err(EINVAL);
                };
                if typer.rvpeid() {
                    vpe_cleanup(vlpi)?;
                }
            }
            props.add(typer, r.rd().relaxed().read(GICR_CTLR).ir());
            let aff = typer.affinity().get() as u32;
            for cpu in (0..nr_cpu_ids()).filter_map(CpuId::from_u32) {
                if redist_affinity(cpu_affinity(cpu)) == aff {
                    if let Some(slot) = table.get_mut(cpu.as_u32() as usize) {
                        *slot = Some(r);
                    }
                }
            }
            if typer.last() {
                break;
            }
            let step = if regions.stride != 0 {
                usize::try_from(regions.stride).map_err(|_| EINVAL)?
            } else if typer.vlpis() {
                4 * gic_v3::FRAME
            } else {
                2 * gic_v3::FRAME
            };
            offset = offset.checked_add(step).ok_or(EINVAL)?;
        }
    }
    if props.vlpis {
        pr_info!(
            "GICv4 features: {}{}{}\n",
            if props.direct_lpi { "DirectLPI " } else { "" },
            if props.rvpeid { "RVPEID " } else { "" },
            if props.vpend_valid_dirty {
                "Valid+Dirty "
            } else {
                ""
            }
        );
    }
    Ok(FoundRedists {
        table,
        props,
        // No redistributor at all: the boot CPU has none, which the probe refuses.
        nr_ppis: if min_ppis == usize::MAX {
            SPI_BASE - SGI_NR
        } else {
            min_ppis
        },
    })
}

/// The probe: everything `gic_init_bases()` does for a GICv3 of the device tree or of the
/// MADT, up to the ITS, which the shim starts with what this returns. `node` is the GIC's
/// firmware node, whose root domain this creates.
///
/// Every error comes before the first side effect that cannot be undone, the root domain's
/// creation, and before the GIC is programmed (but for the GICv4.1 redistributors' boot-time
/// cleanup, which the C driver repeats and which leaves them as the C driver wants them): the
/// shim then releases what it can (the
/// mappings stay) and starts the C driver. From the domain's creation on (which commits the
/// probe: no C driver on the node) nothing fails: the IPIs' allocation failing leaves the
/// kernel without IPIs (`ipis` `None`), as C's `gic_smp_init()` does, and the register writes
/// are to offsets inside their frames.
///
/// Boot, on the boot CPU, interrupts disabled.
fn probe(ctx: &Probe, node: RootNode<'_>, regions: Regions) -> Result<gic_v3::Probed<Gic>> {
    let dist = regions.dist;
    let d = dist.io().relaxed();
    let arch = d.read(GIC_PIDR2).arch().get();
    if arch != 3 && arch != 4 {
        pr_err!("no distributor detected, giving up\n");
        return Err(ENODEV);
    }
    if ROOT.as_ref().is_some() {
        pr_err!("a second GICv3 is not supported\n");
        return Err(EBUSY);
    }
    let typer = d.read(GICD_TYPER);
    // Unsupported: `EOPNOTSUPP`, the shim then starts the C driver.
    if typer.espi() {
        pr_info!("extended SPIs not supported\n");
        return Err(EOPNOTSUPP);
    }
    if typer.mbis() {
        pr_info!("message-based SPIs not supported\n");
        return Err(EOPNOTSUPP);
    }
    let nr_lines = core::cmp::min(32 * (typer.it_lines().get() as usize + 1), SPI_END);
    let id_bits = typer.id_bits().get() + 1;
    let typer2 = d.read(GICD_TYPER2);
    // `gic_dist_supports_lpis()`: `irqchip.gicv3_nolpi` (the kdump kernel's escape hatch) hides
    // them; then no ITS, and the LPI range is refused.
    let nolpi = gic_v3::nolpi_requested();
    let lpis = typer.lpis() && cfg!(CONFIG_ARM_GIC_V3_ITS) && !nolpi;
    if typer.lpis() && nolpi {
        pr_info!("LPIs disabled by irqchip.gicv3_nolpi\n");
    }
    let found = find_redists(&regions)?;
    let boot = CpuId::current();
    if !matches!(found.table.get(boot.as_u32() as usize), Some(Some(_))) {
        pr_err!("CPU{}: no redistributor, giving up\n", boot.as_u32());
        return Err(ENODEV);
    }

    let split_eoi = gic_v3::hyp_mode_available();
    if split_eoi {
        pr_info!("using split EOI/Deactivate mode\n");
    }
    let strict_flow = split_eoi && gic_v3::strict_flow_requested();
    if strict_flow {
        pr_info!("strict flow: ONESHOT interrupts masked by their active state\n");
    }
    pr_info!("{} SPIs implemented\n", nr_lines - SPI_BASE);
    pr_info!("{} PPIs\n", found.nr_ppis);
    if !ctx.cpu_if().enable_sre() {
        pr_err!("unable to set SRE (disabled at EL2), panic ahead\n");
    }
    // Priorities (`gic_prio_init()`): with Group 0 under our control and security enabled, the
    // distributor sees the non-secure view: program the value shifted into it.
    let pribits = ((ctx.cpu_if().read_ctlr() >> ICC_CTLR_PRI_BITS_SHIFT) & 7) as u32 + 1;
    let group0 = has_group0(pribits, ctx.cpu_if());
    let ds = d.read(GICD_CTLR).ds();
    let prio = if group0 && !ds {
        (PRIO_IRQ >> 1) | 0x80
    } else {
        PRIO_IRQ
    };
    pr_info!(
        "GICD_CTLR.DS={}, SCR_EL3.FIQ={}\n",
        u32::from(ds),
        u32::from(!group0)
    );

    // The ITS driver's table of the redistributors (freed by the shim if the probe fails).
    for (cpu, r) in found.table.iter().enumerate() {
        if let (Some(r), Some(cpu)) = (r, CpuId::from_u32(cpu as u32)) {
            r.publish(cpu, ctx);
        }
    }
    let hwirq_max = core::cmp::max(1usize << id_bits, SPI_END);
    let redists = found.table;
    let nr_private = SGI_NR + found.nr_ppis;
    let firmware = node.firmware();
    let data = try_init!(Gic {
        dist,
        root_if: ctx.root_if(),
        redists,
        split_eoi,
        strict_flow,
        nr_lines,
        firmware,
        nr_private,
        lpis,
        prio,
        id_bits,
        has_rss: typer.rss(),
        security_disabled: ds,
    }? Error);
    // The last step that may fail (`ENOMEM`): before it, nothing is left behind.
    let domain = node.create_domain(hwirq_max, data)?;

    // Committed (`create_domain()` retained the probe): the domain exists for good, the GIC is
    // this driver's. Nothing fails below.
    ctx.retain();
    if !ROOT.populate(domain) {
        // Checked empty above, and the probe runs once, at boot.
        pr_err!("root domain already set\n");
    }
    // The 8 non-secure SGIs the kernel uses as IPIs (no hardware access: allocated before the
    // GIC is programmed, so that programming it is the last step).
    let ipis = match ctx.alloc_ipis(domain) {
        Ok(ipis) => Some(ipis),
        Err(e) => {
            pr_err!("cannot allocate the IPIs ({}): no SMP\n", e.to_errno());
            None
        }
    };
    let gic = domain.data();
    dist_init(gic, typer2.nassgicap(), boot);
    match gic.redist_of(boot) {
        Some(r) => gic.cpu_init_redist(r, boot, ctx.cpu_if()),
        // Checked above.
        None => pr_err!("CPU{}: no redistributor\n", boot.as_u32()),
    }
    Ok(gic_v3::Probed {
        domain,
        ipis,
        lpis,
        split_eoi,
        prio,
        gicd_typer: typer.into_raw(),
        gicd_typer2: typer2.into_raw(),
        direct_lpi: found.props.direct_lpi,
        vlpis: found.props.vlpis,
        rvpeid: found.props.rvpeid,
        vpend_valid_dirty: found.props.vpend_valid_dirty,
    })
}

/// Writes `value` at byte `offset` of `frame`: an offset that the caller computed inside the
/// frame (a bank of at most 1020 interrupt IDs, below 0x2000), so the bounds check cannot fail.
/// Were it to, the write is skipped and said: the GIC is being programmed, there is nothing to
/// unwind.
fn write_in_frame(frame: Frame, offset: usize, value: u32) {
    if frame.relaxed().try_write32(value, offset).is_err() {
        pr_err!("register offset {offset:#x} outside its frame, not written\n");
    }
}

/// The writes that reset the `nr_private` private interrupts of a redistributor's `SGI_base`
/// frame (`gic_cpu_init()`, `gic_cpu_config()`): SGIs, PPIs and extended PPIs (32, 64 or 96
/// interrupt IDs: the extended PPIs' bits and bytes follow the PPIs' in each bank) Group 1, then
/// inactive and disabled, then at priority `prio`. Each write is `(offset, value)`, in C's
/// order; the offsets stay below 0x460, inside the frame.
fn private_reset_writes(nr_private: usize, prio: u8) -> impl Iterator<Item = (usize, u32)> {
    let prio = u32::from_ne_bytes([prio; 4]);
    let banks = (0..nr_private).step_by(32);
    let group = banks.clone().map(|i| (bank::IGROUPR + i / 8, !0u32));
    let clear = banks.flat_map(|i| {
        [
            (bank::ICACTIVER + i / 8, !0u32),
            (bank::ICENABLER + i / 8, !0u32),
        ]
    });
    let prios = (0..nr_private)
        .step_by(4)
        .map(move |i| (bank::IPRIORITYR + i, prio));
    Iterator::chain(Iterator::chain(group, clear), prios)
}

/// `gic_dist_init()`: disable, SPIs Group 1, level, at the driver's priority, inactive and
/// disabled; enable with affinity routing; route every SPI to the boot CPU. Infallible: it runs
/// after the probe committed.
fn dist_init(gic: &Gic, nassgicap: bool, boot: CpuId) {
    let dist = gic.dist.io();
    let d = dist.relaxed();
    d.write((), GICD_CTLR::zeroed());
    dist_wait_for_rwp(dist);
    for i in (SPI_BASE..gic.nr_lines).step_by(32) {
        write_in_frame(dist, bank::IGROUPR + i / 8, !0);
    }
    // `gic_dist_config()`: level-triggered, priority, deactivated and disabled.
    for i in (SPI_BASE..gic.nr_lines).step_by(16) {
        write_in_frame(dist, bank::ICFGR + i / 4, 0);
    }
    let prio = u32::from_ne_bytes([gic.prio; 4]);
    for i in (SPI_BASE..gic.nr_lines).step_by(4) {
        write_in_frame(dist, bank::IPRIORITYR + i, prio);
    }
    for i in (SPI_BASE..gic.nr_lines).step_by(32) {
        write_in_frame(dist, bank::ICACTIVER + i / 8, !0);
        write_in_frame(dist, bank::ICENABLER + i / 8, !0);
    }
    let mut ctlr = GICD_CTLR::zeroed()
        .with_are_ns(true)
        .with_enable_g1a(true)
        .with_enable_g1(true);
    if nassgicap {
        pr_info!("Enabling SGIs without active state\n");
        ctlr = ctlr.with_nassgireq(true);
    }
    d.write((), ctlr);
    dist_wait_for_rwp(dist);
    // SPIs below 1020 and a 40-bit affinity: the routing cannot be refused.
    let aff = cpu_affinity(boot);
    for i in SPI_BASE..gic.nr_lines {
        if write_irouter(dist, i, aff).is_err() {
            pr_err!("SPI {} not routed\n", i);
        }
    }
}

/// The hotplug STARTING callback of `cpu` (`gic_starting_cpu()`), on that CPU with interrupts
/// disabled; then the Rust ITS's part, or the shim calls `its_cpu_init()` of the C ITS.
fn starting_cpu(cpu: CpuId, cpu_if: &CpuIf) -> Result {
    let gic = ROOT.as_ref().ok_or(ENODEV)?.data();
    if !cpu_if.enable_sre() {
        pr_err!("unable to set SRE (disabled at EL2), panic ahead\n");
    }
    gic.cpu_init(cpu, cpu_if)?;
    its::node::starting_cpu(gic, cpu);
    Ok(())
}

/// The CPU PM notifier's body (`gic_cpu_pm_notifier()`), on `cpu` itself with interrupts
/// disabled: `exit` from a low-power state (or a failed entry), else entry.
fn cpu_pm(cpu: CpuId, exit: bool, cpu_if: &CpuIf) {
    if let Some(d) = ROOT.as_ref() {
        d.data().cpu_pm(cpu, exit, cpu_if);
    }
}

/// Whether `cpu` has a redistributor (`gic_check_rdist()`).
fn has_redist(cpu: CpuId) -> bool {
    ROOT.as_ref()
        .and_then(|d| d.data().redists.get(cpu.as_u32() as usize))
        .is_some_and(|r| r.is_some())
}

#[cfg(CONFIG_ARM_GIC_V3_RUST_KUNIT_TEST)]
#[kunit_tests(rust_gicv3)]
mod tests {
    use super::*;
    use core::cell::{
        Cell,
        RefCell, //
    };
    use kernel::cpumask::CpumaskVar;

    /// A CPU-interface access, as the fake records it.
    #[derive(Clone, Copy, PartialEq, Eq, Debug)]
    enum Op {
        Iar(u32),
        Eoir(u32),
        Dir(u32),
        Isb,
        Handle(u32),
    }

    /// A recording fake of the CPU interface: IAR returns `intid`.
    struct Fake {
        intid: u32,
        ops: RefCell<KVec<Op>>,
        handled: Cell<bool>,
    }

    impl Fake {
        fn new(intid: u32) -> Self {
            Self {
                intid,
                ops: RefCell::new(KVec::new()),
                handled: Cell::new(true),
            }
        }

        fn record(&self, op: Op) {
            let _ = self.ops.borrow_mut().push(op, GFP_KERNEL);
        }

        /// Runs the root handler's sequence; the flow handler "handles" iff `handled`.
        fn run<const SPLIT: bool>(&self) -> KVec<Op> {
            handle_one::<Self, SPLIT>(self, |intid| {
                self.record(Op::Handle(intid));
                self.handled.get()
            });
            core::mem::take(&mut *self.ops.borrow_mut())
        }
    }

    impl CpuInterface for Fake {
        fn read_iar1(&self) -> u32 {
            self.record(Op::Iar(self.intid));
            self.intid
        }
        fn write_eoir1(&self, intid: u32) {
            self.record(Op::Eoir(intid));
        }
        fn write_dir(&self, intid: u32) {
            self.record(Op::Dir(intid));
        }
        fn isb(&self) {
            self.record(Op::Isb);
        }
    }

    #[test]
    fn eoimode1_drops_priority_before_the_handler() {
        let f = Fake::new(27);
        let ops = f.run::<true>();
        assert_eq!(
            &ops[..],
            &[Op::Iar(27), Op::Eoir(27), Op::Isb, Op::Handle(27)]
        );
    }

    #[test]
    fn eoimode0_leaves_the_eoi_to_the_flow() {
        let f = Fake::new(40);
        let ops = f.run::<false>();
        assert_eq!(&ops[..], &[Op::Iar(40), Op::Isb, Op::Handle(40)]);
    }

    #[test]
    fn spurious_ids_are_ignored() {
        for id in 1020..=1023 {
            let f = Fake::new(id);
            assert_eq!(&f.run::<true>()[..], &[Op::Iar(id)]);
            assert_eq!(&f.run::<false>()[..], &[Op::Iar(id)]);
        }
    }

    #[test]
    fn unhandled_interrupts_are_deactivated_not_lost() {
        let f = Fake::new(45);
        f.handled.set(false);
        let ops = f.run::<true>();
        assert_eq!(
            &ops[..],
            &[
                Op::Iar(45),
                Op::Eoir(45),
                Op::Isb,
                Op::Handle(45),
                Op::Dir(45)
            ]
        );
        let ops = f.run::<false>();
        assert_eq!(
            &ops[..],
            &[Op::Iar(45), Op::Isb, Op::Handle(45), Op::Eoir(45), Op::Isb]
        );
        // An unhandled LPI in EOImode=1: the priority drop was all it needed.
        let f = Fake::new(8192);
        f.handled.set(false);
        let ops = f.run::<true>();
        assert_eq!(
            &ops[..],
            &[Op::Iar(8192), Op::Eoir(8192), Op::Isb, Op::Handle(8192)]
        );
    }

    #[test]
    fn translate_valid_specifiers() -> Result {
        assert_eq!(translate(&[0], 288)?, (0, TriggerType::EdgeRising));
        assert_eq!(translate(&[15], 288)?, (15, TriggerType::EdgeRising));
        assert_eq!(translate(&[1, 14, 4], 288)?, (30, TriggerType::LevelHigh));
        assert_eq!(translate(&[1, 0, 8], 288)?, (16, TriggerType::LevelLow));
        assert_eq!(translate(&[0, 1, 4], 288)?, (33, TriggerType::LevelHigh));
        assert_eq!(
            translate(&[0, 255, 1], 288)?,
            (287, TriggerType::EdgeRising)
        );
        assert_eq!(translate(&[0, 7, 4, 0], 288)?, (39, TriggerType::LevelHigh));
        // No trigger type: accepted (with a warning), the line keeps its type, as with C.
        assert_eq!(translate(&[0, 1, 0], 288)?, (33, TriggerType::None));
        assert_eq!(
            translate(&[GIC_IRQ_TYPE_LPI, 8192, 1], 288)?,
            (8192, TriggerType::EdgeRising)
        );
        Ok(())
    }

    #[test]
    fn translate_refuses_bad_specifiers() {
        let bad: [&[u32]; 13] = [
            &[],
            &[16],
            &[0, 1],
            &[0, 256, 4],
            &[0, 987, 4],
            &[1, 16, 4],
            &[2, 0, 4],
            &[3, 0, 4],
            &[7, 0, 4],
            &[0, 1, 4, 5],
            &[GIC_IRQ_TYPE_LPI, 8191, 1],
            &[0, 1, 4, 0, 0],
            &[u32::MAX, u32::MAX, u32::MAX],
        ];
        for b in bad {
            assert_eq!(translate(b, 288), Err(EINVAL));
        }
    }

    #[test]
    fn translate_acpi_gsis() -> Result {
        assert_eq!(translate_acpi(&[0], 288)?, (0, TriggerType::EdgeRising));
        // The arch timer's PPIs and an SPI, as the GTDT and the DSDT give them.
        assert_eq!(translate_acpi(&[27, 4], 288)?, (27, TriggerType::LevelHigh));
        assert_eq!(
            translate_acpi(&[16, 1], 288)?,
            (16, TriggerType::EdgeRising)
        );
        assert_eq!(translate_acpi(&[33, 4], 288)?, (33, TriggerType::LevelHigh));
        assert_eq!(
            translate_acpi(&[287, 8], 288)?,
            (287, TriggerType::LevelLow)
        );
        // An LPI, as the ITS allocates it in its parent on ACPI.
        assert_eq!(
            translate_acpi(&[8192, 1], 288)?,
            (8192, TriggerType::EdgeRising)
        );
        let bad: [&[u32]; 10] = [
            &[],
            &[16],
            &[15, 4],
            &[0, 4],
            &[288, 4],
            &[1020, 4],
            &[8191, 1],
            &[33, 4, 0],
            &[0, 33, 4],
            &[u32::MAX, u32::MAX],
        ];
        for b in bad {
            assert_eq!(translate_acpi(b, 288), Err(EINVAL));
        }
        // The device-tree form is not an ACPI one, nor the other way round.
        assert_eq!(translate(&[27, 4], 288), Err(EINVAL));
        Ok(())
    }

    #[test]
    fn redistributor_properties_as_c_gathers_them() {
        const VLPIS: u64 = 1 << 1;
        const DIRTY: u64 = 1 << 2;
        const DIRECT: u64 = 1 << 3;
        const RVPEID: u64 = 1 << 7;
        let gather = |rds: &[(u64, bool)]| {
            let mut p = RdistProps::ALL;
            for &(typer, ir) in rds {
                p.add(GICR_TYPER::from(typer), ir);
            }
            p
        };
        let props = |direct_lpi, vlpis, rvpeid, vpend_valid_dirty| RdistProps {
            direct_lpi,
            vlpis,
            rvpeid,
            vpend_valid_dirty,
        };
        // GICv3 (QEMU's gic-version=3): LPIs only, no direct injection.
        assert_eq!(
            gather(&[(0, false), (0, false)]),
            props(false, false, false, false)
        );
        // GICR_CTLR.IR alone gives the ITS its direct invalidation.
        assert_eq!(gather(&[(0, true)]), props(true, false, false, false));
        // GICv4.0 (QEMU's gic-version=4).
        assert_eq!(
            gather(&[(VLPIS | DIRECT, false), (VLPIS | DIRECT, false)]),
            props(true, true, false, false)
        );
        // GICv4.1: RVPEID stands for DirectLPI.
        assert_eq!(
            gather(&[(VLPIS | RVPEID | DIRTY, false)]),
            props(true, true, true, true)
        );
        // One redistributor without vLPIs: none for the ITS.
        assert_eq!(
            gather(&[(VLPIS | DIRECT, false), (DIRECT, false)]),
            props(true, false, false, false)
        );
        // RVPEID without VLPIS makes no sense: nothing of either (C's WARN_ON_ONCE).
        assert_eq!(
            gather(&[(RVPEID | DIRECT, false)]),
            props(false, false, false, false)
        );
        // GICR_CTLR.IR is bit 2 (`GICR_CTLR_IR`); bit 1 is CES, which QEMU sets.
        assert!(GICR_CTLR::from(1u32 << 2).ir());
        assert!(!GICR_CTLR::from(1u32 << 1).ir());
        assert!(GICR_CTLR::from(1u32 << 3).rwp());
    }

    #[test]
    fn flows_and_ranges() {
        assert_eq!(range_of(0), Some(Range::Sgi));
        assert_eq!(range_of(15), Some(Range::Sgi));
        assert_eq!(range_of(16), Some(Range::Ppi));
        assert_eq!(range_of(31), Some(Range::Ppi));
        assert_eq!(range_of(32), Some(Range::Spi));
        assert_eq!(range_of(1019), Some(Range::Spi));
        assert_eq!(range_of(1020), None);
        assert_eq!(range_of(8191), None);
        assert_eq!(range_of(8192), Some(Range::Lpi));
        assert!(flow_of(Range::Sgi) == FlowHandler::RustPercpuDevid);
        assert!(flow_of(Range::Ppi) == FlowHandler::RustPercpuDevid);
        assert!(flow_of(Range::Spi) == FlowHandler::RustFastEoi);
        assert!(flow_of(Range::Lpi) == FlowHandler::RustFastEoi);
        // Masked by the active state: SPIs in EOImode=1 only.
        assert!(masked_by_active(Range::Spi, true));
        for range in [Range::Sgi, Range::Ppi, Range::Spi, Range::Lpi] {
            assert!(!masked_by_active(range, false));
        }
        for range in [Range::Sgi, Range::Ppi, Range::Lpi] {
            assert!(!masked_by_active(range, true));
        }
    }

    #[test]
    fn sgi_writes_are_batched_per_cluster() -> Result {
        let mut writes = KVec::new();
        // CPUs 0.0.0.0, 0.0.0.1, 0.0.1.0, 0.0.1.1, then 0.0.0.2 again: three writes, in order.
        batch_sgi_targets([0x0, 0x1, 0x100, 0x101, 0x2].into_iter(), |c, t| {
            let _ = writes.push((c, t), GFP_KERNEL);
        });
        assert_eq!(&writes[..], &[(0x0, 0b11), (0x100, 0b11), (0x0, 0b100)]);
        writes.clear();
        batch_sgi_targets([0x1f].into_iter(), |c, t| {
            let _ = writes.push((c, t), GFP_KERNEL);
        });
        assert_eq!(&writes[..], &[(0x10, 1 << 15)]);
        writes.clear();
        batch_sgi_targets(core::iter::empty(), |c, t| {
            let _ = writes.push((c, t), GFP_KERNEL);
        });
        assert!(writes.is_empty());
        Ok(())
    }

    #[test]
    fn sgi_target_list_encoding() {
        // CPU 1 of cluster 0: target list bit 1, SGI 3.
        assert_eq!(sgi1r(0, 1 << 1, 3), 3 << 24 | 2);
        // Aff3.Aff2.Aff1 = 1.2.3, range selector 1 (Aff0 16..31).
        let cluster = 1u64 << 32 | 2 << 16 | 3 << 8 | 0x10;
        assert_eq!(
            sgi1r(cluster, 1, 0),
            1 << 48 | 1 << 44 | 2 << 32 | 3 << 16 | 1
        );
        assert_eq!(
            redist_affinity(1u64 << 32 | 2 << 16 | 3 << 8 | 4),
            0x0102_0304
        );
    }

    #[test]
    fn affinity_to_an_offline_cpu_is_refused() -> Result {
        let (Some(cpu0), Some(cpu1)) = (CpuId::from_u32(0), CpuId::from_u32(1)) else {
            // One CPU: nothing can be offline.
            return Ok(());
        };
        let mut online = CpumaskVar::new_zero(GFP_KERNEL)?;
        online.set(cpu0);
        let mut mask = CpumaskVar::new_zero(GFP_KERNEL)?;
        mask.set(cpu1);
        // CPU1 "offline": refused, unless forced.
        assert_eq!(select_target(&mask, &online, false), Err(EINVAL));
        assert_eq!(select_target(&mask, &online, true)?, cpu1);
        // An online CPU in the mask is taken.
        mask.set(cpu0);
        assert_eq!(select_target(&mask, &online, false)?, cpu0);
        // An empty mask: nothing, even forced.
        let empty = CpumaskVar::new_zero(GFP_KERNEL)?;
        assert_eq!(select_target(&empty, &online, true), Err(EINVAL));
        Ok(())
    }

    #[test]
    fn extended_ppis_counted_as_c_counts_them() {
        // `GICR_TYPER.PPInum`: 0 for the 16 PPIs, 1 and 2 add 32 and 64 extended PPIs; the
        // other values are reserved (C's `GICR_TYPER_NR_PPIS()` counts 16 for them).
        assert_eq!(nr_ppis(0), 16);
        assert_eq!(nr_ppis(1), 48);
        assert_eq!(nr_ppis(2), 80);
        assert_eq!(nr_ppis(3), 16);
        assert_eq!(nr_ppis(31), 16);
    }

    /// The offsets `private_reset_writes()` writes `value` to, in order.
    fn reset_offsets(nr_private: usize, value: u32) -> KVec<usize> {
        let mut v = KVec::new();
        for (offset, val) in private_reset_writes(nr_private, 0xa0) {
            if val == value {
                let _ = v.push(offset, GFP_KERNEL);
            }
        }
        v
    }

    #[test]
    fn private_reset_covers_extended_ppis() {
        // Without extended PPIs (32 private interrupts): one word of each bit bank, 8 priority
        // words, in C's order (`gic_cpu_init()`: Group; `gic_cpu_config()`: active, enable,
        // priorities).
        let all: KVec<(usize, u32)> = {
            let mut v = KVec::new();
            for w in private_reset_writes(32, 0xa0) {
                let _ = v.push(w, GFP_KERNEL);
            }
            v
        };
        assert_eq!(
            &all[..4],
            &[(0x080, !0), (0x380, !0), (0x180, !0), (0x400, 0xa0a0_a0a0)]
        );
        assert_eq!(all.len(), 3 + 8);
        // 64 extended PPIs (96 private interrupts): three words of each bit bank and 24 priority
        // words, up to the last extended PPI's (`GICR_IPRIORITYR<n>E` ends at 0x45f).
        assert_eq!(
            &reset_offsets(96, !0)[..],
            &[0x80, 0x84, 0x88, 0x380, 0x180, 0x384, 0x184, 0x388, 0x188]
        );
        let prios = reset_offsets(96, 0xa0a0_a0a0);
        assert_eq!(prios.len(), 24);
        assert_eq!(prios.first(), Some(&0x400));
        assert_eq!(prios.last(), Some(&0x45c));
        // 32 extended PPIs (64 private interrupts).
        assert_eq!(
            &reset_offsets(64, !0)[..],
            &[0x80, 0x84, 0x380, 0x180, 0x384, 0x184]
        );
        assert_eq!(reset_offsets(64, 0xa0a0_a0a0).len(), 16);
    }
}
