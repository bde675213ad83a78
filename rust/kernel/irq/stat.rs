// SPDX-License-Identifier: GPL-2.0

//! What an interrupt balancer reads and the one change it makes: each requested interrupt's
//! per-CPU counts, placement class and effective CPU; each CPU's interrupt time and topology;
//! and moving an interrupt to a CPU.
//!
//! Walking every descriptor and moving interrupts are methods of [`Placer`], a capability only
//! the kernel's interrupt balancer (`kernel/irq/irq_balance.rs`) holds: no other code retargets
//! interrupts through this module. The rest (per-CPU figures, topology, the CPU hotplug guard and
//! offline count, the current task's CPU time) is open to any caller.
//!
//! The counts are those of `/proc/interrupts` (`kstat_irqs_cpu()`), read as
//! `kernel/irq/proc.c` reads them: the descriptor looked up under the RCU read lock (descriptors
//! are freed after a grace period), its state under its lock. Unlike `/proc/interrupts`, chained
//! and hidden descriptors with an action are reported too (as [`Placement::Fixed`] or not, by
//! their chip).
//!
//! C sources: [`kernel/irq/proc.c`](srctree/kernel/irq/proc.c),
//! [`kernel/irq/manage.c`](srctree/kernel/irq/manage.c),
//! [`include/linux/kernel_stat.h`](srctree/include/linux/kernel_stat.h).

use core::sync::atomic::{
    AtomicBool, AtomicU64,
    Ordering::{
        Relaxed,
        SeqCst, //
    },
};

use crate::{
    bindings,
    cpu::{
        nr_cpu_ids,
        CpuId, //
    },
    cpumask::Cpumask,
    error::to_result,
    irq::desc::IrqDesc,
    prelude::*,
    sync::rcu, //
};

/// Whether a balancer may move an interrupt, and if not why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// Its affinity may be changed.
    Movable,
    /// A per-CPU interrupt (`IRQD_PER_CPU`).
    PerCpu,
    /// Its affinity is managed by the kernel (`irqd_affinity_is_managed()`).
    Managed,
    /// Requested with `IRQF_NOBALANCING` (`IRQD_NO_BALANCING`).
    NoBalancing,
    /// Its chip has no `irq_set_affinity`.
    Fixed,
}

/// A fingerprint of an affinity mask: its weight and a hash of its CPUs. Two masks with the
/// same fingerprint are, for a balancer's purpose of noticing that someone else changed an
/// interrupt's affinity, the same mask. The default is the empty mask's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AffinitySig {
    weight: u32,
    hash: u64,
}

impl Default for AffinitySig {
    fn default() -> Self {
        Self::empty()
    }
}

impl AffinitySig {
    const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const FNV_PRIME: u64 = 0x100_0000_01b3;

    fn add(self, cpu: u32) -> Self {
        Self {
            weight: self.weight + 1,
            hash: (self.hash ^ u64::from(cpu)).wrapping_mul(Self::FNV_PRIME),
        }
    }

    /// The fingerprint of the mask of `cpu` alone (`cpumask_of(cpu)`).
    pub fn single(cpu: CpuId) -> Self {
        Self::empty().add(cpu.as_u32())
    }

    fn empty() -> Self {
        Self {
            weight: 0,
            hash: Self::FNV_OFFSET,
        }
    }

    /// The fingerprint of `mask`. Any context; `O(nr_cpu_ids)`.
    pub fn of(mask: &Cpumask) -> Self {
        (0..nr_cpu_ids())
            .filter_map(CpuId::from_u32)
            .filter(|c| mask.test(*c))
            .fold(Self::empty(), |s, c| s.add(c.as_u32()))
    }
}

/// A requested interrupt as [`Placer::next_requested`] found it.
#[derive(Clone, Copy, Debug)]
pub struct IrqSnapshot {
    /// The interrupt number (virq).
    pub irq: u32,
    /// Whether it may be moved.
    pub placement: Placement,
    /// The first CPU of its effective affinity: where it is delivered.
    pub effective_cpu: Option<CpuId>,
    /// The fingerprint of its affinity mask (`/proc/irq/N/smp_affinity`).
    pub affinity: AffinitySig,
    /// An affinity change waits for the next interrupt (`irqd_is_setaffinity_pending()`, chips
    /// with `IRQCHIP_MOVE_DEFERRED`): the mask changes then.
    pub move_pending: bool,
    /// Which request of the interrupt this is, for telling a number freed and requested again
    /// from the interrupt seen before under it.
    pub ident: RequestId,
}

/// Which request of an interrupt a snapshot saw: the descriptor's `request_seq`, a number from a
/// 64-bit counter that `__setup_irq()` renews when it installs the first action and
/// `__free_irq()` when it removes it, and the first action's address, which tells a chained
/// handler (the static `chained_action`) from a request. Two requests never have the same
/// identity, even where the descriptor and the action get the addresses of freed ones back. The
/// default is no request's.
///
/// C: [`kernel/irq/manage.c`](srctree/kernel/irq/manage.c) (`irq_new_request_seq()`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RequestId {
    seq: u64,
    /// Compared only, never dereferenced.
    action: usize,
}

impl RequestId {
    /// The identity of the locked descriptor `ptr`'s current request.
    ///
    /// # Safety
    ///
    /// `ptr` is a valid descriptor whose lock the caller holds.
    unsafe fn of(ptr: *mut bindings::irq_desc) -> Self {
        // SAFETY: As the caller guarantees; both fields change only under the descriptor lock.
        unsafe {
            Self {
                seq: (*ptr).request_seq,
                action: (*ptr).action as usize,
            }
        }
    }
}

/// The capability to walk every requested interrupt ([`Placer::next_requested`]) and to move
/// interrupts ([`Placer::move_to`]): the kernel's interrupt balancer's alone.
///
/// There is at most one, and it is the balancer's: only code linked into the kernel image may
/// claim it ([`Placer::claim`] refuses a loadable module, whose safe code can name no module but
/// its own), and the kernel's interrupt balancer, built in whenever this type exists
/// (`CONFIG_IRQ_BALANCE_RUST` is `bool`), claims it in its initcall, whether or not it is then
/// enabled; the claim succeeds once for the kernel's lifetime. Moving an interrupt is no
/// memory-safety hazard (a write of `/proc/irq/N/smp_affinity` does the same), so the claim is
/// safe; but what the balancer promises rests on being the one mover that records what it set:
/// that it never overrides an affinity a user or a driver chose, and that it tells its own moves
/// from theirs. A module holding these functions could break that unseen; a capability only
/// built-in code can claim, and only once, keeps them to the balancer, which `pub(crate)` cannot
/// do (the balancer is a crate of its own). Built-in code that claimed it first would make the
/// balancer fail to start (`EBUSY`, said in the log) rather than share it.
///
/// # Invariants
///
/// At most one `Placer` is ever made.
pub struct Placer(());

impl Placer {
    /// Claims the capability for the code of module `M` (the caller's `crate::LocalModule`,
    /// which `module!` or [`built_in_module!`](crate::built_in_module) defines: a type, as for
    /// every pin on a caller's module): `Some` the first time in the kernel's lifetime, for code
    /// linked into the kernel image (a null `THIS_MODULE`, as `built_in_module!` and built-in
    /// `module!`s have); `None` for a loadable module, and after the first claim. Any context.
    /// The interrupt balancer's initcall is the first caller.
    pub fn claim<M: crate::ModuleMetadata>() -> Option<Self> {
        static CLAIMED: AtomicBool = AtomicBool::new(false);
        if !crate::module::this_module::<M>().as_ptr().is_null() {
            return None;
        }
        // INVARIANT: Made at most once: the flag is never cleared.
        (!CLAIMED.swap(true, SeqCst)).then_some(Self(()))
    }
}

/// Whether `cpu` is a possible CPU (`cpu_possible()`).
fn possible(cpu: u32) -> bool {
    // SAFETY: Reads the possible mask at bit `cpu`, which the first test keeps below
    // `nr_cpu_ids`, inside the mask.
    cpu < nr_cpu_ids() && unsafe { bindings::cpu_possible(cpu) }
}

/// The first CPU of `mask` (`cpumask_first()`), `None` if it is empty.
///
/// # Safety
///
/// `mask` points to a valid cpumask.
unsafe fn first_cpu(mask: *const bindings::cpumask) -> Option<CpuId> {
    // SAFETY: As the caller guarantees.
    let cpu = unsafe { bindings::cpumask_first(mask) };
    CpuId::from_u32(cpu).filter(|c| c.as_u32() < nr_cpu_ids())
}

/// The placement class of the locked interrupt whose top-level `irq_data` is `raw`.
///
/// # Safety
///
/// `raw` is the valid top-level `irq_data` of a descriptor whose lock the caller holds.
unsafe fn placement_of(raw: *mut bindings::irq_data) -> Placement {
    // SAFETY: As the caller guarantees; the helpers read state bits, `chip` is read under the
    // lock.
    unsafe {
        let chip = (*raw).chip;
        if bindings::irqd_is_per_cpu(raw) {
            Placement::PerCpu
        } else if bindings::irqd_affinity_is_managed(raw) {
            Placement::Managed
        } else if !bindings::irqd_can_balance(raw) {
            Placement::NoBalancing
        } else if chip.is_null() || (*chip).irq_set_affinity.is_none() {
            Placement::Fixed
        } else {
            Placement::Movable
        }
    }
}

/// Calls `f` with the locked descriptor of `irq` and its action pointer, if it has one, under
/// the RCU read lock; `None` without a descriptor or an action.
fn with_requested<R>(
    irq: u32,
    f: impl FnOnce(&crate::irq::desc::DescLockGuard<'_>, *mut bindings::irq_desc) -> R,
) -> Option<R> {
    let rcu = rcu::read_lock();
    // SAFETY: Any number may be looked up; under the RCU read lock a descriptor found stays
    // allocated (sparse descriptors are freed after a grace period).
    let ptr = unsafe { bindings::irq_to_desc(irq) };
    if ptr.is_null() {
        return None;
    }
    // SAFETY: `ptr` is a valid descriptor, allocated while `rcu` is held; `desc` and the guard
    // below are dropped before `rcu` at the end of this function.
    let desc = unsafe { IrqDesc::from_raw(ptr) };
    let guard = desc.lock();
    // SAFETY: The descriptor is valid and locked; `action` is read under its lock.
    let r = if unsafe { (*ptr).action }.is_null() {
        None
    } else {
        Some(f(&guard, ptr))
    };
    drop(guard);
    drop(rcu);
    r
}

impl Placer {
    /// Returns the first requested interrupt (one with an action) numbered `from` or above, and
    /// fills `counts[cpu]` with its count on each CPU (`kstat_irqs_cpu()`, the
    /// `/proc/interrupts` columns; 0 for impossible CPUs and past `nr_cpu_ids`). `None` if there
    /// is none.
    ///
    /// Any context in which the descriptor lock may be taken (not in the interrupt's own flow);
    /// it takes the RCU read lock and each descriptor's lock in turn, for a short while:
    /// `O(nr_cpu_ids)` under one descriptor's lock, `O(nr_irqs)` lookups when few interrupts
    /// are requested.
    pub fn next_requested(&self, from: u32, counts: &mut [u32]) -> Option<IrqSnapshot> {
        // SAFETY: No precondition.
        let nr = unsafe { bindings::irq_get_nr_irqs() };
        (from..nr)
            .find_map(|irq| with_requested(irq, |guard, ptr| snapshot(irq, guard, ptr, counts)))
    }

    /// Interrupt `irq` as [`Placer::next_requested`] would return it, `None` if it is not
    /// requested: one lookup, without walking on to the next number. Same context.
    pub fn requested(&self, irq: u32, counts: &mut [u32]) -> Option<IrqSnapshot> {
        with_requested(irq, |guard, ptr| snapshot(irq, guard, ptr, counts))
    }

    /// Moves interrupt `irq` to `cpu` (`irq_set_affinity_locked(cpumask_of(cpu))`, as a write of
    /// `/proc/irq/N/smp_affinity` does) if it is still the interrupt the caller saw: requested,
    /// the request `ident`, [`Placement::Movable`], and its affinity `expect`. All of that is
    /// checked under the descriptor lock that the move is made under, so that a number freed
    /// and requested again or an affinity set by someone else meanwhile is never overridden.
    /// The chip may still deliver it elsewhere (the effective affinity says where) or move it
    /// only at its next interrupt ([`IrqSnapshot::move_pending`]).
    ///
    /// Task context. Returns `EBUSY` if the interrupt is no longer the one seen, and the chip's
    /// errors.
    pub fn move_to(&self, irq: u32, cpu: CpuId, ident: RequestId, expect: AffinitySig) -> Result {
        with_requested(irq, |guard, ptr| {
            let d = guard.irq_data();
            let raw = d.as_raw();
            // SAFETY: `ptr` is the valid descriptor `guard` locks.
            let now = unsafe { RequestId::of(ptr) };
            // SAFETY: `raw` is the locked descriptor's top-level `irq_data`.
            let placement = unsafe { placement_of(raw) };
            if now != ident
                || placement != Placement::Movable
                || AffinitySig::of(d.affinity()) != expect
            {
                return Err(EBUSY);
            }
            // SAFETY: The descriptor lock is held, as `irq_set_affinity_locked()` requires;
            // `cpumask_of()` returns a static mask for a CPU below `nr_cpu_ids`.
            to_result(unsafe {
                bindings::irq_set_affinity_locked(raw, bindings::cpumask_of(cpu.as_u32()), false)
            })
        })
        .unwrap_or(Err(EBUSY))
    }
}

/// The snapshot of the locked, requested interrupt `irq` whose descriptor is `ptr`.
fn snapshot(
    irq: u32,
    guard: &crate::irq::desc::DescLockGuard<'_>,
    ptr: *mut bindings::irq_desc,
    counts: &mut [u32],
) -> IrqSnapshot {
    let d = guard.irq_data();
    let raw = d.as_raw();
    // SAFETY: `raw` is the descriptor's valid top-level `irq_data`, locked (`guard`).
    let placement = unsafe { placement_of(raw) };
    // SAFETY: `raw` is valid; the effective mask lives in the descriptor.
    let effective_cpu = unsafe { first_cpu(bindings::irq_data_get_effective_affinity_mask(raw)) };
    for (cpu, n) in counts.iter_mut().enumerate() {
        let cpu = cpu as u32;
        *n = if possible(cpu) {
            // SAFETY: `ptr` is a valid descriptor and `cpu` a possible CPU, whose per-CPU
            // counters exist.
            unsafe { bindings::irq_desc_kstat_cpu(ptr, cpu) }
        } else {
            0
        };
    }
    IrqSnapshot {
        irq,
        placement,
        effective_cpu,
        affinity: AffinitySig::of(d.affinity()),
        move_pending: d.is_move_pending(),
        // SAFETY: `ptr` is the valid descriptor `guard` locks.
        ident: unsafe { RequestId::of(ptr) },
    }
}

/// CPUs taken offline since [`count_cpu_offlines`] was first called.
static CPU_OFFLINES: AtomicU64 = AtomicU64::new(0);

/// The CPU hotplug teardown callback that counts offlines.
///
/// # Safety
///
/// Only called by the CPU hotplug core, as the teardown of the state `count_cpu_offlines`
/// registered.
unsafe extern "C" fn count_offline(_cpu: c_uint) -> c_int {
    CPU_OFFLINES.fetch_add(1, Relaxed);
    0
}

/// Starts counting CPU offlines (a dynamic CPU hotplug state whose teardown counts), once for
/// the kernel's lifetime; later calls do nothing. An offline breaks the affinity of the
/// interrupts whose CPUs all went away (`migrate_one_irq()`): a balancer tells that from a
/// user's change by [`cpu_offlines`] having moved.
///
/// Task context (it may sleep); not from a CPU hotplug callback. Returns the error of
/// `cpuhp_setup_state_nocalls()`.
pub fn count_cpu_offlines() -> Result {
    static REGISTERED: AtomicBool = AtomicBool::new(false);
    if REGISTERED.swap(true, SeqCst) {
        return Ok(());
    }
    // SAFETY: `count_offline` is a valid teardown callback for the kernel's lifetime (built in);
    // the name is a static string.
    let r = unsafe {
        bindings::__cpuhp_setup_state(
            bindings::cpuhp_state_CPUHP_AP_ONLINE_DYN,
            c"irq/stat:offline".as_char_ptr(),
            false,
            None,
            Some(count_offline),
            false,
        )
    };
    if r < 0 {
        REGISTERED.store(false, Relaxed);
        return to_result(r);
    }
    Ok(())
}

/// CPUs taken offline since [`count_cpu_offlines`] was first called. Any context.
pub fn cpu_offlines() -> u64 {
    CPU_OFFLINES.load(Relaxed)
}

/// Holds off CPU hotplug while alive (`cpus_read_lock()`), from [`hold_cpu_hotplug`].
pub struct CpuHotplugGuard(crate::types::NotThreadSafe);

/// Takes the CPU hotplug lock for reading: CPUs neither come nor go until the guard is dropped.
/// Task context; it may sleep; not from a CPU hotplug callback.
pub fn hold_cpu_hotplug() -> CpuHotplugGuard {
    crate::task::might_sleep();
    // SAFETY: Task context; released by the guard's drop.
    unsafe { bindings::cpus_read_lock() };
    CpuHotplugGuard(crate::types::NotThreadSafe)
}

impl Drop for CpuHotplugGuard {
    fn drop(&mut self) {
        // SAFETY: Taken by `hold_cpu_hotplug()`.
        unsafe { bindings::cpus_read_unlock() };
    }
}

/// Lets the scheduler run another task here if one is due (`cond_resched()`), between the
/// steps of a long pass. Task context, no spinlock held; it may sleep.
pub fn cond_resched() {
    crate::task::might_sleep();
    // SAFETY: No precondition beyond the documented context, which `might_sleep()` checks.
    unsafe { bindings::irq_stat_cond_resched() };
}

/// The CPU time the current task has run since it started, in nanoseconds
/// (`task_sched_runtime(current)`, its `sum_exec_runtime` including the slice now running:
/// what `/proc/PID/schedstat` and, in clock ticks, `/proc/PID/stat`'s utime+stime add up to).
/// With `CONFIG_IRQ_TIME_ACCOUNTING`, interrupt time spent on the task's CPU is not in it. The
/// difference of two readings in one work item is that item's CPU time between them.
///
/// Task context.
pub fn current_cpu_time_ns() -> u64 {
    // SAFETY: `current` is valid in task context; the helper only reads its runtime, under its
    // runqueue's lock.
    unsafe { bindings::irq_stat_current_runtime_ns() }
}

/// The time `cpu` spent in hard interrupt handlers since boot, in nanoseconds (the "irq" column
/// of `/proc/stat`); `None` without `CONFIG_IRQ_TIME_ACCOUNTING` or for an impossible CPU. With
/// irq time accounting disabled at boot (an unstable clock, `tsc=noirqtime`) it stays 0.
///
/// Any context.
pub fn cpu_irq_time_ns(cpu: CpuId) -> Option<u64> {
    if !cfg!(CONFIG_IRQ_TIME_ACCOUNTING) || !possible(cpu.as_u32()) {
        return None;
    }
    // SAFETY: `cpu` is possible, so its `kernel_cpustat` exists.
    Some(unsafe { bindings::kcpustat_cpu_irq_ns(cpu.as_u32() as c_int) })
}

/// Where a CPU sits: identifiers shared by the CPUs of one core, one last-level cache, one
/// package, and its NUMA node. Each identifier is the first CPU of the corresponding mask.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpuTopology {
    /// First CPU of `topology_sibling_cpumask()`: SMT siblings share it.
    pub core: u32,
    /// First CPU of `cpu_coregroup_mask()` (the CPUs of the last-level cache).
    pub llc: u32,
    /// First CPU of `topology_core_cpumask()` (the package).
    pub package: u32,
    /// The NUMA node (`cpu_to_node()`), 0 without NUMA.
    pub node: u32,
    /// Active (`cpu_active()`): online and not on its way out, a target for interrupts.
    pub active: bool,
    /// Not isolated from unmanaged interrupts (`isolcpus=`, `nohz_full=`): a housekeeping CPU
    /// of `HK_TYPE_DOMAIN`, `HK_TYPE_MANAGED_IRQ` and `HK_TYPE_KERNEL_NOISE`.
    pub housekeeping: bool,
}

impl CpuTopology {
    /// The topology of `cpu`, or `None` for an impossible CPU. Any context. The topology masks
    /// change only with CPU hotplug, which a caller that needs them stable holds off
    /// ([`hold_cpu_hotplug`]); `housekeeping` is a snapshot of RCU-protected masks that cpuset
    /// may also change (isolated partitions), under its own lock and outside the hotplug lock.
    pub fn of(cpu: CpuId) -> Option<Self> {
        let n = cpu.as_u32();
        if !possible(n) {
            return None;
        }
        let first = |mask: *const bindings::cpumask| {
            // SAFETY: The topology masks of a possible CPU are valid for the kernel's lifetime.
            unsafe { first_cpu(mask) }.map_or(n, |c| c.as_u32())
        };
        let c = n as c_int;
        // SAFETY: `c` is a possible CPU; the helpers only read its topology and state.
        unsafe {
            Some(Self {
                core: first(bindings::topology_sibling_cpumask(c)),
                llc: first(bindings::cpu_llc_cpumask(c)),
                package: first(bindings::topology_core_cpumask(c)),
                node: bindings::cpu_to_node(c).max(0) as u32,
                active: bindings::cpu_active(n),
                housekeeping: bindings::cpu_is_irq_housekeeping(c),
            })
        }
    }
}
