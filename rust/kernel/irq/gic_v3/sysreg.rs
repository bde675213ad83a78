// SPDX-License-Identifier: GPL-2.0

//! The GICv3 CPU interface's system registers (`ICC_*_EL1`) and the barriers that order them.
//!
//! Three kinds of access:
//!
//! - The barriers: free functions, without side effects on interrupt delivery.
//! - The interrupt path's (acknowledge, priority drop, deactivation, SGI generation): methods
//!   of [`RootIf`], which only the GIC driver gets (its root handler's entry point lends it,
//!   its probe hands it out for its chips' `irq_eoi` and `ipi_send_mask`). None writes memory
//!   the kernel reads, but an acknowledge elsewhere loses an interrupt and an SGI elsewhere can
//!   be any IPI (`IPI_CPU_STOP` to every CPU, say): no other code may reach them.
//! - The configuration of the CPU interface (priority mask, control, binary point, group enable,
//!   active priorities, system-register enable): methods of [`CpuIf`], the proof that the caller
//!   is the GIC driver setting up the current CPU with interrupts disabled, on a kernel that
//!   does not use `ICC_PMR_EL1` as its interrupt mask. With pseudo-NMIs
//!   (`system_uses_irq_prio_masking()`), `local_irq_disable()` is a PMR write: any other PMR
//!   write would unmask interrupts inside the kernel's interrupts-off sections.
//!
//! Each accessor is one `msr`/`mrs` by the register's `S<op0>_<op1>_C<n>_C<m>_<op2>` name, as
//! `read_sysreg_s()`/`write_sysreg_s()` emit it, with the barriers of C's accessor.
//!
//! C headers: [`arch/arm64/include/asm/arch_gicv3.h`](srctree/arch/arm64/include/asm/arch_gicv3.h),
//! [`arch/arm64/include/asm/sysreg.h`](srctree/arch/arm64/include/asm/sysreg.h),
//! [`include/linux/irqchip/arm-gic-v3.h`](srctree/include/linux/irqchip/arm-gic-v3.h).

use crate::types::NotThreadSafe;
use core::arch::asm;

/// `msr <reg>, <val>`: an `asm!` expression, for the caller's `unsafe` block and its own
/// safety argument.
macro_rules! msr {
    ($reg:literal, $val:expr) => {
        asm!(concat!("msr ", $reg, ", {0}"), in(reg) $val, options(nostack))
    };
}

/// `mrs <reg>`: an `asm!` block whose value is the register, for the caller's `unsafe` block
/// and its own safety argument.
macro_rules! mrs {
    ($reg:literal) => {{
        let v: u64;
        asm!(concat!("mrs {0}, ", $reg), out(reg) v, options(nostack));
        v
    }};
}

/// `ICC_SRE_EL1.SRE`: system-register access to the CPU interface.
const ICC_SRE_EL1_SRE: u64 = 1 << 0;

/// `isb`: instruction synchronisation barrier.
#[inline(always)]
pub fn isb() {
    // SAFETY: A barrier: no memory or register is written. Not `nomem`, so it is also a
    // compiler barrier, which the callers rely on to order it with their MMIO accesses.
    unsafe { asm!("isb", options(nostack, preserves_flags)) };
}

/// `dsb sy`: full-system data synchronisation barrier.
#[inline(always)]
pub fn dsb_sy() {
    // SAFETY: A barrier: no memory or register is written; also a compiler barrier.
    unsafe { asm!("dsb sy", options(nostack, preserves_flags)) };
}

/// `dsb ishst`: stores to Normal memory complete in the inner-shareable domain (before an SGI
/// that announces them, say).
#[inline(always)]
pub fn dsb_ishst() {
    // SAFETY: A barrier: no memory or register is written; also a compiler barrier.
    unsafe { asm!("dsb ishst", options(nostack, preserves_flags)) };
}

/// The interrupt path of the current CPU's GIC CPU interface, owned by the GIC driver:
/// acknowledge (`ICC_IAR1_EL1`), priority drop (`ICC_EOIR1_EL1`), deactivation (`ICC_DIR_EL1`)
/// and SGI generation (`ICC_SGI1R_EL1`).
///
/// Lent by a GICv3 driver's root handler entry point (`kernel::gic_v3_driver!`) for the call,
/// and handed by its probe (`Probe::root_if()`) to keep for its chips' `irq_eoi` and
/// `ipi_send_mask` callbacks. No other code gets one.
///
/// # Invariants
///
/// References to it are held only by the driver of the GIC that delivers the kernel's
/// interrupts, which uses them in its root handler and its chips' callbacks.
pub struct RootIf(());

impl RootIf {
    /// Asserts that the caller is the driver of the GIC that delivers the kernel's interrupts.
    ///
    /// # Safety
    ///
    /// The caller is that driver's root handler entry point, or its probe handing the reference
    /// to the driver for its root handler and its chips' `irq_eoi` and `ipi_send_mask`
    /// callbacks; it lends the reference to no other code.
    #[inline(always)]
    pub unsafe fn assume_root<'a>() -> &'a RootIf {
        const ROOT: &RootIf = &RootIf(());
        // INVARIANT: The caller is the GIC driver (the function's safety requirements).
        ROOT
    }

    /// Reads `ICC_IAR1_EL1`, acknowledging the highest-priority pending Group 1 interrupt, then
    /// `dsb sy` (`gic_read_iar_common()`). Returns its interrupt ID, 1020..=1023 for none.
    ///
    /// Root interrupt handler, hard IRQ context: an interrupt acknowledged anywhere else is
    /// never handled (it stays active, and in EOImode=0 blocks every interrupt of lower
    /// priority).
    #[inline(always)]
    pub fn read_iar1(&self) -> u32 {
        // SAFETY: The read moves the interrupt it returns from pending to active in the GIC; it
        // writes no memory and no register but its output.
        let v = unsafe { mrs!("S3_0_C12_C12_0") };
        dsb_sy();
        // `ICC_IAR1_EL1[63:24]` are RES0: the ID is the low 24 bits.
        v as u32
    }

    /// Writes `ICC_EOIR1_EL1`: the priority drop of `intid` (EOImode=1), or its priority drop
    /// and deactivation (EOImode=0) (`gic_write_eoir()`, whose `isb` the caller issues).
    #[inline(always)]
    pub fn write_eoir1(&self, intid: u32) {
        // SAFETY: The write changes the running priority and the active state of interrupts in
        // the GIC, nothing in memory; an ID that is not active is ignored or, for a wrong
        // priority, architecturally UNPREDICTABLE in the GIC's state only.
        unsafe { msr!("S3_0_C12_C12_1", u64::from(intid)) };
    }

    /// Writes `ICC_DIR_EL1` (deactivates `intid` in EOImode=1), then `isb` (`gic_write_dir()`).
    #[inline(always)]
    pub fn write_dir(&self, intid: u32) {
        // SAFETY: The write clears the active state of one interrupt in the GIC, nothing in
        // memory; at worst an interrupt is delivered again while its handler is still running on
        // another CPU, which genirq's flows handle (`IRQD_IRQ_INPROGRESS`).
        unsafe { msr!("S3_0_C12_C11_1", u64::from(intid)) };
        isb();
    }

    /// Writes `ICC_SGI1R_EL1`: generates the SGI `value` describes (`gic_write_sgi1r()`).
    #[inline(always)]
    pub fn write_sgi1r(&self, value: u64) {
        // SAFETY: The write makes an SGI pending on the CPUs it names; their root handlers
        // acknowledge it like any interrupt (an SGI without a handler is deactivated as
        // unexpected). No memory is written.
        unsafe { msr!("S3_0_C12_C11_5", value) };
    }
}

/// The configuration of the current CPU's GIC CPU interface, owned by the GIC driver: the
/// registers only the driver's per-CPU setup may write.
///
/// Made by a GICv3 driver's entry points (`kernel::gic_v3_driver!`: the probe, the CPU hotplug
/// STARTING callback and the CPU PM notifier) and handed to them by reference.
///
/// # Invariants
///
/// While a reference to it exists: interrupts are disabled on the current CPU; the kernel does
/// not mask interrupts through `ICC_PMR_EL1` (no pseudo-NMIs), so the priority mask is the GIC
/// driver's alone; the holder is the driver of the GIC that delivers this CPU's interrupts.
pub struct CpuIf(NotThreadSafe);

impl CpuIf {
    /// Asserts that the current context owns the current CPU's CPU interface.
    ///
    /// # Safety
    ///
    /// For the whole of `'a`: interrupts are disabled on the current CPU;
    /// `system_uses_irq_prio_masking()` is false; the caller is the driver of the GIC that
    /// delivers this CPU's interrupts, setting up or restoring this CPU's CPU interface (its
    /// probe, CPU hotplug STARTING callback or CPU PM notifier).
    #[inline]
    pub unsafe fn assume_owned<'a>() -> &'a CpuIf {
        const OWNED: &CpuIf = &CpuIf(NotThreadSafe);
        // SAFETY: It's always safe to call `lockdep_assert_irqs_disabled()`.
        unsafe { crate::bindings::lockdep_assert_irqs_disabled() };
        // INVARIANT: The caller guarantees them for `'a`.
        OWNED
    }

    /// Reads `ICC_CTLR_EL1` (priority bits, RSS, EOImode).
    ///
    /// A method of the owner of the CPU interface, as the writes are: the register exists only
    /// on a CPU with the GICv3 system register interface (a GICv2 machine's CPUs trap on it).
    #[inline]
    pub fn read_ctlr(&self) -> u64 {
        // SAFETY: Reading the control register has no side effect; the CPU interface's system
        // registers are there, their driver owns it (type invariant).
        unsafe { mrs!("S3_0_C12_C12_4") }
    }

    /// Reads `ICC_PMR_EL1`, the priority mask. As [`CpuIf::read_ctlr`], for its owner.
    #[inline]
    pub fn read_pmr(&self) -> u64 {
        // SAFETY: As in `read_ctlr`.
        unsafe { mrs!("S3_0_C4_C6_0") }
    }

    /// Writes `ICC_CTLR_EL1`, then `isb` (`gic_write_ctlr()`).
    pub fn write_ctlr(&self, v: u64) {
        // SAFETY: The control register selects EOImode and the priority-mask hint: the driver
        // that owns the CPU interface (type invariant) sets them for the root handler it
        // installed. No memory is written.
        unsafe { msr!("S3_0_C12_C12_4", v) };
        isb();
    }

    /// Writes `ICC_PMR_EL1`, the priority mask (`gic_write_pmr()`).
    pub fn write_pmr(&self, v: u64) {
        // SAFETY: Without pseudo-NMIs the kernel masks interrupts with `PSTATE.I`, never the
        // PMR (type invariant): the priority mask filters which interrupts reach this CPU when
        // it has them enabled, and lowering or raising it cannot deliver an interrupt inside an
        // interrupts-off section. No memory is written.
        unsafe { msr!("S3_0_C4_C6_0", v) };
    }

    /// Writes `ICC_BPR1_EL1`, the Group 1 binary point (`gic_write_bpr1()`).
    pub fn write_bpr1(&self, v: u64) {
        // SAFETY: The binary point sets which priorities preempt each other; with interrupts
        // masked by `PSTATE.I` in every handler it changes no memory-safety property. No memory
        // is written.
        unsafe { msr!("S3_0_C12_C12_3", v) };
    }

    /// Writes `ICC_IGRPEN1_EL1`, then `isb` (`gic_write_grpen1()`): enables (1) or disables (0)
    /// Group 1 interrupts on this CPU.
    pub fn write_igrpen1(&self, v: u64) {
        // SAFETY: Enabling the group does not unmask `PSTATE.I`: interrupts are still taken
        // only where the kernel enables them. No memory is written.
        unsafe { msr!("S3_0_C12_C12_7", v) };
        isb();
    }

    /// Clears the active priority registers `ICC_AP0R<n>_EL1` (`group0`) or `ICC_AP1R<n>_EL1`
    /// for `n < count` (`count` of 1, 2 or 4 as the priority bits give it; anything else is 1)
    /// (`gic_cpu_sys_reg_init()`).
    pub fn clear_apr(&self, group0: bool, count: u32) {
        // SAFETY: The owner clears the active priorities when it (re)initialises the CPU
        // interface, interrupts disabled (type invariant), so no handler of this CPU is between
        // its acknowledge and its priority drop. No memory is written.
        unsafe {
            match (group0, count) {
                (true, 4) => {
                    msr!("S3_0_C12_C8_7", 0u64);
                    msr!("S3_0_C12_C8_6", 0u64);
                    msr!("S3_0_C12_C8_5", 0u64);
                    msr!("S3_0_C12_C8_4", 0u64);
                }
                (true, 2) => {
                    msr!("S3_0_C12_C8_5", 0u64);
                    msr!("S3_0_C12_C8_4", 0u64);
                }
                (true, _) => msr!("S3_0_C12_C8_4", 0u64),
                (false, 4) => {
                    msr!("S3_0_C12_C9_3", 0u64);
                    msr!("S3_0_C12_C9_2", 0u64);
                    msr!("S3_0_C12_C9_1", 0u64);
                    msr!("S3_0_C12_C9_0", 0u64);
                }
                (false, 2) => {
                    msr!("S3_0_C12_C9_1", 0u64);
                    msr!("S3_0_C12_C9_0", 0u64);
                }
                (false, _) => msr!("S3_0_C12_C9_0", 0u64),
            }
        }
    }

    /// Sets `ICC_SRE_EL1.SRE` and returns whether it is set (`gic_enable_sre()`): a hypervisor
    /// can keep it clear.
    pub fn enable_sre(&self) -> bool {
        // SAFETY: Reading the register has no side effect.
        let v = unsafe { mrs!("S3_0_C12_C12_5") };
        if v & ICC_SRE_EL1_SRE != 0 {
            return true;
        }
        // SAFETY: Setting SRE selects the system-register interface, the one every accessor
        // here uses; the kernel never uses the memory-mapped CPU interface of a GICv3. No
        // memory is written.
        unsafe { msr!("S3_0_C12_C12_5", v | ICC_SRE_EL1_SRE) };
        isb();
        // SAFETY: Reading the register has no side effect.
        (unsafe { mrs!("S3_0_C12_C12_5") }) & ICC_SRE_EL1_SRE != 0
    }
}
