// SPDX-License-Identifier: GPL-2.0

//! What MSI and architecture interrupt domains take: their allocation argument, and C domains of
//! that kind as parents of Rust ones.

use super::*;

/// The allocation argument of MSI and architecture interrupt domains (`msi_alloc_info_t`): on x86
/// the `struct irq_alloc_info` that the vector domain takes, elsewhere `struct msi_alloc_info`.
#[repr(transparent)]
pub struct MsiAllocInfo(Opaque<bindings::msi_alloc_info_t>);

impl MsiAllocInfo {
    /// An allocation argument for interrupts routed to the CPUs of `affinity`, or anywhere
    /// (`init_irq_alloc_info()`).
    ///
    /// The argument keeps a pointer to the mask, which the vector domain reads when an
    /// allocation uses it (`assign_irq_vector_policy()`), so the mask is `'static`: a constant
    /// one (`cpumask_of()`'s, say).
    #[cfg(CONFIG_X86)]
    pub fn new(affinity: Option<&'static crate::cpumask::Cpumask>) -> Self {
        let info = Self(Opaque::zeroed());
        let mask = affinity.map_or(core::ptr::null(), |m| m.as_raw().cast_const());
        // SAFETY: `info.0` is writable storage for an `irq_alloc_info`; `mask` is a valid cpumask
        // or null, which the C function accepts.
        unsafe { bindings::init_irq_alloc_info(info.0.get(), mask) };
        info
    }

    pub(crate) fn as_raw(&self) -> *mut bindings::msi_alloc_info_t {
        self.0.get()
    }

    /// Scratchpad word `i` (`scratchpad[i].ul`): what the levels above left for the MSI parent,
    /// e.g. a GICv3 ITS's DeviceID in word 0 (`its_pci_msi_prepare()`). `None` past the last.
    ///
    /// Any context; `msi_prepare` and `alloc_info` read it.
    #[cfg(not(CONFIG_X86))]
    pub fn scratchpad(&self, i: usize) -> Option<usize> {
        // SAFETY: `self.0` is a valid `msi_alloc_info` (type invariant of the reference); the
        // union's `ul` member is an integer, valid for any bits.
        let pad = unsafe { &(*self.0.get()).scratchpad };
        pad.get(i).map(|w| {
            // SAFETY: As above.
            unsafe { w.ul }
        })
    }

    /// Whether the device signals for others behind a bridge (`MSI_ALLOC_FLAGS_PROXY_DEVICE`):
    /// its DeviceID is shared.
    #[cfg(not(CONFIG_X86))]
    pub fn is_proxy(&self) -> bool {
        // SAFETY: As in `scratchpad`.
        let flags = unsafe { (*self.0.get()).flags };
        flags & bindings::MSI_ALLOC_FLAGS_PROXY_DEVICE as c_ulong != 0
    }

    /// Maps `doorbell` into the device's IOMMU domain, if it has one that translates MSIs
    /// (`iommu_dma_prepare_msi()`), before the messages naming it are composed
    /// ([`MsiDoorbell::msg`]). Process context, in `alloc_info` (whose argument names the MSI
    /// descriptor being allocated for).
    ///
    /// Returns `EINVAL` for an argument without MSI descriptor (`msi_prepare`'s), `ENOMEM` or
    /// the IOMMU's error.
    #[cfg(CONFIG_IRQ_MSI_IOMMU)]
    pub fn iommu_prepare(&self, doorbell: MsiDoorbell) -> Result {
        // SAFETY: As in `scratchpad`.
        let desc = unsafe { (*self.0.get()).desc };
        if desc.is_null() {
            return Err(EINVAL);
        }
        // SAFETY: `desc` is the live MSI descriptor being allocated for; the address is an MSI
        // doorbell, device memory (`MsiDoorbell`'s invariant), which the IOMMU maps for MSIs.
        to_result(unsafe { bindings::msi_iommu_prepare(desc, doorbell.0) })
    }
}

/// The physical address of an MSI doorbell: the device register a device writes its messages
/// to, such as a GICv3 ITS's `GITS_TRANSLATER`.
///
/// # Invariants
///
/// `self.0` is the physical address of an interrupt controller's MSI doorbell register, which
/// the kernel crate took from the firmware's description of the controller: device memory,
/// never RAM.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MsiDoorbell(u64);

impl MsiDoorbell {
    /// # Safety
    ///
    /// `pa` is the physical address of an MSI doorbell register.
    #[cfg_attr(not(CONFIG_ARM_GIC_V3_RUST), allow(dead_code))] // Its first user is the GICv3 ITS.
    pub(crate) unsafe fn new(pa: u64) -> Self {
        // INVARIANT: As the caller guarantees.
        Self(pa)
    }

    /// The physical address.
    pub fn phys(&self) -> u64 {
        self.0
    }

    /// The message of `irqd` that writes `data` to this doorbell: at the address the device
    /// sees it at, its IOMMU's mapping if [`MsiAllocInfo::iommu_prepare`] made one
    /// (`msi_msg_set_addr()`), else the physical address.
    ///
    /// Any context (`compose_msi_msg`).
    pub fn msg(&self, irqd: &crate::irq::IrqData, data: u32) -> crate::irq::MsiMsg {
        // SAFETY: `irqd` is valid (type invariant of the reference); the helper reads its MSI
        // descriptor, if any.
        let addr = unsafe { bindings::msi_doorbell_addr(irqd.as_raw(), self.0) };
        crate::irq::MsiMsg {
            address_lo: addr as u32,
            address_hi: (addr >> 32) as u32,
            data,
        }
    }
}

/// The MSI parent operations of a C irqchip (`struct msi_parent_ops`): what an MSI parent
/// domain's children are (bus tokens, chip flags, name prefix) and how they reach it.
///
/// # Invariants
///
/// `self.0` is a `msi_parent_ops` that lives and is not changed for the kernel's lifetime.
#[repr(transparent)]
pub struct MsiParentOps(Opaque<bindings::msi_parent_ops>);

// SAFETY: Immutable C data.
unsafe impl Sync for MsiParentOps {}

impl MsiParentOps {
    /// Creates a reference to C's MSI parent operations.
    ///
    /// # Safety
    ///
    /// `ptr` points to a `msi_parent_ops` that is never freed or changed.
    pub unsafe fn from_raw(ptr: *const bindings::msi_parent_ops) -> &'static Self {
        // SAFETY: Transparent wrapper; the caller guarantees the rest.
        // INVARIANT: As the caller guarantees.
        unsafe { &*ptr.cast() }
    }

    /// The bus token the MSI parent domain is selected on (`bus_select_token`).
    pub(super) fn bus_select_token(&self) -> bindings::irq_domain_bus_token {
        // SAFETY: Valid and immutable (type invariant).
        bindings::irq_domain_bus_token(unsafe { (*self.0.get()).bus_select_token })
    }

    /// Returns the raw pointer.
    pub(super) fn as_raw(&self) -> *const bindings::msi_parent_ops {
        self.0.get()
    }
}

/// An interrupt domain that C code owns, as the parent of a Rust [`Domain`].
///
/// # Invariants
///
/// `self.0` is a live, hierarchical `irq_domain` whose `alloc` takes `msi_alloc_info_t`
/// arguments, registered for the lifetime of every reference to it.
#[repr(transparent)]
pub struct ForeignDomain(Opaque<bindings::irq_domain>);

impl ForeignDomain {
    /// Creates a reference to a C domain.
    ///
    /// # Safety
    ///
    /// `ptr` points to a live hierarchical `irq_domain` whose `alloc` takes `msi_alloc_info_t`
    /// arguments and which stays registered for `'a`.
    pub unsafe fn from_raw<'a>(ptr: *mut bindings::irq_domain) -> &'a Self {
        // SAFETY: Transparent wrapper; the caller guarantees the rest.
        // INVARIANT: As the caller guarantees.
        unsafe { &*ptr.cast() }
    }

    /// Returns the x86 vector domain (`x86_vector_domain`), the root of x86's interrupt
    /// hierarchy, which is never removed; `None` before it is set up.
    ///
    /// Any context.
    #[cfg(CONFIG_X86_LOCAL_APIC)]
    pub fn x86_vector() -> Option<&'static Self> {
        // SAFETY: Reads a pointer set once during early boot.
        let d = unsafe { bindings::x86_vector_domain };
        // SAFETY: The vector domain is hierarchical, takes `struct irq_alloc_info`
        // (`msi_alloc_info_t` on x86) and is never removed.
        (!d.is_null()).then(|| unsafe { Self::from_raw(d) })
    }

    /// Returns the raw `irq_domain` pointer.
    pub fn as_raw(&self) -> *mut bindings::irq_domain {
        self.0.get()
    }
}
