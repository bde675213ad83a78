// SPDX-License-Identifier: GPL-2.0

//! The hardware and C side of the Rust VT-d interrupt remapping domain
//! ([`irq_remapping_domain`](crate::irq_remapping_domain)): the only `unsafe` code of the
//! domain. The remapping table's entries (a 128-bit `cmpxchg16b` for posted ones, in an `asm!`
//! accessor) and the interrupt entry cache flush; the DMAR device scope of IO-APICs and HPETs,
//! which C parses; the per-interrupt data at the domain's level; and the entry points
//! `irq_remapping.c` calls to create and remove a unit's domain.
//!
//! C source: [`drivers/iommu/intel/irq_remapping.c`](srctree/drivers/iommu/intel/irq_remapping.c).

#[cfg(doc)]
use crate::irq_remapping_domain::Unit;
use crate::{
    irq_remapping_domain::{
        IrDomain,
        IrVector,
        HWIRQ_LIMIT, //
    },
    irq_remapping_entry::{
        ApicMode,
        Irte, //
    },
};
use core::{
    ffi::{
        c_int,
        c_void, //
    },
    ptr::NonNull,
};
use kernel::{
    bindings,
    error::to_result,
    irq::{
        AckCtx,
        Domain,
        ForeignDomain,
        FwSpec,
        IrqData,
        MsiParentOps,
        SetVcpuAffinityCtx,
        VcpuInfo,
        VectorCfg, //
    },
    prelude::*,
};

/// The remapping table of a VT-d unit, as the Rust interrupt remapping domain writes it
/// (`iommu->ir_table->base`): what `modify_irte()` and `clear_entries()` write, and the
/// invalidation of the interrupt entry cache that must follow (`qi_flush_iec()`).
///
/// Only `&mut` methods write: the unit keeps the table under its lock, as C keeps it under
/// `irq_2_ir_lock`.
///
/// # Invariants
///
/// `iommu` is a live `struct intel_iommu` with queued invalidation enabled, and `base` its
/// table of [`TABLE_ENTRIES`](crate::irq_remapping_table::TABLE_ENTRIES) 16-byte entries,
/// 16-byte aligned; both outlive `self`: C frees them only once the unit's domain is removed
/// by `rust_intel_ir_domain_remove()`, which drops `self` first ([`Unit::detach`]). `cx16` is
/// true only if the CPUs have `cmpxchg16b`.
pub(crate) struct IrTable {
    iommu: NonNull<bindings::intel_iommu>,
    base: NonNull<u64>,
    cx16: bool,
}

// SAFETY: The table and the unit are not tied to a thread; writes take `&mut self`.
unsafe impl Send for IrTable {}

impl IrTable {
    /// The entry at `index`, its two quadwords.
    fn slot(&self, index: u16) -> (*mut u64, *mut u64) {
        // SAFETY: `index < TABLE_ENTRIES`, so both quadwords are inside the table (invariant).
        unsafe {
            let low = self.base.as_ptr().add(2 * usize::from(index));
            (low, low.add(1))
        }
    }

    /// Reads entry `index`.
    pub(crate) fn read(&self, index: u16) -> Irte {
        let (low, high) = self.slot(index);
        // SAFETY: Inside the table (`slot`); the IOMMU only reads it, the CPUs write it under the
        // unit's lock, so the reads are volatile as C's `READ_ONCE()`.
        unsafe {
            Irte::from_raw(
                core::ptr::read_volatile(low),
                core::ptr::read_volatile(high),
            )
        }
    }

    /// Writes entry `index` as `modify_irte()` does: with one 128-bit `cmpxchg16b` if the old
    /// or the new entry is posted (its descriptor address spans both quadwords), else one
    /// quadword at a time: the low one (present bit, vector, destination) first, but the high
    /// one (the source-id check) first when the entry becomes present, so that it is never
    /// present without its check; then writes it back from the CPU's caches if the unit does
    /// not snoop them. The caller then invalidates it ([`IrTable::flush_iec`]).
    ///
    /// Errors: `EOPNOTSUPP` for a posted entry without `cmpxchg16b` (posting needs it), `EIO`
    /// if the entry changed under the update (nothing else writes it).
    pub(crate) fn write(&mut self, index: u16, e: &Irte) -> Result {
        let old = self.read(index);
        let (low, high) = self.slot(index);
        if old.is_posted() || e.is_posted() {
            if !self.cx16 {
                return Err(EOPNOTSUPP);
            }
            // SAFETY: `low` is a 16-byte aligned entry of the table (invariant); the CPU has
            // `cmpxchg16b` (checked).
            let seen = unsafe { cmpxchg16b(low, old.as_u128(), e.as_u128()) };
            if seen != old.as_u128() {
                return Err(EIO);
            }
        } else if e.is_present() && !old.is_present() {
            // SAFETY: Inside the table (`slot`); the IOMMU reads each quadword atomically.
            unsafe {
                core::ptr::write_volatile(high, e.high());
                core::ptr::write_volatile(low, e.low());
            }
        } else {
            // SAFETY: As above.
            unsafe {
                core::ptr::write_volatile(low, e.low());
                core::ptr::write_volatile(high, e.high());
            }
        }
        // SAFETY: `self.iommu` is live (invariant); `low` is the entry just written.
        unsafe { bindings::intel_ir_flush_irte(self.iommu.as_ptr(), low.cast()) };
        Ok(())
    }

    /// Invalidates the interrupt entry cache with the descriptor `qw0` (`qi_flush_iec()`),
    /// waiting for the unit to complete it: after this, no interrupt is remapped through the
    /// entries' old contents.
    ///
    /// Errors: the queued invalidation's (`qi_submit_sync()`).
    pub(crate) fn flush_iec(&mut self, qw0: u64) -> Result {
        // SAFETY: `self.iommu` is live with queued invalidation enabled (invariant).
        to_result(unsafe { bindings::intel_ir_qi_flush_iec(self.iommu.as_ptr(), qw0) })
    }
}

/// Atomically replaces the 16 bytes at `ptr` with `new` if they hold `old`; returns what they
/// held (`try_cmpxchg128()`).
///
/// # Safety
///
/// `ptr` is valid for reads and writes of 16 bytes, 16-byte aligned, and the CPU has
/// `cmpxchg16b`.
unsafe fn cmpxchg16b(ptr: *mut u64, old: u128, new: u128) -> u128 {
    let (mut lo, mut hi) = (old as u64, (old >> 64) as u64);
    // SAFETY: As the caller guarantees. `rbx`, which the instruction reads, is reserved by
    // LLVM: it is swapped in and restored around it.
    unsafe {
        core::arch::asm!(
            "xchg {new_lo}, rbx",
            "lock cmpxchg16b xmmword ptr [{ptr}]",
            "mov rbx, {new_lo}",
            ptr = in(reg) ptr,
            new_lo = inout(reg) new as u64 => _,
            inout("rax") lo,
            inout("rdx") hi,
            in("rcx") (new >> 64) as u64,
            options(nostack),
        )
    };
    u128::from(hi) << 64 | u128::from(lo)
}

/// The identity of a VT-d unit, to tell which IO-APICs and HPETs it remaps.
///
/// # Invariants
///
/// `self.0` is a `struct intel_iommu` that outlives `self` (as [`IrTable`]'s).
pub(crate) struct UnitId(NonNull<bindings::intel_iommu>);

// SAFETY: Only compared, never dereferenced.
unsafe impl Send for UnitId {}
// SAFETY: As above.
unsafe impl Sync for UnitId {}

impl UnitId {
    /// Whether the IO-APIC or HPET of `fwspec` is in this unit's device scope
    /// (`intel_irq_remapping_select()`).
    ///
    /// Process context.
    pub(crate) fn serves(&self, fwspec: &FwSpec) -> bool {
        // SAFETY: `fwspec` is a valid specifier; the C function reads it and the DMAR scope
        // tables, filled at boot.
        let unit = unsafe { bindings::intel_ir_fwspec_iommu(fwspec.as_raw().cast_mut()) };
        core::ptr::eq(unit, self.0.as_ptr())
    }
}

/// The source-id of IO-APIC `id` in the DMAR device scope (`set_ioapic_sid()`), if it has one.
///
/// Process context.
pub(crate) fn ioapic_sid(id: u32) -> Option<u16> {
    let id = i32::try_from(id).ok()?;
    // SAFETY: Reads the DMAR scope tables, filled at boot.
    u16::try_from(unsafe { bindings::intel_ir_ioapic_sid(id) }).ok()
}

/// The source-id of HPET block `id` in the DMAR device scope (`set_hpet_sid()`), if it has one.
///
/// Process context.
pub(crate) fn hpet_sid(id: u32) -> Option<u16> {
    let id = u8::try_from(id).ok()?;
    // SAFETY: As in `ioapic_sid`.
    u16::try_from(unsafe { bindings::intel_ir_hpet_sid(id) }).ok()
}

/// The per-interrupt data of `irqd`, a level of `domain`'s interrupts, and the routing the
/// vector domain gives it: the [`IrVector`] that [`IrDomain`]'s `alloc_info` installed as its
/// chip data, or `None` before that, once the interrupt is torn down, or for a level of another
/// domain.
///
/// For the domain's `activate` and `deactivate` (its two callers), which genirq calls on the
/// domain's own level of an allocated interrupt, and does not run concurrently with freeing it:
/// this crate reaches the domain's levels only there (`irqd` is what genirq passed), so the
/// interrupt's hierarchy and its chip data outlive the borrow.
pub(crate) fn activation<'a>(
    domain: &IrDomain,
    irqd: &'a IrqData,
) -> Option<(&'a IrVector, Option<VectorCfg>)> {
    // SAFETY: `irqd` is valid (type invariant of `IrqData`).
    let (d, data) = unsafe {
        (
            core::ptr::read_volatile(&raw const (*irqd.as_raw()).domain),
            core::ptr::read_volatile(&raw const (*irqd.as_raw()).chip_data),
        )
    };
    // The domain is recorded once created, before any interrupt can be allocated in it (C
    // publishes it in `iommu->ir_domain` after the creation returns).
    if d.is_null() || d != domain.raw() {
        return None;
    }
    // SAFETY: At `domain`'s level, the chip data is NULL or an `IrVector` that `alloc_info`
    // installed with `Allocator::set_chip_boxed` (the only chip data this level gets: type
    // invariant of `IrDomain`), released only after the level is reset when the interrupt is
    // freed, which genirq does not do during the `activate` or `deactivate` call `irqd` is
    // borrowed for.
    let v = unsafe { data.cast::<IrVector>().as_ref() }?;
    // SAFETY: As above: in the domain's `activate` or `deactivate` of the interrupt.
    let cfg = unsafe { VectorCfg::of(irqd) };
    Some((v, cfg))
}

/// The `ack` of the remapping chip INTEL-IR-RS (`apic_ack_irq()`): a pending deferred move,
/// then the local APIC's EOI. Its one caller is that chip's `ack`.
pub(crate) fn apic_ack(irqd: &AckCtx<'_>) {
    // SAFETY: Called only as the `irq_ack` of INTEL-IR-RS, the remapping level of PCI/MSI
    // interrupts (whose flows are the edge flows, `rust_handle_edge_irq()` and
    // `handle_edge_irq()`), of IO-APIC lines (`handle_edge_irq()`; `handle_fasteoi_irq()`
    // never acks, `ioapic_ir_ack_level()` EOIs) and of HPET comparators (`handle_edge_irq()`):
    // flows that call `irq_ack` with the descriptor lock held, as `irq_move_irq()` needs.
    unsafe { irqd.apic_ack() }
}

/// What C holds for a unit whose domain is Rust's (`iommu->ir_rust`): the domain, until it is
/// removed.
struct UnitHandle {
    domain: Option<Domain<'static, IrDomain>>,
}

/// Creates the Rust interrupt remapping domain of VT-d unit `iommu` (`intel_setup_irq_remapping()`,
/// instead of `msi_create_parent_irq_domain()`), below the x86 vector domain, on `fwnode` with
/// the MSI parent operations `ops`; stores it in `*domain` and returns the unit (for
/// [`rust_intel_ir_domain_remove`]), or NULL on an error, said in the log.
///
/// # Safety
///
/// `iommu` is a live unit with queued invalidation enabled (or enabled before the first
/// interrupt is allocated), `table` its remapping table, and both are freed only after
/// [`rust_intel_ir_domain_remove`] succeeded; `fwnode` is valid until then, and no other domain
/// uses it; [`rust_intel_ir_domain_remove`] is called only as its safety section says; `ops` is an immutable `msi_parent_ops` of the DMAR bus; `cx16` says whether the
/// CPUs have `cmpxchg16b`; `domain` is valid for a write.
#[no_mangle]
pub(crate) unsafe extern "C" fn rust_intel_ir_domain_create(
    iommu: *mut bindings::intel_iommu,
    fwnode: *mut bindings::fwnode_handle,
    table: *mut c_void,
    ops: *const bindings::msi_parent_ops,
    ecap: u64,
    x2apic: bool,
    nosid: bool,
    cx16: bool,
    domain: *mut *mut bindings::irq_domain,
) -> *mut c_void {
    let (Some(iommu_nn), Some(base)) = (NonNull::new(iommu), NonNull::new(table.cast::<u64>()))
    else {
        return core::ptr::null_mut();
    };
    // `cmpxchg16b` faults on an entry that is not 16-byte aligned.
    if table as usize % 16 != 0 {
        pr_err!("remapping table not 16-byte aligned\n");
        return core::ptr::null_mut();
    }
    let Some(parent) = ForeignDomain::x86_vector() else {
        pr_err!("no x86 vector domain\n");
        return core::ptr::null_mut();
    };
    // INVARIANT: As the caller guarantees.
    let table = IrTable {
        iommu: iommu_nn,
        base,
        cx16,
    };
    // INVARIANT: As the caller guarantees.
    let id = UnitId(iommu_nn);
    let mode = if x2apic {
        ApicMode::X2Apic
    } else {
        ApicMode::XApic
    };
    let r = IrDomain::new(table, id, ecap, mode, nosid).and_then(|host| {
        // The box first: once the domain exists, nothing may fail (dropping it would remove it
        // again, and C would then create its own on the same fwnode).
        let slot = KBox::<UnitHandle>::new_uninit(GFP_KERNEL)?;
        // SAFETY: `ops` is immutable C data (the caller guarantees it).
        let ops = unsafe { MsiParentOps::from_raw(ops) };
        // SAFETY: `fwnode` outlives the domain and serves no other, and the domain is dropped
        // only by `rust_intel_ir_domain_remove()`, when no device of the unit is left to create
        // a child domain on it (the caller guarantees both).
        let d = unsafe {
            Domain::new_msi_parent_on(
                fwnode,
                parent,
                HWIRQ_LIMIT,
                ops,
                bindings::IRQ_DOMAIN_FLAG_ISOLATED_MSI,
                Ok::<_, Error>(host),
            )
        }?;
        let raw = d.as_raw();
        d.data().set_raw(raw);
        Ok((KBox::write(slot, UnitHandle { domain: Some(d) }), raw))
    });
    match r {
        Ok((h, raw)) => {
            // SAFETY: `domain` is valid for a write (the caller guarantees it).
            unsafe { *domain = raw };
            pr_info!(
                "Rust interrupt remapping domain, {} mode\n",
                if x2apic { "x2apic" } else { "xapic" }
            );
            KBox::into_raw(h).cast()
        }
        Err(e) => {
            pr_err!("Rust interrupt remapping domain: error {:?}\n", e);
            core::ptr::null_mut()
        }
    }
}

/// Removes a unit's Rust domain (`intel_teardown_irq_remapping()`) and detaches its table, which
/// C then frees with the fwnode. A domain that cannot go yet is kept, nothing changed: `-EBUSY`
/// while an entry is in use, or a child domain (an IO-APIC's) or a handler is left, `-ENOMEM`
/// if its mappings cannot be listed (`Domain::try_remove`).
///
/// # Safety
///
/// `unit` was returned by [`rust_intel_ir_domain_create`] and not removed yet; no device of the
/// unit is left (`dmar_ir_hotplug()` removes a unit after its devices), so that nothing creates a
/// child domain on its domain from this call on.
#[no_mangle]
pub(crate) unsafe extern "C" fn rust_intel_ir_domain_remove(unit: *mut c_void) -> c_int {
    // SAFETY: As the caller guarantees: the box `rust_intel_ir_domain_create` leaked, which C
    // hands to one of these calls at a time (under `dmar_global_lock`).
    let h = unsafe { &mut *unit.cast::<UnitHandle>() };
    let Some(d) = h.domain.take() else {
        return EINVAL.to_errno();
    };
    if d.data().in_use() {
        h.domain = Some(d);
        return EBUSY.to_errno();
    }
    let u = d.data().unit().clone();
    match d.try_remove() {
        Ok(()) => {
            // C frees the table next; the unit may outlive the domain (a chip data's release
            // holds it) and must not reach the table then.
            u.detach();
            // SAFETY: The box is C's no more (it forgets it on success).
            drop(unsafe { KBox::from_raw(unit.cast::<UnitHandle>()) });
            0
        }
        Err((e, d)) => {
            // Still registered (a child domain or a handler left): kept, with its table.
            h.domain = Some(d);
            e.to_errno()
        }
    }
}

/// Whether an entry of the unit's Rust domain is in use (`dmar_ir_hotplug()`).
///
/// # Safety
///
/// As for [`rust_intel_ir_domain_remove`].
#[no_mangle]
pub(crate) unsafe extern "C" fn rust_intel_ir_domain_in_use(unit: *mut c_void) -> bool {
    // SAFETY: As the caller guarantees.
    let h = unsafe { &*unit.cast::<UnitHandle>() };
    h.domain.as_ref().is_some_and(|d| d.data().in_use())
}

/// The posted-interrupt descriptor's physical address and the guest vector a hypervisor passes
/// to post a remapped interrupt to a vCPU (`struct intel_iommu_pi_data`), or `None`: post no
/// more. For the remapping chips' `set_vcpu_affinity` (`_irqd`: only in that call).
pub(crate) fn pi_data(_irqd: &SetVcpuAffinityCtx<'_>, vcpu: &VcpuInfo) -> Option<(u64, u32)> {
    let p = vcpu.as_raw().cast::<bindings::intel_iommu_pi_data>();
    if p.is_null() {
        return None;
    }
    // SAFETY: This crate calls it only from the `set_vcpu_affinity` of its remapping chips,
    // with the `vcpu` of that call: `irq_set_vcpu_affinity()` on an interrupt VT-d remaps passes
    // a `struct intel_iommu_pi_data` (the remapping chips' contract, as for
    // `intel_ir_set_vcpu_affinity()`: KVM's `vmx_pi_update_irte()`), valid for the call.
    let d = unsafe { p.read() };
    Some((d.pi_desc_addr, d.vector))
}
