// SPDX-License-Identifier: GPL-2.0

//! GICv3 per-interrupt cost: an SGI (a reschedule IPI to self) and an SPI (a spare SPI injected
//! with `irq_set_irqchip_state(IRQCHIP_STATE_PENDING)`), taken on CPU0 through whichever GICv3
//! driver the kernel runs (`irqchip.gicv3=rust` or `c`).
//!
//! Each measurement is the fastest of `reps` rounds of `iters` interrupts, in ns per interrupt,
//! minus the same loop without the interrupt. Under QEMU's `-icount shift=0` one guest
//! instruction takes one nanosecond of guest time, so the figures are instruction counts of the
//! whole path: the send or injection, the exception entry, the root handler, the flow handler,
//! the handler and the EOI. The two drivers share everything else, so their difference is the
//! drivers'. Boot the kernel with each (`irqchip.gicv3=rust|c`) and compare.
//!
//! With `threaded_ms` set it then runs Valentin Schneider's benchmark of the threaded path (EOImode=1 series): a second
//! spare SPI (`threaded_spi`) requested ONESHOT with a threaded handler and routed to CPU1,
//! where a kworker injects it and waits (spinning) for its thread to finish, again and again for
//! `threaded_ms` ms, `reps` rounds; it reports interrupts per second (median, fastest and
//! slowest round) and ns per interrupt. The flow decides what each interrupt costs: the C
//! fasteoi masks and unmasks a ONESHOT interrupt at the distributor, the strict flow
//! (`irqchip.gicv3_flow=strict`, the Rust driver's default) leaves it masked by its active
//! state and deactivates it after the thread.
//!
//! Every injected SPI is counted by its handler: a lost or duplicated one fails with `EIO`.
//! It runs when loaded with `run=1`, or, built in, with `rust_gic_bench.run=1` on the command
//! line.

use core::sync::atomic::{
    AtomicU32,
    Ordering::Relaxed, //
};
use kernel::{
    cpu::CpuId,
    cpumask::CpumaskVar,
    irq::{
        ChipState,
        Flags,
        Handler,
        IrqReturn,
        OfIrq,
        OfThreadedIrq,
        ThreadedHandler,
        ThreadedIrqReturn, //
    },
    prelude::*,
    smp,
    time::{
        Delta,
        Instant,
        Monotonic, //
    },
    workqueue::work_on_cpu,
};

module! {
    type: GicBench,
    name: "rust_gic_bench",
    authors: ["IRQ-RS Developers"],
    description: "GICv3 per-interrupt cost, SGI and SPI",
    license: "GPL",
    params: {
        run: bool {
            default: false,
            description: "Run the measurements when loaded (built in: at boot)",
        },
        iters: u32 {
            default: 200,
            description: "Interrupts per round, 1..=100000",
        },
        reps: u32 {
            default: 16,
            description: "Rounds of each measurement, 1..=1000; the fastest is reported",
        },
        spi: u32 {
            default: 200,
            description: "The spare SPI injected (device-tree number: INTID - 32), free",
        },
        threaded_ms: u32 {
            default: 0,
            description: "Length of a round of the threaded benchmark in ms, 0..=10000; 0: off",
        },
        threaded_spi: u32 {
            default: 240,
            description: "The spare SPI of the threaded benchmark, free and not `spi`",
        },
    },
}

/// `IRQ_TYPE_EDGE_RISING`, the injected SPI's trigger in its device-tree specifier.
const EDGE_RISING: u32 = 1;

/// The SPI's handler: counts its runs.
struct Counter {
    hits: AtomicU32,
}

impl Handler for Counter {
    fn handle(&self) -> IrqReturn {
        self.hits.fetch_add(1, Relaxed);
        IrqReturn::Handled
    }
}

/// The threaded SPI's handler: the hard half wakes the thread, the thread counts.
struct Threaded {
    hard: AtomicU32,
    thread: AtomicU32,
}

impl ThreadedHandler for Threaded {
    fn handle(&self) -> ThreadedIrqReturn {
        self.hard.fetch_add(1, Relaxed);
        ThreadedIrqReturn::WakeThread
    }

    fn handle_threaded(&self) -> IrqReturn {
        self.thread.fetch_add(1, Relaxed);
        IrqReturn::Handled
    }
}

/// The EOImode=1 series' benchmark: a ONESHOT threaded SPI and a kworker on CPU1; inject, wait for the
/// thread, repeat, for `ms` ms per round, `reps` rounds. Prints interrupts per second and ns per
/// interrupt; `EIO` if a thread run is missing or doubled.
fn threaded(ms: u32, reps: u32) -> Result {
    if ms > 10_000 || module_parameters::threaded_spi.value() == module_parameters::spi.value() {
        return Err(EINVAL);
    }
    let cpu1 = CpuId::from_u32(1).ok_or(EINVAL)?;
    let irq = OfThreadedIrq::request::<LocalModule>(
        c"arm,gic-v3",
        &[0, module_parameters::threaded_spi.value(), EDGE_RISING],
        Flags::ONESHOT,
        c"rust_gic_bench_thr",
        try_init!(Threaded {
            hard: AtomicU32::new(0),
            thread: AtomicU32::new(0),
        }? Error),
    )?;
    let mut mask = CpumaskVar::new_zero(GFP_KERNEL)?;
    mask.set(cpu1);
    irq.set_affinity(&mask)?;
    let h = irq.handler();
    let round = Delta::from_millis(ms.into());
    let rounds = work_on_cpu!(cpu1, || -> Result<KVec<(u32, i64)>> {
        let mut v = KVec::with_capacity(reps as usize, GFP_KERNEL)?;
        for _ in 0..reps {
            let t0 = Instant::<Monotonic>::now();
            let mut n = 0u32;
            while t0.elapsed() < round {
                let want = h.thread.load(Relaxed).wrapping_add(1);
                irq.set_irqchip_state(ChipState::Pending, true)?;
                // The thread (SCHED_FIFO, on this CPU) preempts this kworker when the interrupt
                // wakes it; allow a second for it.
                let t1 = Instant::<Monotonic>::now();
                while h.thread.load(Relaxed) != want {
                    if t1.elapsed() > Delta::from_secs(1) {
                        pr_err!("threaded: interrupt {n} not handled by its thread\n");
                        return Err(EIO);
                    }
                    core::hint::spin_loop();
                }
                n += 1;
            }
            v.push((n, t0.elapsed().as_nanos()), GFP_KERNEL)?;
        }
        Ok(v)
    })??;
    let total: u32 = rounds.iter().map(|r| r.0).sum();
    if h.hard.load(Relaxed) != total || h.thread.load(Relaxed) != total {
        pr_err!(
            "threaded: {} hard and {} thread runs for {total} interrupts\n",
            h.hard.load(Relaxed),
            h.thread.load(Relaxed)
        );
        return Err(EIO);
    }
    let mut per_s = KVec::with_capacity(rounds.len(), GFP_KERNEL)?;
    for (n, ns) in rounds.iter() {
        per_s.push(i64::from(*n) * 1_000_000_000 / (*ns).max(1), GFP_KERNEL)?;
    }
    per_s.sort_unstable();
    let (median, slowest, fastest) = match (per_s.get(per_s.len() / 2), per_s.first(), per_s.last())
    {
        (Some(m), Some(s), Some(f)) => (*m, *s, *f),
        _ => return Err(EINVAL),
    };
    let ns_per_irq = 1_000_000_000 / median.max(1);
    pr_info!(
        "threaded irqs_per_s median={median} min={slowest} max={fastest} ns_per_irq={ns_per_irq} \
         interrupts={total} rounds={reps} ms={ms}\n"
    );
    pr_info!("threaded done: every interrupt handled once by its thread\n");
    Ok(())
}

/// The fastest of `reps` rounds of `round` (which does `iters` iterations and returns whether
/// it went right), in ns per iteration.
fn fastest(reps: u32, iters: u32, mut round: impl FnMut() -> Result) -> Result<i64> {
    let mut best = i64::MAX;
    for _ in 0..reps {
        let t0 = Instant::<Monotonic>::now();
        round()?;
        best = best.min(t0.elapsed().as_nanos());
    }
    Ok(best / i64::from(iters))
}

fn measure() -> Result {
    let iters = module_parameters::iters.value();
    let reps = module_parameters::reps.value();
    if !(1..=100_000).contains(&iters) || !(1..=1000).contains(&reps) {
        return Err(EINVAL);
    }
    let cpu0 = CpuId::from_u32(0).ok_or(EINVAL)?;

    let irq = OfIrq::request::<LocalModule>(
        c"arm,gic-v3",
        &[0, module_parameters::spi.value(), EDGE_RISING],
        Flags::NO_THREAD,
        c"rust_gic_bench",
        try_init!(Counter {
            hits: AtomicU32::new(0),
        }? Error),
    )?;
    let hits = &irq.handler().hits;

    // All on CPU0, where the SPI is routed (the first online CPU of its affinity).
    let (base, sgi, spi) = work_on_cpu!(cpu0, || -> Result<(i64, i64, i64)> {
        // The loop alone, with the same counter load per iteration.
        let base = fastest(reps, iters, || {
            for _ in 0..iters {
                core::hint::black_box(hits.load(Relaxed));
            }
            Ok(())
        })?;
        // SGI: a reschedule IPI to this CPU, taken as soon as it is sent (interrupts on).
        let sgi = fastest(reps, iters, || {
            for _ in 0..iters {
                smp::send_reschedule(cpu0)?;
                core::hint::black_box(hits.load(Relaxed));
            }
            Ok(())
        })?;
        // SPI: injected, taken when `irq_set_irqchip_state()` drops the descriptor lock.
        let spi = fastest(reps, iters, || {
            let start = hits.load(Relaxed);
            for i in 0..iters {
                irq.set_irqchip_state(ChipState::Pending, true)?;
                let want = start.wrapping_add(i + 1);
                // Taken when the descriptor lock is dropped on QEMU; allow a real GIC's latency.
                let mut spins = 0;
                while hits.load(Relaxed) != want && spins < 100_000 {
                    core::hint::spin_loop();
                    spins += 1;
                }
                if hits.load(Relaxed) != want {
                    pr_err!("SPI: interrupt {i} not taken when expected\n");
                    return Err(EIO);
                }
            }
            Ok(())
        })?;
        Ok((base, sgi, spi))
    })??;
    if hits.load(Relaxed) != iters * reps {
        pr_err!(
            "SPI: {} handler runs, expected {}\n",
            hits.load(Relaxed),
            iters * reps
        );
        return Err(EIO);
    }
    pr_info!(
        "sgi ns={} spi ns={} loop ns={} iters={iters} reps={reps}\n",
        sgi - base,
        spi - base,
        base
    );
    pr_info!("done: nothing lost or duplicated\n");
    Ok(())
}

struct GicBench;

impl kernel::Module for GicBench {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        if !module_parameters::run.value() {
            pr_info!("not run; load with run=1 (built in: rust_gic_bench.run=1)\n");
            return Ok(Self);
        }
        measure().inspect_err(|e| pr_err!("failed: {e:?}\n"))?;
        let ms = module_parameters::threaded_ms.value();
        if ms != 0 {
            threaded(ms, module_parameters::reps.value())
                .inspect_err(|e| pr_err!("threaded: failed: {e:?}\n"))?;
        }
        Ok(Self)
    }
}
