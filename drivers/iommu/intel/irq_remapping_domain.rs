// SPDX-License-Identifier: GPL-2.0

//! VT-d interrupt remapping in Rust: the interrupt remapping domain of a unit and its chips,
//! "INTEL-IR-RS" and, with posted MSIs, "INTEL-IR-POST-RS".
//!
//! One domain per remapping unit, below the x86 vector domain: the MSI parent of the PCI/MSI
//! domains of the devices in the unit's scope (named "IR-RS-PCI-MSI..."), and the parent of
//! the IO-APIC and HPET domains whose device scope is the unit's (found through
//! [`DomainOps::select`]). For each interrupt (`intel_irq_remapping_alloc()`):
//!
//! - the vector domain allocates the vector;
//! - the unit's allocator hands out a naturally aligned block of IRTEs, one entry per vector of
//!   a multi-MSI block (its sub-handles), one for anything else;
//! - the interrupt's chip data records the entry, the requester IDs the entry lets through
//!   (source-id validation: the PCI requester ID or the bus range of its DMA aliases, the
//!   IO-APIC's or HPET's ID in the DMAR device scope) and its message in remappable format;
//! - activation writes the entry for the vector and destination the vector domain assigned,
//!   and flushes it from the interrupt entry cache; an affinity change has the vector domain
//!   move the vector, rewrites the entry, then schedules the old vector's cleanup
//!   (`intel_ir_set_affinity()`); deactivation clears the entry, freeing clears the block.
//!
//! With posted MSIs (`intremap=posted_msi`), PCI MSIs get posted entries aimed at their CPU's
//! posted-interrupt descriptor and the posted-MSI ack. A hypervisor posting an interrupt to a
//! vCPU (`irq_set_vcpu_affinity()`) gets a posted entry aimed at the vCPU's descriptor, left
//! alone by host affinity changes until it takes the interrupt back.
//!
//! The entry formats are [`crate::irq_remapping_entry`]'s, the allocator and the messages
//! [`crate::irq_remapping_table`]'s; the table writes, the C calls and the entry points are in
//! [`crate::irq_remapping_hw`], the only `unsafe` code. DMAR parsing, the table's allocation
//! and enabling, kdump and unit hotplug stay C (`irq_remapping.c`).
//!
//! C source: [`drivers/iommu/intel/irq_remapping.c`](srctree/drivers/iommu/intel/irq_remapping.c).

use crate::{
    irq_remapping_entry::{
        ApicMode,
        Irte,
        SourceId, //
    },
    irq_remapping_hw::{
        self as hw,
        IrTable,
        UnitId, //
    },
    irq_remapping_table::{
        self as table,
        IrteAllocator,
        IrteBlock, //
    },
};
use core::sync::atomic::{
    AtomicBool,
    AtomicPtr,
    Ordering::Relaxed, //
};
use kernel::{
    bindings,
    cpumask::Cpumask,
    irq::{
        self,
        posted,
        AckCtx,
        Allocator,
        Chip,
        DomainOps,
        FwSpec,
        IrqData,
        MsiAllocInfo,
        MsiMsg,
        PciRequester,
        SetAffinity,
        SetAffinityCtx,
        SetVcpuAffinityCtx,
        VcpuInfo,
        VectorCfg,
        X86AllocType, //
    },
    new_raw_spinlock,
    prelude::*,
    sync::{
        Arc,
        RawSpinLock, //
    },
};

/// The bound of the domain's hwirqs: an interrupt's hwirq is its block's first entry in bits
/// 31:16, the block's mask in bits 15:8 and its sub-handle in bits 7:0 ([`hwirq_of`]), so the
/// free path finds the block from the hwirq alone.
pub(crate) const HWIRQ_LIMIT: usize = 1 << 32;

/// The hwirq of vector `sub` of `block`.
fn hwirq_of(block: IrteBlock, sub: u16) -> usize {
    usize::from(block.index()) << 16 | usize::from(block.mask()) << 8 | usize::from(sub)
}

/// The block and sub-handle a hwirq of the domain names; `EINVAL` for one [`hwirq_of`] does not
/// return.
fn block_of(hwirq: usize) -> Result<(IrteBlock, u16)> {
    let index = u16::try_from(hwirq >> 16).map_err(|_| EINVAL)?;
    let block = IrteBlock::new(index, ((hwirq >> 8) & 0xff) as u8)?;
    let sub = (hwirq & 0xff) as u16;
    if usize::from(sub) >= block.count() {
        return Err(EINVAL);
    }
    Ok((block, sub))
}

/// The requester IDs a PCI device's MSIs may carry (`set_msi_sid()`).
///
/// - The last DMA alias is on another bus than the device it was found on: a PCIe-to-PCI
///   bridge's, for the bus behind it; only the bus range from that bus to the device's is
///   known.
/// - Several aliases, all on one bus (proxy IDs, as NTB uses): that bus.
/// - The alias is on another bus than the device: a topology alias, that ID.
/// - Otherwise (none, or a quirk's alias on the device's own bus, which MSIs need not use):
///   the device's own ID.
fn pci_source(r: &PciRequester) -> SourceId {
    let alias_bus = (r.last_alias >> 8) as u8;
    if r.aliases == 0 {
        SourceId::RequesterId {
            sid: r.dev_id,
            sq: 0,
        }
    } else if alias_bus != r.last_alias_dev_bus {
        SourceId::Bus {
            start: alias_bus,
            end: r.bus,
        }
    } else if r.aliases >= 2 && r.bus_matches == r.aliases {
        SourceId::Bus {
            start: r.bus,
            end: r.bus,
        }
    } else if r.last_alias_dev_bus != r.bus {
        SourceId::RequesterId {
            sid: r.last_alias,
            sq: 0,
        }
    } else {
        SourceId::RequesterId {
            sid: r.dev_id,
            sq: 0,
        }
    }
}

/// What a unit's lock protects: which entries are in use, and the table (until the domain is
/// removed: C frees it then).
struct UnitState {
    alloc: IrteAllocator,
    table: Option<IrTable>,
}

/// A VT-d unit, as its Rust domain and chips see it.
#[pin_data]
pub(crate) struct Unit {
    /// The allocator and the table, under a raw spinlock (`irq_2_ir_lock`): entries are
    /// written with the descriptor lock held, in `set_affinity`.
    #[pin]
    state: RawSpinLock<UnitState>,
    /// Which unit it is.
    id: UnitId,
    /// How destinations are encoded (`eim_mode`).
    mode: ApicMode,
    /// `intremap=nosid`: entries verify no source-id.
    nosid: bool,
}

impl Unit {
    /// Writes entry `index`, which must be in use, and flushes it from the interrupt entry
    /// cache (`modify_irte()`). A failed flush is reported and the write stands, as in C (the
    /// entry is written; the unit may use the old one until its cache drops it).
    ///
    /// Errors: `ENODEV` once the domain is removed, `EINVAL` for an entry not in use (a stale
    /// interrupt's), and [`IrTable::write`]'s (the entry is not written then).
    fn write(&self, index: u16, e: Irte) -> Result {
        let one = IrteBlock::new(index, 0)?;
        self.state.with_irqsave(move |s| {
            if !s.alloc.is_used(index) {
                return Err(EINVAL);
            }
            let t = s.table.as_mut().ok_or(ENODEV)?;
            t.write(index, &e)?;
            if let Err(err) = t.flush_iec(table::iec_flush(one)) {
                pr_err!(
                    "IRTE {:#x}: interrupt entry cache flush failed: {:?}\n",
                    index,
                    err
                );
            }
            Ok(())
        })
    }

    /// Takes a block for `count` vectors (`alloc_irte()`).
    fn alloc(&self, count: u32) -> Result<IrteBlock> {
        self.state.with_irqsave(move |s| s.alloc.alloc(count))
    }

    /// Clears `block`'s entries, returns it to the allocator, then flushes it from the
    /// interrupt entry cache (`clear_entries()`). An entry that cannot be cleared keeps the
    /// whole block in use, never handed out again.
    ///
    /// Errors: `EINVAL` for a block not in use, `EIO` if an entry was not cleared; a failed
    /// flush is reported, the block is returned.
    fn free(&self, block: IrteBlock) -> Result {
        self.state.with_irqsave(move |s| {
            // Entries of a block are consecutive, and `u16` (the block is in the table). Only a
            // block wholly in use is cleared: a wrong free must not wipe another's entries.
            if !(0..block.count() as u16).all(|e| s.alloc.is_used(block.index() + e)) {
                return Err(EINVAL);
            }
            if let Some(t) = s.table.as_mut() {
                for e in 0..block.count() as u16 {
                    if t.write(block.index() + e, &Irte::ZERO).is_err() {
                        return Err(EIO);
                    }
                }
            }
            s.alloc.free(block)?;
            if let Some(t) = s.table.as_mut() {
                if let Err(err) = t.flush_iec(table::iec_flush(block)) {
                    pr_err!("IRTE block {:#x}: flush failed: {:?}\n", block.index(), err);
                }
            }
            Ok(())
        })
    }

    /// Gives the table back to C, which frees it once the domain is removed: no entry is
    /// written any more (a chip data's release may still hold the unit).
    pub(crate) fn detach(&self) {
        self.state.with_irqsave(|s| s.table = None);
    }
}

/// The per-interrupt chip data of the unit's chips (`struct intel_ir_data`).
pub(crate) struct IrVector {
    unit: Arc<Unit>,
    /// The block of the device's vectors.
    block: IrteBlock,
    /// This vector's sub-handle in the block: its entry is `block.index() + sub`.
    sub: u16,
    /// The requester IDs the entry lets through.
    source: SourceId,
    /// The message in remappable format (`fill_msi_msg()`).
    msg: MsiMsg,
    /// A PCI MSI with posted MSIs on: a posted entry aimed at the target CPU's descriptor.
    posted_msi: bool,
    /// Posted to a vCPU (`set_vcpu_affinity`): host affinity changes leave the entry alone.
    posted_vcpu: AtomicBool,
}

impl IrVector {
    /// The entry's index in the table.
    fn index(&self) -> u16 {
        self.block.index() + self.sub
    }

    /// The entry that routes the interrupt as the vector domain does (`prepare_irte()` and
    /// `intel_ir_reconfigure_irte_posted()`).
    fn host_entry(&self, cfg: VectorCfg) -> Result<Irte> {
        if self.posted_msi {
            let cpu = cfg.cpu.ok_or(EINVAL)?;
            Irte::posted(cfg.vector, posted::pi_desc_phys(cpu), false, self.source)
        } else {
            Irte::remapped(
                cfg.vector,
                cfg.dest_apicid,
                self.unit.mode,
                irq::apic_dest_mode_logical(),
                self.source,
            )
        }
    }

    /// Points the entry at `cfg`, the vector and destination the vector domain assigned
    /// (`intel_ir_reconfigure_irte()`), unless the interrupt is posted to a vCPU and
    /// `force_host` is false.
    fn reconfigure(&self, cfg: Option<VectorCfg>, force_host: bool) -> Result {
        if self.posted_vcpu.load(Relaxed) && !force_host {
            return Ok(());
        }
        self.posted_vcpu.store(false, Relaxed);
        self.unit
            .write(self.index(), self.host_entry(cfg.ok_or(EINVAL)?)?)
    }

    /// `intel_ir_set_affinity()`: the vector domain moves the vector, the entry follows, and
    /// then the old vector is cleaned up; the chips above need not recompose their messages,
    /// which name the entry, not the vector.
    fn set_affinity(
        &self,
        irqd: &SetAffinityCtx<'_>,
        mask: &Cpumask,
        force: bool,
    ) -> Result<SetAffinity> {
        let r = irqd.set_parent(mask, force)?;
        if r == SetAffinity::Done {
            return Ok(r);
        }
        // Until the entry is rewritten, interrupts still arrive on the old vector: no cleanup
        // if it is not.
        self.reconfigure(irqd.vector_cfg(), false)?;
        irqd.schedule_vector_cleanup()?;
        Ok(SetAffinity::Done)
    }

    /// `intel_ir_set_vcpu_affinity()`: posts the interrupt to the vCPU whose descriptor and
    /// guest vector `vcpu` names, or takes it back to the host's routing.
    fn set_vcpu_affinity(&self, irqd: &SetVcpuAffinityCtx<'_>, vcpu: VcpuInfo) -> Result {
        match hw::pi_data(irqd, &vcpu) {
            None => self.reconfigure(irqd.vector_cfg(), true),
            Some((pda, vector)) => {
                let vector = u8::try_from(vector).map_err(|_| EINVAL)?;
                let e = Irte::posted(vector, pda, false, self.source)?;
                self.posted_vcpu.store(true, Relaxed);
                self.unit.write(self.index(), e)
            }
        }
    }
}

/// The remapping chips of the Rust domain: "INTEL-IR-RS" (`intel_ir_chip`) and, for posted MSIs
/// (`POSTED`), "INTEL-IR-POST-RS" (`intel_ir_chip_post_msi`), the same with the posted-MSI ack,
/// which applies a pending move and sends no EOI.
struct IrChip<const POSTED: bool>;

#[vtable]
impl<const POSTED: bool> Chip for IrChip<POSTED> {
    type Data = IrVector;
    const NAME: &'static CStr = if POSTED {
        c"INTEL-IR-POST-RS"
    } else {
        c"INTEL-IR-RS"
    };

    /// `apic_ack_irq()`: a pending deferred move, then the local APIC's EOI; or the posted-MSI
    /// ack.
    fn ack(_v: &IrVector, irqd: &AckCtx<'_>) {
        if POSTED {
            crate::irq_remapping_irte::posted_ack(irqd)
        } else {
            hw::apic_ack(irqd)
        }
    }

    fn set_affinity(
        v: &IrVector,
        irqd: &SetAffinityCtx<'_>,
        mask: &Cpumask,
        force: bool,
    ) -> Result<SetAffinity> {
        v.set_affinity(irqd, mask, force)
    }

    fn compose_msi_msg(v: &IrVector, _irqd: &IrqData) -> Result<MsiMsg> {
        Ok(v.msg)
    }

    fn set_vcpu_affinity(v: &IrVector, irqd: &SetVcpuAffinityCtx<'_>, vcpu: VcpuInfo) -> Result {
        v.set_vcpu_affinity(irqd, vcpu)
    }
}

/// The host data of a unit's domain.
///
/// # Invariants
///
/// At the domain's level, every interrupt's chip data is NULL or an [`IrVector`] that
/// [`IrDomain::alloc_info`] installed (the only chip data the level gets: both chips take an
/// `IrVector`), which [`hw::activation`] relies on.
pub(crate) struct IrDomain {
    unit: Arc<Unit>,
    /// The domain, once created: what [`hw::activation`] checks an `irq_data`'s level against.
    raw: AtomicPtr<bindings::irq_domain>,
}

impl IrDomain {
    /// The host data of the domain of a unit whose table is `table`, extended capabilities
    /// `ecap` (the largest block), destination mode `mode`, source-id checking off if `nosid`.
    ///
    /// Boot, process context.
    pub(crate) fn new(
        table: IrTable,
        id: UnitId,
        ecap: u64,
        mode: ApicMode,
        nosid: bool,
    ) -> Result<Self> {
        let alloc = IrteAllocator::new(ecap)?;
        let unit = Arc::pin_init(
            try_pin_init!(Unit {
                state <- new_raw_spinlock!(
                    UnitState {
                        alloc,
                        table: Some(table),
                    },
                    "intel_ir_unit"
                ),
                id,
                mode,
                nosid,
            }? Error),
            GFP_KERNEL,
        )?;
        Ok(Self {
            unit,
            raw: AtomicPtr::new(core::ptr::null_mut()),
        })
    }

    /// Records the domain this is the host data of, once created.
    pub(crate) fn set_raw(&self, d: *mut bindings::irq_domain) {
        self.raw.store(d, Relaxed);
    }

    /// The domain this is the host data of (NULL before it is created).
    pub(crate) fn raw(&self) -> *mut bindings::irq_domain {
        self.raw.load(Relaxed)
    }

    /// Whether an entry is in use (`dmar_ir_hotplug()` refuses to remove the unit then).
    pub(crate) fn in_use(&self) -> bool {
        self.unit.state.with_irqsave(|s| s.alloc.any_used())
    }

    /// The unit.
    pub(crate) fn unit(&self) -> &Arc<Unit> {
        &self.unit
    }

    /// The requester ID of an IO-APIC or HPET in the DMAR device scope; no verification, as C,
    /// if the scope lacks it.
    fn scope_source(&self, sid: Option<u16>, sq: u8, what: &str, id: u32) -> SourceId {
        match sid {
            Some(sid) => SourceId::RequesterId { sid, sq },
            None => {
                pr_warn!("Failed to set source-id of {} ({})\n", what, id);
                SourceId::None
            }
        }
    }
}

#[vtable]
impl DomainOps for IrDomain {
    /// `intel_irq_remapping_select()`: the IO-APICs and HPETs in the unit's device scope.
    fn select(&self, fwspec: &FwSpec, _bus_token: bindings::irq_domain_bus_token) -> bool {
        self.unit.id.serves(fwspec)
    }

    /// `intel_irq_remapping_alloc()`: the vector domain's level, a block of entries, and each
    /// interrupt's chip data; the entries are written at activation.
    fn alloc_info(
        &self,
        alloc: &Allocator<'_, Self>,
        virq: u32,
        nr: u32,
        info: &MsiAllocInfo,
    ) -> Result {
        let ty = info.x86_type();
        // Only multi-MSI allocates blocks.
        if nr == 0 || (nr > 1 && ty != X86AllocType::PciMsi) {
            return Err(EINVAL);
        }
        // The requester IDs; an IO-APIC's message carries its pin as the sub-handle.
        let (source, pin, pci) = match ty {
            X86AllocType::IoApic { id, pin } => (
                self.scope_source(hw::ioapic_sid(id), 0, "IOAPIC", id),
                Some(u16::try_from(pin).map_err(|_| EINVAL)?),
                false,
            ),
            // Some platforms break with all 16 bits verified: the function bits are ignored
            // (`set_hpet_sid()`).
            X86AllocType::Hpet { id } => (
                self.scope_source(hw::hpet_sid(id), 3, "HPET block", id),
                None,
                false,
            ),
            X86AllocType::PciMsi | X86AllocType::PciMsix => {
                (pci_source(&info.pci_requester().ok_or(EINVAL)?), None, true)
            }
            X86AllocType::Other(_) => return Err(EINVAL),
        };
        let source = if self.unit.nosid {
            SourceId::None
        } else {
            source
        };
        let posted_msi = pci && posted::msi_enabled();
        // On an error below, the kernel crate frees this level for us.
        alloc.alloc_parent_info(virq, nr, info)?;
        let block = self.unit.alloc(nr)?;
        let r = (|| {
            for i in 0..nr {
                // At most 32 (the allocator refuses more).
                let sub = i as u16;
                let m = match pin {
                    Some(pin) => table::msi_msg_subhandle(block, pin),
                    None => table::msi_msg(block, sub)?,
                };
                let data = IrVector {
                    unit: self.unit.clone(),
                    block,
                    sub,
                    source,
                    msg: MsiMsg {
                        address_lo: m.address_lo,
                        address_hi: m.address_hi,
                        data: m.data,
                    },
                    posted_msi,
                    posted_vcpu: AtomicBool::new(false),
                };
                let hwirq = hwirq_of(block, sub);
                // INVARIANT: the level's chip data is an `IrVector`.
                if posted_msi {
                    alloc.set_chip_boxed::<IrChip<true>>(virq + i, hwirq, Ok::<_, Error>(data))?;
                } else {
                    alloc.set_chip_boxed::<IrChip<false>>(virq + i, hwirq, Ok::<_, Error>(data))?;
                }
            }
            Ok(())
        })();
        if r.is_err() && self.unit.free(block).is_err() {
            pr_err!("IRTE block {:#x} not freed\n", block.index());
        }
        r
    }

    /// `intel_irq_remapping_free()`: the block's entries cleared and returned with its first
    /// vector, then this level and the vector domain's.
    fn free(&self, alloc: &Allocator<'_, Self>, virq: u32, nr: u32) {
        for v in virq..virq.saturating_add(nr) {
            if let Ok((block, 0)) = alloc.hwirq(v).and_then(block_of) {
                if self.unit.free(block).is_err() {
                    pr_err!("IRTE block {:#x} not freed\n", block.index());
                }
            }
        }
        let _ = alloc.free_boxed(virq, nr);
    }

    /// `intel_irq_remapping_activate()`: the entry for the vector just assigned.
    fn activate(&self, irqd: &IrqData, _reserve: bool) -> Result {
        let (v, cfg) = hw::activation(self, irqd).ok_or(EINVAL)?;
        v.reconfigure(cfg, true)
    }

    /// `intel_irq_remapping_deactivate()`: the entry cleared.
    fn deactivate(&self, irqd: &IrqData) {
        if let Some((v, _)) = hw::activation(self, irqd) {
            if v.posted_vcpu.swap(false, Relaxed) {
                pr_warn!("irq {}: deactivated while posted to a vCPU\n", irqd.irq());
            }
            if v.unit.write(v.index(), Irte::ZERO).is_err() {
                pr_err!("irq {}: IRTE {:#x} not cleared\n", irqd.irq(), v.index());
            }
        }
    }
}

#[cfg(CONFIG_INTEL_IRQ_REMAP_RUST_KUNIT_TEST = "y")]
#[kunit_tests(rust_vtd_ir_domain)]
mod tests {
    use super::*;

    fn req(
        dev_id: u16,
        aliases: u32,
        bus_matches: u32,
        last_alias: u16,
        last_bus: u8,
    ) -> PciRequester {
        PciRequester {
            dev_id,
            bus: (dev_id >> 8) as u8,
            aliases,
            bus_matches,
            last_alias,
            last_alias_dev_bus: last_bus,
        }
    }

    #[test]
    fn source_of_a_device_is_its_requester_id() {
        // One alias, the device itself (bus 0, devfn 0x10).
        let r = req(0x0010, 1, 1, 0x0010, 0);
        assert_eq!(pci_source(&r), SourceId::RequesterId { sid: 0x0010, sq: 0 });
    }

    #[test]
    fn source_behind_a_pcie_to_pci_bridge_is_a_bus_range() {
        // Device 05:01.0 behind a PCIe-to-PCI bridge on bus 2, whose alias for its secondary
        // bus is 05:00.0: the range from the alias's bus to the device's.
        let r = req(0x0508, 3, 1, 0x0500, 2);
        assert_eq!(pci_source(&r), SourceId::Bus { start: 5, end: 5 });
    }

    #[test]
    fn source_of_proxy_ids_on_one_bus_is_that_bus() {
        // Two aliases on bus 3, the device's own.
        let r = req(0x0300, 2, 2, 0x0308, 3);
        assert_eq!(pci_source(&r), SourceId::Bus { start: 3, end: 3 });
    }

    #[test]
    fn source_of_a_topology_alias_is_the_alias() {
        // The alias (bus 1) found on a device of bus 1, the device on bus 4.
        let r = req(0x0400, 2, 1, 0x0110, 1);
        assert_eq!(pci_source(&r), SourceId::RequesterId { sid: 0x0110, sq: 0 });
    }

    #[test]
    fn hwirq_names_block_and_sub_handle() -> Result {
        let b = IrteBlock::new(0x40, 3)?;
        let h = hwirq_of(b, 5);
        assert_eq!(h, 0x40_0305);
        assert_eq!(block_of(h)?, (b, 5));
        // A sub-handle past the block, a misaligned block, an index past the table.
        assert_eq!(block_of(0x40_0308), Err(EINVAL));
        assert_eq!(block_of(0x41_0300), Err(EINVAL));
        assert_eq!(block_of(1 << 32), Err(EINVAL));
        Ok(())
    }
}
