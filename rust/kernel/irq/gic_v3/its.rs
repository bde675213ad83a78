// SPDX-License-Identifier: GPL-2.0

//! The Rust GICv3 ITS driver's side of the C shim: the ITS frames the shim mapped, the ITS's
//! probe token, the memory of its tables (physically contiguous, with their physical
//! addresses), and its MSI parent domain.
//!
//! C header: [`drivers/irqchip/irq-gic-v3-rust.h`](srctree/drivers/irqchip/irq-gic-v3-rust.h).

use crate::{
    bindings,
    error::to_result,
    io::{
        Mmio,
        MmioRaw,
        Region,
        SysMem, //
    },
    irq::{
        domain::MsiParentOps,
        Domain,
        DomainOps,
        MsiDoorbell, //
    },
    prelude::*,
};
use core::ptr::NonNull;

/// Size of an ITS's control frame (`GITS_CTLR`... `GITS_BASER<n>`), what the driver maps, as
/// C's `its_map_one()`: the translation frame after it (`GITS_TRANSLATER`) is written by
/// devices only, the driver needs its physical address alone.
pub const ITS_FRAMES: usize = 0x1_0000;

/// An ITS's control frame, mapped for the kernel's lifetime: once the shim has handed it to the
/// Rust probe, it never unmaps it.
pub type ItsFrame = Mmio<'static, Region<ITS_FRAMES>>;

/// The ITS the shim found and mapped, for [`Driver::its_probe`](super::Driver::its_probe):
/// its frames, their physical address, and its firmware node, which the ITS's MSI parent
/// domain is created on ([`ItsNode::create_domain`], once).
///
/// # Invariants
///
/// `fwnode` is the ITS's firmware node (its device-tree node, or the irqchip fwnode of its MADT
/// entry, registered with the IORT), without a domain of the ITS's bus, which the shim frees only
/// if `created` is still false when the probe returns (then it starts the C ITS driver); `io`
/// maps the ITS's frames at `phys` for the kernel's lifetime.
pub struct ItsNode<'a> {
    pub(super) fwnode: *mut bindings::fwnode_handle,
    pub(super) io: ItsFrame,
    pub(super) phys: u64,
    /// Set once the domain exists: the ITS is this driver's, whatever the probe returns.
    pub(super) created: &'a core::cell::Cell<bool>,
}

impl ItsNode<'_> {
    /// The ITS's control frame.
    pub fn io(&self) -> ItsFrame {
        self.io
    }

    /// The physical address of the control frame (`GITS_TRANSLATER` is at `0x1_0040` from it).
    pub fn phys(&self) -> u64 {
        self.phys
    }

    /// The ITS's MSI doorbell, `GITS_TRANSLATER`, in its translation frame.
    pub fn doorbell(&self) -> MsiDoorbell {
        // SAFETY: `self.phys` is the ITS's control frame (type invariant), the translation frame
        // follows it, `GITS_TRANSLATER` at 0x40 in it.
        unsafe { MsiDoorbell::new(self.phys + 0x1_0040) }
    }

    /// Creates the ITS's MSI parent domain below the root domain `parent`, for LPI INTIDs
    /// below `hwirq_max`, with the shim's MSI parent operations (C's PCI/MSI and platform-MSI
    /// `msi_prepare`, the DeviceID from `msi-map` and the device's DMA aliases, the children's
    /// chips named `ITS-RS-...`), isolated (the ITS tells devices apart by DeviceID: VFIO may
    /// assign them) and with messages that never change (`IRQ_DOMAIN_FLAG_ISOLATED_MSI`,
    /// `IRQ_DOMAIN_FLAG_MSI_IMMUTABLE`, as C's ITS). Consumes the node: one domain per ITS.
    ///
    /// Boot, process context. Errors as [`Domain::new_msi_parent`].
    ///
    /// Once this succeeded the ITS is this driver's for good: an error the probe returns after
    /// it is only said, the C ITS driver is not started and the node is kept.
    pub fn create_domain<P: DomainOps, T: DomainOps>(
        self,
        parent: &'static Domain<'static, P>,
        hwirq_max: usize,
        data: impl PinInit<T, Error>,
    ) -> Result<&'static Domain<'static, T>> {
        // SAFETY: A static C object, never changed.
        let ops =
            unsafe { MsiParentOps::from_raw(&raw const bindings::gic_v3_rust_its_msi_parent_ops) };
        // SAFETY: `self.fwnode` has no domain of the ITS's bus and is never freed once
        // `created` is set, which it is below if this succeeds (type invariant); `self` is
        // consumed, so no second domain is created through it.
        let d = unsafe {
            Domain::new_msi_parent(
                self.fwnode,
                parent,
                hwirq_max,
                ops,
                bindings::IRQ_DOMAIN_FLAG_ISOLATED_MSI | bindings::IRQ_DOMAIN_FLAG_MSI_IMMUTABLE,
                data,
            )
        }?;
        self.created.set(true);
        Ok(d)
    }
}

/// Physically contiguous, zeroed memory that a device reads and writes by physical address
/// (an ITS's command queue and tables, a redistributor's LPI tables): a power of two of pages,
/// aligned to its size, as `alloc_pages()` gives it. The CPU accesses it with volatile accesses
/// ([`PhysMem::io`]), as memory a device may access concurrently.
///
/// Dropping it frees it: the owner keeps it for as long as the device may access it (tables
/// programmed into a GIC are kept for the kernel's lifetime; an ITT once its device is unmapped
/// and the unmapping is synchronised).
///
/// # Invariants
///
/// `ptr` is the start of an allocation of `PAGE_SIZE << order` bytes from `__get_free_pages()`,
/// owned by `self`.
pub struct PhysMem {
    ptr: NonNull<u8>,
    order: u32,
}

// SAFETY: The memory is owned, accessed only through volatile accesses (`io`), from any thread.
unsafe impl Send for PhysMem {}
// SAFETY: As above: `&PhysMem` gives volatile accesses only.
unsafe impl Sync for PhysMem {}

impl PhysMem {
    /// Allocates at least `bytes` bytes, zeroed (`__get_free_pages(GFP_KERNEL | __GFP_ZERO)`),
    /// in linear-map memory whose physical address [`PhysMem::phys`] gives.
    ///
    /// Process context (may sleep; at boot before the scheduler runs, the allocator does not).
    /// Returns `EINVAL` for 0 bytes or more than the largest allocation (`MAX_PAGE_ORDER`),
    /// `ENOMEM`.
    pub fn new(bytes: usize) -> Result<Self> {
        if bytes == 0 {
            return Err(EINVAL);
        }
        let pages = bytes
            .div_ceil(crate::page::PAGE_SIZE)
            .checked_next_power_of_two()
            .ok_or(EINVAL)?;
        let order = pages.trailing_zeros();
        if order > bindings::MAX_PAGE_ORDER {
            return Err(EINVAL);
        }
        let gfp = (GFP_KERNEL | __GFP_ZERO).as_raw();
        // SAFETY: No requirements; the order is within the allocator's. (`__get_free_pages()`
        // is this function under the allocation-profiling hooks, a macro.)
        let addr = unsafe { bindings::get_free_pages_noprof(gfp, order) };
        let ptr = NonNull::new(addr as *mut u8).ok_or(ENOMEM)?;
        // INVARIANT: Just allocated with that order.
        Ok(Self { ptr, order })
    }

    /// The size, bytes.
    pub fn len(&self) -> usize {
        crate::page::PAGE_SIZE << self.order
    }

    /// Always `false`: an allocation has at least a page.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The physical address of the first byte (`virt_to_phys()`), aligned to [`PhysMem::len`].
    pub fn phys(&self) -> u64 {
        // SAFETY: `ptr` is a linear-map address (type invariant).
        unsafe { bindings::virt_to_phys(self.ptr.as_ptr().cast()) }
    }

    /// Keeps the memory out of the next kernel's hands across kexec
    /// (`efi_mem_reserve_persistent()`, on EFI machines): what a GIC's redistributors keep
    /// writing once their LPIs are enabled, which only a reset stops. The reservation outlives
    /// `self`: call it only for memory kept for the kernel's lifetime.
    ///
    /// Boot or process context (may sleep). Returns the EFI error, or `Ok` without EFI.
    pub fn reserve_persistent(&'static self) -> Result {
        // SAFETY: No requirements.
        to_result(unsafe { bindings::gic_v3_rust_reserve(self.phys(), self.len() as u64) })
    }

    /// The memory, for volatile reads and writes at byte offsets (`try_write64()`...).
    pub fn io(&self) -> SysMem<'_, Region> {
        let region = Region::<0>::ptr_from_raw_parts_mut(self.ptr.as_ptr(), self.len());
        // SAFETY: The allocation is valid, aligned and owned for as long as `self` is borrowed
        // (type invariant).
        unsafe { SysMem::new(region) }
    }

    /// The memory as a slice of `T`s, for volatile reads and writes of whole entries with one
    /// bounds check each (`io_project!(mem.io_slice::<T>(), [try: i]).copy_write(v)`): a queue
    /// of fixed-size commands, say. A tail shorter than a `T` is not part of the slice.
    ///
    /// # Examples
    ///
    /// ```
    /// use kernel::{io::{io_project, Io}, irq::gic_v3::PhysMem};
    ///
    /// let mem = PhysMem::new(64)?;
    /// let q = mem.io_slice::<[u64; 4]>();
    /// assert_eq!(q.len(), mem.len() / 32);
    /// io_project!(q, [try: 1]).copy_write([1, 2, 3, 4]);
    /// assert_eq!(mem.io().try_read64(40)?, 2);
    /// let past_the_end = || -> Result {
    ///     io_project!(q, [try: q.len()]).copy_write([0; 4]);
    ///     Ok(())
    /// };
    /// assert!(past_the_end().is_err());
    /// # Ok::<(), Error>(())
    /// ```
    pub fn io_slice<T: FromBytes + IntoBytes>(&self) -> SysMem<'_, [T]> {
        const {
            assert!(core::mem::size_of::<T>() != 0);
            assert!(core::mem::align_of::<T>() <= crate::page::PAGE_SIZE);
        }
        let len = self.len() / core::mem::size_of::<T>();
        let slice = core::ptr::slice_from_raw_parts_mut(self.ptr.as_ptr().cast::<T>(), len);
        // SAFETY: The allocation is valid and owned for as long as `self` is borrowed (type
        // invariant); `len` `T`s fit in it; it is page-aligned, so aligned for `T`.
        unsafe { SysMem::new(slice) }
    }
}

impl Drop for PhysMem {
    fn drop(&mut self) {
        // SAFETY: Allocated by `__get_free_pages()` with this order (type invariant), not used
        // past this point.
        unsafe { bindings::free_pages(self.ptr.as_ptr() as usize, self.order) };
    }
}

/// The ITS's frames as the shim passes them.
///
/// # Safety
///
/// `base` maps `size` bytes for the kernel's lifetime.
pub(super) unsafe fn its_frame(base: *mut core::ffi::c_void, size: u64) -> Result<ItsFrame> {
    let raw = MmioRaw::<Region<ITS_FRAMES>>::new_region(base as usize, size as usize)?;
    // SAFETY: Mapped for the kernel's lifetime (the function's safety requirements).
    Ok(unsafe { Mmio::from_raw(raw) })
}
