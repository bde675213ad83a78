// SPDX-License-Identifier: GPL-2.0
/* Helpers for the Rust local APIC EOI (arch/x86/kernel/apic/apic_eoi_regs.rs). */

#ifdef CONFIG_X86_LOCAL_APIC
#include <asm/apic.h>

/* The fixmap address of the xAPIC register page; `APIC_BASE` is a macro. */
__rust_helper void *rust_helper_x86_apic_mmio_base(void)
{
	return (void *)APIC_BASE;
}
#endif
