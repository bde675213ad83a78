// SPDX-License-Identifier: GPL-2.0

//! The balancer's decision: a pure function from per-interrupt loads, the CPUs' topology and the
//! current placement to a list of moves.
//!
//! Nothing here reads or changes kernel state: [`decide`] takes plain tables and returns plain
//! moves, so the KUnit tables at the end drive it exactly as the balancer's work item does
//! (`kernel/irq/irq_balance.rs`), interval after interval.
//!
//! # The rule
//!
//! Seed 004's rule (Kamble, 2003) moved the heaviest movable interrupt from the busiest CPU toward
//! the idlest. Here, each step takes the CPU under the most *pressure* (isolated CPUs included, to
//! take interrupts off them) and looks at every movable interrupt on it and every usable target
//! CPU; if none of those moves is worth making, the next CPU under pressure; the pressure of a CPU
//! is its own load plus half the load of its SMT siblings (they share the core's execution units),
//! so two heavy interrupts on the two threads of one core count as contention while another core
//! idles. A move's *gain* is how much it lowers the highest pressure among the CPUs of the two
//! cores it touches. A move is made only if its gain is at least `gain_pct` percent of the source's
//! pressure and at least `min_gain` (hysteresis: no move that does not clearly reduce the
//! imbalance), and only for an interrupt that has stayed put for `dwell` intervals. Among the moves
//! within 1/8 of the best gain, one within the source's cache domain (LLC) is preferred, then one
//! within its package, then within its NUMA node, then the one that leaves its target under the
//! least pressure. Steps repeat, on the updated loads, up to `max_moves` moves per interval.
//!
//! Loads are smoothed over intervals by [`smooth`] (half the previous estimate, half the new
//! sample), so a load that alternates from one interval to the next is seen as its mean and does
//! not make interrupts chase it.

use kernel::prelude::*;

/// Why an interrupt may or may not be moved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Class {
    /// The balancer may move it.
    Movable,
    /// A per-CPU interrupt (`IRQD_PER_CPU`): it has no other CPU.
    PerCpu,
    /// Its affinity is managed by the kernel (`irqd_affinity_is_managed()`).
    Managed,
    /// Its driver asked for no balancing (`IRQF_NOBALANCING`, `IRQD_NO_BALANCING`).
    NoBalancing,
    /// Its chip cannot change its affinity (no `irq_set_affinity`).
    Fixed,
    /// Someone else (a user through `/proc/irq/N/smp_affinity`, a driver) changed its affinity
    /// after the balancer first saw it: respected from then on.
    UserSet,
    /// A recent move was refused or did not take effect: not retried until its back-off ends.
    Failing,
    /// A move waits for the interrupt's next occurrence (`IRQCHIP_MOVE_DEFERRED` chips).
    Pending,
}

/// One CPU the balancer knows about.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Cpu {
    /// The CPU number.
    pub(crate) id: u32,
    /// An identifier shared by SMT siblings (the first CPU of `topology_sibling_cpumask()`).
    pub(crate) core: u32,
    /// An identifier shared by CPUs of one last-level cache (first of `cpu_coregroup_mask()`).
    pub(crate) llc: u32,
    /// An identifier shared by CPUs of one package (first of `topology_core_cpumask()`).
    pub(crate) package: u32,
    /// The NUMA node.
    pub(crate) node: u32,
    /// Whether interrupts may be moved onto it: online and a housekeeping CPU (not isolated by
    /// `isolcpus=` or `nohz_full=`).
    pub(crate) usable: bool,
}

/// One interrupt in one interval.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Irq {
    /// The interrupt number (virq).
    pub(crate) irq: u32,
    /// The CPU it is delivered to (first CPU of its effective affinity); updated by [`decide`]
    /// for the moves it makes.
    pub(crate) cpu: u32,
    /// Its load over the interval, in nanoseconds of interrupt time (smoothed).
    pub(crate) load: u64,
    /// Whether it may be moved.
    pub(crate) class: Class,
    /// Intervals since it last moved (`u32::MAX`: never moved).
    pub(crate) dwell: u32,
}

/// The hysteresis and the pace of the balancer.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Params {
    /// A move must lower the source's pressure by at least this percentage.
    pub(crate) gain_pct: u32,
    /// And by at least this many nanoseconds per interval.
    pub(crate) min_gain: u64,
    /// Intervals an interrupt stays put after a move.
    pub(crate) dwell: u32,
    /// Moves per interval, at most.
    pub(crate) max_moves: u32,
}

/// A move [`decide`] made: `irq` from CPU `from` to CPU `to`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Move {
    pub(crate) irq: u32,
    pub(crate) from: u32,
    pub(crate) to: u32,
}

/// Smooths a load: half the previous estimate plus half the new sample.
pub(crate) fn smooth(prev: u64, sample: u64) -> u64 {
    prev / 2 + sample / 2 + (prev & sample & 1)
}

/// The pressure of CPU `i`: its load plus half the load of its SMT siblings.
fn pressure(cpus: &[Cpu], load: &[u64], i: usize) -> u64 {
    let siblings: u64 = cpus
        .iter()
        .zip(load)
        .enumerate()
        .filter(|(j, (c, _))| *j != i && c.core == cpus[i].core)
        .map(|(_, (_, l))| *l)
        .sum();
    load[i] + siblings / 2
}

/// The highest pressure among the CPUs of the cores of CPUs `s` and `t`.
fn touched_max(cpus: &[Cpu], load: &[u64], s: usize, t: usize) -> u64 {
    let (cs, ct) = (cpus[s].core, cpus[t].core);
    (0..cpus.len())
        .filter(|&j| cpus[j].core == cs || cpus[j].core == ct)
        .map(|j| pressure(cpus, load, j))
        .max()
        .unwrap_or(0)
}

/// How far CPU `t` is from CPU `s`: 0 in the same LLC, 1 in the same package, 2 in the same
/// NUMA node, 3 beyond.
fn distance(s: &Cpu, t: &Cpu) -> u32 {
    if s.llc == t.llc {
        0
    } else if s.package == t.package {
        1
    } else if s.node == t.node {
        2
    } else {
        3
    }
}

/// A candidate move: interrupt `k` (index into the table) to CPU index `t`, its gain, how far
/// `t` is from the source, and `t`'s pressure after the move.
#[derive(Clone, Copy)]
struct Candidate {
    k: usize,
    t: usize,
    gain: u64,
    distance: u32,
    after: u64,
}

/// Decides the moves of one interval.
///
/// `cpus` lists the CPUs, `base[i]` is the load of `cpus[i]` that belongs to no interrupt of
/// `irqs` (interrupt time the balancer cannot attribute), and `irqs` the interrupts with their
/// current CPU, smoothed load, class and dwell. Interrupts on CPUs missing from `cpus` are
/// ignored. The moves are appended to `moves`, in order, and applied to `irqs[..].cpu` (`dwell`
/// of a moved interrupt becomes 0).
///
/// Loads and the gain threshold are in the same unit (nanoseconds per interval in the balancer);
/// the result depends only on the arguments.
///
/// # Errors
///
/// `EINVAL` if `base` and `cpus` differ in length, `ENOMEM` if the working tables cannot be
/// allocated.
pub(crate) fn decide(
    cpus: &[Cpu],
    base: &[u64],
    irqs: &mut [Irq],
    p: &Params,
    moves: &mut KVec<Move>,
) -> Result {
    if base.len() != cpus.len() {
        return Err(EINVAL);
    }
    let index = |id: u32| cpus.iter().position(|c| c.id == id);
    let mut load = KVec::with_capacity(cpus.len(), GFP_KERNEL)?;
    for b in base {
        load.push(*b, GFP_KERNEL)?;
    }
    for irq in irqs.iter() {
        if let Some(i) = index(irq.cpu) {
            load[i] = load[i].saturating_add(irq.load);
        }
    }
    let mut moved = KVec::from_elem(false, irqs.len(), GFP_KERNEL)?;

    // Sources with nothing to move this pass.
    let mut done = KVec::from_elem(false, cpus.len(), GFP_KERNEL)?;
    let mut made = 0;
    while made < p.max_moves {
        // The source: the CPU under the most pressure (the lowest number on a tie) that may
        // still have something to move; an isolated one too, to take interrupts off it.
        let Some((s, ps)) = (0..cpus.len())
            .filter(|&i| !done[i])
            .map(|i| (i, pressure(cpus, &load, i)))
            .fold(None, |best: Option<(usize, u64)>, (i, pr)| match best {
                Some((_, bp)) if bp >= pr => best,
                _ => Some((i, pr)),
            })
        else {
            break;
        };
        if ps == 0 {
            break;
        }
        // Off an isolated CPU, any move to a usable one is a gain of the whole load moved.
        let evacuate = !cpus[s].usable;
        let threshold = if evacuate {
            p.min_gain.max(1)
        } else {
            (ps / 100)
                .saturating_mul(u64::from(p.gain_pct))
                .max(p.min_gain)
                .max(1)
        };

        // Every acceptable (interrupt, target) pair, the best gain first.
        let mut best: Option<Candidate> = None;
        let mut cands = KVec::new();
        for (k, irq) in irqs.iter().enumerate() {
            if irq.class != Class::Movable
                || moved[k]
                || irq.dwell < p.dwell
                || irq.load == 0
                || index(irq.cpu) != Some(s)
            {
                continue;
            }
            for t in 0..cpus.len() {
                if t == s || !cpus[t].usable {
                    continue;
                }
                let before = touched_max(cpus, &load, s, t);
                load[s] -= irq.load;
                load[t] = load[t].saturating_add(irq.load);
                let after = touched_max(cpus, &load, s, t);
                let target_after = pressure(cpus, &load, t);
                load[t] -= irq.load;
                load[s] += irq.load;
                let gain = if evacuate {
                    irq.load
                } else {
                    before.saturating_sub(after)
                };
                if gain < threshold {
                    continue;
                }
                let c = Candidate {
                    k,
                    t,
                    gain,
                    distance: distance(&cpus[s], &cpus[t]),
                    after: target_after,
                };
                if best.map_or(true, |b| gain > b.gain) {
                    best = Some(c);
                }
                cands.push(c, GFP_KERNEL)?;
            }
        }
        let Some(best) = best else {
            // Nothing worth moving off this CPU: try the next one under pressure.
            done[s] = true;
            continue;
        };
        // Among the moves within 1/8 of the best gain: the nearest target, then the one left
        // under the least pressure (Kamble's "toward the idlest"), then the largest gain, then
        // the lowest interrupt and CPU index.
        let floor = best.gain - best.gain / 8;
        let Some(pick) = cands
            .iter()
            .filter(|c| c.gain >= floor)
            .min_by(|a, b| {
                a.distance
                    .cmp(&b.distance)
                    .then(a.after.cmp(&b.after))
                    .then(b.gain.cmp(&a.gain))
                    .then(a.k.cmp(&b.k))
                    .then(a.t.cmp(&b.t))
            })
            .copied()
        else {
            break;
        };
        let irq = &mut irqs[pick.k];
        load[s] -= irq.load;
        load[pick.t] = load[pick.t].saturating_add(irq.load);
        moves.push(
            Move {
                irq: irq.irq,
                from: cpus[s].id,
                to: cpus[pick.t].id,
            },
            GFP_KERNEL,
        )?;
        irq.cpu = cpus[pick.t].id;
        irq.dwell = 0;
        moved[pick.k] = true;
        made += 1;
    }
    Ok(())
}

/// The ratio, in per mille, of the highest to the mean load of `loads` (1000: even).
pub(crate) fn imbalance_permille(loads: &[u64]) -> u64 {
    let sum: u64 = loads.iter().sum();
    let max = loads.iter().copied().max().unwrap_or(0);
    if sum == 0 {
        return 1000;
    }
    max.saturating_mul(1000).saturating_mul(loads.len() as u64) / sum
}

#[cfg(CONFIG_IRQ_BALANCE_RUST_KUNIT_TEST)]
#[kunit_tests(rust_irq_balance)]
mod tests {
    use super::*;

    const H: u64 = 400_000;
    const M: u64 = 100_000;
    const L: u64 = 10_000;

    const P: Params = Params {
        gain_pct: 10,
        min_gain: 1000,
        dwell: 2,
        max_moves: 8,
    };

    /// `n` CPUs, each its own core, cache and package of node 0.
    fn flat(n: u32) -> Result<KVec<Cpu>> {
        let mut v = KVec::new();
        for id in 0..n {
            v.push(
                Cpu {
                    id,
                    core: id,
                    llc: id,
                    package: 0,
                    node: 0,
                    usable: true,
                },
                GFP_KERNEL,
            )?;
        }
        Ok(v)
    }

    fn irq(irq: u32, cpu: u32, load: u64) -> Irq {
        Irq {
            irq,
            cpu,
            load,
            class: Class::Movable,
            dwell: u32::MAX,
        }
    }

    fn zeros(n: usize) -> Result<KVec<u64>> {
        let mut v = KVec::new();
        for _ in 0..n {
            v.push(0, GFP_KERNEL)?;
        }
        Ok(v)
    }

    /// The load on each CPU of `cpus` after the moves.
    fn per_cpu(cpus: &[Cpu], irqs: &[Irq]) -> Result<KVec<u64>> {
        let mut v = zeros(cpus.len())?;
        for i in irqs {
            if let Some(c) = cpus.iter().position(|c| c.id == i.cpu) {
                v[c] += i.load;
            }
        }
        Ok(v)
    }

    #[test]
    fn kamble_four_heavy_on_cpu0_end_one_per_cpu() -> Result {
        let cpus = flat(4)?;
        let mut irqs = [irq(10, 0, H), irq(11, 0, H), irq(12, 0, H), irq(13, 0, H)];
        let mut moves = KVec::new();
        decide(&cpus, &zeros(4)?, &mut irqs, &P, &mut moves)?;
        assert_eq!(moves.len(), 3);
        let loads = per_cpu(&cpus, &irqs)?;
        assert!(loads.iter().all(|l| *l == H));
        // A second interval finds nothing to do.
        let mut again = KVec::new();
        for i in irqs.iter_mut() {
            i.dwell = u32::MAX;
        }
        decide(&cpus, &zeros(4)?, &mut irqs, &P, &mut again)?;
        assert_eq!(again.len(), 0);
        Ok(())
    }

    /// CPUs 0 and 1 are the two threads of one core; CPUs 2 and 3 are cores of their own.
    fn smt_pair_plus_two_cores() -> Result<KVec<Cpu>> {
        let mut cpus = flat(4)?;
        cpus[1].core = 0;
        for c in cpus.iter_mut() {
            c.llc = 0;
        }
        Ok(cpus)
    }

    #[test]
    fn smt_siblings_do_not_get_two_heavy_while_a_core_idles() -> Result {
        let cpus = smt_pair_plus_two_cores()?;
        // Both heavy interrupts on CPU0: the second goes to another core, not to CPU1.
        let mut irqs = [irq(20, 0, H), irq(21, 0, H), irq(22, 0, L)];
        let mut moves = KVec::new();
        decide(&cpus, &zeros(4)?, &mut irqs, &P, &mut moves)?;
        let heavy_on = |c: u32| irqs[..2].iter().filter(|i| i.cpu == c).count();
        assert_eq!(heavy_on(0) + heavy_on(1), 1);
        assert_eq!(heavy_on(2) + heavy_on(3), 1);

        // Already one on each thread of core 0: one of them moves off the core.
        let mut irqs = [irq(20, 0, H), irq(21, 1, H)];
        let mut moves = KVec::new();
        decide(&cpus, &zeros(4)?, &mut irqs, &P, &mut moves)?;
        assert_eq!(moves.len(), 1);
        assert!(moves[0].to == 2 || moves[0].to == 3);
        Ok(())
    }

    #[test]
    fn two_packages_prefer_a_move_within_the_cache_domain() -> Result {
        // Two packages of four CPUs, each with its own LLC.
        let mut cpus = flat(8)?;
        for c in cpus.iter_mut() {
            c.llc = c.id / 4 * 4;
            c.package = c.id / 4;
        }
        let mut irqs = [irq(30, 1, H), irq(31, 1, H)];
        let mut moves = KVec::new();
        decide(&cpus, &zeros(8)?, &mut irqs, &P, &mut moves)?;
        assert_eq!(moves.len(), 1);
        assert_eq!(moves[0].from, 1);
        // Within the package.
        assert!(moves[0].to < 4);

        // Package 0 busy everywhere: the move crosses to package 1.
        let mut irqs = [
            irq(30, 0, H),
            irq(31, 0, H),
            irq(32, 1, H),
            irq(33, 2, H),
            irq(34, 3, H),
        ];
        let mut moves = KVec::new();
        decide(&cpus, &zeros(8)?, &mut irqs, &P, &mut moves)?;
        assert_eq!(moves.len(), 1);
        assert!(moves[0].to >= 4);
        Ok(())
    }

    #[test]
    fn pinned_managed_nobalancing_are_never_moved() -> Result {
        let cpus = flat(4)?;
        let classes = [
            Class::PerCpu,
            Class::Managed,
            Class::NoBalancing,
            Class::Fixed,
            Class::UserSet,
            Class::Failing,
            Class::Pending,
        ];
        let mut irqs = KVec::new();
        for (n, c) in classes.iter().enumerate() {
            irqs.push(
                Irq {
                    class: *c,
                    ..irq(40 + n as u32, 0, H)
                },
                GFP_KERNEL,
            )?;
        }
        irqs.push(irq(50, 0, H), GFP_KERNEL)?;
        let mut moves = KVec::new();
        decide(&cpus, &zeros(4)?, &mut irqs, &P, &mut moves)?;
        // Only the movable one moves, however loaded CPU0 is.
        assert_eq!(moves.len(), 1);
        assert_eq!(moves[0].irq, 50);
        assert!(irqs[..classes.len()].iter().all(|i| i.cpu == 0));
        Ok(())
    }

    #[test]
    fn isolated_cpus_and_recent_movers_stay_out() -> Result {
        let mut cpus = flat(3)?;
        cpus[1].usable = false;
        let mut irqs = [irq(60, 0, H), irq(61, 0, H), irq(62, 0, H)];
        irqs[0].dwell = 1;
        let mut moves = KVec::new();
        decide(&cpus, &zeros(3)?, &mut irqs, &P, &mut moves)?;
        // Irq 60 moved an interval ago (dwell 2), CPU1 is isolated: one move, 61 to CPU2.
        assert_eq!(moves.len(), 1);
        assert_eq!(
            moves[0],
            Move {
                irq: 61,
                from: 0,
                to: 2
            }
        );
        Ok(())
    }

    #[test]
    fn a_balanced_system_produces_no_move() -> Result {
        let cpus = flat(4)?;
        // Within 5 % of each other, small interrupts that could only swap places.
        let mut irqs = [
            irq(70, 0, H),
            irq(71, 1, H - H / 40),
            irq(72, 2, H / 2),
            irq(73, 2, H / 2 + H / 50),
            irq(74, 3, H - 3 * L),
            irq(75, 3, L),
            irq(76, 0, L / 2),
        ];
        let mut moves = KVec::new();
        decide(&cpus, &zeros(4)?, &mut irqs, &P, &mut moves)?;
        assert_eq!(moves.len(), 0);
        Ok(())
    }

    #[test]
    fn alternating_loads_do_not_oscillate() -> Result {
        // Two pairs whose loads swap every interval. The first intervals may settle them (one
        // of each pair per CPU); after that, nothing moves in the remaining 17 intervals,
        // however far apart the CPUs are in each single interval.
        let cpus = flat(2)?;
        let mut irqs = [irq(80, 0, 0), irq(81, 0, 0), irq(82, 1, 0), irq(83, 1, 0)];
        let mut est = [0u64; 4];
        let (mut settle, mut total) = (0, 0);
        for interval in 0..20u32 {
            let (a, b) = if interval % 2 == 0 { (H, L) } else { (L, H) };
            for (k, sample) in [a, a, b, b].iter().enumerate() {
                est[k] = if interval == 0 {
                    *sample
                } else {
                    smooth(est[k], *sample)
                };
                irqs[k].load = est[k];
                irqs[k].dwell = irqs[k].dwell.saturating_add(1);
            }
            let mut moves = KVec::new();
            decide(&cpus, &zeros(2)?, &mut irqs, &P, &mut moves)?;
            if interval < 3 {
                settle += moves.len();
            } else {
                total += moves.len();
            }
        }
        assert!(settle <= 2);
        assert_eq!(total, 0);
        Ok(())
    }

    #[test]
    fn unattributed_load_counts_and_bad_tables_are_refused() -> Result {
        let cpus = flat(2)?;
        // CPU1 is busy with interrupt time of its own (a timer, say): nothing moves there.
        let mut irqs = [irq(90, 0, M), irq(91, 0, M)];
        let mut moves = KVec::new();
        decide(&cpus, &[0, 4 * H], &mut irqs, &P, &mut moves)?;
        assert_eq!(moves.len(), 0);
        assert_eq!(decide(&cpus, &[0], &mut irqs, &P, &mut moves), Err(EINVAL));
        Ok(())
    }

    #[test]
    fn a_stuck_busiest_cpu_does_not_stop_the_others() -> Result {
        // CPU1 is the busiest but only with time the balancer cannot move; CPU0 still sheds
        // one of its two heavy interrupts to the idle CPU2.
        let cpus = flat(3)?;
        let mut irqs = [irq(100, 0, H), irq(101, 0, H)];
        let mut moves = KVec::new();
        decide(&cpus, &[0, 8 * H, 0], &mut irqs, &P, &mut moves)?;
        assert_eq!(moves.len(), 1);
        assert_eq!(moves[0].from, 0);
        assert_eq!(moves[0].to, 2);
        Ok(())
    }

    #[test]
    fn interrupts_leave_an_isolated_cpu() -> Result {
        let mut cpus = flat(2)?;
        cpus[1].usable = false;
        let mut irqs = [irq(110, 1, H)];
        let mut moves = KVec::new();
        decide(&cpus, &zeros(2)?, &mut irqs, &P, &mut moves)?;
        assert_eq!(moves.len(), 1);
        assert_eq!(
            moves[0],
            Move {
                irq: 110,
                from: 1,
                to: 0
            }
        );
        Ok(())
    }

    #[test]
    fn imbalance_ratio() {
        assert_eq!(imbalance_permille(&[1, 1, 1, 1]), 1000);
        assert_eq!(imbalance_permille(&[4, 0, 0, 0]), 4000);
        assert_eq!(imbalance_permille(&[0, 0]), 1000);
        assert_eq!(imbalance_permille(&[3, 1]), 1500);
    }
}
