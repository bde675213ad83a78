// SPDX-License-Identifier: GPL-2.0

//! The ITS itself: probe, command queue, tables, the redistributors' LPIs and the collections,
//! the MSI parent domain and its chip (`its_probe_one()`, `its_init()`, `its_cpu_init()`,
//! `its_domain_ops`, `its_irq_chip`).
//!
//! One ITS with physical LPIs, on a GICv3 without virtual LPIs, whose redistributors and ITS
//! keep the inner-shareable, cacheable attributes asked: the shim leaves everything else to the
//! C ITS driver. Each CPU's collection is that CPU's number, as in C; an LPI's collection is
//! the CPU it targets.
//!
//! Locking: the command queue is a raw spinlock (commands are sent from `irq_chip` callbacks,
//! under the descriptor lock, and from CPU hotplug STARTING callbacks); the devices, their
//! ITTs and the LPI ranges are a mutex, taken in `msi_prepare`, `alloc` and `free`, which may
//! sleep. Nothing the ITS may still read is freed: the tables, the command queue and the LPI
//! tables live for the kernel's lifetime, an ITT is freed only after its device was unmapped
//! (MAPD V=0) and a SYNC completed.
//!
//! C source: [`drivers/irqchip/irq-gic-v3-its.c`](srctree/drivers/irqchip/irq-gic-v3-its.c).

use super::{
    cmd::{
        self,
        CmdQueue,
        Command,
        Itt,
        QueueRegs,
        Target, //
    },
    lpi::{
        Events,
        LpiRanges, //
    },
    rdist::{
        self,
        LpiTables, //
    },
    tables::{
        self,
        BaserReg,
        PageLimits,
        Shareability,
        Slot,
        TablePlan,
        TableType,
        Typer, //
    },
};
use crate::{
    Gic,
    GIC_IRQ_TYPE_LPI,
    POLL_DELAY,
    POLL_TRIES,
    ROOT, //
};
use kernel::{
    cpu::CpuId,
    cpumask::Cpumask,
    io::{
        io_project,
        poll::read_poll_timeout_atomic,
        Io, //
    },
    irq::{
        gic_v3::{
            self,
            ItsFrame,
            ItsNode,
            PhysMem, //
        },
        Allocator,
        Chip,
        ChipState,
        Domain,
        DomainOps,
        IrqData,
        IrqdState,
        MsiAllocInfo,
        MsiDoorbell,
        MsiMsg,
        SetAffinity,
        SetAffinityCtx, //
    },
    new_mutex, new_raw_spinlock,
    prelude::*,
    sync::{
        atomic::{
            Atomic,
            Relaxed, //
        },
        Arc,
        Mutex,
        RawSpinLock,
        SetOnce, //
    },
    time::delay::udelay,
};

/// `GITS_*` register offsets in the control frame.
mod gits {
    pub(super) const CTLR: usize = 0x0000;
    pub(super) const IIDR: usize = 0x0004;
    pub(super) const TYPER: usize = 0x0008;
    pub(super) const CBASER: usize = 0x0080;
    pub(super) const CWRITER: usize = 0x0088;
    pub(super) const CREADR: usize = 0x0090;
    pub(super) const BASER: usize = 0x0100;
    pub(super) const CTLR_ENABLE: u32 = 1 << 0;
    pub(super) const CTLR_QUIESCENT: u32 = 1 << 31;
    /// `GITS_CBASER`: Valid, inner write-back `RaWaWb`, inner shareable, size in 4 KiB pages
    /// minus one.
    pub(super) const CBASER_VALID: u64 = 1 << 63;
    pub(super) const CBASER_RAWAWB: u64 = 7 << 59;
    pub(super) const CBASER_INNER_SHAREABLE: u64 = 1 << 10;
    pub(super) const CBASER_SHAREABILITY: u64 = 3 << 10;
    /// `GITS_PIDR2`: ArchRev in bits 7:4, 3 (GICv3) or 4 (GICv4).
    pub(super) const PIDR2: usize = 0xffe8;
}

/// `GICR_*` register offsets in a redistributor's `RD_base` frame.
mod gicr {
    pub(super) const CTLR: usize = 0x0000;
    pub(super) const TYPER: usize = 0x0008;
    pub(super) const PROPBASER: usize = 0x0070;
    pub(super) const PENDBASER: usize = 0x0078;
    pub(super) const CTLR_ENABLE_LPIS: u32 = 1 << 0;
}

/// The Rust ITS's domain, set once by [`probe`].
static ITS: SetOnce<&'static Domain<'static, Its>> = SetOnce::new();

/// The command queue: its memory and where the next command goes.
struct Queue {
    mem: PhysMem,
    state: CmdQueue,
}

/// The queue's registers and memory, for [`CmdQueue::send`].
struct LiveQueue<'a> {
    mem: &'a PhysMem,
    io: ItsFrame,
}

impl QueueRegs for LiveQueue<'_> {
    fn write_slot(&mut self, slot: usize, cmd: &Command) -> Result {
        // The queue memory holds at least the queue's slots, 32 bytes each (both are
        // `QUEUE_BYTES`); the ITS reads the slot once `GITS_CWRITER` is written with `writeq()`,
        // whose barrier orders this write before it (`its_flush_cmd()`'s `dsb(ishst)` before
        // C's relaxed write).
        let q = self.mem.io_slice::<[u64; 4]>();
        io_project!(q, [try: slot]).copy_write(cmd.to_le());
        Ok(())
    }

    fn creadr(&mut self) -> u64 {
        self.io.relaxed().try_read64(gits::CREADR).unwrap_or(1)
    }

    fn set_cwriter(&mut self, val: u64) {
        let _ = self.io.try_write64(val, gits::CWRITER);
    }

    fn relax(&mut self) {
        udelay(POLL_DELAY);
    }
}

/// A `GITS_BASER<n>` of the live ITS.
struct Baser {
    io: ItsFrame,
    n: usize,
}

impl BaserReg for Baser {
    fn read(&mut self) -> u64 {
        self.io
            .relaxed()
            .try_read64(gits::BASER + 8 * self.n)
            .unwrap_or(0)
    }

    fn write_read(&mut self, val: u64) -> u64 {
        let _ = self.io.relaxed().try_write64(val, gits::BASER + 8 * self.n);
        self.read()
    }
}

/// A device the ITS translates for (`struct its_device`): its DeviceID, ITT and LPIs.
struct ItsDevice {
    id: u32,
    /// The Interrupt Translation Table, read by the ITS while the device is mapped.
    _itt: PhysMem,
    /// The first LPI: event `e` is LPI `lpi_base + e`.
    lpi_base: u32,
    /// The device's events (`nr_lpis`).
    events: Events<Arc<EventState>>,
    /// Seen again through another alias, or a proxy for devices behind a bridge: never torn
    /// down by `msi_teardown` (as C's `its_dev->shared`).
    shared: bool,
}

/// What the mutex protects: the devices, the second-level device-table pages, the LPI ranges.
struct Devices {
    list: KVec<ItsDevice>,
    /// The device table's second-level pages, kept for the kernel's lifetime (the ITS reads
    /// them for every device they map).
    lvl2: KVec<PhysMem>,
    lpis: LpiRanges,
}

/// The ITS: the host data of its domain (`struct its_node`).
#[pin_data]
pub(crate) struct Its {
    io: ItsFrame,
    typer: Typer,
    /// `GITS_TRANSLATER`, the MSI doorbell.
    doorbell: MsiDoorbell,
    #[pin]
    queue: RawSpinLock<Queue>,
    #[pin]
    devices: Mutex<Devices>,
    /// The device table (flat or first level), kept for the kernel's lifetime.
    dev_table: Option<(TablePlan, PhysMem)>,
    /// The other tables (collections, reserved types), kept for the kernel's lifetime.
    _tables: KVec<PhysMem>,
    /// The LPI property table, shared by every redistributor.
    prop: PhysMem,
    lpi_tables: LpiTables,
    /// The pending table of each possible CPU, by CPU number.
    pend: KVec<PhysMem>,
    /// The collection target of each possible CPU (its redistributor), by CPU number.
    targets: KVec<Option<Target>>,
    /// Whether each CPU's collection is mapped (MAPC done): LPIs may target it.
    mapped: KVec<Atomic<bool>>,
    /// Whether this driver enabled each CPU's LPIs (with its tables).
    lpis_on: KVec<Atomic<bool>>,
    /// The configuration byte priority of every LPI.
    prio: u8,
    /// The root domain's specifiers are ACPI's (`<hwirq type>`), not the device tree's.
    acpi: bool,
}

impl Its {
    /// Sends `cmds`, then a SYNC to `sync`'s redistributor if given: one batch under the queue
    /// lock. Never sleeps.
    fn send(&self, cmds: &[Command], sync: Option<CpuId>) -> Result {
        let sync = match sync {
            Some(cpu) => Some(Command::sync(&self.typer, self.target(cpu)?)?),
            None => None,
        };
        let r = self.queue.with_irqsave(|q| {
            let mut regs = LiveQueue {
                mem: &q.mem,
                io: self.io,
            };
            q.state.send(&mut regs, cmds, sync)
        });
        if let Err(e) = r {
            let op = cmds.first().or(sync.as_ref()).map_or(0, Command::opcode);
            pr_err!("ITS: command {:#x} failed ({})\n", op, e.to_errno());
        }
        r
    }

    /// The collection target of `cpu`'s redistributor.
    fn target(&self, cpu: CpuId) -> Result<Target> {
        self.targets
            .get(cpu.as_u32() as usize)
            .copied()
            .flatten()
            .ok_or(EINVAL)
    }

    /// The collection (ICID) of `cpu`: its number, if the ITS has that many.
    fn collection(&self, cpu: CpuId) -> Result<u16> {
        let col = u16::try_from(cpu.as_u32()).map_err(|_| EINVAL)?;
        if u32::from(col) >= self.typer.collections() {
            return Err(EINVAL);
        }
        Ok(col)
    }

    /// Whether `cpu`'s collection is mapped.
    fn is_mapped(&self, cpu: CpuId) -> bool {
        self.mapped
            .get(cpu.as_u32() as usize)
            .is_some_and(|m| m.load(Relaxed))
    }

    /// The CPU an interrupt with affinity `mask` targets (`its_select_cpu()`, without its
    /// least-loaded choice): the first online CPU of the mask whose collection is mapped, else
    /// the first such online CPU (C's fallback for a mask without one), else `EINVAL`.
    fn select_cpu(&self, mask: &Cpumask) -> Result<CpuId> {
        let online = gic_v3::online_mask();
        gic_v3::cpus_in(mask)
            .find(|c| online.test(*c) && self.is_mapped(*c))
            .or_else(|| gic_v3::cpus_in(online).find(|c| self.is_mapped(*c)))
            .ok_or(EINVAL)
    }

    /// A CPU whose collection is mapped, for a SYNC that concerns no one event.
    fn any_mapped_cpu(&self) -> Option<CpuId> {
        gic_v3::cpus_in(gic_v3::online_mask()).find(|c| self.is_mapped(*c))
    }

    /// Writes LPI `lpi`'s configuration byte: the driver's priority, enabled or not.
    fn set_config(&self, lpi: u32, enabled: bool) {
        let off = (lpi - cmd::FIRST_LPI) as usize;
        let _ = self
            .prop
            .io()
            .try_write8(rdist::lpi_config(self.prio, enabled), off);
    }

    /// Enables LPIs on `cpu`'s redistributor with the property table and its pending table
    /// (`its_cpu_init_lpis()`): `EBUSY` if they already are (by this driver before the CPU went
    /// offline, or by someone else: [`Its::lpis_on`] tells), `EIO` if the redistributor does not
    /// keep the tables shareable (C would clean them to the point of coherency; this driver
    /// leaves such a GIC to C).
    fn cpu_init_lpis(&self, gic: &Gic, cpu: CpuId) -> Result {
        let r = gic.redist_of(cpu).ok_or(ENODEV)?;
        let rd = r.rd();
        let ctlr = rd.relaxed().try_read32(gicr::CTLR)?;
        if ctlr & gicr::CTLR_ENABLE_LPIS != 0 {
            return Err(EBUSY);
        }
        let pend = self.pend.get(cpu.as_u32() as usize).ok_or(ENODEV)?;
        // The pending table is all zeroes (PTZ) only before its first use: a redistributor that
        // lost its state (LPIs off again) has it as it left it.
        let zeroed = !self.lpis_on(cpu);
        set_lpi_tables(rd, &self.lpi_tables, self.prop.phys(), pend.phys(), zeroed)?;
        // The tables are written before LPIs are enabled (a non-relaxed write); the read back
        // makes sure the redistributor has seen it, as C's `dsb(sy)`.
        rd.try_write32(ctlr | gicr::CTLR_ENABLE_LPIS, gicr::CTLR)?;
        let _ = rd.try_read32(gicr::CTLR)?;
        if let Some(on) = self.lpis_on.get(cpu.as_u32() as usize) {
            on.store(true, Relaxed);
        }
        Ok(())
    }

    /// Whether this driver enabled `cpu`'s LPIs.
    fn lpis_on(&self, cpu: CpuId) -> bool {
        self.lpis_on
            .get(cpu.as_u32() as usize)
            .is_some_and(|m| m.load(Relaxed))
    }

    /// Maps `cpu`'s collection to its redistributor and has the ITS read the configuration of
    /// its LPIs (`its_cpu_init_collection()`: MAPC, INVALL, SYNC).
    fn cpu_init_collection(&self, cpu: CpuId) -> Result {
        let col = self.collection(cpu)?;
        let target = self.target(cpu)?;
        self.send(
            &[
                Command::mapc(&self.typer, col, Some(target))?,
                Command::invall(&self.typer, col)?,
            ],
            Some(cpu),
        )?;
        if let Some(m) = self.mapped.get(cpu.as_u32() as usize) {
            m.store(true, Relaxed);
        }
        Ok(())
    }

    /// Makes sure the device table holds `id`'s entry (`its_alloc_device_table()`): a
    /// second-level page allocated and published on first use. `EINVAL` for a DeviceID the
    /// table does not cover.
    fn ensure_device_entry(&self, devs: &mut Devices, id: u32) -> Result {
        let Some((plan, table)) = &self.dev_table else {
            // No device table (an ITS that keeps them itself): nothing to allocate.
            return Ok(());
        };
        match plan.slot(id)? {
            Slot::Flat => Ok(()),
            Slot::Level2 { index } => {
                let off = index * 8;
                if table.io().try_read64(off)? != 0 {
                    return Ok(());
                }
                let page = PhysMem::new(plan.psz as usize)?;
                let entry = plan.lvl1_entry(page.phys())?;
                devs.lvl2.push(page, GFP_KERNEL)?;
                // Published before the MAPD that makes the ITS read it (that command's
                // `GITS_CWRITER` write orders it).
                table.io().try_write64(entry.to_le(), off)
            }
        }
    }
}

/// One LPI: its device and event, and the CPU whose collection it is mapped to. Shared by the
/// chip (its chip data) and the device's event list (which `free` finds it by).
pub(crate) struct EventState {
    its: &'static Its,
    dev: u32,
    event: u32,
    /// The CPU the event is mapped to.
    cpu: Atomic<u32>,
}

impl EventState {
    fn cpu(&self) -> Option<CpuId> {
        CpuId::from_u32(self.cpu.load(Relaxed))
    }

    /// The LPI's configuration changed: INV, then SYNC on its redistributor.
    fn inv(&self) {
        if let Ok(c) = Command::inv(&self.its.typer, self.dev, self.event) {
            let _ = self.its.send(&[c], self.cpu());
        }
    }

    /// Makes the LPI pending (INT) or not (CLEAR): `its_irq_set_irqchip_state()`.
    fn set_pending(&self, val: bool) -> Result {
        let typer = &self.its.typer;
        let c = if val {
            Command::int(typer, self.dev, self.event)?
        } else {
            Command::clear(typer, self.dev, self.event)?
        };
        self.its.send(&[c], self.cpu())
    }
}

/// The chip data of an LPI: its [`EventState`], which the device's event list shares.
pub(crate) struct EventRef {
    ev: Arc<EventState>,
}

impl core::ops::Deref for EventRef {
    type Target = EventState;

    fn deref(&self) -> &EventState {
        &self.ev
    }
}

/// The ITS's chip (`its_irq_chip`): the LPI's configuration byte for masking, MOVI for
/// affinity, `GITS_TRANSLATER` and the EventID as the message, INT and CLEAR for its pending
/// state; the EOI is the GIC's.
struct ItsChip;

#[vtable]
impl Chip for ItsChip {
    type Data = EventRef;
    const NAME: &'static CStr = c"ITS-RS";
    const EOI_PARENT: bool = true;

    fn mask(ev: &EventRef, d: &IrqData) {
        ev.its.set_config(d.hwirq() as u32, false);
        ev.inv();
    }

    fn unmask(ev: &EventRef, d: &IrqData) {
        ev.its.set_config(d.hwirq() as u32, true);
        ev.inv();
    }

    fn set_affinity(
        ev: &EventRef,
        d: &SetAffinityCtx<'_>,
        mask: &Cpumask,
        _force: bool,
    ) -> Result<SetAffinity> {
        let cpu = ev.its.select_cpu(mask)?;
        if ev.cpu() != Some(cpu) {
            let col = ev.its.collection(cpu)?;
            let movi = Command::movi(&ev.its.typer, ev.dev, ev.event, col)?;
            ev.its.send(&[movi], Some(cpu))?;
            ev.cpu.store(cpu.as_u32(), Relaxed);
        }
        d.update_effective_affinity(gic_v3::cpumask_of(cpu));
        // The message does not change: nothing for the MSI level above to rewrite.
        Ok(SetAffinity::Done)
    }

    fn compose_msi_msg(ev: &EventRef, d: &IrqData) -> Result<MsiMsg> {
        Ok(ev.its.doorbell.msg(d, ev.event))
    }

    fn retrigger(ev: &EventRef, _d: &IrqData) -> bool {
        ev.set_pending(true).is_ok()
    }

    fn set_irqchip_state(ev: &EventRef, _d: &IrqData, which: ChipState, val: bool) -> Result {
        match which {
            ChipState::Pending => ev.set_pending(val),
            _ => Err(EINVAL),
        }
    }
}

#[vtable]
impl DomainOps for Its {
    /// `its_msi_prepare()`: the device of DeviceID `scratchpad[0]`, with an ITT for `nvec`
    /// events, LPIs for them, and MAPD; or the one an alias already made.
    fn msi_prepare(&self, nvec: u32, info: &MsiAllocInfo) -> Result {
        let id = device_id(info)?;
        let mut devs = self.devices.lock();
        if let Some(d) = devs.list.iter_mut().find(|d| d.id == id) {
            // Seen through another alias: the ITT stays.
            d.shared = true;
            return Ok(());
        }
        let (events, bytes) = Itt::layout(&self.typer, nvec)?;
        self.ensure_device_entry(&mut devs, id)?;
        let (lpi_base, nr_lpis) = devs.lpis.alloc_up_to(nvec)?;
        let made = (|| {
            let itt = PhysMem::new(bytes)?;
            let slots = Events::new(nr_lpis as usize)?;
            let mapd = Command::mapd(
                &self.typer,
                id,
                Some(Itt {
                    pa: itt.phys(),
                    events,
                }),
            )?;
            devs.list.reserve(1, GFP_KERNEL)?;
            if let Err(e) = self.send(&[mapd], None) {
                // The MAPD may have been posted and run later: the ITS may read the ITT.
                core::mem::forget(itt);
                return Err(e);
            }
            Ok(ItsDevice {
                id,
                _itt: itt,
                lpi_base,
                events: slots,
                shared: info.is_proxy(),
            })
        })();
        match made {
            Ok(dev) => {
                // Within the capacity reserved.
                devs.list.push(dev, GFP_KERNEL)?;
                Ok(())
            }
            Err(e) => {
                let _ = devs.lpis.free(lpi_base, nr_lpis);
                Err(e)
            }
        }
    }

    /// `its_msi_teardown()`: unmaps the device (MAPD V=0, SYNC) once its last event is gone,
    /// then frees its ITT and LPIs.
    fn msi_teardown(&self, info: &MsiAllocInfo) {
        let Ok(id) = device_id(info) else {
            return;
        };
        let mut devs = self.devices.lock();
        let Some(i) = devs.list.iter().position(|d| d.id == id) else {
            return;
        };
        if devs.list[i].shared || !devs.list[i].events.all_free() {
            return;
        }
        let unmapped = Command::mapd(&self.typer, id, None)
            .and_then(|c| self.send(&[c], self.any_mapped_cpu()));
        let Ok(dev) = devs.list.remove(i) else {
            return;
        };
        if unmapped.is_ok() {
            let _ = devs.lpis.free(dev.lpi_base, dev.events.len() as u32);
        } else {
            // The ITS may still read the ITT: leak it rather than free it under the ITS.
            pr_err!("ITS: device {:#x} not unmapped, its ITT leaked\n", id);
            core::mem::forget(dev);
        }
    }

    /// `its_irq_domain_alloc()` and the MAPTI of `its_irq_domain_activate()`: a naturally
    /// aligned block of the device's events, their LPIs allocated at the GIC, each mapped
    /// (MAPTI) to an online CPU's collection; `set_affinity` moves it where it belongs.
    fn alloc_info(
        &self,
        alloc: &Allocator<'_, Self>,
        virq: u32,
        nr: u32,
        info: &MsiAllocInfo,
    ) -> Result {
        let id = device_id(info)?;
        let its: &'static Its = ITS.as_ref().ok_or(ENODEV)?.data();
        if !core::ptr::eq(its, self) {
            return Err(EINVAL);
        }
        let cpu = self.select_cpu(gic_v3::online_mask())?;
        let col = self.collection(cpu)?;
        info.iommu_prepare(self.doorbell)?;
        let mut devs = self.devices.lock();
        let dev = devs.list.iter_mut().find(|d| d.id == id).ok_or(EINVAL)?;
        let first = dev.events.find_block(nr)?;
        // The events taken so far; their MAPTIs go in one batch, with one SYNC.
        let mut done = 0;
        let r = (|| {
            // A vector alone (MSI-X allocates them one by one) needs no list.
            let mut single = None;
            let mut maptis = KVec::new();
            if nr > 1 {
                maptis.reserve(nr as usize, GFP_KERNEL)?;
            }
            for i in 0..nr {
                let event = first as u32 + i;
                let hwirq = dev.lpi_base + event;
                let state = Arc::new(
                    EventState {
                        its,
                        dev: id,
                        event,
                        cpu: Atomic::new(cpu.as_u32()),
                    },
                    GFP_KERNEL,
                )?;
                // The LPI at the root, edge-triggered (`its_irq_gic_domain_alloc()`).
                if self.acpi {
                    alloc.alloc_parent(virq + i, 1, &[hwirq, 1])?;
                } else {
                    alloc.alloc_parent(virq + i, 1, &[GIC_IRQ_TYPE_LPI, hwirq, 1])?;
                }
                alloc.set_chip_boxed::<ItsChip>(virq + i, hwirq as usize, {
                    let ev = state.clone();
                    try_init!(EventRef { ev }? Error)
                })?;
                alloc.set_states(
                    virq + i,
                    &[
                        IrqdState::SingleTarget,
                        IrqdState::AffinityOnActivate,
                        IrqdState::ResendWhenInProgress,
                    ],
                )?;
                let mapti = Command::mapti(&self.typer, id, event, hwirq, col)?;
                if nr == 1 {
                    single = Some(mapti);
                } else {
                    // Within the capacity reserved.
                    maptis.push(mapti, GFP_KERNEL)?;
                }
                dev.events.take(event as usize, state)?;
                done += 1;
            }
            // The mappings complete (SYNC) before the device may be told its messages: an MSI
            // without per-vector masking can fire as soon as it is enabled, before any unmask.
            let batch = if nr == 1 {
                single.as_slice()
            } else {
                &maptis[..]
            };
            self.send(batch, Some(cpu))
        })();
        if r.is_err() {
            // What genirq leaves to the failing level: the events taken, whose MAPTIs may have
            // been posted and run. An event whose DISCARD fails too stays taken, never reused.
            for e in first..first + done {
                if let Some(ev) = dev.events.remove(e) {
                    if self.discard(&ev).is_err() {
                        dev.events.put_back(e, ev);
                    } else {
                        dev.events.release(e);
                    }
                }
            }
            return r;
        }
        // The rest of the block is held until its first event is freed (found by `find_block`,
        // its events taken: this cannot fail, and the mappings stand if it did).
        if dev.events.hold_block(first, nr).is_err() {
            pr_warn!("ITS: device {:#x}: events {}+{} not held\n", id, first, nr);
        }
        Ok(())
    }

    /// `its_irq_domain_free()` and the DISCARD of `its_irq_domain_deactivate()`.
    fn free(&self, alloc: &Allocator<'_, Self>, virq: u32, nr: u32) {
        {
            let mut devs = self.devices.lock();
            for v in virq..virq.saturating_add(nr) {
                let Ok(hwirq) = alloc.hwirq(v) else {
                    continue;
                };
                let hwirq = hwirq as u32;
                let Some((dev, e)) = devs.list.iter_mut().find_map(|d| {
                    let e = hwirq.checked_sub(d.lpi_base)? as usize;
                    (e < d.events.len()).then_some((d, e))
                }) else {
                    continue;
                };
                if let Some(ev) = dev.events.remove(e) {
                    // Still mapped if the DISCARD failed: the event stays taken, never reused
                    // (and the device is never unmapped, its ITT never freed).
                    if self.discard(&ev).is_err() {
                        dev.events.put_back(e, ev);
                        continue;
                    }
                }
                // With the events held for the block it began, if it did (genirq frees a
                // block's interrupts together, in order, the device's MSIs disabled).
                dev.events.release(e);
            }
        }
        let _ = alloc.free_boxed(virq, nr);
    }
}

impl Its {
    /// Unmaps an event (DISCARD, SYNC): it raises its LPI no more. An error if the ITS did not
    /// complete it: the event may still be mapped.
    fn discard(&self, ev: &EventState) -> Result {
        let c = Command::discard(&self.typer, ev.dev, ev.event)?;
        self.send(&[c], ev.cpu())
    }
}

/// The DeviceID the PCI/MSI or platform-MSI `msi_prepare` left in `scratchpad[0]`.
fn device_id(info: &MsiAllocInfo) -> Result<u32> {
    u32::try_from(info.scratchpad(0).ok_or(EINVAL)?).map_err(|_| EINVAL)
}

/// Writes `GICR_PROPBASER` and `GICR_PENDBASER` of the redistributor `rd` (whose LPIs are
/// off) for the property table at `prop` and the pending table at `pend`, known to be all
/// zeroes if `zeroed` (PTZ), and checks the redistributor keeps them shareable: `EIO`
/// otherwise. Reversible while LPIs are off: the probe tries the boot CPU's before anything
/// else.
fn set_lpi_tables(rd: gic_v3::Frame, t: &LpiTables, prop: u64, pend: u64, zeroed: bool) -> Result {
    let val = t.propbaser(prop)?;
    rd.relaxed().try_write64(val, gicr::PROPBASER)?;
    let back = rd.relaxed().try_read64(gicr::PROPBASER)?;
    if rdist::settle_propbaser(val, back).clean {
        return Err(EIO);
    }
    let val = t.pendbaser(pend, zeroed)?;
    rd.relaxed().try_write64(val, gicr::PENDBASER)?;
    let back = rd.relaxed().try_read64(gicr::PENDBASER)?;
    if rdist::settle_pendbaser(val, back).clean {
        return Err(EIO);
    }
    Ok(())
}

/// Disables the ITS and waits until it is quiescent (`its_force_quiescent()`): how C must find
/// it again if this driver gives up, and how the tables may be set.
fn quiesce(io: ItsFrame) -> Result {
    let ctlr = io.relaxed().try_read32(gits::CTLR)?;
    if ctlr & gits::CTLR_ENABLE != 0 {
        io.relaxed()
            .try_write32(ctlr & !gits::CTLR_ENABLE, gits::CTLR)?;
    }
    read_poll_timeout_atomic(
        || io.relaxed().try_read32(gits::CTLR),
        |c| c & gits::CTLR_QUIESCENT != 0,
        POLL_DELAY,
        POLL_TRIES,
    )
    .map(|_| ())
}

/// The probe: [`gic_v3::Driver::its_probe`]. Everything that may fail happens before the ITS
/// and the boot CPU's LPIs are enabled, and leaves the ITS disabled, its queue and tables
/// unset, for the C driver; the domain is created last before those.
pub(crate) fn probe(node: ItsNode<'_>) -> Result {
    let domain = ROOT.as_ref().ok_or(ENODEV)?;
    let gic = domain.data();
    let io = node.io();
    // `its_probe_one()`: a GICv3 or GICv4 ITS, or nothing this driver may program.
    let arch = (io.relaxed().try_read32(gits::PIDR2)? >> 4) & 0xf;
    if arch != 3 && arch != 4 {
        pr_warn!(
            "Rust ITS: no GICv3/v4 ITS there (GITS_PIDR2.ArchRev {})\n",
            arch
        );
        return Err(ENODEV);
    }
    let typer = Typer::from_raw(io.relaxed().try_read64(gits::TYPER)?)?;
    if typer.is_virtual() {
        pr_info!("Rust ITS: GICv4 virtual LPIs are C's; using the C ITS driver\n");
        return Err(EOPNOTSUPP);
    }
    // LPIs a previous kernel (kexec) or the firmware enabled keep their tables, which C finds
    // and reuses (`gic_check_reserved_range()`); this driver does not.
    for r in gic.redists.iter().flatten() {
        if r.rd().relaxed().try_read32(gicr::CTLR)? & gicr::CTLR_ENABLE_LPIS != 0 {
            pr_info!("Rust ITS: LPIs on from a previous kernel; using the C ITS driver\n");
            return Err(EOPNOTSUPP);
        }
    }
    quiesce(io)?;
    let r = setup(gic, node, io, typer);
    if r.is_err() {
        // Back to how C finds an ITS: disabled, no queue, no tables, the boot CPU's LPI tables
        // unset. The memory `setup` allocated is already freed: neither the disabled ITS nor a
        // redistributor with LPIs off reads it.
        let _ = io.relaxed().try_write64(0, gits::CBASER);
        for n in 0..8 {
            let _ = io.relaxed().try_write64(0, gits::BASER + 8 * n);
        }
        if let Some(r) = gic.redist_of(CpuId::current()) {
            let _ = r.rd().relaxed().try_write64(0, gicr::PROPBASER);
            let _ = r.rd().relaxed().try_write64(0, gicr::PENDBASER);
        }
    }
    r
}

/// The probe's steps after the checks: see [`probe`].
fn setup(gic: &Gic, node: ItsNode<'_>, io: ItsFrame, typer: Typer) -> Result {
    let domain = ROOT.as_ref().ok_or(ENODEV)?;
    let boot = CpuId::current();
    // The command queue (`GITS_CBASER`): inner shareable, write-back, or C.
    let qmem = PhysMem::new(cmd::QUEUE_BYTES)?;
    let cbaser = qmem.phys()
        | gits::CBASER_VALID
        | gits::CBASER_RAWAWB
        | gits::CBASER_INNER_SHAREABLE
        | (cmd::QUEUE_BYTES as u64 / 4096 - 1);
    io.relaxed().try_write64(cbaser, gits::CBASER)?;
    let back = io.relaxed().try_read64(gits::CBASER)?;
    if back & gits::CBASER_SHAREABILITY != gits::CBASER_INNER_SHAREABLE {
        pr_info!("Rust ITS: command queue not shareable; using the C ITS driver\n");
        return Err(EOPNOTSUPP);
    }
    io.relaxed().try_write64(0, gits::CWRITER)?;

    // The tables (`its_alloc_tables()`).
    let limits = PageLimits {
        page_size: kernel::page::PAGE_SIZE,
        max_order: kernel::bindings::MAX_PAGE_ORDER,
    };
    let mut dev_table = None;
    let mut others = KVec::new();
    for n in 0..8 {
        let mut reg = Baser { io, n };
        let Some(plan) = tables::plan(&mut reg, &typer, limits)? else {
            continue;
        };
        let mem = PhysMem::new(plan.bytes as usize)?;
        let val = tables::commit(
            &mut reg,
            &plan,
            mem.phys(),
            tables::CACHE_RAWAWB,
            Shareability::Inner,
        )?;
        if (val >> 10) & 3 == 0 {
            pr_info!("Rust ITS: tables not shareable; using the C ITS driver\n");
            return Err(EOPNOTSUPP);
        }
        if plan.kind == TableType::Device {
            dev_table = Some((plan, mem));
        } else {
            others.push(mem, GFP_KERNEL)?;
        }
    }

    // The redistributors' tables (`allocate_lpi_tables()`), for every possible CPU.
    let lpi_tables = LpiTables::new(gic.id_bits)?;
    let prop = PhysMem::new(lpi_tables.prop_bytes())?;
    let cfg = rdist::lpi_config(gic.prio, false);
    for off in 0..prop.len() {
        prop.io().try_write8(cfg, off)?;
    }
    let mut pend = KVec::new();
    let mut targets = KVec::new();
    let mut mapped = KVec::new();
    let mut lpis_on = KVec::new();
    for (cpu, r) in gic.redists.iter().enumerate() {
        pend.push(PhysMem::new(lpi_tables.pend_bytes())?, GFP_KERNEL)?;
        let target = match r {
            Some(r) if typer.pta() => Some(Target::Address(r.phys())),
            Some(r) => {
                let rt = r.rd().relaxed().try_read64(gicr::TYPER)?;
                Some(Target::ProcessorNumber(((rt >> 8) & 0xffff) as u16))
            }
            None => None,
        };
        if target.is_some() && cpu as u32 >= typer.collections() {
            pr_info!("Rust ITS: fewer collections than CPUs; using the C ITS driver\n");
            return Err(EOPNOTSUPP);
        }
        targets.push(target, GFP_KERNEL)?;
        mapped.push(Atomic::new(false), GFP_KERNEL)?;
        lpis_on.push(Atomic::new(false), GFP_KERNEL)?;
    }
    // The boot CPU's redistributor must keep the tables shareable: tried now, while it can be
    // undone (LPIs off), rather than found out with the ITS enabled.
    let boot_rd = gic.redist_of(boot).ok_or(ENODEV)?.rd();
    let boot_pend = pend.get(boot.as_u32() as usize).ok_or(ENODEV)?;
    if let Err(e) = set_lpi_tables(boot_rd, &lpi_tables, prop.phys(), boot_pend.phys(), true) {
        if e == EIO {
            pr_info!("Rust ITS: LPI tables not shareable; using the C ITS driver\n");
            return Err(EOPNOTSUPP);
        }
        return Err(e);
    }
    let lpis = LpiRanges::new(lpi_tables.bits())?;

    let doorbell = node.doorbell();
    let data = try_pin_init!(Its {
        io,
        typer,
        doorbell,
        queue <- new_raw_spinlock!(Queue {
            mem: qmem,
            state: CmdQueue::new(cmd::QUEUE_BYTES)?,
        }),
        devices <- new_mutex!(Devices {
            list: KVec::new(),
            lvl2: KVec::new(),
            lpis,
        }),
        dev_table,
        _tables: others,
        prop,
        lpi_tables,
        pend,
        targets,
        mapped,
        lpis_on,
        prio: gic.prio,
        acpi: gic.firmware == gic_v3::Firmware::Acpi,
    }? Error);
    let phys = node.phys();
    // The domain: the last step that may fail before the GIC is changed for good.
    let hwirq_max = 1usize << lpi_tables.bits();
    let its_domain = node.create_domain(domain, hwirq_max, data)?;
    let its = its_domain.data();

    // From here on, errors are said, not returned: the domain exists for good.
    let ctlr = io.relaxed().try_read32(gits::CTLR).unwrap_or(0);
    if io
        .try_write32(ctlr | gits::CTLR_ENABLE, gits::CTLR)
        .is_err()
    {
        pr_err!("ITS: not enabled\n");
    }
    if !ITS.populate(its_domain) {
        pr_err!("ITS: a second ITS domain\n");
    }
    // What the redistributors write once their LPIs are on stays out of a kexec'd kernel's
    // hands (`its_lpi_memreserve_init()`).
    for t in Iterator::chain(core::iter::once(&its.prop), its.pend.iter()) {
        if let Err(e) = t.reserve_persistent() {
            pr_warn!(
                "ITS: LPI table @{:#x} not reserved ({})\n",
                t.phys(),
                e.to_errno()
            );
        }
    }
    if let Err(e) = its
        .cpu_init_lpis(gic, boot)
        .and_then(|()| its.cpu_init_collection(boot))
    {
        pr_err!("CPU{}: LPIs not set up ({})\n", boot.as_u32(), e.to_errno());
    }
    let iidr = io.relaxed().try_read32(gits::IIDR).unwrap_or(0);
    pr_info!(
        "ITS @{:#x}: Rust ITS, IIDR {:#x}, {} DeviceID bits, {} EventID bits, {} collections, {} LPI bits\n",
        phys,
        iidr,
        typer.devbits(),
        typer.idbits(),
        typer.collections(),
        lpi_tables.bits()
    );
    Ok(())
}

/// The STARTING part of `cpu` (`its_cpu_init()`): its redistributor's LPIs and its collection,
/// if the Rust ITS runs. On `cpu`, interrupts disabled.
pub(crate) fn starting_cpu(gic: &Gic, cpu: CpuId) {
    let Some(d) = ITS.as_ref() else {
        return;
    };
    let its = d.data();
    match its.cpu_init_lpis(gic, cpu) {
        Ok(()) => {}
        // Back from a CPU offline: the redistributor kept this driver's tables.
        Err(e) if e == EBUSY && its.lpis_on(cpu) => {}
        Err(e) if e == EBUSY => {
            // Someone else's tables, which the GIC keeps writing: no LPI goes there.
            pr_err!(
                "CPU{}: LPIs enabled with unknown tables, no LPIs
",
                cpu.as_u32()
            );
            return;
        }
        Err(e) => {
            pr_err!("CPU{}: LPIs not enabled ({})\n", cpu.as_u32(), e.to_errno());
            return;
        }
    }
    if let Err(e) = its.cpu_init_collection(cpu) {
        pr_err!(
            "CPU{}: collection not mapped ({})\n",
            cpu.as_u32(),
            e.to_errno()
        );
    }
}
