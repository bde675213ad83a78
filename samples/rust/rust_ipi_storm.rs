// SPDX-License-Identifier: GPL-2.0

//! An IPI storm: cross-CPU function calls from one CPU to another in a loop, after Anton
//! Blanchard's ipistorm (github.com/antonblanchard/ipistorm), on the safe [`kernel::smp`] API.
//!
//! A kworker bound to `src` calls an empty function on `dst` (`smp_call_function_single()`), or on
//! every other online CPU with `many=1` (`on_each_cpu_cond_mask()`, which calls
//! `smp_call_function_many_cond()`: ipistorm's default mode), `calls` times per round or for
//! `duration_ms` per round, `rounds` rounds, waiting for each call (`wait=1`) or not, `delay_us`
//! microseconds apart. It reports the time per call (median, fastest and slowest round, each round
//! the sum of the calls' own times, without the delays), and how each call reached its target: by
//! the function-call IPI, the function then running in hard-IRQ context, or without one, when the
//! target idled in a polling loop and the caller only set its `TIF_NEED_RESCHED`
//! (`set_nr_if_polling()`; the function then runs from the idle task's
//! `flush_smp_call_function_queue()`). Booted with `idle=poll`, nearly every call to an idle CPU
//! should go without an IPI; with a halting idle (QEMU's `-cpu max` without MWAIT states, as here),
//! nearly every call takes one. Idle states that poll first (MWAIT, KVM's cpuidle-haltpoll) take
//! calls without an IPI too. Calls whose IPI found the target running a task other than its idle
//! task are counted apart (`by_ipi_target_busy`): they were not calls to an idle CPU. Every
//! function run is counted: a call lost or run twice fails with `EIO`.
//!
//! It runs when loaded with `run=1`, or, built in, with `rust_ipi_storm.run=1` on the command
//! line. Boot with and without `idle=poll` to compare the two idle modes.

use core::sync::atomic::{
    AtomicU32,
    Ordering::{
        Acquire,
        Release, //
    },
};
use kernel::{
    cpu::{
        nr_cpu_ids,
        CpuId, //
    },
    cpumask::CpumaskVar,
    prelude::*,
    smp,
    time::{
        delay::{
            fsleep,
            udelay, //
        },
        Delta,
        Instant,
        Monotonic, //
    },
    workqueue::work_on_cpu,
};

module! {
    type: IpiStorm,
    name: "rust_ipi_storm",
    authors: ["IRQ-RS Developers"],
    description: "Cross-CPU function-call storm: ns per call and IPIs taken",
    license: "GPL",
    params: {
        run: bool {
            default: false,
            description: "Run the storm when loaded (built in: at boot)",
        },
        src: u32 {
            default: 0,
            description: "The calling CPU",
        },
        dst: u32 {
            default: 1,
            description: "The target CPU (not src; unused with many=1)",
        },
        many: bool {
            default: false,
            description: "Call every online CPU but src at once (on_each_cpu_mask), needs wait=1",
        },
        wait: bool {
            default: true,
            description: "Wait for each call to have run",
        },
        calls: u32 {
            default: 10000,
            description: "Calls per round, 1..=10000000 (unless duration_ms is set)",
        },
        duration_ms: u32 {
            default: 0,
            description: "Length of a round in ms, 0..=60000; 0: rounds of `calls` calls",
        },
        rounds: u32 {
            default: 5,
            description: "Rounds, 1..=100; the median round is reported",
        },
        delay_us: u32 {
            default: 0,
            description: "Delay between calls in us, 0..=10000 (ipistorm's delay)",
        },
    },
}

/// Function runs in hard-IRQ context (by IPI) and outside of it (from the idle loop), over every
/// CPU; of the former, those whose IPI interrupted a task other than the idle task (the target
/// was busy, so it could not have been woken without an IPI); and the runs on `dst` (the target
/// of single calls).
static BY_IPI: AtomicU32 = AtomicU32::new(0);
static BY_IPI_BUSY: AtomicU32 = AtomicU32::new(0);
static WITHOUT_IPI: AtomicU32 = AtomicU32::new(0);
static RUNS_ON_DST: AtomicU32 = AtomicU32::new(0);

/// The function called on the target CPU(s): counts how it came. The counts are released, and
/// the last one of each run, on `dst`, is `RUNS_ON_DST`, whose acquire by the storm makes them
/// all visible to it.
#[inline(always)]
fn count_run() {
    if smp::in_hardirq() {
        BY_IPI.fetch_add(1, Release);
        if !smp::is_idle_task() {
            BY_IPI_BUSY.fetch_add(1, Release);
        }
    } else {
        WITHOUT_IPI.fetch_add(1, Release);
    }
}

/// What a storm is asked to do, checked.
struct Params {
    src: CpuId,
    /// The target of single calls; `None` with `many`.
    dst: Option<CpuId>,
    wait: bool,
    calls: u32,
    duration: Option<Delta>,
    rounds: u32,
    delay: Option<Delta>,
}

impl Params {
    /// The module parameters, or `EINVAL` for an out-of-range or inconsistent one.
    fn from_module() -> Result<Self> {
        let cpu = |n: u32| {
            CpuId::from_u32(n)
                .filter(|c| c.as_u32() < nr_cpu_ids())
                .ok_or(EINVAL)
        };
        let src = cpu(module_parameters::src.value())?;
        let many = module_parameters::many.value();
        let wait = module_parameters::wait.value();
        let dst = if many {
            None
        } else {
            let dst = cpu(module_parameters::dst.value())?;
            // A call to the calling CPU runs in place: no IPI to measure.
            if dst == src {
                return Err(EINVAL);
            }
            Some(dst)
        };
        let calls = module_parameters::calls.value();
        let duration_ms = module_parameters::duration_ms.value();
        let rounds = module_parameters::rounds.value();
        let delay_us = module_parameters::delay_us.value();
        if (many && !wait)
            || !(1..=10_000_000).contains(&calls)
            || duration_ms > 60_000
            || !(1..=100).contains(&rounds)
            || delay_us > 10_000
        {
            return Err(EINVAL);
        }
        Ok(Self {
            src,
            dst,
            wait,
            calls,
            duration: (duration_ms != 0).then(|| Delta::from_millis(duration_ms.into())),
            rounds,
            delay: (delay_us != 0).then(|| Delta::from_micros(delay_us.into())),
        })
    }
}

/// One call: to `dst`, or to every CPU of `others`, counting the runs per CPU in `runs_on`.
fn call(p: &Params, others: &CpumaskVar, runs_on: &[AtomicU32]) -> Result {
    match p.dst {
        Some(dst) if p.wait => smp::call_on(dst, || {
            count_run();
            RUNS_ON_DST.fetch_add(1, Release);
        }),
        // This module's code (`LocalModule`) stays loaded until the call has run.
        Some(dst) => smp::call_on_nowait::<LocalModule, _>(dst, || {
            count_run();
            RUNS_ON_DST.fetch_add(1, Release);
        }),
        None => smp::call_on_each(others, &|| {
            count_run();
            if let Some(n) = runs_on.get(CpuId::current().as_u32() as usize) {
                n.fetch_add(1, Release);
            }
        }),
    }
}

/// Calls between two breaks of a round, in which the kworker sleeps briefly (outside the timed
/// calls): a long round must not hog its CPU on a kernel without preemption.
const CALLS_PER_BREAK: u32 = 4096;

/// One round on `src`: the number of calls made (queued, without `wait`), the sum of their own
/// times in ns, and how the round ended: a caller of a round that failed still has to wait for
/// the calls it queued.
fn round(p: &Params, runs_on: &[AtomicU32]) -> (u32, i64, Result) {
    let mut made = 0u32;
    let mut ns = 0i64;
    let r = round_calls(p, runs_on, &mut made, &mut ns);
    (made, ns, r)
}

fn round_calls(p: &Params, runs_on: &[AtomicU32], made: &mut u32, ns: &mut i64) -> Result {
    // The targets of `many`: every possible CPU but `src` (the call skips offline ones).
    let mut others = CpumaskVar::new_zero(GFP_KERNEL)?;
    for n in 0..nr_cpu_ids() {
        if let Some(c) = CpuId::from_u32(n).filter(|c| *c != p.src) {
            others.set(c);
        }
    }
    let start = Instant::<Monotonic>::now();
    loop {
        match p.duration {
            Some(d) if start.elapsed() >= d => break,
            None if *made == p.calls => break,
            _ => {}
        }
        if *made == u32::MAX {
            return Err(EOVERFLOW);
        }
        if *made % CALLS_PER_BREAK == CALLS_PER_BREAK - 1 {
            fsleep(Delta::from_micros(20));
            // The kworker is bound to `src`; if `src` went offline it is not any more, and the
            // figures would be another CPU's.
            if CpuId::current() != p.src {
                return Err(EAGAIN);
            }
        }
        let t0 = Instant::<Monotonic>::now();
        call(p, &others, runs_on)?;
        *ns += t0.elapsed().as_nanos();
        *made += 1;
        if let Some(d) = p.delay {
            udelay(d);
        }
    }
    Ok(())
}

fn storm() -> Result {
    let p = Params::from_module()?;
    let mut runs_on = KVec::with_capacity(nr_cpu_ids() as usize, GFP_KERNEL)?;
    for _ in 0..nr_cpu_ids() {
        runs_on.push(AtomicU32::new(0), GFP_KERNEL)?;
    }
    let mut per_call = KVec::with_capacity(p.rounds as usize, GFP_KERNEL)?;
    let mut made = 0u32;
    let (by_ipi0, busy0, without0, dst0) = (
        BY_IPI.load(Acquire),
        BY_IPI_BUSY.load(Acquire),
        WITHOUT_IPI.load(Acquire),
        RUNS_ON_DST.load(Acquire),
    );
    let since = |before: u32, now: &AtomicU32| now.load(Acquire).wrapping_sub(before);
    let mut failed = Ok(());
    for _ in 0..p.rounds {
        // A round that could not start (`src` offline, no memory) ends the storm too, after the
        // wait below for what the earlier rounds queued.
        let (n, ns, r) = match work_on_cpu!(p.src, || round(&p, &runs_on)) {
            Ok(round) => round,
            Err(e) => {
                failed = Err(e);
                break;
            }
        };
        made = made.saturating_add(n);
        if let Err(e) = r.and_then(|()| {
            per_call.push(ns / i64::from(n.max(1)), GFP_KERNEL)?;
            Ok(())
        }) {
            failed = Err(e);
            break;
        }
    }
    // Calls that did not wait finish soon after. Wait for every one that was queued, for as long
    // as it takes, even if the storm failed: a queued call runs this module's code.
    if p.dst.is_some() && !p.wait {
        let mut waited_ms = 0u32;
        while since(dst0, &RUNS_ON_DST) < made {
            fsleep(Delta::from_millis(1));
            waited_ms += 1;
            if waited_ms == 1000 {
                pr_warn!("queued calls still not run after 1 s; waiting\n");
            }
        }
    }
    failed?;
    let (by_ipi, busy, without_ipi) = (
        since(by_ipi0, &BY_IPI),
        since(busy0, &BY_IPI_BUSY),
        since(without0, &WITHOUT_IPI),
    );
    per_call.sort_unstable();
    let (median, fastest, slowest) = match (
        per_call.get(per_call.len() / 2),
        per_call.first(),
        per_call.last(),
    ) {
        (Some(m), Some(f), Some(s)) => (*m, *f, *s),
        _ => return Err(EINVAL),
    };
    let target = match p.dst {
        Some(dst) => i64::from(dst.as_u32()),
        None => -1,
    };
    let (src, many, wait, rounds) = (
        p.src.as_u32(),
        u8::from(p.dst.is_none()),
        u8::from(p.wait),
        p.rounds,
    );
    pr_info!(
        "src={src} dst={target} many={many} wait={wait} rounds={rounds} calls={made} \
         ns_per_call median={median} min={fastest} max={slowest}\n"
    );
    let runs = u64::from(by_ipi) + u64::from(without_ipi);
    pr_info!("runs={runs} by_ipi={by_ipi} without_ipi={without_ipi} by_ipi_target_busy={busy}\n");
    // Exactly once per call: on `dst`, or, with `many`, on every target that was online (a CPU
    // that went offline or came online meanwhile shows as a partial count).
    let exact = match p.dst {
        Some(_) => since(dst0, &RUNS_ON_DST) == made && runs == u64::from(made),
        None => {
            let counts = runs_on.iter().map(|n| n.load(Acquire));
            let targets = counts.clone().filter(|&n| n == made).count() as u64;
            made != 0
                && targets != 0
                && counts.into_iter().all(|n| n == 0 || n == made)
                && runs == targets * u64::from(made)
        }
    };
    if !exact {
        pr_err!("the calls ran {runs} times in all, expected once per call and target\n");
        return Err(EIO);
    }
    pr_info!("done: every call ran exactly once\n");
    Ok(())
}

struct IpiStorm;

impl kernel::Module for IpiStorm {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        if !module_parameters::run.value() {
            pr_info!("not run; load with run=1 (built in: rust_ipi_storm.run=1)\n");
            return Ok(Self);
        }
        storm().inspect_err(|e| pr_err!("failed: {e:?}\n"))?;
        Ok(Self)
    }
}
