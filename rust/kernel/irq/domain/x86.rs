// SPDX-License-Identifier: GPL-2.0

//! What an x86 interrupt domain below the vector domain reads and calls: the allocation
//! argument's source (`struct irq_alloc_info`: an IO-APIC pin, an HPET, a PCI device's MSI and
//! its DMA aliases), the vector and destination the vector domain assigned (`struct irq_cfg`),
//! the vector domain's side of an affinity change, and the MSI parent domain that an interrupt
//! remapping unit creates below the vector domain ([`Domain::new_msi_parent_on`]).
//!
//! C sources: [`arch/x86/include/asm/hw_irq.h`](srctree/arch/x86/include/asm/hw_irq.h),
//! [`arch/x86/kernel/apic/vector.c`](srctree/arch/x86/kernel/apic/vector.c).

use super::*;
use crate::{
    cpu::CpuId,
    cpumask::Cpumask,
    irq::{
        AckCtx,
        IrqData,
        SetAffinity,
        SetAffinityCtx,
        SetVcpuAffinityCtx, //
    },
};

/// The MSI parent domain of an interrupt remapping unit, below the vector domain.
impl<T: DomainOps> Domain<'static, T> {
    /// Creates the MSI parent domain of a C parent, e.g. an x86 interrupt remapping unit's
    /// below [`ForeignDomain::x86_vector`] (`msi_create_parent_irq_domain()`): a domain found
    /// by `ops`' bus token, whose children (per-device PCI/MSI domains) take their names'
    /// prefix, flags and `msi_prepare` from `ops` and the parent's MSI parent operations
    /// (`msi_parent_init_dev_msi_info()`), a radix tree of hwirqs up to `hwirq_max`. `T` must
    /// implement [`DomainOps::alloc_info`] and [`DomainOps::select`], and not
    /// [`DomainOps::msi_prepare`] (its children prepare at the C parent's level).
    ///
    /// `domain_flags` as for [`Domain::new_msi_parent`]. Unlike that one, the domain can be
    /// removed: dropping the returned [`Domain`] removes it, once no interrupt of it is left.
    ///
    /// Process context (early boot included). Returns `EINVAL` for a `hwirq_max` of 0, another
    /// flag or a `T` that does not fit, `ENOMEM`, or the error of `irq_domain_instantiate()`.
    ///
    /// # Safety
    ///
    /// `fwnode` is a valid firmware node that outlives the domain (and may be freed after an
    /// error); no other domain of `ops`' bus is created on it. `T`'s [`DomainOps::select`]
    /// answers only for the specifiers of devices whose interrupts the domain takes, which
    /// allocate with `msi_alloc_info_t`. The domain is dropped only when
    /// nothing can find it any more (by `fwnode` or `ops`' bus token) to create a child domain
    /// on it: dropping refuses while a child is left, but cannot see one created meanwhile.
    pub unsafe fn new_msi_parent_on(
        fwnode: *mut bindings::fwnode_handle,
        parent: &'static ForeignDomain,
        hwirq_max: usize,
        ops: &'static MsiParentOps,
        domain_flags: u32,
        data: impl PinInit<T, Error>,
    ) -> Result<Self> {
        if hwirq_max == 0 || !T::HAS_ALLOC_INFO || !T::HAS_SELECT || T::HAS_MSI_PREPARE {
            return Err(EINVAL);
        }
        let known =
            bindings::IRQ_DOMAIN_FLAG_ISOLATED_MSI | bindings::IRQ_DOMAIN_FLAG_MSI_IMMUTABLE;
        if domain_flags & !known != 0 {
            return Err(EINVAL);
        }
        Self::instantiate(
            Fwnode::MsiParent(fwnode, ops),
            0,
            hwirq_max,
            Some((parent.as_raw(), domain_flags | FLAG_PARENT_TAKES_MSI_INFO)),
            data,
        )
    }
}

/// What an x86 allocation argument allocates for (`irq_alloc_info::type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum X86AllocType {
    /// An IO-APIC pin: the IO-APIC's ID (`devid`, its `mpc_ioapic_id()`) and the pin.
    IoApic {
        /// The IO-APIC's ID, as the firmware's device scopes name it.
        id: u32,
        /// The pin.
        pin: u32,
    },
    /// An HPET block's comparator MSI: the block's ID.
    Hpet {
        /// The HPET block's ID.
        id: u32,
    },
    /// A PCI device's MSI (a block of up to 32 vectors).
    PciMsi,
    /// A PCI device's MSI-X vector.
    PciMsix,
    /// Anything else (DMAR or AMD-Vi fault interrupts, UV): the raw type.
    Other(u32),
}

/// The requester IDs a PCI device's MSIs may arrive with, as its DMA aliases tell them
/// (`pci_for_each_dma_alias()` on `pci_real_dma_dev()`): what an interrupt remapping entry's
/// source validation checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PciRequester {
    /// The device's own requester ID (`pci_dev_id()`), bus:device.function.
    pub dev_id: u16,
    /// Its bus number.
    pub bus: u8,
    /// How many aliases the walk found (the device itself included).
    pub aliases: u32,
    /// How many of them are on the bus of the first one.
    pub bus_matches: u32,
    /// The last alias: the one closest to the root (a bridge's, behind one).
    pub last_alias: u16,
    /// The bus of the device the last alias was found on.
    pub last_alias_dev_bus: u8,
}

/// The walk's state (`struct set_msi_sid_data` in `irq_remapping.c`).
struct AliasWalk {
    count: u32,
    bus_matches: u32,
    alias: u16,
    dev_bus: u8,
}

/// # Safety
///
/// Only called by `pci_for_each_dma_alias()` with `opaque` the `AliasWalk` passed to it.
unsafe extern "C" fn alias_cb(
    pdev: *mut bindings::pci_dev,
    alias: u16,
    opaque: *mut c_void,
) -> c_int {
    // SAFETY: As the function's safety requirements say.
    let walk = unsafe { &mut *opaque.cast::<AliasWalk>() };
    if walk.count == 0 || alias >> 8 == walk.alias >> 8 {
        walk.bus_matches += 1;
    }
    // SAFETY: `pdev` is a valid PCI device with a valid bus for the walk.
    walk.dev_bus = unsafe { (*(*pdev).bus).number };
    walk.alias = alias;
    walk.count += 1;
    0
}

impl MsiAllocInfo {
    /// What the argument allocates for (`type`, `devid`, `ioapic.pin`).
    ///
    /// Any context.
    pub fn x86_type(&self) -> X86AllocType {
        // SAFETY: `self.0` is a valid `irq_alloc_info` (type invariant of the reference).
        let info = unsafe { &*self.as_raw() };
        match info.type_ {
            bindings::irq_alloc_type_X86_IRQ_ALLOC_TYPE_IOAPIC => X86AllocType::IoApic {
                id: info.devid,
                // SAFETY: The `ioapic` member of the union is the one an IO-APIC argument
                // fills (`mp_irqdomain_alloc()`); integers, valid for any bits. A negative pin
                // (none is) reads as `u32::MAX`.
                pin: u32::try_from(unsafe { info.__bindgen_anon_1.ioapic.pin }).unwrap_or(u32::MAX),
            },
            bindings::irq_alloc_type_X86_IRQ_ALLOC_TYPE_HPET => {
                X86AllocType::Hpet { id: info.devid }
            }
            bindings::irq_alloc_type_X86_IRQ_ALLOC_TYPE_PCI_MSI => X86AllocType::PciMsi,
            bindings::irq_alloc_type_X86_IRQ_ALLOC_TYPE_PCI_MSIX => X86AllocType::PciMsix,
            t => X86AllocType::Other(t),
        }
    }

    /// The requester IDs of the PCI device whose MSIs the argument allocates, from its MSI
    /// descriptor: those of the device that really issues its DMA (`pci_real_dma_dev()`) and
    /// its aliases. `None` for an argument of another kind or without descriptor.
    ///
    /// Process context (`alloc_info`): the walk reads the PCI topology.
    #[cfg(CONFIG_PCI_MSI)]
    pub fn pci_requester(&self) -> Option<PciRequester> {
        if !matches!(
            self.x86_type(),
            X86AllocType::PciMsi | X86AllocType::PciMsix
        ) {
            return None;
        }
        // SAFETY: As in `x86_type`.
        let desc = unsafe { (*self.as_raw()).desc };
        if desc.is_null() {
            return None;
        }
        // SAFETY: A PCI/MSI argument's descriptor is the live MSI descriptor of a PCI device
        // being allocated for (`msi_domain_ops_set_desc()`), which the MSI core keeps for the
        // call.
        let pdev = unsafe { bindings::pci_real_dma_dev(bindings::msi_desc_to_pci_dev(desc)) };
        if pdev.is_null() {
            return None;
        }
        let mut walk = AliasWalk {
            count: 0,
            bus_matches: 0,
            alias: 0,
            dev_bus: 0,
        };
        // SAFETY: `pdev` is a valid PCI device (a reference the allocation holds); the callback
        // receives `walk`, which outlives the synchronous walk.
        unsafe {
            bindings::pci_for_each_dma_alias(
                pdev,
                Some(alias_cb),
                core::ptr::from_mut(&mut walk).cast(),
            )
        };
        // SAFETY: `pdev` is valid, with a valid bus.
        let (bus, devfn) = unsafe { ((*(*pdev).bus).number, (*pdev).devfn) };
        Some(PciRequester {
            dev_id: u16::from(bus) << 8 | u16::from(devfn as u8),
            bus,
            aliases: walk.count,
            bus_matches: walk.bus_matches,
            last_alias: walk.alias,
            last_alias_dev_bus: walk.dev_bus,
        })
    }
}

/// Where the x86 vector domain routes an interrupt (`struct irq_cfg`): its vector and the APIC
/// ID of its target CPU, and that CPU (the first of the effective affinity).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VectorCfg {
    /// The vector.
    pub vector: u8,
    /// The destination APIC ID.
    pub dest_apicid: u32,
    /// The target CPU, if the effective affinity names one.
    pub cpu: Option<CpuId>,
}

impl VectorCfg {
    /// The routing of `irqd`, an interrupt whose root level is the x86 vector domain's
    /// (`irqd_cfg()`); `None` for any other interrupt. Stable while the descriptor lock is held
    /// (chip `set_affinity`), a snapshot otherwise.
    ///
    /// Chip callbacks have it from their context ([`SetAffinityCtx::vector_cfg`]).
    ///
    /// # Safety
    ///
    /// The interrupt's hierarchy stays allocated for the call: the caller runs in a callback
    /// genirq makes for the interrupt (a domain's `activate` or `deactivate`, a chip callback),
    /// which genirq does not run concurrently with freeing the interrupt's levels (the vector
    /// domain frees its chip data, `irq_domain_free_irq_data()` the parent levels).
    pub unsafe fn of(irqd: &IrqData) -> Option<Self> {
        let mut level = irqd;
        while let Some(p) = level.parent() {
            level = p;
        }
        // SAFETY: `level` is a valid `irq_data`; the helper compares its domain pointer.
        if !unsafe { bindings::x86_irqd_is_vector_domain_level(level.as_raw()) } {
            return None;
        }
        // SAFETY: The root level is the vector domain's: `irqd_cfg()` returns the `irq_cfg` of
        // its chip data (`struct apic_chip_data`), which the vector domain sets at allocation
        // and frees only with the interrupt (not during this call: the caller's guarantee), or
        // NULL.
        let cfg = unsafe { bindings::irqd_cfg(irqd.as_raw()) };
        if cfg.is_null() {
            return None;
        }
        // SAFETY: `cfg` is valid (above); the vector domain writes it under its lock, so the
        // reads are volatile, as C's plain reads of the same fields.
        let (vector, dest_apicid) = unsafe {
            (
                core::ptr::read_volatile(&raw const (*cfg).vector),
                core::ptr::read_volatile(&raw const (*cfg).dest_apicid),
            )
        };
        // SAFETY: The effective affinity mask lives as long as the interrupt.
        let mask = unsafe { bindings::irq_data_get_effective_affinity_mask(irqd.as_raw()) };
        // SAFETY: `mask` is a valid cpumask for the call.
        let cpu = CpuId::from_u32(unsafe { bindings::cpumask_first(mask) });
        Some(Self {
            vector: u8::try_from(vector).ok()?,
            dest_apicid,
            cpu,
        })
    }
}

/// Whether the local APIC driver addresses CPUs in logical destination mode
/// (`apic->dest_mode_logical`), which a remapped interrupt's destination then uses.
///
/// Any context.
pub fn apic_dest_mode_logical() -> bool {
    // SAFETY: Reads a field of the installed APIC driver.
    unsafe { bindings::x86_apic_dest_mode_logical() }
}

impl SetAffinityCtx<'_> {
    /// The routing the x86 vector domain gives the interrupt ([`VectorCfg::of`]); `None` if its
    /// root is not the vector domain.
    pub fn vector_cfg(&self) -> Option<VectorCfg> {
        // SAFETY: In the interrupt's `irq_set_affinity` call, with the descriptor lock held
        // (type invariant): genirq does not free the interrupt meanwhile.
        unsafe { VectorCfg::of(self) }
    }

    /// Has the parent level move the interrupt to `mask` (`irq_chip_set_affinity_parent()`):
    /// on x86 the vector domain assigns a vector on a CPU of `mask`.
    ///
    /// Returns the parent's error (`ENOSYS` if it cannot move interrupts).
    pub fn set_parent(&self, mask: &Cpumask, force: bool) -> Result<SetAffinity> {
        if self.parent().is_none() {
            return Err(ENOSYS);
        }
        // SAFETY: The interrupt has a parent level (checked); the descriptor lock is held in
        // this `irq_set_affinity` call (type invariant); `mask` is a valid cpumask.
        let ret =
            unsafe { bindings::irq_chip_set_affinity_parent(self.as_raw(), mask.as_raw(), force) };
        to_result(ret)?;
        Ok(match ret as u32 {
            bindings::IRQ_SET_MASK_OK_NOCOPY => SetAffinity::NoCopy,
            bindings::IRQ_SET_MASK_OK_DONE => SetAffinity::Done,
            _ => SetAffinity::Ok,
        })
    }

    /// Schedules the cleanup of the vector the interrupt used before the move the vector
    /// domain just made (`vector_schedule_cleanup()`), once the new routing is in effect: an
    /// interrupt remapping entry rewritten, say.
    ///
    /// Returns `EINVAL` for an interrupt whose root is not the vector domain.
    ///
    /// Only once the new routing is in effect: an earlier cleanup frees a vector interrupts
    /// still arrive on (lost, or spurious), not memory.
    pub fn schedule_vector_cleanup(&self) -> Result {
        self.vector_cfg().ok_or(EINVAL)?;
        // SAFETY: The root level is the vector domain's (checked), so `irqd_cfg()` is its
        // `irq_cfg`, non-NULL (checked); the descriptor lock is held (type invariant), as the
        // vector domain needs.
        unsafe { bindings::vector_schedule_cleanup(bindings::irqd_cfg(self.as_raw())) };
        Ok(())
    }
}

impl SetVcpuAffinityCtx<'_> {
    /// The routing the x86 vector domain gives the interrupt ([`VectorCfg::of`]); `None` if its
    /// root is not the vector domain.
    pub fn vector_cfg(&self) -> Option<VectorCfg> {
        // SAFETY: In the interrupt's `irq_set_vcpu_affinity` call, with the descriptor lock
        // held (type invariant): genirq does not free the interrupt meanwhile.
        unsafe { VectorCfg::of(self) }
    }
}

impl AckCtx<'_> {
    /// The `ack` of a remapped interrupt (`apic_ack_irq()`): applies a pending deferred
    /// affinity change (`irq_move_irq()`, as [`AckCtx::move_irq`]), then signals the end of the
    /// interrupt to the local APIC.
    ///
    /// # Safety
    ///
    /// As for [`AckCtx::move_irq`]: this ack is the `irq_ack` call of a flow handler that holds
    /// the interrupt's descriptor lock.
    #[inline]
    pub unsafe fn apic_ack(&self) {
        // SAFETY: An `ack` of the interrupt in its hard IRQ (type invariant): it is in service
        // at this CPU's local APIC; the caller guarantees the lock `irq_move_irq()` needs.
        unsafe { bindings::x86_apic_ack_irq(self.as_raw()) }
    }
}
