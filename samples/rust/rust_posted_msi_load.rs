// SPDX-License-Identifier: GPL-2.0

//! Rust posted-MSI load generator.
//!
//! Drives posted-MSI load through the software posting agent
//! ([`kernel::irq::posted_agent`]) and reports, for the notification handler the kernel has
//! (Rust or C, chosen at boot with `posted_msi=rust`, the default, or `posted_msi=c`):
//!
//! - `demux`: the time from re-enabling interrupts on the target CPU to the return of the
//!   notification handler (IDT entry, demux loop, handlers, EOI, exit) for a burst of 0, 1, 4
//!   and 32 vectors posted while interrupts were off; the fastest of `reps` runs. Under QEMU
//!   `-icount shift=0` a nanosecond is one guest instruction, so these are instruction counts.
//! - `load`: `msis` MSIs posted from `agent_cpu` round-robin to `vectors` interrupts of
//!   `target_cpu` while every handler run busy-waits `work_ns`, at random arrival times: the gap
//!   before each MSI is drawn uniformly from 0..=2 x the mean gap (a fixed pseudo-random
//!   sequence, the same in every run), for mean gaps of 0, 1, 2, 4 and 16 `gap_ns`. Reported:
//!   MSIs, notifications (PMN) and PMN per MSI. A notification per MSI (1000 per mille) is what
//!   remapped, non-posted MSIs take.
//!
//! Every handler run is counted against the PIR bits the agent newly set; a lost or duplicated
//! interrupt fails the run with `EIO`. Load it with `run=1`, or, built in, boot with
//! `rust_posted_msi_load.run=1`; a benchmark script collects the lines.

use core::sync::atomic::{
    AtomicU32,
    Ordering::Relaxed, //
};
use kernel::{
    cpu::CpuId,
    interrupt::local_interrupt_disable,
    irq::{
        posted,
        posted_agent::{
            PostedDomain,
            PostedIrq, //
        },
        Handler,
        IrqReturn, //
    },
    prelude::*,
    time::{
        delay::fsleep,
        Delta,
        Instant,
        Monotonic, //
    },
    workqueue::work_on_cpu,
};

module! {
    type: PostedMsiLoad,
    name: "rust_posted_msi_load",
    authors: ["IRQ-RS Developers"],
    description: "Posted-MSI load generator",
    license: "GPL",
    params: {
        run: bool {
            default: false,
            description: "Run the measurements when loaded (built in: at boot)",
        },
        target_cpu: u32 {
            default: 1,
            description: "CPU whose posted-interrupt descriptor takes the MSIs",
        },
        agent_cpu: u32 {
            default: 0,
            description: "CPU that posts the load's MSIs, standing in for the IOMMU",
        },
        vectors: u32 {
            default: 32,
            description: "Interrupts posted to, 1..=64",
        },
        msis: u32 {
            default: 20000,
            description: "MSIs per load point, 1..=10000000",
        },
        work_ns: u32 {
            default: 2000,
            description: "Busy time of each handler run under load, ns (at most 1000000)",
        },
        gap_ns: u32 {
            default: 2000,
            description: "Mean gap unit, ns: load points at 0, 1, 2, 4 and 16 units",
        },
        reps: u32 {
            default: 16,
            description: "Runs of each demux measurement, 1..=1000; the fastest is reported",
        },
    },
}

/// The handler of one posted interrupt: counts its runs, busy-waits `work_ns`.
#[pin_data]
struct Line {
    hits: AtomicU32,
    /// Newly set PIR bits of this interrupt, counted by the poster.
    posted: AtomicU32,
    work_ns: AtomicU32,
}

impl Handler for Line {
    fn handle(&self) -> IrqReturn {
        self.hits.fetch_add(1, Relaxed);
        let work = i64::from(self.work_ns.load(Relaxed));
        if work > 0 {
            let start = Instant::<Monotonic>::now();
            while start.elapsed().as_nanos() < work {
                core::hint::spin_loop();
            }
        }
        IrqReturn::Handled
    }
}

/// xorshift64: the pseudo-random arrival times of the load, the same sequence in every run.
struct XorShift(u64);

impl XorShift {
    /// Returns a number in `0..n` (`n > 0`), nearly uniform for the small `n` used here.
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

struct Setup {
    target: CpuId,
    agent: CpuId,
    lines: KVec<PostedIrq<Line>>,
}

impl Setup {
    fn new() -> Result<Self> {
        let target = CpuId::from_u32(module_parameters::target_cpu.value()).ok_or(EINVAL)?;
        let agent = CpuId::from_u32(module_parameters::agent_cpu.value()).ok_or(EINVAL)?;
        let n = module_parameters::vectors.value();
        if target == agent || !(1..=64).contains(&n) {
            return Err(EINVAL);
        }
        let domain = PostedDomain::new(c"rust-posted-msi-load")?;
        let mut lines = KVec::with_capacity(n as usize, GFP_KERNEL)?;
        for _ in 0..n {
            let line = try_pin_init!(Line {
                hits: AtomicU32::new(0),
                posted: AtomicU32::new(0),
                work_ns: AtomicU32::new(0),
            });
            lines.push(
                PostedIrq::new::<LocalModule>(&domain, target, c"rust_posted_msi_load", line)?,
                GFP_KERNEL,
            )?;
        }
        Ok(Self {
            target,
            agent,
            lines,
        })
    }

    /// Posts one MSI of `line`, counting a newly set PIR bit; returns whether it notified.
    fn post(line: &PostedIrq<Line>) -> Result<bool> {
        let p = line.post()?;
        if p.new {
            line.handler().posted.fetch_add(1, Relaxed);
        }
        Ok(p.notified)
    }

    /// Waits until every handler ran once per newly set PIR bit, then checks that no extra run
    /// follows. `EIO` for a lost or duplicated interrupt.
    fn drain(&self) -> Result<u32> {
        let counts = || {
            self.lines.iter().map(|l| {
                let h = l.handler();
                (h.hits.load(Relaxed), h.posted.load(Relaxed))
            })
        };
        let start = Instant::<Monotonic>::now();
        while counts().any(|(hits, posted)| hits != posted) && start.elapsed().as_millis() < 10_000
        {
            fsleep(Delta::from_millis(1));
        }
        fsleep(Delta::from_millis(20));
        let mut runs = 0;
        for (i, (hits, posted)) in counts().enumerate() {
            if hits != posted {
                pr_err!("interrupt {i}: {hits} handler runs for {posted} posted vectors\n");
                return Err(EIO);
            }
            runs += hits;
        }
        Ok(runs)
    }

    fn reset(&self, work_ns: u32) {
        for l in &self.lines {
            let h = l.handler();
            h.hits.store(0, Relaxed);
            h.posted.store(0, Relaxed);
            h.work_ns.store(work_ns, Relaxed);
        }
    }

    /// Fastest notification, in ns, for a burst of `n` vectors posted with interrupts off on
    /// the target CPU.
    fn demux(&self, n: usize, reps: u32) -> Result<i64> {
        self.reset(0);
        let lines = &self.lines[..n];
        let target = self.target;
        let best = work_on_cpu!(target, || -> Result<i64> {
            let mut best = i64::MAX;
            for _ in 0..reps {
                let pmn = posted::notification_count(target);
                let irqs_off = local_interrupt_disable();
                let mut notified = false;
                for l in lines {
                    if l.target().map(|(cpu, _)| cpu) != Some(target) {
                        return Err(EINVAL);
                    }
                    notified |= Self::post(l)?;
                }
                // The empty notification: what a burst costs on top of it is the demux.
                if n == 0 {
                    posted::send_notification(target)?;
                    notified = true;
                }
                let t0 = Instant::<Monotonic>::now();
                // Interrupts on: the pending notification runs here.
                drop(irqs_off);
                let dt = t0.elapsed().as_nanos();
                // Exactly this notification ran in the measured window.
                if !notified || posted::notification_count(target).wrapping_sub(pmn) != 1 {
                    pr_err!("demux burst={n}: the notification was not taken when expected\n");
                    return Err(EIO);
                }
                best = best.min(dt);
                fsleep(Delta::from_micros(500));
            }
            Ok(best)
        })??;
        let runs = self.drain()?;
        if runs != n as u32 * reps {
            pr_err!(
                "demux burst={n}: {runs} handler runs, expected {}\n",
                n as u32 * reps
            );
            return Err(EIO);
        }
        Ok(best)
    }

    /// Posts `msis` MSIs round-robin over the interrupts, `gap_ns` apart on average, from the agent
    /// CPU; returns (notifications sent, PMN taken, handler runs).
    fn load(&self, msis: u32, gap_ns: u32, work_ns: u32) -> Result<(u32, u32, u32)> {
        self.reset(work_ns);
        let pmn0 = posted::notification_count(self.target);
        let lines = &self.lines;
        let sent = work_on_cpu!(self.agent, || -> Result<u32> {
            let start = Instant::<Monotonic>::now();
            let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
            let mut due = 0u64;
            let mut sent = 0;
            for i in 0..msis {
                due += rng.below(2 * u64::from(gap_ns) + 1);
                while (start.elapsed().as_nanos() as u64) < due {
                    core::hint::spin_loop();
                }
                sent += u32::from(Self::post(&lines[i as usize % lines.len()])?);
            }
            Ok(sent)
        })??;
        let runs = self.drain()?;
        let pmn = posted::notification_count(self.target).wrapping_sub(pmn0);
        Ok((sent, pmn, runs))
    }
}

fn measure() -> Result {
    let implementation = if posted::rust_selected() { "rust" } else { "c" };
    let msis = module_parameters::msis.value();
    let work_ns = module_parameters::work_ns.value();
    let gap_ns = module_parameters::gap_ns.value();
    let reps = module_parameters::reps.value();
    if !(1..=10_000_000).contains(&msis) || work_ns > 1_000_000 || !(1..=1000).contains(&reps) {
        return Err(EINVAL);
    }
    // At most 10 s per load point (the slowest MSI rate, or handlers' work at every MSI).
    let per_msi = u64::from(gap_ns).saturating_mul(16).max(u64::from(work_ns));
    let gap = |k: u32| gap_ns.checked_mul(k).ok_or(EINVAL);
    if u64::from(msis).saturating_mul(per_msi) > 10_000_000_000 {
        return Err(EINVAL);
    }
    let gaps = [0, gap(1)?, gap(2)?, gap(4)?, gap(16)?];
    let setup = Setup::new()?;
    pr_info!(
        "impl={implementation} target_cpu={} agent_cpu={} vectors={}\n",
        setup.target.as_u32(),
        setup.agent.as_u32(),
        setup.lines.len()
    );
    for n in [0, 1, 4, 32] {
        if n > setup.lines.len() {
            continue;
        }
        let ns = setup.demux(n, reps)?;
        pr_info!("impl={implementation} demux burst={n} ns={ns} reps={reps}\n");
    }
    for gap in gaps {
        let (sent, pmn, runs) = setup.load(msis, gap, work_ns)?;
        pr_info!(
            "impl={implementation} load gap_ns={gap} work_ns={work_ns} msis={msis} handler_runs={runs} notifications={sent} pmn={pmn} pmn_per_msi_permille={}\n",
            u64::from(pmn) * 1000 / u64::from(msis)
        );
    }
    pr_info!("impl={implementation} done: nothing lost or duplicated\n");
    Ok(())
}

struct PostedMsiLoad;

impl kernel::Module for PostedMsiLoad {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        if !module_parameters::run.value() {
            pr_info!("not run; load with run=1 (built in: rust_posted_msi_load.run=1)\n");
            return Ok(Self);
        }
        measure().inspect_err(|e| pr_err!("failed: {e:?}\n"))?;
        Ok(Self)
    }
}
