// SPDX-License-Identifier: GPL-2.0

//! An interrupt load for interrupt balancers: eight software interrupts with fixed rates and
//! busy-waiting handlers, all on CPU0 at the start, heavy and light swapped halfway.
//!
//! The interrupts are posted MSIs of the software posting agent
//! ([`kernel::irq::posted_agent`]), real interrupts of the x86 vector domain requested without
//! `IRQF_NOBALANCING` ([`PostedIrq::new_movable`]): a balancer moves them with
//! `irq_set_affinity()` as it would a device's MSIs, and each runs its handler on the CPU it is
//! routed to, counted in `/proc/interrupts` and in that CPU's interrupt time.
//!
//! Two heavy (2000/s, 60 us each: 12 % of a CPU), two medium (1000/s, 30 us: 3 %) and four
//! light (500/s, 6 us: 0.3 %) interrupts are posted from `agent_cpu` for `seconds` seconds (with
//! `stretch=N`, at 1/N of those rates with N times the handler time: the same load in fewer
//! interrupts, so that where an interrupt's entry and exit cost far more than on hardware, as
//! under TCG, the handlers' time still outweighs them);
//! halfway, the heavy and the light ones swap rates and handler times. Every second it prints
//! a window line: the handler time of each CPU, R = the highest over the mean (per mille), R*
//! = the same for the best assignment of the handler times each interrupt actually ran in that
//! window (longest processing time first), both over the CPUs a balancer may use (active and
//! not isolated), and where each interrupt is routed. At the end, a summary: the time to
//! converge (R within 10 % of R* for 5 windows) after the start and after the swap, the moves
//! seen (routing changes between windows), and whether every post that set a PIR bit ran its
//! handler exactly once (`EIO` otherwise).
//!
//! Loaded with `run=1` or, built in, booted with `rust_irq_balance_load.run=1`; with
//! `background=1` it runs in a work item, `delay_ms` after loading, so that booting goes on and
//! user space (a balancer daemon) runs beside it; it then ends with a "done" or a "failed" line.
//! It measures interrupt balancers: the in-kernel one and the irqbalance daemon.

use core::sync::atomic::{
    AtomicU32,
    AtomicU64,
    Ordering::Relaxed, //
};
use kernel::{
    cpu::{
        nr_cpu_ids,
        CpuId, //
    },
    irq::{
        posted_agent::{
            PostedDomain,
            PostedIrq, //
        },
        stat::CpuTopology,
        Handler,
        IrqReturn, //
    },
    prelude::*,
    sync::Arc,
    time::{
        delay::fsleep,
        Delta,
        Instant,
        Monotonic, //
    },
    workqueue::{
        impl_has_work,
        new_work,
        system_long,
        work_on_cpu,
        Work,
        WorkItem, //
    },
};

module! {
    type: IrqBalanceLoad,
    name: "rust_irq_balance_load",
    authors: ["IRQ-RS Developers"],
    description: "Interrupt load for interrupt balancers",
    license: "GPL",
    params: {
        run: bool {
            default: false,
            description: "Run the load when loaded (built in: at boot)",
        },
        seconds: u32 {
            default: 20,
            description: "Length of the load in s, 4..=600; heavy and light swap halfway",
        },
        agent_cpu: u32 {
            default: 3,
            description: "CPU that posts the MSIs, standing in for the IOMMU",
        },
        background: bool {
            default: false,
            description: "Run in a work item, so that booting goes on (built in only)",
        },
        delay_ms: u32 {
            default: 0,
            description: "With background=1, start this long after loading, ms, 0..=600000",
        },
        stretch: u32 {
            default: 1,
            description: "Rates divided, handler times multiplied by this, 1..=50 (50: 3 ms)",
        },
    },
}

/// CPUs whose handler time is recorded.
const MAX_CPUS: usize = 64;

/// Handler time per CPU, ns.
static BUSY: [AtomicU64; MAX_CPUS] = [const { AtomicU64::new(0) }; MAX_CPUS];

/// The interrupts: (rate per second, handler time in us) before the swap; after it the heavy
/// and the light ones trade places.
const LOAD: [(u32, u32); 8] = [
    (2000, 60),
    (2000, 60),
    (1000, 30),
    (1000, 30),
    (500, 6),
    (500, 6),
    (500, 6),
    (500, 6),
];

/// The load of interrupt `k` in phase `phase` (0 before the swap, 1 after): its rate per second
/// and handler time in us, each stretched by `stretch` (the rate divided, the handler time
/// multiplied: the same share of a CPU in fewer, longer interrupts).
fn load_of(k: usize, phase: usize, stretch: u32) -> (u32, u32) {
    let k = if phase == 0 {
        k
    } else {
        match k {
            0 | 1 => k + 4,
            4 | 5 => k - 4,
            _ => k,
        }
    };
    let (rate, us) = LOAD[k];
    (rate / stretch, us * stretch)
}

/// The handler of one interrupt: counts its runs, busy-waits its handler time.
#[pin_data]
struct Line {
    hits: AtomicU32,
    /// Posts that set the vector's PIR bit (each owes one handler run).
    posted: AtomicU32,
    work_ns: AtomicU32,
    /// Handler time, ns.
    busy: AtomicU64,
}

impl Handler for Line {
    fn handle(&self) -> IrqReturn {
        self.hits.fetch_add(1, Relaxed);
        let work = i64::from(self.work_ns.load(Relaxed));
        let start = Instant::<Monotonic>::now();
        while start.elapsed().as_nanos() < work {
            core::hint::spin_loop();
        }
        let ns = start.elapsed().as_nanos() as u64;
        self.busy.fetch_add(ns, Relaxed);
        if let Some(b) = BUSY.get(CpuId::current().as_u32() as usize) {
            b.fetch_add(ns, Relaxed);
        }
        IrqReturn::Handled
    }
}

/// R* in per mille: the highest over the mean CPU load of the longest-processing-time-first
/// assignment of `loads` to `cpus` CPUs.
fn best_ratio(loads: &[u64], cpus: usize) -> Result<u64> {
    let mut sorted = KVec::with_capacity(loads.len(), GFP_KERNEL)?;
    for l in loads {
        sorted.push(*l, GFP_KERNEL)?;
    }
    sorted.sort_unstable_by(|a, b| b.cmp(a));
    let mut bins = KVec::with_capacity(cpus, GFP_KERNEL)?;
    for _ in 0..cpus {
        bins.push(0u64, GFP_KERNEL)?;
    }
    for l in sorted.iter() {
        if let Some(min) = bins.iter_mut().min() {
            *min += l;
        }
    }
    Ok(ratio(&bins))
}

/// The highest over the mean of `v`, per mille (1000 when all are 0).
fn ratio(v: &[u64]) -> u64 {
    let sum: u64 = v.iter().sum();
    let max = v.iter().copied().max().unwrap_or(0);
    (max * 1000 * v.len() as u64)
        .checked_div(sum)
        .unwrap_or(1000)
}

/// The first window from `from` on that starts 5 windows in a row with R within 10 % of R*.
fn converged(r: &[(u64, u64)], from: usize, to: usize) -> Option<usize> {
    (from..to.saturating_sub(4)).find(|&w| (w..w + 5).all(|i| r[i].0 * 10 <= r[i].1 * 11))
}

fn run_load() -> Result {
    let seconds = module_parameters::seconds.value();
    if !(4..=600).contains(&seconds) {
        return Err(EINVAL);
    }
    let stretch = module_parameters::stretch.value();
    if !(1..=50).contains(&stretch) {
        return Err(EINVAL);
    }
    let agent = CpuId::from_u32(module_parameters::agent_cpu.value())
        .filter(|c| c.as_u32() < nr_cpu_ids())
        .ok_or(EINVAL)?;
    let cpu0 = CpuId::from_u32(0).ok_or(EINVAL)?;
    // The CPUs a balancer may use: active and not isolated (`isolcpus=`, `nohz_full=`). R and R*
    // are taken over them. The agent may be one of them or an isolated CPU of its own, which
    // keeps the posting CPU's own cost out of the handler times.
    let mut online = KVec::new();
    for n in 0..nr_cpu_ids().min(MAX_CPUS as u32) {
        if let Some(c) = CpuId::from_u32(n) {
            if CpuTopology::of(c).is_some_and(|t| t.active && t.housekeeping) {
                online.push(c, GFP_KERNEL)?;
            }
        }
    }
    if !CpuTopology::of(agent).is_some_and(|t| t.active) || !online.contains(&cpu0) {
        return Err(EINVAL);
    }
    let targets: KVec<u32> = {
        let mut v = KVec::new();
        for c in online.iter() {
            v.push(c.as_u32(), GFP_KERNEL)?;
        }
        v
    };
    let domain = PostedDomain::new(c"rust-irq-balance-load")?;
    let mut lines = KVec::new();
    for k in 0..LOAD.len() {
        let line = try_pin_init!(Line {
            hits: AtomicU32::new(0),
            posted: AtomicU32::new(0),
            work_ns: AtomicU32::new(load_of(k, 0, stretch).1 * 1000),
            busy: AtomicU64::new(0),
        }? Error);
        lines.push(
            PostedIrq::new_movable::<LocalModule>(&domain, cpu0, c"rust_irq_balance_load", line)?,
            GFP_KERNEL,
        )?;
    }
    let irqs: KVec<u32> = {
        let mut v = KVec::new();
        for l in lines.iter() {
            v.push(l.irq(), GFP_KERNEL)?;
        }
        v
    };
    pr_info!(
        "irqs {:?} on CPU0, {} s, swap at {} s, posted from CPU{}, balanced over CPUs {:?}, \
         stretch {}\n",
        &irqs[..],
        seconds,
        seconds / 2,
        agent.as_u32(),
        &targets[..],
        stretch
    );

    // (R, R*) per window, and routing changes seen.
    let lines_ref = &lines;
    let (windows, moves) = work_on_cpu!(agent, || -> Result<(KVec<(u64, u64)>, u32)> {
        let mut windows = KVec::new();
        let mut moves = 0u32;
        let start = Instant::<Monotonic>::now();
        let mut sent = [0u64; LOAD.len()];
        let mut phase_start = start;
        let mut phase = 0;
        let mut where_was: [Option<CpuId>; LOAD.len()] = [None; LOAD.len()];
        let mut busy0 = [0u64; MAX_CPUS];
        let mut irq_busy0 = [0u64; LOAD.len()];
        for (b, a) in busy0.iter_mut().zip(BUSY.iter()) {
            *b = a.load(Relaxed);
        }
        let mut next_window = 1i64;
        loop {
            let now = start.elapsed().as_millis();
            if now >= i64::from(seconds) * 1000 {
                break;
            }
            if phase == 0 && now >= i64::from(seconds / 2) * 1000 {
                phase = 1;
                phase_start = Instant::<Monotonic>::now();
                sent = [0; LOAD.len()];
                for (k, l) in lines_ref.iter().enumerate() {
                    l.handler()
                        .work_ns
                        .store(load_of(k, 1, stretch).1 * 1000, Relaxed);
                }
                pr_info!("swap: heavy and light traded places\n");
            }
            // Post what is due at each interrupt's rate.
            let el = (phase_start.elapsed().as_nanos() / 1000) as u64;
            for (k, l) in lines_ref.iter().enumerate() {
                let due = u64::from(load_of(k, phase, stretch).0) * el / 1_000_000;
                while sent[k] < due {
                    sent[k] += 1;
                    if l.post()?.new {
                        l.handler().posted.fetch_add(1, Relaxed);
                    }
                }
            }
            if now >= next_window * 1000 {
                let mut busy = KVec::new();
                for c in online.iter() {
                    let i = c.as_u32() as usize;
                    let b = BUSY[i].load(Relaxed);
                    busy.push(b - busy0[i], GFP_KERNEL)?;
                    busy0[i] = b;
                }
                // R* of the loads that actually ran in this window: under TCG the posts do not
                // always reach their nominal rates (a post finding its vector still pending
                // coalesces with it).
                let mut ran = KVec::new();
                for (k, l) in lines_ref.iter().enumerate() {
                    let b = l.handler().busy.load(Relaxed);
                    ran.push(b - irq_busy0[k], GFP_KERNEL)?;
                    irq_busy0[k] = b;
                }
                let (r, rstar) = (ratio(&busy), best_ratio(&ran, online.len())?);
                let mut at = [u32::MAX; LOAD.len()];
                for (k, l) in lines_ref.iter().enumerate() {
                    let cpu = l.target().map(|(c, _)| c);
                    if where_was[k].is_some() && cpu != where_was[k] {
                        moves += 1;
                    }
                    where_was[k] = cpu;
                    at[k] = cpu.map_or(u32::MAX, |c| c.as_u32());
                }
                let us: KVec<u64> = {
                    let mut v = KVec::new();
                    for b in busy.iter() {
                        v.push(b / 1000, GFP_KERNEL)?;
                    }
                    v
                };
                pr_info!(
                    "window {} phase {} busy_us {:?} R_permille {} Rstar_permille {} cpus {:?}\n",
                    next_window,
                    phase,
                    &us[..],
                    r,
                    rstar,
                    at
                );
                windows.push((r, rstar), GFP_KERNEL)?;
                next_window += 1;
            }
            fsleep(Delta::from_millis(1));
        }
        Ok((windows, moves))
    })??;

    // Let the last posts run, then check that every one ran exactly once.
    let mut exact = false;
    for _ in 0..1000 {
        exact = lines
            .iter()
            .all(|l| l.handler().hits.load(Relaxed) == l.handler().posted.load(Relaxed));
        if exact {
            break;
        }
        fsleep(Delta::from_millis(1));
    }
    let half = windows.len() / 2;
    let conv = converged(&windows, 0, half);
    let reconv = converged(&windows, half, windows.len());
    let fmt_conv = |c: Option<usize>, from: usize| c.map_or(-1, |w| (w - from) as i64 + 1);
    let last = windows.last().copied().unwrap_or((0, 0));
    let (hits, posted) = lines.iter().fold((0u64, 0u64), |(h, p), l| {
        (
            h + u64::from(l.handler().hits.load(Relaxed)),
            p + u64::from(l.handler().posted.load(Relaxed)),
        )
    });
    pr_info!(
        "summary windows {} converge_s {} reconverge_s {} final_R_permille {} final_Rstar_permille \
         {} moves {} posted {} handled {}\n",
        windows.len(),
        fmt_conv(conv, 0),
        fmt_conv(reconv, half),
        last.0,
        last.1,
        moves,
        posted,
        hits
    );
    if !exact {
        pr_err!("lost or duplicated interrupts: {posted} posted, {hits} handled\n");
        return Err(EIO);
    }
    pr_info!("done: every interrupt handled exactly once\n");
    Ok(())
}

struct IrqBalanceLoad;

/// The load run in the background (`background=1`).
#[pin_data]
struct Background {
    delay_ms: u32,
    #[pin]
    work: Work<Background>,
}

impl_has_work! {
    impl HasWork<Self> for Background { self.work }
}

impl WorkItem for Background {
    type Pointer = Arc<Background>;

    fn run(this: Arc<Background>) {
        fsleep(Delta::from_millis(this.delay_ms.into()));
        if let Err(e) = run_load() {
            pr_err!("failed: {e:?}\n");
        }
    }
}

impl kernel::Module for IrqBalanceLoad {
    fn init(module: &'static ThisModule) -> Result<Self> {
        if !module_parameters::run.value() {
            return Ok(Self);
        }
        if !module_parameters::background.value() {
            run_load().inspect_err(|e| pr_err!("failed: {e:?}\n"))?;
            return Ok(Self);
        }
        let delay_ms = module_parameters::delay_ms.value();
        if delay_ms > 600_000 {
            return Err(EINVAL);
        }
        // Built in only: a loadable module could be unloaded under the work item, which runs its
        // code.
        if !module.as_ptr().is_null() {
            return Err(EINVAL);
        }
        let bg = Arc::pin_init(
            pin_init!(Background {
                delay_ms,
                work <- new_work!("rust_irq_balance_load::Background::work"),
            }),
            GFP_KERNEL,
        )?;
        // Fails only if already queued, which a new work item is not.
        let _ = system_long().enqueue(bg);
        Ok(Self)
    }
}
