// SPDX-License-Identifier: GPL-2.0

//! A load-aware, topology-aware interrupt balancer in Rust, built in and off unless
//! booted with `irqbalance.rust=1`.
//!
//! Every `irqbalance.interval_ms` (1000) a deferrable delayed work item, in process context:
//!
//! - reads every requested interrupt's per-CPU counts (`kstat_irqs_cpu()`, the columns of
//!   `/proc/interrupts`), its placement class and its effective CPU ([`kernel::irq::stat`]),
//!   and every CPU's interrupt time (`CONFIG_IRQ_TIME_ACCOUNTING`, the "irq" of `/proc/stat`);
//! - turns them into a load per interrupt for the interval: each CPU's interrupt time split
//!   among the interrupts it ran by their share of its count, as the irqbalance daemon does
//!   from `/proc/stat` and `/proc/interrupts` (1 us per interrupt without irq time
//!   accounting), smoothed over intervals;
//! - decides the moves with the pure function of `irq_balance_policy` (pressure with SMT
//!   siblings, hysteresis, dwell time, preference for the cache domain), and
//! - applies them with `irq_set_affinity_locked()` once [`Placer::move_to`] checked, under the
//!   descriptor lock, that the interrupt is still the one seen (the same request: a number freed
//!   and requested again is another interrupt), then checks that the effective affinity followed
//!   (at once, or, for chips that move at the next interrupt, once that move is done).
//!
//! CPU hotplug is held off (`cpus_read_lock()`) only while the CPUs' topology is read
//! (`O(nr_cpu_ids)`) and around each move, from the check that its target is still an active
//! housekeeping CPU to the check of where the interrupt went: never for the whole
//! `O(interrupts x CPUs)` pass, which yields the CPU (`cond_resched()`) between interrupts. The
//! decision runs without it; a target that went away meanwhile is skipped, not counted as a
//! failure.
//!
//! Walking every descriptor and moving interrupts take the [`Placer`] capability, which only
//! code linked into the kernel image can claim, once: this balancer claims it in its initcall,
//! whether or not it is enabled.
//!
//! It never moves per-CPU, managed or `IRQF_NOBALANCING` interrupts, interrupts whose chip
//! cannot set affinity, nor interrupts whose affinity someone else changed after the balancer
//! first saw them (a user through `/proc/irq/N/smp_affinity`, a driver; not in the first two
//! passes, while a newly requested interrupt's driver may still be placing it, nor after CPU
//! hotplug broke an affinity): those stay where they were put, from then on. It never moves an
//! interrupt onto an inactive or isolated CPU
//! (`isolcpus=`, `nohz_full=`). A move the chip refuses, or that does not take effect, is
//! counted and not retried for 1, 2, 4, ... up to 64 intervals.
//!
//! `/sys/kernel/debug/irqbalance/state` shows the load table, the last decisions and the
//! counts, the wall time (`busy_us`) and the CPU time (`cpu_us`, the work item's
//! `sum_exec_runtime`) of all passes, and the longest hold of the CPU hotplug lock
//! (`hotplug_hold_max_us`).

use kernel::{
    cpu::{
        nr_cpu_ids,
        CpuId, //
    },
    debugfs::{
        Dir,
        File, //
    },
    impl_has_delayed_work,
    irq::stat::{
        self,
        AffinitySig,
        CpuTopology,
        IrqSnapshot,
        Placement,
        Placer,
        RequestId, //
    },
    new_mutex,
    prelude::*,
    sync::{
        Arc,
        Mutex, //
    },
    time::{
        msecs_to_jiffies,
        Instant,
        Jiffies,
        Monotonic, //
    },
    workqueue::{
        self,
        new_deferrable_delayed_work,
        DelayedWork,
        WorkItem, //
    },
};

mod irq_balance_policy;

use irq_balance_policy::{
    decide,
    imbalance_permille,
    smooth,
    Class,
    Cpu,
    Irq,
    Move,
    Params, //
};

module! {
    type: IrqBalance,
    name: "irqbalance",
    authors: ["IRQ-RS Developers"],
    description: "Load-aware interrupt balancer",
    license: "GPL",
    params: {
        rust: bool {
            default: false,
            description: "Run the Rust interrupt balancer",
        },
        interval_ms: u32 {
            default: 1000,
            description: "Interval between balancing passes in ms, 10..=60000",
        },
        gain_pct: u32 {
            default: 10,
            description: "Least reduction of the busiest CPU's load for a move, %, 1..=100",
        },
        dwell: u32 {
            default: 2,
            description: "Intervals an interrupt stays put after a move, 0..=1000",
        },
        max_moves: u32 {
            default: 2,
            description: "Moves per interval at most, 1..=64",
        },
    },
}

/// Nominal load of one interrupt without interrupt time accounting, ns.
const NOMINAL_NS: u64 = 1000;

/// Longest back-off of a failing interrupt, in intervals.
const MAX_BACKOFF: u32 = 64;

/// Passes after an interrupt is first seen during which its affinity may still change without
/// being taken for someone else's choice: its driver's own placement right after the request.
const SETTLE_PASSES: u32 = 2;

/// What the balancer knows of one requested interrupt.
struct Tracked {
    irq: u32,
    /// Its counts per CPU at the last pass.
    prev: KVec<u32>,
    /// Its count deltas per CPU over the last interval.
    delta: KVec<u32>,
    /// Its smoothed load, ns per interval.
    load: u64,
    /// Where it is delivered.
    cpu: Option<u32>,
    class: Class,
    /// Intervals since its last move.
    dwell: u32,
    /// Its affinity as the balancer last saw or set it: another one means someone else set it.
    expected: AffinitySig,
    /// The CPU the balancer put it on, if it did, and the CPU offline count then: an affinity
    /// changed after an offline (CPU hotplug breaks the affinity of interrupts whose CPUs all
    /// went away) is not taken for someone else's doing.
    ours: Option<(u32, u64)>,
    /// Which request of the interrupt ([`IrqSnapshot::ident`]).
    ident: RequestId,
    /// Passes since the balancer first saw it.
    age: u32,
    /// A move whose effect is checked at the next pass (chips that move at the next interrupt).
    pending: Option<u32>,
    /// The pass from which a failed move may be retried, and the current back-off.
    retry_at: u64,
    backoff: u32,
    moves: u32,
}

/// The balancer's tables, between passes.
struct State {
    passes: u64,
    cpus: KVec<Cpu>,
    /// Per CPU id: interrupt time at the last pass, and smoothed unattributed load.
    prev_time: KVec<u64>,
    base: KVec<u64>,
    tracked: KVec<Tracked>,
    moves: u64,
    failed: u64,
    user_set: u64,
    last: KVec<Move>,
    permille: u64,
    /// Wall time of all passes.
    busy_ns: i64,
    /// CPU time of all passes (the work item's `sum_exec_runtime`).
    cpu_ns: u64,
    /// The longest single hold of the CPU hotplug lock.
    hold_max_ns: i64,
    irq_time: bool,
}

#[pin_data]
struct Balancer {
    /// The right to walk the descriptors and move interrupts.
    placer: Placer,
    params: Params,
    delay: Jiffies,
    interval_ms: u32,
    #[pin]
    state: Mutex<State>,
    #[pin]
    work: DelayedWork<Balancer>,
}

impl_has_delayed_work! {
    impl HasDelayedWork<Self> for Balancer { self.work }
}

impl WorkItem for Balancer {
    type Pointer = Arc<Balancer>;

    fn run(this: Arc<Balancer>) {
        this.pass();
        let delay = this.delay;
        // Fails only if already queued, which a work item running now is not.
        let _ = workqueue::system_power_efficient().enqueue_delayed(this, delay);
    }
}

fn zeroed<T: Copy + Default>(n: usize) -> Result<KVec<T>> {
    Ok(KVec::from_elem(T::default(), n, GFP_KERNEL)?)
}

impl Class {
    fn of(p: Placement) -> Self {
        match p {
            Placement::Movable => Class::Movable,
            Placement::PerCpu => Class::PerCpu,
            Placement::Managed => Class::Managed,
            Placement::NoBalancing => Class::NoBalancing,
            Placement::Fixed => Class::Fixed,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Class::Movable => "movable",
            Class::PerCpu => "percpu",
            Class::Managed => "managed",
            Class::NoBalancing => "nobalancing",
            Class::Fixed => "fixed",
            Class::UserSet => "user-set",
            Class::Failing => "failing",
            Class::Pending => "pending",
        }
    }
}

impl Balancer {
    /// One balancing pass. Process context (the work item).
    fn pass(&self) {
        let start = Instant::<Monotonic>::now();
        let cpu_start = stat::current_cpu_time_ns();
        let mut st = self.state.lock();
        if let Err(e) = self.pass_locked(&mut st) {
            pr_warn!("pass failed: {e:?}\n");
        }
        st.passes += 1;
        st.busy_ns += start.elapsed().as_nanos();
        // The same task ran the whole pass (a work item does not change worker).
        st.cpu_ns = st
            .cpu_ns
            .saturating_add(stat::current_cpu_time_ns().saturating_sub(cpu_start));
    }

    fn pass_locked(&self, st: &mut State) -> Result {
        let n = nr_cpu_ids() as usize;
        // The CPUs, their topology and their interrupt time over the interval, read with CPU
        // hotplug held off: `O(nr_cpu_ids)`.
        st.cpus.clear();
        let mut dt: KVec<u64> = zeroed(n)?;
        let held = Instant::<Monotonic>::now();
        let hotplug = stat::hold_cpu_hotplug();
        for id in 0..n as u32 {
            let Some(cpu) = CpuId::from_u32(id) else {
                continue;
            };
            let Some(t) = CpuTopology::of(cpu) else {
                continue;
            };
            if let Some(now) = stat::cpu_irq_time_ns(cpu) {
                dt[id as usize] = now.saturating_sub(st.prev_time[id as usize]);
                st.prev_time[id as usize] = now;
            }
            if t.active {
                st.cpus.push(
                    Cpu {
                        id,
                        core: t.core,
                        llc: t.llc,
                        package: t.package,
                        node: t.node,
                        usable: t.housekeeping,
                    },
                    GFP_KERNEL,
                )?;
            }
        }
        drop(hotplug);
        st.hold_max_ns = st.hold_max_ns.max(held.elapsed().as_nanos());
        let first = st.passes == 0;
        if first {
            // The first pass only takes the baseline.
            dt.iter_mut().for_each(|t| *t = 0);
        }

        // The requested interrupts, merged into the tracked ones (both in ascending order); the
        // tracked ones no longer requested are dropped.
        let mut old = core::mem::take(&mut st.tracked).into_iter().peekable();
        let mut counts: KVec<u32> = zeroed(n)?;
        let mut total: KVec<u64> = zeroed(n)?;
        let mut from = 0;
        while let Some(s) = self.placer.next_requested(from, &mut counts) {
            from = s.irq + 1;
            while old.next_if(|t| t.irq < s.irq).is_some() {}
            // The same number requested again (another request identity) is another interrupt.
            let mut t = if let Some(mut t) = old.next_if(|t| t.irq == s.irq && t.ident == s.ident) {
                t.dwell = t.dwell.saturating_add(1);
                t.age = t.age.saturating_add(1);
                t
            } else {
                let _ = old.next_if(|t| t.irq == s.irq);
                let mut t = Self::new_tracked(s.irq, n)?;
                // Its affinity at first sight is its starting point (a driver's or a user's
                // initial placement is balanced like any other); changes after are respected.
                t.expected = s.affinity;
                t.ident = s.ident;
                t.prev.copy_from_slice(&counts);
                t
            };
            for c in 0..n {
                t.delta[c] = counts[c].wrapping_sub(t.prev[c]);
                t.prev[c] = counts[c];
                total[c] += u64::from(t.delta[c]);
            }
            t.cpu = s.effective_cpu.map(|c| c.as_u32());
            Self::classify(st, &mut t, &s);
            st.tracked.push(t, GFP_KERNEL)?;
            // `O(nr_cpu_ids)` per interrupt, thousands of them on a large machine.
            stat::cond_resched();
        }

        // Loads: each CPU's interrupt time split by count share.
        st.irq_time = dt.iter().any(|t| *t != 0);
        for t in st.tracked.iter_mut() {
            let mut sample = 0u64;
            for c in 0..n {
                let d = u64::from(t.delta[c]);
                if d == 0 {
                    continue;
                }
                // `total[c] >= d > 0`. No 128-bit division in the kernel: ns per interval
                // times a count fits 64 bits but for absurd intervals, then saturates.
                sample = sample.saturating_add(if st.irq_time {
                    dt[c].saturating_mul(d) / total[c]
                } else {
                    d.saturating_mul(NOMINAL_NS)
                });
            }
            t.load = if first { 0 } else { smooth(t.load, sample) };
        }
        let mut base: KVec<u64> = zeroed(st.cpus.len())?;
        for (i, c) in st.cpus.iter().enumerate() {
            let id = c.id as usize;
            let unattributed = if total[id] == 0 { dt[id] } else { 0 };
            st.base[id] = smooth(st.base[id], unattributed);
            base[i] = st.base[id];
        }

        // The decision.
        let mut irqs = KVec::with_capacity(st.tracked.len(), GFP_KERNEL)?;
        for t in st.tracked.iter() {
            if let Some(cpu) = t.cpu {
                irqs.push(
                    Irq {
                        irq: t.irq,
                        cpu,
                        load: t.load,
                        class: t.class,
                        dwell: t.dwell,
                    },
                    GFP_KERNEL,
                )?;
            }
        }
        let mut loads: KVec<u64> = zeroed(st.cpus.len())?;
        for (i, c) in st.cpus.iter().enumerate() {
            loads[i] = irqs
                .iter()
                .filter(|q| q.cpu == c.id)
                .fold(base[i], |sum, q| sum.saturating_add(q.load));
        }
        st.permille = imbalance_permille(&loads);
        let mut moves = KVec::new();
        if !first {
            decide(&st.cpus, &base, &mut irqs, &self.params, &mut moves)?;
        }

        // The moves, checked, each with CPU hotplug held off from the check of its target to the
        // check of where the interrupt went.
        let mut hold_max = 0i64;
        for m in moves.iter() {
            let Some(k) = st.tracked.iter().position(|t| t.irq == m.irq) else {
                continue;
            };
            let Some(to) = CpuId::from_u32(m.to) else {
                continue;
            };
            let t = &mut st.tracked[k];
            let held = Instant::<Monotonic>::now();
            let hotplug = stat::hold_cpu_hotplug();
            // The target may have gone offline or been isolated since the topology was read:
            // then this move is dropped, not counted against the interrupt. Isolation by a
            // cpuset partition is not held off by the hotplug lock: a CPU isolated just after
            // this check gets the interrupt, and the next pass moves it off again.
            let (r, now) = if CpuTopology::of(to).is_some_and(|c| c.active && c.housekeeping) {
                let r = self.placer.move_to(m.irq, to, t.ident, t.expected);
                (Some(r), self.placer.requested(m.irq, &mut []))
            } else {
                (None, None)
            };
            drop(hotplug);
            hold_max = hold_max.max(held.elapsed().as_nanos());
            let Some(r) = r else {
                continue;
            };
            match (r, now) {
                (Ok(()), Some(s)) if s.effective_cpu == Some(to) && !s.move_pending => {
                    // The affinity is now the balancer's doing.
                    t.expected = s.affinity;
                    t.ours = Some((m.to, stat::cpu_offlines()));
                    t.cpu = Some(m.to);
                    t.dwell = 0;
                    t.moves += 1;
                    t.backoff = 0;
                    st.moves += 1;
                    pr_debug!("irq {} cpu {} -> {}\n", m.irq, m.from, m.to);
                }
                (Ok(()), _) => {
                    // A chip that moves at the next interrupt (`IRQCHIP_MOVE_DEFERRED`): a
                    // later pass checks, once the move is no longer pending.
                    t.pending = Some(m.to);
                    t.dwell = 0;
                }
                // Someone else changed it meanwhile: the next pass sees who.
                (Err(e), _) if e == EBUSY => {}
                (Err(_), _) => Self::failed(st.passes, t, &mut st.failed),
            }
        }
        st.hold_max_ns = st.hold_max_ns.max(hold_max);
        st.last = moves;
        Ok(())
    }

    fn new_tracked(irq: u32, n: usize) -> Result<Tracked> {
        Ok(Tracked {
            irq,
            prev: zeroed(n)?,
            delta: zeroed(n)?,
            load: 0,
            cpu: None,
            class: Class::Movable,
            dwell: u32::MAX,
            expected: AffinitySig::default(),
            ours: None,
            ident: RequestId::default(),
            age: 0,
            pending: None,
            retry_at: 0,
            backoff: 0,
            moves: 0,
        })
    }

    /// A move that the chip refused or that did not take effect: counted, and not retried for
    /// a back-off that doubles up to [`MAX_BACKOFF`] intervals.
    fn failed(passes: u64, t: &mut Tracked, failed: &mut u64) {
        *failed += 1;
        t.backoff = (t.backoff * 2).clamp(1, MAX_BACKOFF);
        t.retry_at = passes + u64::from(t.backoff);
    }

    /// The class of `t` this pass, from its snapshot `s` and its history.
    fn classify(st: &mut State, t: &mut Tracked, s: &IrqSnapshot) {
        let affinity = s.affinity;
        if let Some(to) = t.pending {
            if s.move_pending {
                // Still waiting for its next interrupt: neither done nor someone else's.
                t.class = Class::Pending;
                return;
            }
            t.pending = None;
            if t.cpu == Some(to) {
                t.moves += 1;
                t.backoff = 0;
                t.ours = Some((to, stat::cpu_offlines()));
                st.moves += 1;
            } else {
                Self::failed(st.passes, t, &mut st.failed);
            }
            t.expected = affinity;
        }
        if t.class == Class::UserSet {
            return;
        }
        let class = Class::of(s.placement);
        if t.age < SETTLE_PASSES && t.ours.is_none() {
            // Just requested: its driver may still be placing it (a request, then an affinity
            // of its own); that is its starting point, not a user's choice.
            t.expected = affinity;
        }
        let offline_since = t.ours.is_some_and(|(_, n)| stat::cpu_offlines() != n);
        if class == Class::Movable && affinity != t.expected && offline_since {
            // CPU hotplug broke the affinity the balancer set (a CPU went offline since, perhaps
            // only for a moment): the new one is the kernel's, and the balancer's to change.
            t.expected = affinity;
            t.ours = None;
        }
        if class == Class::Movable && affinity != t.expected {
            pr_info!(
                "irq {}: affinity set by someone else, left alone from now on\n",
                t.irq
            );
            st.user_set += 1;
            t.class = Class::UserSet;
        } else if class == Class::Movable && st.passes < t.retry_at {
            t.class = Class::Failing;
        } else {
            t.class = class;
        }
    }
}

impl State {
    fn new() -> Result<Self> {
        let n = nr_cpu_ids() as usize;
        Ok(Self {
            passes: 0,
            cpus: KVec::new(),
            prev_time: zeroed(n)?,
            base: zeroed(n)?,
            tracked: KVec::new(),
            moves: 0,
            failed: 0,
            user_set: 0,
            last: KVec::new(),
            permille: 1000,
            busy_ns: 0,
            cpu_ns: 0,
            hold_max_ns: 0,
            irq_time: false,
        })
    }

    /// The debugfs table.
    fn show(&self, interval_ms: u32, f: &mut kernel::fmt::Formatter<'_>) -> kernel::fmt::Result {
        writeln!(
            f,
            "passes {} interval_ms {} moves {} failed {} user_set {} imbalance_permille {} \
             busy_us {} cpu_us {} hotplug_hold_max_us {} irq_time {}",
            self.passes,
            interval_ms,
            self.moves,
            self.failed,
            self.user_set,
            self.permille,
            self.busy_ns / 1000,
            self.cpu_ns / 1000,
            self.hold_max_ns / 1000,
            u8::from(self.irq_time)
        )?;
        writeln!(f, "cpu core llc package node usable base_us")?;
        for c in self.cpus.iter() {
            let base = self.base.get(c.id as usize).copied().unwrap_or(0);
            writeln!(
                f,
                "{} {} {} {} {} {} {}",
                c.id,
                c.core,
                c.llc,
                c.package,
                c.node,
                u8::from(c.usable),
                base / 1000
            )?;
        }
        writeln!(f, "irq cpu load_us class moves")?;
        for t in self.tracked.iter() {
            let cpu = t.cpu.map_or(-1, i64::from);
            writeln!(
                f,
                "{} {} {} {} {}",
                t.irq,
                cpu,
                t.load / 1000,
                t.class.name(),
                t.moves
            )?;
        }
        write!(f, "last")?;
        for m in self.last.iter() {
            write!(f, " {}:{}->{}", m.irq, m.from, m.to)?;
        }
        writeln!(f)
    }
}

struct IrqBalance {
    _state: Option<Pin<KBox<File<Arc<Balancer>>>>>,
    _dir: Option<Dir>,
}

impl kernel::Module for IrqBalance {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        // Claimed whether or not the balancer runs: no other code ever holds it.
        let Some(placer) = Placer::claim::<LocalModule>() else {
            pr_err!("the placement capability is taken: no balancer\n");
            return Err(EBUSY);
        };
        if !module_parameters::rust.value() {
            return Ok(Self {
                _state: None,
                _dir: None,
            });
        }
        let interval_ms = module_parameters::interval_ms.value();
        let gain_pct = module_parameters::gain_pct.value();
        let dwell = module_parameters::dwell.value();
        let max_moves = module_parameters::max_moves.value();
        if !(10..=60_000).contains(&interval_ms)
            || !(1..=100).contains(&gain_pct)
            || dwell > 1000
            || !(1..=64).contains(&max_moves)
        {
            pr_err!("parameter out of range\n");
            return Err(EINVAL);
        }
        stat::count_cpu_offlines()?;
        let state = State::new()?;
        let b = Arc::pin_init(
            try_pin_init!(Balancer {
                placer,
                params: Params {
                    gain_pct,
                    // 1 us per interval: below that, no move is worth its cost.
                    min_gain: 1000,
                    dwell,
                    max_moves,
                },
                delay: msecs_to_jiffies(interval_ms),
                interval_ms,
                state <- new_mutex!(state),
                work <- new_deferrable_delayed_work!("irqbalance"),
            }? Error),
            GFP_KERNEL,
        )?;
        let dir = Dir::new(c"irqbalance");
        let state = KBox::pin_init(
            dir.read_callback_file(c"state", b.clone(), &|b: &Arc<Balancer>, f| {
                b.state.lock().show(b.interval_ms, f)
            }),
            GFP_KERNEL,
        )?;
        pr_info!(
            "Rust balancer every {interval_ms} ms (gain {gain_pct}%, dwell {dwell}, \
             {max_moves} moves)\n"
        );
        let delay = b.delay;
        // The work item holds its own reference and requeues itself for good: the balancer is
        // built in and never stops, so nothing it reaches is ever freed.
        let _ = workqueue::system_power_efficient().enqueue_delayed(b, delay);
        Ok(Self {
            _state: Some(state),
            _dir: Some(dir),
        })
    }
}
