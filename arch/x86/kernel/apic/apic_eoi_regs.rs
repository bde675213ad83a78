// SPDX-License-Identifier: GPL-2.0

//! Local APIC EOI register accessors: the only `unsafe` code of the Rust APIC EOI.
//!
//! C header: [`arch/x86/include/asm/apic.h`](srctree/arch/x86/include/asm/apic.h),
//! [`arch/x86/include/asm/apicdef.h`](srctree/arch/x86/include/asm/apicdef.h).

use core::arch::asm;

use kernel::bindings::{
    APIC_BASE_MSR,
    APIC_EOI,
    APIC_EOI_ACK,
    EX_TYPE_WRMSR, //
};

/// The x2APIC EOI MSR: `APIC_BASE_MSR + (APIC_EOI >> 4)` = 0x80b.
const X2APIC_EOI_MSR: u32 = APIC_BASE_MSR + (APIC_EOI >> 4);

/// Writes `APIC_EOI_ACK` to the x2APIC EOI MSR, as `native_wrmsrq()` does.
///
/// A `wrmsr` that faults (x2APIC not enabled) is fixed up through the exception table entry
/// `EX_TYPE_WRMSR`, exactly like C's `__wrmsrq()`: the kernel reports it and continues.
#[inline(always)]
pub(crate) fn x2apic_write_eoi() {
    // SAFETY: Writing the EOI MSR only tells the local APIC that the highest-priority in-service
    // interrupt is complete; it touches no memory. If the MSR does not exist (x2APIC disabled)
    // the #GP is fixed up by the `__ex_table` entry below, as for `native_wrmsrq()`. No `nomem`:
    // like C's "memory" clobber, prior stores must not be moved past the EOI.
    unsafe {
        asm!(
            "2: wrmsr",
            "3:",
            ".pushsection __ex_table, \"aM\", @progbits, 12",
            ".balign 4",
            ".long 2b - .",
            ".long 3b - .",
            ".long {ty}",
            ".popsection",
            ty = const EX_TYPE_WRMSR,
            in("ecx") X2APIC_EOI_MSR,
            in("eax") APIC_EOI_ACK,
            in("edx") 0u32,
            options(nostack, preserves_flags),
        )
    }
}

/// Writes `APIC_EOI_ACK` to the memory-mapped xAPIC EOI register, as `native_apic_mem_write()`
/// does on x86_64.
#[inline(always)]
pub(crate) fn xapic_write_eoi() {
    // SAFETY: The helper only returns the constant `APIC_BASE`, the fixmap address of the local
    // APIC's register page.
    let base = unsafe { kernel::bindings::x86_apic_mmio_base() };
    let eoi = base.wrapping_byte_add(APIC_EOI as usize).cast::<u32>();
    // SAFETY: The fixmap entry `FIX_APIC_BASE` maps the local APIC's 4 KiB register page for the
    // lifetime of the kernel once an xAPIC driver is installed, which is when this is called; the
    // EOI register at offset 0xb0 is a naturally aligned 32-bit register.
    unsafe { core::ptr::write_volatile(eoi, APIC_EOI_ACK) };
}
