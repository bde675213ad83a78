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
    #[cfg(CONFIG_X86)]
    pub fn new(affinity: Option<&crate::cpumask::Cpumask>) -> Self {
        let info = Self(Opaque::zeroed());
        let mask = affinity.map_or(core::ptr::null(), |m| m.as_raw().cast_const());
        // SAFETY: `info.0` is writable storage for an `irq_alloc_info`; `mask` is a valid cpumask
        // or null, which the C function accepts.
        unsafe { bindings::init_irq_alloc_info(info.0.get(), mask) };
        info
    }

    pub(super) fn as_raw(&self) -> *mut bindings::msi_alloc_info_t {
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
