// SPDX-License-Identifier: GPL-2.0

//! KUnit tests of the provider-side abstractions: a software interrupt controller written
//! entirely in Rust (chip state in atomics, no MMIO), its domains, and interrupts requested on it
//! with the consumer-side registrations.
//!
//! C model: [`kernel/irq/irq_test.c`](srctree/kernel/irq/irq_test.c).

#[macros::kunit_tests(rust_irq_provider)]
mod tests {
    use crate::{
        error::to_result,
        interrupt::LocalInterruptDisabled,
        irq::{
            AckCtx, ChainedHandler, ChainedIrqGuard, Chip, ChipFlag, ChipFlags, ChipState,
            ChipVtable, Domain, DomainOps, Flags, FlowHandler, FwSpec, IrqData, IrqDesc, IrqReturn,
            LockedIrqData, Mapper, MsiMsg, Registration, ThreadedHandler, ThreadedIrqReturn,
            ThreadedRegistration, TriggerType,
        },
        prelude::*,
        sync::{
            atomic::{Atomic, Full, Relaxed},
            Arc, Completion,
        },
    };

    /// Number of lines of a software controller with the C flows (edge, level, fasteoi, simple).
    const NR_LINES: usize = 32;
    /// Number of lines of a software controller: then the flows written in Rust, 32..48
    /// fasteoi (40..48 in the EOImode=1 model, masked by their active state: the strict flow),
    /// 48..56 the C per-CPU devid flow, 56..64 the Rust one.
    const NR_ALL: usize = 64;
    /// The lines of the EOImode=1 model.
    const STRICT: core::ops::Range<usize> = 40..48;

    /// Events recorded in the order they happen. A chip event is `controller id * 16 + op`.
    const OP_MASK: u32 = 1;
    const OP_UNMASK: u32 = 2;
    const OP_ACK: u32 = 3;
    const OP_EOI: u32 = 4;
    const OP_SET_TYPE: u32 = 5;
    const OP_STARTUP: u32 = 6;
    const OP_SHUTDOWN: u32 = 7;
    const OP_ENABLE: u32 = 8;
    const OP_DISABLE: u32 = 9;
    const OP_MASK_ACK: u32 = 10;
    const OP_WAKE_ON: u32 = 11;
    const OP_WAKE_OFF: u32 = 12;
    const OP_IPI_SINGLE: u32 = 13;
    const OP_IPI_MASK: u32 = 14;
    /// A domain's `activate`, recorded as a chip event (`controller id * 16 + op`); its
    /// `deactivate` and `unmap` are the plain events below.
    const OP_ACTIVATE: u32 = 15;
    const DOM_DEACTIVATE: u32 = 200;
    const DOM_UNMAP: u32 = 201;
    const HARD: u32 = 100;
    const THREAD: u32 = 101;

    const LOG_LEN: usize = 64;

    /// The event log shared by chips and handlers.
    struct Log {
        ev: [Atomic<u32>; LOG_LEN],
        len: Atomic<u32>,
    }

    static LOG: Log = Log {
        ev: [const { Atomic::new(0) }; LOG_LEN],
        len: Atomic::new(0),
    };

    fn record(ev: u32) {
        let i = LOG.len.fetch_add(1, Full) as usize;
        if i < LOG_LEN {
            LOG.ev[i].store(ev, Relaxed);
        }
    }

    fn reset_log() {
        LOG.len.store(0, Relaxed);
    }

    fn log() -> KVec<u32> {
        let n = (LOG.len.load(Relaxed) as usize).min(LOG_LEN);
        let mut v = KVec::new();
        for e in &LOG.ev[..n] {
            // Capacity for `LOG_LEN` events is tiny; a failed push shows up as a log mismatch.
            let _ = v.push(e.load(Relaxed), GFP_KERNEL);
        }
        v
    }

    /// A software interrupt controller: one line per hwirq, its state in atomics.
    ///
    /// A raised line stays pending until acked or EOId; it is delivered only while unmasked.
    ///
    /// The lines of [`STRICT`] model a GIC in EOImode=1: delivering a line acknowledges it
    /// (pending cleared, active set), its EOI deactivates it, and an active line is not
    /// delivered: a raise meanwhile stays pending until the deactivate.
    struct SoftIrqc {
        id: u32,
        masked: [Atomic<u32>; NR_ALL],
        pending: [Atomic<u32>; NR_ALL],
        active: [Atomic<u32>; NR_ALL],
    }

    impl SoftIrqc {
        fn new(id: u32) -> Self {
            Self {
                id,
                masked: [const { Atomic::new(1) }; NR_ALL],
                pending: [const { Atomic::new(0) }; NR_ALL],
                active: [const { Atomic::new(0) }; NR_ALL],
            }
        }

        /// Whether `hwirq` would be signalled now: pending, unmasked and, in the EOImode=1
        /// model, not active. Signalling it there acknowledges it.
        fn signal(&self, hwirq: usize) -> bool {
            if self.pending[hwirq].load(Relaxed) == 0 || self.masked[hwirq].load(Relaxed) != 0 {
                return false;
            }
            if STRICT.contains(&hwirq) {
                if self.active[hwirq].load(Relaxed) != 0 {
                    return false;
                }
                self.pending[hwirq].store(0, Relaxed);
                self.active[hwirq].store(1, Relaxed);
            }
            true
        }

        fn ev(&self, op: u32) -> u32 {
            self.id * 16 + op
        }

        /// The flow of a hwirq: 0..4 edge, 4..8 the Rust edge, 8..16 level, 16..24 fasteoi,
        /// 24..32 simple, 32..48 the Rust fasteoi, 48..56 per-CPU devid, 56..64 the Rust per-CPU
        /// devid.
        fn flow(hwirq: usize) -> FlowHandler {
            match hwirq / 8 {
                0 if hwirq < 4 => FlowHandler::Edge,
                0 => FlowHandler::RustEdge,
                1 => FlowHandler::Level,
                2 => FlowHandler::FastEoi,
                3 => FlowHandler::Simple,
                4 | 5 => FlowHandler::RustFastEoi,
                6 => FlowHandler::PercpuDevid,
                _ => FlowHandler::RustPercpuDevid,
            }
        }
    }

    /// Raises `hwirq` on the controller of `domain`, delivering it if the line is unmasked.
    fn raise<T: DomainOps + AsRef<SoftIrqc>>(domain: &Domain<'_, T>, hwirq: usize) -> Result {
        let c = domain.data().as_ref();
        c.pending[hwirq].store(1, Relaxed);
        if c.signal(hwirq) {
            domain.handle_irq_safe(hwirq)?;
        }
        Ok(())
    }

    /// Delivers every pending, unmasked line, as hardware does once a line is unmasked.
    fn flush<T: DomainOps + AsRef<SoftIrqc>>(domain: &Domain<'_, T>) -> Result {
        let c = domain.data().as_ref();
        for hwirq in 0..NR_ALL {
            if c.signal(hwirq) {
                domain.handle_irq_safe(hwirq)?;
            }
        }
        Ok(())
    }

    impl AsRef<SoftIrqc> for SoftIrqc {
        fn as_ref(&self) -> &SoftIrqc {
            self
        }
    }

    /// The chip of the software controller.
    struct SoftChip;

    #[vtable]
    impl Chip for SoftChip {
        type Data = SoftIrqc;
        const NAME: &'static CStr = c"soft-irqc";
        const FLAGS: ChipFlags = ChipFlags::of(ChipFlag::SkipSetWake);

        fn mask(c: &SoftIrqc, d: &IrqData) {
            c.masked[d.hwirq()].store(1, Relaxed);
            record(c.ev(OP_MASK));
        }

        fn unmask(c: &SoftIrqc, d: &IrqData) {
            c.masked[d.hwirq()].store(0, Relaxed);
            record(c.ev(OP_UNMASK));
        }

        fn ack(c: &SoftIrqc, d: &AckCtx<'_>) {
            c.pending[d.hwirq()].store(0, Relaxed);
            record(c.ev(OP_ACK));
        }

        fn eoi(c: &SoftIrqc, d: &IrqData) {
            if STRICT.contains(&d.hwirq()) {
                // EOImode=1: the priority dropped at delivery; this deactivates.
                c.active[d.hwirq()].store(0, Relaxed);
            } else {
                c.pending[d.hwirq()].store(0, Relaxed);
            }
            record(c.ev(OP_EOI));
        }

        fn set_type(c: &SoftIrqc, _d: &LockedIrqData, ty: TriggerType) -> Result {
            // Like many controllers, this one cannot detect both edges.
            if ty == TriggerType::EdgeBoth {
                return Err(EINVAL);
            }
            record(c.ev(OP_SET_TYPE));
            Ok(())
        }

        fn get_irqchip_state(c: &SoftIrqc, d: &IrqData, which: ChipState) -> Result<bool> {
            match which {
                ChipState::Pending => Ok(c.pending[d.hwirq()].load(Relaxed) != 0),
                ChipState::Masked => Ok(c.masked[d.hwirq()].load(Relaxed) != 0),
                _ => Err(EINVAL),
            }
        }
    }

    #[vtable]
    impl DomainOps for SoftIrqc {
        fn map(&self, mapper: &Mapper<'_, Self>, hwirq: usize) -> Result {
            if hwirq >= NR_ALL {
                return Err(EINVAL);
            }
            mapper.set_chip_and_handler::<SoftChip>(Self::flow(hwirq))?;
            if STRICT.contains(&hwirq) {
                mapper.set_masked_by_active()?;
            }
            Ok(())
        }

        /// Two cells: hwirq and `IRQ_TYPE_*`; a raw type that is not a trigger type is `EINVAL`.
        fn xlate(&self, cells: &[u32]) -> Result<(usize, TriggerType)> {
            match cells {
                [hwirq, ty] => Ok((*hwirq as usize, TriggerType::try_from(*ty)?)),
                _ => Err(EINVAL),
            }
        }
    }

    /// Counts hard-IRQ invocations and records them.
    ///
    /// Requested with [`Flags::NO_THREAD`] wherever a case checks the order of chip calls and
    /// handler runs: `threadirqs` (and `PREEMPT_RT`) would otherwise move it into a thread
    /// (`irq_setup_forced_threading()`), which runs after the flow returned (a count read right
    /// after an injection misses it) and coalesces wake-ups (`IRQTF_RUNTHREAD` is one bit). The
    /// threaded path is checked, in both modes, by `threaded_runs_coalesce_without_loss`.
    struct Counter {
        hits: Atomic<u32>,
    }

    impl Counter {
        fn new() -> Self {
            Self {
                hits: Atomic::new(0),
            }
        }
    }

    impl crate::irq::Handler for Counter {
        fn handle(&self) -> IrqReturn {
            self.hits.fetch_add(1, Full);
            record(HARD);
            IrqReturn::Handled
        }
    }

    /// A threaded handler: the hard part wakes the thread, the thread completes `done`.
    #[pin_data]
    struct Threaded {
        hard: Atomic<u32>,
        thread: Atomic<u32>,
        #[pin]
        done: Completion,
    }

    impl Threaded {
        fn new() -> impl PinInit<Self, Error> {
            try_pin_init!(Self {
                hard: Atomic::new(0),
                thread: Atomic::new(0),
                done <- Completion::new(),
            }? Error)
        }
    }

    impl ThreadedHandler for Threaded {
        fn handle(&self) -> ThreadedIrqReturn {
            self.hard.fetch_add(1, Full);
            record(HARD);
            ThreadedIrqReturn::WakeThread
        }

        fn handle_threaded(&self) -> IrqReturn {
            self.thread.fetch_add(1, Full);
            record(THREAD);
            self.done.complete_all();
            IrqReturn::Handled
        }
    }

    /// A software controller with chip-event id `id`, in a linear domain named `name`.
    ///
    /// The name is the domain's debugfs directory (`irq/domains/<name>`): domains alive at the
    /// same time need different names.
    fn soft_domain_named(name: &CStr, id: u32) -> Result<Domain<'static, SoftIrqc>> {
        Domain::new_linear(name, NR_ALL as u32, Ok::<_, Error>(SoftIrqc::new(id)))
    }

    /// The one software controller of a case.
    fn soft_domain(id: u32) -> Result<Domain<'static, SoftIrqc>> {
        soft_domain_named(c"rust-soft-irqc", id)
    }

    /// Requests `hwirq` with a non-threaded [`Counter`], raises it `n` times and returns (hits,
    /// log of the last injection).
    fn inject_counted(hwirq: usize, n: u32) -> Result<(u32, KVec<u32>)> {
        let domain = soft_domain(1)?;
        let m = domain.create_mapping(hwirq)?;
        // SAFETY: The registration is dropped at the end of this function, never leaked.
        let reg = KBox::pin_init(
            unsafe {
                Registration::new(
                    m.request(),
                    Flags::NO_THREAD,
                    c"rust-soft",
                    Ok::<_, Error>(Counter::new()),
                )
            },
            GFP_KERNEL,
        )?;
        for _ in 0..n {
            reset_log();
            raise(&domain, hwirq)?;
        }
        let hits = reg.handler().hits.load(Relaxed);
        Ok((hits, log()))
    }

    #[test]
    fn trigger_type_from_raw() -> Result {
        for raw in [0u32, 1, 2, 3, 4, 8] {
            assert_eq!(TriggerType::try_from(raw)?.as_raw(), raw);
        }
        for raw in [5u32, 6, 7, 0xc, 0x10, u32::MAX] {
            assert_eq!(TriggerType::try_from(raw), Err(EINVAL));
        }
        Ok(())
    }

    #[test]
    fn invalid_trigger_type_is_einval() -> Result {
        let domain = soft_domain(1)?;
        // Level-high and level-low at once: xlate refuses it and nothing is mapped.
        assert_eq!(domain.create_fwspec_mapping(&[20, 0xc]).err(), Some(EINVAL));
        assert_eq!(domain.find_mapping(20), None);
        // A valid specifier maps, and the chip refuses a type it cannot do.
        let m = domain.create_fwspec_mapping(&[20, 4])?;
        assert_eq!(domain.find_mapping(20), Some(m.irq()));
        assert_eq!(m.set_trigger_type(TriggerType::EdgeBoth), Err(EINVAL));
        m.set_trigger_type(TriggerType::LevelLow)?;
        // A raw type that is no trigger type, through genirq's own entry: the chip wrapper
        // refuses it before the driver's `set_type` runs.
        reset_log();
        // SAFETY: `m.irq()` is mapped; `irq_set_irq_type` validates its arguments.
        let ret = unsafe { bindings::irq_set_irq_type(m.irq(), 0xc) };
        assert_eq!(ret, EINVAL.to_errno());
        assert!(!log().contains(&(16 + OP_SET_TYPE)));
        // One owner per interrupt.
        assert_eq!(domain.create_fwspec_mapping(&[20, 4]).err(), Some(EBUSY));
        assert_eq!(domain.create_mapping(20).err(), Some(EBUSY));
        // Too many cells for an `irq_fwspec`.
        assert_eq!(domain.create_fwspec_mapping(&[0; 17]).err(), Some(EINVAL));
        // Out-of-range hwirq.
        assert_eq!(domain.create_mapping(NR_ALL).err(), Some(EINVAL));
        Ok(())
    }

    #[test]
    fn edge_flow() -> Result {
        let (hits, log) = inject_counted(1, 1)?;
        assert_eq!(hits, 1);
        assert_eq!(&log[..], &[16 + OP_ACK, HARD]);
        Ok(())
    }

    #[test]
    fn level_flow() -> Result {
        let (hits, log) = inject_counted(9, 1)?;
        assert_eq!(hits, 1);
        assert_eq!(&log[..], &[16 + OP_MASK, 16 + OP_ACK, HARD, 16 + OP_UNMASK]);
        Ok(())
    }

    #[test]
    fn fasteoi_flow() -> Result {
        let (hits, log) = inject_counted(17, 1)?;
        assert_eq!(hits, 1);
        assert_eq!(&log[..], &[HARD, 16 + OP_EOI]);
        Ok(())
    }

    #[test]
    fn simple_flow() -> Result {
        let (hits, log) = inject_counted(25, 1)?;
        assert_eq!(hits, 1);
        assert_eq!(&log[..], &[HARD]);
        Ok(())
    }

    /// A chip with the life-cycle callbacks that [`SoftChip`] leaves to genirq's defaults:
    /// `startup`/`shutdown` instead of `enable`/`disable` at request and free, `enable`/`disable`
    /// for `enable_irq()`/`disable_irq()`, `mask_ack` for the level flow, `set_wake`, and the IPI
    /// senders.
    struct CycleChip;

    #[vtable]
    impl Chip for CycleChip {
        type Data = CycleIrqc;
        const NAME: &'static CStr = c"soft-irqc-cycle";

        fn startup(c: &CycleIrqc, d: &IrqData) -> u32 {
            c.0.masked[d.hwirq()].store(0, Relaxed);
            record(c.0.ev(OP_STARTUP));
            0
        }

        fn shutdown(c: &CycleIrqc, d: &IrqData) {
            c.0.masked[d.hwirq()].store(1, Relaxed);
            record(c.0.ev(OP_SHUTDOWN));
        }

        fn enable(c: &CycleIrqc, d: &IrqData) {
            c.0.masked[d.hwirq()].store(0, Relaxed);
            record(c.0.ev(OP_ENABLE));
        }

        fn disable(c: &CycleIrqc, d: &IrqData) {
            c.0.masked[d.hwirq()].store(1, Relaxed);
            record(c.0.ev(OP_DISABLE));
        }

        fn mask(c: &CycleIrqc, d: &IrqData) {
            c.0.masked[d.hwirq()].store(1, Relaxed);
            record(c.0.ev(OP_MASK));
        }

        fn unmask(c: &CycleIrqc, d: &IrqData) {
            c.0.masked[d.hwirq()].store(0, Relaxed);
            record(c.0.ev(OP_UNMASK));
        }

        fn mask_ack(c: &CycleIrqc, d: &IrqData) {
            c.0.masked[d.hwirq()].store(1, Relaxed);
            c.0.pending[d.hwirq()].store(0, Relaxed);
            record(c.0.ev(OP_MASK_ACK));
        }

        fn set_wake(c: &CycleIrqc, _d: &IrqData, on: bool) -> Result {
            record(c.0.ev(if on { OP_WAKE_ON } else { OP_WAKE_OFF }));
            Ok(())
        }

        fn ipi_send_single(c: &CycleIrqc, _d: &IrqData, cpu: crate::cpu::CpuId) {
            c.1.store(cpu.as_u32(), Relaxed);
            record(c.0.ev(OP_IPI_SINGLE));
        }

        fn ipi_send_mask(c: &CycleIrqc, _d: &IrqData, mask: &crate::cpumask::Cpumask) {
            c.1.store(mask.weight(), Relaxed);
            record(c.0.ev(OP_IPI_MASK));
        }
    }

    /// The software controller with [`CycleChip`] and the level flow on every line, and what the
    /// last IPI sender was given: its CPU, or its mask's weight.
    struct CycleIrqc(SoftIrqc, Atomic<u32>);

    impl AsRef<SoftIrqc> for CycleIrqc {
        fn as_ref(&self) -> &SoftIrqc {
            &self.0
        }
    }

    #[vtable]
    impl DomainOps for CycleIrqc {
        fn map(&self, mapper: &Mapper<'_, Self>, hwirq: usize) -> Result {
            if hwirq >= NR_LINES {
                return Err(EINVAL);
            }
            mapper.set_chip_and_handler::<CycleChip>(FlowHandler::Level)
        }

        fn unmap(&self, _virq: u32) {
            record(DOM_UNMAP);
        }

        fn activate(&self, _irqd: &IrqData, _reserve: bool) -> Result {
            record(self.0.ev(OP_ACTIVATE));
            Ok(())
        }

        fn deactivate(&self, _irqd: &IrqData) {
            record(DOM_DEACTIVATE);
        }
    }

    /// genirq reaches each life-cycle callback of a Rust chip and domain through its trampoline,
    /// in place of its default: the domain's `activate` and the chip's `startup` at request,
    /// `mask_ack` in the level flow, `disable` and `enable` for `disable_irq()`/`enable_irq()`,
    /// `set_wake`, the IPI senders where genirq has IPIs (`GENERIC_IRQ_IPI`), `shutdown` and the
    /// domain's `deactivate` at free, and its `unmap` when the mapping goes.
    #[test]
    fn life_cycle_callbacks() -> Result {
        let domain = Domain::new_linear(
            c"rust-soft-irqc-cycle",
            NR_LINES as u32,
            Ok::<_, Error>(CycleIrqc(SoftIrqc::new(1), Atomic::new(u32::MAX))),
        )?;
        let m = domain.create_mapping(3)?;
        reset_log();
        // SAFETY: The registration is dropped at the end of this function, never leaked.
        let reg = KBox::pin_init(
            unsafe {
                Registration::new(
                    m.request(),
                    Flags::NO_THREAD,
                    c"rust-soft-cycle",
                    Ok::<_, Error>(Counter::new()),
                )
            },
            GFP_KERNEL,
        )?;
        assert_eq!(&log()[..], &[16 + OP_ACTIVATE, 16 + OP_STARTUP]);

        reset_log();
        raise(&domain, 3)?;
        assert_eq!(reg.handler().hits.load(Relaxed), 1);
        assert_eq!(&log()[..], &[16 + OP_MASK_ACK, HARD, 16 + OP_UNMASK]);

        reset_log();
        m.disable();
        // Disabled by the chip, not lazily: a raise now stays pending at the controller.
        raise(&domain, 3)?;
        assert_eq!(reg.handler().hits.load(Relaxed), 1);
        m.enable();
        assert_eq!(&log()[..], &[16 + OP_DISABLE, 16 + OP_ENABLE]);
        flush(&domain)?;
        assert_eq!(reg.handler().hits.load(Relaxed), 2);

        reset_log();
        // SAFETY: `m.irq()` is a mapped interrupt with an action; no other requirement.
        to_result(unsafe { bindings::irq_set_irq_wake(m.irq(), 1) })?;
        // SAFETY: As above; this balances the call above.
        to_result(unsafe { bindings::irq_set_irq_wake(m.irq(), 0) })?;
        assert_eq!(&log()[..], &[16 + OP_WAKE_ON, 16 + OP_WAKE_OFF]);

        #[cfg(CONFIG_GENERIC_IRQ_IPI)]
        {
            reset_log();
            let desc = m.desc().as_raw();
            // SAFETY: `desc` is `m`'s live descriptor; its chip has both IPI senders (C calls
            // `ipi_send_mask` without a check when `ipi_send_single` is missing); CPU 0 is below
            // `nr_cpu_ids`.
            to_result(unsafe { bindings::__ipi_send_single(desc, 0) })?;
            assert_eq!(domain.data().1.load(Relaxed), 0);
            // SAFETY: `__cpu_online_mask` is valid for the kernel's lifetime.
            let online = unsafe {
                crate::cpumask::Cpumask::from_raw(&raw const bindings::__cpu_online_mask)
            };
            // SAFETY: As above; `online` is a valid cpumask.
            to_result(unsafe { bindings::__ipi_send_mask(desc, online.as_raw()) })?;
            assert_eq!(domain.data().1.load(Relaxed), online.weight());
            assert_eq!(&log()[..], &[16 + OP_IPI_SINGLE, 16 + OP_IPI_MASK]);
        }

        reset_log();
        drop(reg);
        assert_eq!(&log()[..], &[16 + OP_SHUTDOWN, DOM_DEACTIVATE]);
        reset_log();
        drop(m);
        assert_eq!(&log()[..], &[DOM_UNMAP]);
        Ok(())
    }

    #[test]
    fn handler_runs_once_per_injection() -> Result {
        for hwirq in [2, 6, 10, 18, 26] {
            let (hits, _) = inject_counted(hwirq, 10)?;
            assert_eq!(hits, 10);
        }
        Ok(())
    }

    #[test]
    fn threaded_edge() -> Result {
        let domain = soft_domain(1)?;
        let m = domain.create_mapping(3)?;
        // SAFETY: Dropped at the end of the test, never leaked.
        let reg = KBox::pin_init(
            unsafe {
                ThreadedRegistration::new(
                    m.request(),
                    Flags::TRIGGER_NONE,
                    c"rust-thr",
                    Threaded::new(),
                )
            },
            GFP_KERNEL,
        )?;
        reset_log();
        raise(&domain, 3)?;
        reg.handler().done.wait_for_completion();
        reg.synchronize();
        assert_eq!(reg.handler().hard.load(Relaxed), 1);
        assert_eq!(reg.handler().thread.load(Relaxed), 1);
        assert_eq!(&log()[..], &[16 + OP_ACK, HARD, THREAD]);
        Ok(())
    }

    /// A ONESHOT threaded interrupt on the C fasteoi (line 19) and, the same chip calls, on the
    /// Rust fasteoi without the active-state model (line 35).
    #[test]
    fn threaded_oneshot_fasteoi() -> Result {
        for hwirq in [19, 35] {
            let domain = soft_domain(1)?;
            let m = domain.create_mapping(hwirq)?;
            // SAFETY: Dropped at the end of the iteration, never leaked.
            let reg = KBox::pin_init(
                unsafe {
                    ThreadedRegistration::new(
                        m.request(),
                        Flags::ONESHOT,
                        c"rust-1shot",
                        Threaded::new(),
                    )
                },
                GFP_KERNEL,
            )?;
            reset_log();
            raise(&domain, hwirq)?;
            reg.handler().done.wait_for_completion();
            // Waits for the thread to finish, including the final unmask of the ONESHOT line.
            reg.synchronize();
            assert_eq!(reg.handler().hard.load(Relaxed), 1);
            assert_eq!(reg.handler().thread.load(Relaxed), 1);
            // The line is masked before the handler and unmasked after the thread; the EOI comes
            // right after the hard handler, while the thread may already run on the other CPU.
            let log = log();
            assert_eq!(log.len(), 5);
            assert_eq!(&log[..2], &[16 + OP_MASK, HARD]);
            assert!(log[2..4] == [16 + OP_EOI, THREAD] || log[2..4] == [THREAD, 16 + OP_EOI]);
            assert_eq!(log[4], 16 + OP_UNMASK);
        }
        Ok(())
    }

    /// A threaded handler that counts the runs of both halves; each thread run records how many
    /// hard runs it had seen when it started.
    struct Coalescing {
        hard: Atomic<u32>,
        thread: Atomic<u32>,
        seen: Atomic<u32>,
    }

    impl Coalescing {
        fn new() -> Self {
            Self {
                hard: Atomic::new(0),
                thread: Atomic::new(0),
                seen: Atomic::new(0),
            }
        }
    }

    impl ThreadedHandler for Coalescing {
        fn handle(&self) -> ThreadedIrqReturn {
            self.hard.fetch_add(1, Full);
            ThreadedIrqReturn::WakeThread
        }

        fn handle_threaded(&self) -> IrqReturn {
            // The thread was woken by a fully ordered `test_and_set_bit(IRQTF_RUNTHREAD)` after
            // the hard run's increment, and cleared the bit (fully ordered) before calling this:
            // it sees every hard run that woke it, and a hard run after this load sets the bit
            // again, so the thread runs once more.
            self.seen.store(self.hard.load(Relaxed), Relaxed);
            self.thread.fetch_add(1, Full);
            IrqReturn::Handled
        }
    }

    /// Every flow with a threaded handler, raised back to back: the hard half runs once per
    /// delivered interrupt; thread runs may coalesce (`IRQTF_RUNTHREAD` is one bit) but none is
    /// lost: the last one started after the last hard run.
    ///
    /// `ONESHOT` keeps the hard half in hard-IRQ context with and without `threadirqs` (forced
    /// threading leaves `IRQF_ONESHOT` actions alone), so the case means the same in both boots;
    /// a forced-threaded handler is exactly this with genirq's default primary handler.
    #[test]
    fn threaded_runs_coalesce_without_loss() -> Result {
        const N: u32 = 200;
        for hwirq in [0, 4, 12, 20, 28, 36, 44] {
            let domain = soft_domain(1)?;
            let m = domain.create_mapping(hwirq)?;
            // SAFETY: Dropped at the end of the iteration, never leaked.
            let reg = KBox::pin_init(
                unsafe {
                    ThreadedRegistration::new(
                        m.request(),
                        Flags::ONESHOT,
                        c"rust-coalesce",
                        Ok::<_, Error>(Coalescing::new()),
                    )
                },
                GFP_KERNEL,
            )?;
            for _ in 0..N {
                raise(&domain, hwirq)?;
            }
            // A raise while the thread had not yet unmasked the ONESHOT line (level, fasteoi)
            // stays pending in the controller, as an asserted line does: deliver it once the
            // thread is done (`synchronize_irq()` waits for the thread, which unmasks before it
            // reports completion), until nothing is held. Simple lines are never acked.
            let c = domain.data();
            let acked = SoftIrqc::flow(hwirq) != FlowHandler::Simple;
            reg.synchronize();
            for _ in 0..N {
                if !acked || c.pending[hwirq].load(Relaxed) == 0 {
                    break;
                }
                flush(&domain)?;
                reg.synchronize();
            }
            // Nothing was left undelivered.
            if acked {
                assert_eq!(c.pending[hwirq].load(Relaxed), 0);
            }
            let h = reg.handler();
            let (hard, thread) = (h.hard.load(Relaxed), h.thread.load(Relaxed));
            // Edge and simple lines are never masked: every raise is delivered, and the hard
            // half, unlike the thread, does not coalesce.
            if matches!(
                SoftIrqc::flow(hwirq),
                FlowHandler::Edge | FlowHandler::RustEdge | FlowHandler::Simple
            ) {
                assert_eq!(hard, N);
            }
            assert!((1..=N).contains(&hard));
            assert!((1..=hard).contains(&thread));
            assert_eq!(h.seen.load(Relaxed), hard);
        }
        Ok(())
    }

    #[test]
    fn masked_line_is_held_until_unmask() -> Result {
        let domain = soft_domain(1)?;
        let m = domain.create_mapping(11)?;
        m.set_disable_unlazy();
        // SAFETY: Dropped at the end of the test, never leaked.
        let reg = KBox::pin_init(
            unsafe {
                Registration::new(
                    m.request(),
                    Flags::NO_THREAD,
                    c"rust-mask",
                    Ok::<_, Error>(Counter::new()),
                )
            },
            GFP_KERNEL,
        )?;
        reset_log();
        m.disable();
        assert_eq!(&log()[..], &[16 + OP_MASK]);
        raise(&domain, 11)?;
        assert_eq!(reg.handler().hits.load(Relaxed), 0);
        m.enable();
        flush(&domain)?;
        assert_eq!(reg.handler().hits.load(Relaxed), 1);
        assert_eq!(
            &log()[..],
            &[
                16 + OP_MASK,
                16 + OP_UNMASK,
                16 + OP_MASK,
                16 + OP_ACK,
                HARD,
                16 + OP_UNMASK
            ]
        );
        Ok(())
    }

    #[test]
    fn dropping_domain_leaves_nothing_mapped() -> Result {
        let mut virqs = KVec::new();
        {
            let domain = soft_domain(1)?;
            let kept = domain.create_mapping(5)?;
            virqs.push(kept.irq(), GFP_KERNEL)?;
            for hwirq in [6, 14, 22] {
                let m = domain.create_mapping(hwirq)?;
                virqs.push(m.irq(), GFP_KERNEL)?;
                // A leaked mapping must not outlive the domain either.
                core::mem::forget(m);
            }
            for &virq in virqs.iter() {
                // SAFETY: `irq_get_irq_data` only looks the number up.
                assert!(!unsafe { bindings::irq_get_irq_data(virq) }.is_null());
            }
            drop(kept);
        }
        for &virq in virqs.iter() {
            // SAFETY: `irq_get_irq_data` only looks the number up.
            assert!(unsafe { bindings::irq_get_irq_data(virq) }.is_null());
        }
        Ok(())
    }

    /// The parent of a two-level hierarchy: allocates its level from the cells it is given.
    /// The second field counts the interrupts its level holds (allocated, not yet freed), the
    /// third the interrupts it ever allocated.
    struct HierParent(SoftIrqc, Atomic<u32>, Atomic<u32>);

    impl AsRef<SoftIrqc> for HierParent {
        fn as_ref(&self) -> &SoftIrqc {
            &self.0
        }
    }

    /// The chip of the hierarchy's parent level.
    struct ParentChip;

    #[vtable]
    impl Chip for ParentChip {
        type Data = HierParent;
        const NAME: &'static CStr = c"soft-parent";

        fn mask(c: &HierParent, d: &IrqData) {
            SoftChip::mask(&c.0, d)
        }

        fn unmask(c: &HierParent, d: &IrqData) {
            SoftChip::unmask(&c.0, d)
        }

        fn eoi(c: &HierParent, d: &IrqData) {
            SoftChip::eoi(&c.0, d)
        }
    }

    #[vtable]
    impl DomainOps for HierParent {
        fn translate(&self, spec: &FwSpec) -> Result<(usize, TriggerType)> {
            match spec.params() {
                [hwirq] if (*hwirq as usize) < NR_ALL => Ok((*hwirq as usize, TriggerType::None)),
                _ => Err(EINVAL),
            }
        }

        fn alloc(
            &self,
            alloc: &crate::irq::Allocator<'_, Self>,
            virq: u32,
            nr: u32,
            spec: &FwSpec,
        ) -> Result {
            let (hwirq, _) = self.translate(spec)?;
            for i in 0..nr {
                let hw = hwirq + i as usize;
                // Lines 40..48 as on the flat controller: the Rust fasteoi flow, masked by
                // their active state (the GIC's shape under a GPC-like child).
                if STRICT.contains(&hw) {
                    alloc.set_info::<ParentChip>(virq + i, hw, FlowHandler::RustFastEoi)?;
                    alloc.set_masked_by_active(virq + i)?;
                } else {
                    alloc.set_info::<ParentChip>(virq + i, hw, FlowHandler::FastEoi)?;
                }
            }
            self.1.fetch_add(nr, Relaxed);
            self.2.fetch_add(nr, Relaxed);
            Ok(())
        }

        fn free(&self, alloc: &crate::irq::Allocator<'_, Self>, virq: u32, nr: u32) {
            self.1.fetch_sub(nr, Relaxed);
            let _ = alloc.free_boxed(virq, nr);
        }
    }

    /// The child of the hierarchy: hwirq `n` sits on parent line `n + 16`.
    struct HierChild(SoftIrqc);

    impl AsRef<SoftIrqc> for HierChild {
        fn as_ref(&self) -> &SoftIrqc {
            &self.0
        }
    }

    /// The chip of the hierarchy's child level: masks locally and forwards EOI to the parent.
    struct ChildChip;

    #[vtable]
    impl Chip for ChildChip {
        type Data = HierChild;
        const NAME: &'static CStr = c"soft-child";

        fn mask(c: &HierChild, d: &IrqData) {
            SoftChip::mask(&c.0, d);
            let _ = d.mask_parent();
        }

        fn unmask(c: &HierChild, d: &IrqData) {
            SoftChip::unmask(&c.0, d);
            let _ = d.unmask_parent();
        }

        fn eoi(c: &HierChild, d: &IrqData) {
            SoftChip::eoi(&c.0, d);
            let _ = d.eoi_parent();
        }
    }

    #[vtable]
    impl DomainOps for HierChild {
        fn translate(&self, spec: &FwSpec) -> Result<(usize, TriggerType)> {
            match spec.params() {
                [hwirq, ty] if (*hwirq as usize) < 16 => {
                    Ok((*hwirq as usize, TriggerType::try_from(*ty)?))
                }
                _ => Err(EINVAL),
            }
        }

        fn alloc(
            &self,
            alloc: &crate::irq::Allocator<'_, Self>,
            virq: u32,
            nr: u32,
            spec: &FwSpec,
        ) -> Result {
            let (hwirq, _) = self.translate(spec)?;
            alloc.alloc_parent(virq, nr, &[hwirq as u32 + 16])?;
            for i in 0..nr {
                alloc.set_info::<ChildChip>(virq + i, hwirq + i as usize, FlowHandler::FastEoi)?;
            }
            Ok(())
        }
    }

    #[test]
    fn hierarchy_forwards_to_parent() -> Result {
        let parent = Domain::new_tree(
            c"rust-soft-parent",
            NR_LINES,
            Ok::<_, Error>(HierParent(SoftIrqc::new(2), Atomic::new(0), Atomic::new(0))),
        )?;
        let child = Domain::new_hierarchy(
            c"rust-soft-child",
            &parent,
            16,
            Ok::<_, Error>(HierChild(SoftIrqc::new(3))),
        )?;
        // An invalid trigger type in the child's specifier allocates nothing.
        assert_eq!(child.create_fwspec_mapping(&[4, 0xc]).err(), Some(EINVAL));
        assert_eq!(child.find_mapping(4), None);

        let m = child.create_fwspec_mapping(&[4, 4])?;
        assert_eq!(child.find_mapping(4), Some(m.irq()));
        assert_eq!(parent.find_mapping(20), Some(m.irq()));
        // SAFETY: Dropped at the end of the test, never leaked.
        let reg = KBox::pin_init(
            unsafe {
                Registration::new(
                    m.request(),
                    Flags::NO_THREAD,
                    c"rust-hier",
                    Ok::<_, Error>(Counter::new()),
                )
            },
            GFP_KERNEL,
        )?;
        reset_log();
        raise(&child, 4)?;
        assert_eq!(reg.handler().hits.load(Relaxed), 1);
        assert_eq!(&log()[..], &[HARD, 3 * 16 + OP_EOI, 2 * 16 + OP_EOI]);
        drop(reg);
        drop(m);
        assert_eq!(parent.find_mapping(20), None);
        Ok(())
    }

    /// A flow that finds the chip data of its interrupt's level gone (as when
    /// `irq_domain_reset_irq_data()` tears the level down under a flow that already loaded the
    /// chip) cannot run the level's `eoi`, but still EOIs the parent level, which deactivates the
    /// line, and counts it (with a warning once).
    #[test]
    fn eoi_without_chip_data_reaches_parent() -> Result {
        let parent = Domain::new_tree(
            c"rust-soft-gone-parent",
            NR_LINES,
            Ok::<_, Error>(HierParent(SoftIrqc::new(4), Atomic::new(0), Atomic::new(0))),
        )?;
        let child = Domain::new_hierarchy(
            c"rust-soft-gone-child",
            &parent,
            16,
            Ok::<_, Error>(HierChild(SoftIrqc::new(5))),
        )?;
        let m = child.create_fwspec_mapping(&[5, 4])?;
        // SAFETY: Dropped at the end of the test, never leaked.
        let reg = KBox::pin_init(
            unsafe {
                Registration::new(
                    m.request(),
                    Flags::NO_THREAD,
                    c"rust-gone",
                    Ok::<_, Error>(Counter::new()),
                )
            },
            GFP_KERNEL,
        )?;
        // SAFETY: `irq_get_irq_data` only looks the number up.
        let irqd = unsafe { bindings::irq_get_irq_data(m.irq()) };
        assert!(!irqd.is_null());
        let gone = crate::irq::chip::data_gone_count();
        // What `irq_domain_reset_irq_data()` does to the top level's (the child's) `chip_data`,
        // with the chip still installed: what a flow that loaded the chip before the reset finds.
        // SAFETY: `irqd` is the valid `irq_data` of the interrupt `m` keeps allocated; nothing
        // but this test's own injection uses the interrupt until the data is restored below.
        let saved =
            unsafe { core::ptr::replace(&raw mut (*irqd).chip_data, core::ptr::null_mut()) };
        reset_log();
        let raised = raise(&child, 5);
        // SAFETY: As above.
        unsafe { (*irqd).chip_data = saved };
        raised?;
        assert_eq!(reg.handler().hits.load(Relaxed), 1);
        // The child's own EOI (`5 * 16 + OP_EOI`) could not run; the parent's did.
        assert_eq!(&log()[..], &[HARD, 4 * 16 + OP_EOI]);
        assert_eq!(crate::irq::chip::data_gone_count(), gone + 1);
        // With its data back, the level EOIs itself and forwards, as before.
        reset_log();
        raise(&child, 5)?;
        assert_eq!(reg.handler().hits.load(Relaxed), 2);
        assert_eq!(&log()[..], &[HARD, 5 * 16 + OP_EOI, 4 * 16 + OP_EOI]);
        assert_eq!(crate::irq::chip::data_gone_count(), gone + 1);
        drop(reg);
        drop(m);
        Ok(())
    }

    /// A controller whose chip composes the MSI message of its even lines and cannot compose one
    /// for its odd lines.
    struct MsiCtrl;

    /// The doorbell address of [`MsiChip`]'s messages.
    const MSI_DOORBELL: u32 = 0xfee0_1000;

    /// What [`compose`] fills the message buffer with before the chip composes into it.
    const MSG_POISON: u32 = 0xa5a5_a5a5;

    /// The chip of [`MsiCtrl`].
    struct MsiChip;

    #[vtable]
    impl Chip for MsiChip {
        type Data = MsiCtrl;
        const NAME: &'static CStr = c"soft-msi";

        fn compose_msi_msg(_c: &MsiCtrl, d: &IrqData) -> Result<MsiMsg> {
            if d.hwirq() % 2 != 0 {
                return Err(ENXIO);
            }
            Ok(MsiMsg {
                address_lo: MSI_DOORBELL,
                address_hi: 0,
                data: 0x40 + d.hwirq() as u32,
            })
        }
    }

    #[vtable]
    impl DomainOps for MsiCtrl {
        fn map(&self, mapper: &Mapper<'_, Self>, _hwirq: usize) -> Result {
            mapper.set_chip_and_handler::<MsiChip>(FlowHandler::Simple)
        }
    }

    /// Composes the MSI message of `virq` as the MSI core does (`irq_chip_compose_msi_msg()`),
    /// into a buffer poisoned with [`MSG_POISON`] beforehand. Returns what the C function
    /// returned and what the buffer holds after: address low, address high, data.
    fn compose(virq: u32) -> (i32, [u32; 3]) {
        // `bindings::msi_msg` is opaque (`linux/msi.h` is not in the bindings): storage larger
        // than the three 32-bit words of a `struct msi_msg`, suitably aligned.
        let mut buf = [0u64; 4];
        let msg = buf.as_mut_ptr().cast::<bindings::msi_msg>();
        let (mut lo, mut hi, mut data) = (0u32, 0u32, 0u32);
        // SAFETY: `msg` points to storage for a `msi_msg`, which the helpers and the chip write
        // and read as three 32-bit words; `virq` is mapped (the caller holds its mapping), so
        // `irq_get_irq_data()` returns its valid `irq_data`.
        let ret = unsafe {
            bindings::msi_msg_set(msg, MSG_POISON, MSG_POISON, MSG_POISON);
            let ret = bindings::irq_chip_compose_msi_msg(bindings::irq_get_irq_data(virq), msg);
            bindings::msi_msg_get(msg, &mut lo, &mut hi, &mut data);
            ret
        };
        (ret, [lo, hi, data])
    }

    /// A chip that cannot compose an MSI message says so, and the caller's message is left as
    /// it was: never a zero message for a device to write to.
    #[test]
    fn compose_failure_leaves_message_unwritten() -> Result {
        let domain = Domain::new_linear(c"rust-soft-msi", 4, Ok::<_, Error>(MsiCtrl))?;
        let composes = domain.create_mapping(2)?;
        let cannot = domain.create_mapping(3)?;
        // The chip composes: the message is written.
        assert_eq!(compose(composes.irq()), (0, [MSI_DOORBELL, 0, 0x42]));
        // It cannot: the buffer keeps its poison. `irq_chip_compose_msi_msg()` still returns 0,
        // as the C callback returns nothing.
        assert_eq!(compose(cannot.irq()), (0, [MSG_POISON; 3]));
        // As MSIs (an MSI descriptor: a stand-in, which nothing on the activation path of this
        // domain reads), the one that cannot compose is refused activation, the other activated:
        // the MSI domain above would write its zeroed buffer to the device otherwise.
        static STAND_IN: [u64; 32] = [0; 32];
        // SAFETY: Both interrupts are mapped (their mappings are held) and not requested, so
        // nothing else activates, deactivates or reads their descriptors' MSI descriptor
        // meanwhile; it is restored to null before the mappings go.
        let (activated, refused) = unsafe {
            let ok = bindings::irq_get_irq_data(composes.irq());
            let bad = bindings::irq_get_irq_data(cannot.irq());
            let desc = STAND_IN.as_ptr().cast_mut().cast::<bindings::msi_desc>();
            (*(*ok).common).msi_desc = desc;
            (*(*bad).common).msi_desc = desc;
            let activated = bindings::irq_domain_activate_irq(ok, false);
            if activated == 0 {
                bindings::irq_domain_deactivate_irq(ok);
            }
            let refused = bindings::irq_domain_activate_irq(bad, false);
            (*(*ok).common).msi_desc = core::ptr::null_mut();
            (*(*bad).common).msi_desc = core::ptr::null_mut();
            (activated, refused)
        };
        assert_eq!(activated, 0);
        assert_eq!(refused, EINVAL.to_errno());
        Ok(())
    }

    /// A sparse child of [`HierParent`]: any hwirq (a radix-tree domain, as for 24-bit GICv3
    /// LPIs), on parent line `hwirq % 16 + 16`. Counts its frees and what `free_common` said
    /// about an interrupt outside the ones being freed.
    struct SparseChild {
        frees: Atomic<u32>,
        bad_free: Atomic<i32>,
    }

    /// Per-interrupt chip data of [`SparseChip`]: its hwirq, and EOIs counted per interrupt.
    struct SparseLine {
        hwirq: usize,
        eois: Atomic<u32>,
    }

    /// The hwirq and the EOI count of the last [`SparseLine`] EOId.
    static SPARSE_LAST_HWIRQ: Atomic<u64> = Atomic::new(u64::MAX);
    static SPARSE_LAST_EOIS: Atomic<u32> = Atomic::new(0);

    /// Drops of [`SparseLine`]s.
    static SPARSE_LINE_DROPS: Atomic<u32> = Atomic::new(0);

    impl Drop for SparseLine {
        fn drop(&mut self) {
            SPARSE_LINE_DROPS.fetch_add(1, Relaxed);
        }
    }

    /// The chip of [`SparseChild`]: forwards everything to the parent; its chip data is
    /// per interrupt.
    struct SparseChip;

    #[vtable]
    impl Chip for SparseChip {
        type Data = SparseLine;
        const NAME: &'static CStr = c"soft-sparse";

        fn mask(_l: &SparseLine, d: &IrqData) {
            let _ = d.mask_parent();
        }

        fn unmask(_l: &SparseLine, d: &IrqData) {
            let _ = d.unmask_parent();
        }

        fn eoi(l: &SparseLine, d: &IrqData) {
            let eois = l.eois.fetch_add(1, Relaxed) + 1;
            SPARSE_LAST_HWIRQ.store(l.hwirq as u64, Relaxed);
            SPARSE_LAST_EOIS.store(eois, Relaxed);
            let _ = d.eoi_parent();
        }
    }

    #[vtable]
    impl DomainOps for SparseChild {
        fn translate(&self, spec: &FwSpec) -> Result<(usize, TriggerType)> {
            match spec.params() {
                [hwirq] => Ok((*hwirq as usize, TriggerType::None)),
                _ => Err(EINVAL),
            }
        }

        fn alloc(
            &self,
            alloc: &crate::irq::Allocator<'_, Self>,
            virq: u32,
            nr: u32,
            spec: &FwSpec,
        ) -> Result {
            let (hwirq, _) = self.translate(spec)?;
            alloc.alloc_parent(virq, nr, &[(hwirq % 16 + 16) as u32])?;
            for i in 0..nr {
                let hwirq = hwirq + i as usize;
                alloc.set_info_boxed::<SparseChip>(
                    virq + i,
                    hwirq,
                    FlowHandler::FastEoi,
                    Ok::<_, Error>(SparseLine {
                        hwirq,
                        eois: Atomic::new(0),
                    }),
                )?;
            }
            Ok(())
        }

        fn free(&self, alloc: &crate::irq::Allocator<'_, Self>, virq: u32, nr: u32) {
            self.frees.fetch_add(1, Relaxed);
            // Outside the interrupts being freed: refused, nothing freed.
            let bad = alloc
                .free_boxed(virq + nr, 1)
                .err()
                .map_or(0, |e| e.to_errno());
            self.bad_free.store(bad, Relaxed);
            let _ = alloc.free_boxed(virq, nr);
        }
    }

    #[test]
    fn hierarchy_of_size_zero_is_sparse() -> Result {
        let parent = Domain::new_tree(
            c"rust-soft-sparse-parent",
            NR_LINES,
            Ok::<_, Error>(HierParent(SoftIrqc::new(8), Atomic::new(0), Atomic::new(0))),
        )?;
        // A hierarchy level needs `alloc`.
        assert_eq!(
            Domain::new_hierarchy(
                c"rust-soft-no-alloc",
                &parent,
                0,
                Ok::<_, Error>(SoftIrqc::new(9))
            )
            .err(),
            Some(EINVAL)
        );
        let child = Domain::new_hierarchy(
            c"rust-soft-sparse-child",
            &parent,
            0,
            Ok::<_, Error>(SparseChild {
                frees: Atomic::new(0),
                bad_free: Atomic::new(0),
            }),
        )?;
        // The last 24-bit LPI number: size 0 is a radix tree without a small bound, as in C.
        let lpi: u32 = (1 << 24) - 1;
        let m = child.create_fwspec_mapping(&[lpi])?;
        assert_eq!(child.find_mapping(lpi as usize), Some(m.irq()));
        assert_eq!(parent.find_mapping(lpi as usize % 16 + 16), Some(m.irq()));
        assert_eq!(child.create_fwspec_mapping(&[lpi]).err(), Some(EBUSY));
        // `irq_create_mapping()` would skip `alloc` on a hierarchy: refused.
        assert_eq!(child.create_mapping(3).err(), Some(EINVAL));
        // SAFETY: Dropped at the end of the test, never leaked.
        let reg = KBox::pin_init(
            unsafe {
                Registration::new(
                    m.request(),
                    Flags::NO_THREAD,
                    c"rust-sparse",
                    Ok::<_, Error>(Counter::new()),
                )
            },
            GFP_KERNEL,
        )?;
        reset_log();
        child.handle_irq_safe(lpi as usize)?;
        assert_eq!(reg.handler().hits.load(Relaxed), 1);
        assert_eq!(&log()[..], &[HARD, 8 * 16 + OP_EOI]);
        // The chip got its interrupt's own data.
        assert_eq!(SPARSE_LAST_HWIRQ.load(Relaxed), u64::from(lpi));
        assert_eq!(SPARSE_LAST_EOIS.load(Relaxed), 1);
        let drops = SPARSE_LINE_DROPS.load(Relaxed);
        drop(reg);
        drop(m);
        // Freeing the interrupt released its data, after a grace period, in a work item.
        for _ in 0..2000 {
            if SPARSE_LINE_DROPS.load(Relaxed) != drops {
                break;
            }
            crate::time::delay::fsleep(crate::time::Delta::from_millis(1));
        }
        assert_eq!(SPARSE_LINE_DROPS.load(Relaxed), drops + 1);
        // `free` ran once, freed the parent's level through `free_boxed` and had an interrupt
        // outside its range refused.
        assert_eq!(child.data().frees.load(Relaxed), 1);
        assert_eq!(child.data().bad_free.load(Relaxed), EINVAL.to_errno());
        assert_eq!(parent.find_mapping(lpi as usize % 16 + 16), None);
        Ok(())
    }

    /// A domain's removal refuses, with `EBUSY`, while a mapping C code made has a handler or a
    /// C child domain is stacked on it; the domain comes back intact and is removed later.
    #[test]
    fn removal_refuses_c_users() -> Result {
        static C_CHILD_OPS: bindings::irq_domain_ops = pin_init::zeroed();

        let domain = soft_domain_named(c"rust-soft-c-users", 9)?;
        // A C consumer maps a line of the domain itself and requests it.
        // SAFETY: The domain is live; `irq_create_mapping` validates the hwirq.
        let virq = unsafe { bindings::irq_create_mapping(domain.as_raw(), 18) };
        assert_ne!(virq, 0);
        // SAFETY: `virq` stays mapped while `reg` lives: the domain refuses removal meanwhile.
        let reg = KBox::pin_init(
            unsafe {
                Registration::new(
                    crate::irq::IrqRequest::from_virq(virq),
                    Flags::NO_THREAD,
                    c"rust-c-user",
                    Ok::<_, Error>(Counter::new()),
                )
            },
            GFP_KERNEL,
        )?;
        let res = domain.try_remove();
        assert!(res.is_err());
        let Err((e, domain)) = res else {
            return Err(EINVAL);
        };
        assert_eq!(e, EBUSY);
        assert_eq!(domain.find_mapping(18), Some(virq));
        reset_log();
        raise(&domain, 18)?;
        assert_eq!(reg.handler().hits.load(Relaxed), 1);
        drop(reg);

        // A C child domain on top.
        // SAFETY: A valid C string; the core copies it.
        let fwnode =
            unsafe { bindings::irq_domain_alloc_named_fwnode(c"rust-soft-c-child".as_char_ptr()) };
        assert!(!fwnode.is_null());
        let info = bindings::irq_domain_info {
            fwnode,
            hwirq_max: c_uint::MAX as usize,
            ops: &C_CHILD_OPS,
            parent: domain.as_raw(),
            ..pin_init::zeroed()
        };
        // SAFETY: `info` is fully initialised; the parent is live until after the child's
        // removal below.
        let child = crate::error::from_err_ptr(unsafe { bindings::irq_domain_instantiate(&info) })?;
        let res = domain.try_remove();
        assert!(res.is_err());
        let Err((e, domain)) = res else {
            return Err(EINVAL);
        };
        assert_eq!(e, EBUSY);
        // SAFETY: `child` was created above and has no mappings; then its fwnode is unused.
        unsafe {
            bindings::irq_domain_remove(child);
            bindings::irq_domain_free_fwnode(fwnode);
        }
        // Now it goes, with the mapping the C consumer left.
        assert!(domain.try_remove().is_ok());
        // SAFETY: `irq_get_irq_data` only looks the number up.
        assert!(unsafe { bindings::irq_get_irq_data(virq) }.is_null());
        Ok(())
    }

    /// The controller of `domain_drop_under_flood`: one per-CPU line whose EOI takes a while
    /// before it touches the host data.
    struct SlowEoi {
        eois: Atomic<u32>,
    }

    /// The chip of [`SlowEoi`].
    struct SlowEoiChip;

    #[vtable]
    impl Chip for SlowEoiChip {
        type Data = SlowEoi;
        const NAME: &'static CStr = c"soft-slow-eoi";

        fn eoi(c: &SlowEoi, _d: &IrqData) {
            // Long enough for the other CPU to dispose of the line and remove the domain.
            for _ in 0..200_000 {
                core::hint::spin_loop();
            }
            c.eois.fetch_add(1, Relaxed);
        }
    }

    #[vtable]
    impl DomainOps for SlowEoi {
        fn map(&self, mapper: &Mapper<'_, Self>, _hwirq: usize) -> Result {
            mapper.set_chip_and_handler::<SlowEoiChip>(FlowHandler::PercpuDevid)
        }
    }

    /// Removes domains again and again while another CPU keeps running the flow of their mapped
    /// line. The line is per-CPU: `handle_percpu_devid_irq()` calls the chip without the
    /// descriptor lock, so disposing of the mapping does not wait for it, and the chip's EOI
    /// reads the host data after the removal returned unless the removal waits for the flow
    /// (an RCU grace period) before freeing it: a KASAN report otherwise. The line has no
    /// action, so genirq says "Spurious percpu IRQ" once.
    #[test]
    fn domain_drop_under_flood() -> Result {
        use crate::sync::atomic::{Acquire, Release};

        /// The line the flood delivers, 0 for none.
        static VIRQ: Atomic<u32> = Atomic::new(0);
        /// Flows the flood ran.
        static RUNS: Atomic<u32> = Atomic::new(0);
        const ROUNDS: u32 = 200;

        struct Flood {
            stop: Arc<Atomic<u32>>,
            done: Arc<Completion>,
        }

        impl Drop for Flood {
            fn drop(&mut self) {
                VIRQ.store(0, Release);
                self.stop.store(1, Release);
                self.done.wait_for_completion();
            }
        }

        let stop = Arc::new(Atomic::new(0u32), GFP_KERNEL)?;
        let done = Arc::pin_init(Completion::new(), GFP_KERNEL)?;
        {
            let (stop, done) = (stop.clone(), done.clone());
            // SAFETY: `system_dfl_wq` is a C global, always available.
            let wq = unsafe { crate::workqueue::Queue::from_raw(bindings::system_dfl_wq) };
            wq.try_spawn(GFP_KERNEL, move || {
                while stop.load(Acquire) == 0 {
                    // Interrupts off from reading the number to the end of the flow, as on a
                    // CPU taking a hardware interrupt. A number read just before the test
                    // stopped naming it finds no descriptor (an error), or the same test's line
                    // of the next round: nothing else allocates interrupts meanwhile.
                    let _irqs_off = crate::interrupt::local_interrupt_disable();
                    let virq = VIRQ.load(Acquire);
                    // SAFETY: Interrupts are disabled; an unallocated number is refused.
                    if virq != 0 && unsafe { bindings::generic_handle_irq(virq) } == 0 {
                        RUNS.fetch_add(1, Relaxed);
                    }
                }
                done.complete_all();
            })?;
        }
        let flood = Flood { stop, done };
        let mut overlapped = 0u32;
        for _ in 0..ROUNDS {
            let domain = Domain::new_linear(
                c"rust-soft-drop-flood",
                1,
                Ok::<_, Error>(SlowEoi {
                    eois: Atomic::new(0),
                }),
            )?;
            let m = domain.create_mapping(0)?;
            let before = RUNS.load(Relaxed);
            VIRQ.store(m.irq(), Release);
            for _ in 0..1_000_000 {
                if RUNS.load(Relaxed) != before {
                    overlapped += 1;
                    break;
                }
                core::hint::spin_loop();
            }
            // Removed while the flood keeps delivering the line.
            drop(m);
            drop(domain);
            VIRQ.store(0, Release);
        }
        drop(flood);
        crate::pr_info!(
            "domain_drop_under_flood: {overlapped} of {ROUNDS} removals raced a flow\n"
        );
        assert!(overlapped > 0);
        Ok(())
    }

    /// Demultiplexes a parent line into a child domain's pending lines.
    struct Demux {
        child: Arc<Domain<'static, SoftIrqc>>,
        runs: Arc<Atomic<u32>>,
    }

    #[vtable]
    impl ChainedHandler for Demux {
        fn handle(&self, _parent: &ChainedIrqGuard<'_>, irqs_off: &LocalInterruptDisabled) {
            self.runs.fetch_add(1, Full);
            let c = self.child.data();
            for hwirq in 0..NR_LINES {
                if c.pending[hwirq].load(Relaxed) != 0 && c.masked[hwirq].load(Relaxed) == 0 {
                    let _ = self.child.handle_irq(hwirq, irqs_off);
                }
            }
        }
    }

    #[test]
    fn chained_handler_demuxes() -> Result {
        let parent = soft_domain_named(c"rust-soft-demux-parent", 4)?;
        let child = Arc::new(soft_domain_named(c"rust-soft-demux-child", 5)?, GFP_KERNEL)?;
        let runs = Arc::new(Atomic::new(0), GFP_KERNEL)?;
        // Parent line 16 is fasteoi: `chained_irq_enter` does nothing, `chained_irq_exit` EOIs.
        let mut pm = parent.create_mapping(16)?;
        let demux = Demux {
            child: child.clone(),
            runs: runs.clone(),
        };
        let chained = pm.set_chained_handler(KBox::new(demux, GFP_KERNEL)?)?;

        let cm = child.create_mapping(2)?;
        // SAFETY: Dropped at the end of the test, never leaked.
        let reg = KBox::pin_init(
            unsafe {
                Registration::new(
                    cm.request(),
                    Flags::NO_THREAD,
                    c"rust-chained",
                    Ok::<_, Error>(Counter::new()),
                )
            },
            GFP_KERNEL,
        )?;
        reset_log();
        // The child line is pending; the parent line fires.
        child.data().pending[2].store(1, Relaxed);
        raise(&parent, 16)?;
        assert_eq!(runs.load(Relaxed), 1);
        assert_eq!(reg.handler().hits.load(Relaxed), 1);
        assert_eq!(&log()[..], &[5 * 16 + OP_ACK, HARD, 4 * 16 + OP_EOI]);
        drop(reg);
        drop(chained);
        Ok(())
    }

    /// Installs and uninstalls a chained handler again and again while another CPU keeps
    /// delivering the parent line: the trampoline must never see null or freed handler data
    /// (otherwise an oops, or a KASAN report).
    #[test]
    fn chained_teardown_under_flood() -> Result {
        use crate::sync::atomic::{Acquire, Release};

        /// Stops the flood and waits for it, on every way out of the case but a failed
        /// assertion (which does not unwind: the assertions come after it is dropped).
        struct Flood {
            stop: Arc<Atomic<u32>>,
            done: Arc<Completion>,
        }

        impl Drop for Flood {
            fn drop(&mut self) {
                self.stop.store(1, Release);
                self.done.wait_for_completion();
            }
        }

        let parent = Arc::new(soft_domain_named(c"rust-soft-flood-parent", 6)?, GFP_KERNEL)?;
        let child = Arc::new(soft_domain_named(c"rust-soft-flood-child", 7)?, GFP_KERNEL)?;
        let mut pm = parent.create_mapping(16)?;
        let runs = Arc::new(Atomic::new(0), GFP_KERNEL)?;
        let stop = Arc::new(Atomic::new(0u32), GFP_KERNEL)?;
        let done = Arc::pin_init(Completion::new(), GFP_KERNEL)?;
        {
            let (parent, stop, done) = (parent.clone(), stop.clone(), done.clone());
            // `system_dfl_wq`, the unbound queue that replaces the deprecated `system_unbound_wq`.
            // SAFETY: `system_dfl_wq` is a C global, always available.
            let wq = unsafe { crate::workqueue::Queue::from_raw(bindings::system_dfl_wq) };
            wq.try_spawn(GFP_KERNEL, move || {
                while stop.load(Acquire) == 0 {
                    // Delivered while a handler is installed: installing unmasks the line,
                    // uninstalling masks it. A raise that saw the line unmasked just before the
                    // uninstall masked it reaches `handle_bad_irq()` ("unexpected IRQ trap"), as
                    // an interrupt latched before the mask does on hardware.
                    let _ = raise(&*parent, 16);
                }
                drop(parent);
                done.complete_all();
            })?;
        }
        let flood = Flood { stop, done };
        // Iterations in which the flood ran the handler before the uninstall, and runs of a
        // handler after its uninstall returned (counted here, asserted once the flood stopped:
        // a failed assertion returns without dropping `flood`).
        let (mut overlapped, mut after_drop) = (0u32, 0u32);
        for _ in 0..500 {
            let demux = Demux {
                child: child.clone(),
                runs: runs.clone(),
            };
            let chained = pm.set_chained_handler(KBox::new(demux, GFP_KERNEL)?)?;
            // Uninstall while the flood goes through the handler: wait (boundedly) for a run.
            let before = runs.load(Relaxed);
            for _ in 0..1_000_000 {
                if runs.load(Relaxed) != before {
                    overlapped += 1;
                    break;
                }
                core::hint::spin_loop();
            }
            drop(chained);
            // Uninstalled and past a grace period: no CPU runs the handler any more, so the
            // flood, still raising, must not reach it.
            let dropped = runs.load(Relaxed);
            for _ in 0..1000 {
                core::hint::spin_loop();
            }
            after_drop += runs.load(Relaxed) - dropped;
        }
        drop(flood);
        drop(pm);
        crate::pr_info!(
            "chained_teardown_under_flood: {overlapped} of 500 uninstalls raced a run\n"
        );
        // The flood did reach the handlers it raced with, and never one after its uninstall.
        assert!(overlapped > 0);
        assert_eq!(after_drop, 0);
        Ok(())
    }

    /// The descriptor lock as a guard: the flow changes under it, `PercpuDevid` is refused, and
    /// the level flow then calls the chip's `ack` with the lock held.
    #[test]
    fn desc_lock_guard_sets_flow() -> Result {
        let domain = soft_domain(1)?;
        // An edge line.
        let m = domain.create_mapping(1)?;
        // SAFETY: Dropped at the end of the test, never leaked.
        let reg = KBox::pin_init(
            unsafe {
                Registration::new(
                    m.request(),
                    Flags::NO_THREAD,
                    c"rust-guard",
                    Ok::<_, Error>(Counter::new()),
                )
            },
            GFP_KERNEL,
        )?;
        {
            let guard = m.desc().lock();
            assert_eq!(guard.irq_data().irq(), m.irq());
            assert_eq!(
                guard.irq_data().set_handler(FlowHandler::PercpuDevid),
                Err(EINVAL)
            );
            guard.irq_data().set_handler(FlowHandler::Level)?;
        }
        // A chip without `ack` cannot run the edge flow (the hierarchy's parent chip).
        let parent = Domain::new_tree(
            c"rust-soft-guard-parent",
            NR_LINES,
            Ok::<_, Error>(HierParent(
                SoftIrqc::new(11),
                Atomic::new(0),
                Atomic::new(0),
            )),
        )?;
        let pm = parent.create_fwspec_mapping(&[20])?;
        assert_eq!(
            pm.desc().lock().irq_data().set_handler(FlowHandler::Edge),
            Err(EINVAL)
        );
        drop(pm);
        // A line with a chained handler keeps it.
        let mut cm = domain.create_mapping(18)?;
        let child = Arc::new(soft_domain_named(c"rust-soft-guard-child", 12)?, GFP_KERNEL)?;
        let runs = Arc::new(Atomic::new(0), GFP_KERNEL)?;
        let virq = cm.irq();
        let chained = cm.set_chained_handler(KBox::new(Demux { child, runs }, GFP_KERNEL)?)?;
        // SAFETY: `virq` is mapped until `cm` drops, after `chained`.
        let desc = unsafe { IrqDesc::from_raw(bindings::irq_to_desc(virq)) };
        assert_eq!(
            desc.lock().irq_data().set_handler(FlowHandler::Level),
            Err(EBUSY)
        );
        drop(chained);
        drop(cm);
        reset_log();
        raise(&domain, 1)?;
        assert_eq!(reg.handler().hits.load(Relaxed), 1);
        assert_eq!(
            &log()[..],
            &[16 + OP_MASK, 16 + OP_ACK, HARD, 16 + OP_UNMASK]
        );
        drop(reg);
        Ok(())
    }

    /// How many times `ev` is in `log`.
    fn count(log: &[u32], ev: u32) -> usize {
        log.iter().filter(|&&e| e == ev).count()
    }

    /// The handled count of `irq` in `/proc/interrupts` (`kstat_irqs_usr()`).
    fn kstat(irq: u32) -> u32 {
        // SAFETY: Reads the statistics of a mapped interrupt.
        unsafe { bindings::kstat_irqs_usr(irq) }
    }

    /// Runs the flow of `hwirq` once without a handler requested (a spurious interrupt) and
    /// returns the chip calls it made.
    fn spurious(hwirq: usize) -> Result<KVec<u32>> {
        let domain = soft_domain(1)?;
        let _m = domain.create_mapping(hwirq)?;
        reset_log();
        domain.handle_irq_safe(hwirq)?;
        Ok(log())
    }

    /// The Rust flows make the C flows' chip calls, in the same order, and count the same.
    #[test]
    fn rust_flows_match_c() -> Result {
        // fasteoi, a handler in hard-IRQ context: the handler, then the EOI, each time.
        let (c_hits, c_log) = inject_counted(17, 3)?;
        let (r_hits, r_log) = inject_counted(33, 3)?;
        assert_eq!((c_hits, r_hits), (3, 3));
        assert_eq!(&c_log[..], &[HARD, 16 + OP_EOI]);
        assert_eq!(c_log, r_log);
        // fasteoi without a handler: masked (already, before startup) and EOId, not counted.
        assert_eq!(spurious(18)?, spurious(34)?);
        // Per-CPU devid without an action for this CPU: acked and EOId, nothing run.
        let c = spurious(49)?;
        assert_eq!(&c[..], &[16 + OP_ACK, 16 + OP_EOI]);
        assert_eq!(c, spurious(57)?);
        // Accounting in /proc/interrupts: one per handled interrupt.
        for hwirq in [17, 33] {
            let domain = soft_domain(1)?;
            let m = domain.create_mapping(hwirq)?;
            // SAFETY: Dropped at the end of the iteration, never leaked.
            let reg = KBox::pin_init(
                unsafe {
                    Registration::new(
                        m.request(),
                        Flags::NO_THREAD,
                        c"rust-kstat",
                        Ok::<_, Error>(Counter::new()),
                    )
                },
                GFP_KERNEL,
            )?;
            let before = kstat(m.irq());
            for _ in 0..5 {
                raise(&domain, hwirq)?;
            }
            assert_eq!(kstat(m.irq()) - before, 5);
            drop(reg);
        }
        Ok(())
    }

    /// A threaded handler whose thread can be held: it records its start, completes `entered`,
    /// optionally disables its own interrupt or sleeps, and waits for `release` if `hold`.
    #[pin_data]
    struct Gated {
        hard: Atomic<u32>,
        thread: Atomic<u32>,
        irq: Atomic<u32>,
        hold: bool,
        disable: bool,
        sleep_ms: u32,
        #[pin]
        entered: Completion,
        #[pin]
        release: Completion,
    }

    impl Gated {
        fn new(hold: bool, disable: bool, sleep_ms: u32) -> impl PinInit<Self, Error> {
            try_pin_init!(Self {
                hard: Atomic::new(0),
                thread: Atomic::new(0),
                irq: Atomic::new(0),
                hold,
                disable,
                sleep_ms,
                entered <- Completion::new(),
                release <- Completion::new(),
            }? Error)
        }
    }

    impl ThreadedHandler for Gated {
        fn handle(&self) -> ThreadedIrqReturn {
            self.hard.fetch_add(1, Full);
            record(HARD);
            ThreadedIrqReturn::WakeThread
        }

        fn handle_threaded(&self) -> IrqReturn {
            record(THREAD);
            if self.disable && self.thread.load(Relaxed) == 0 {
                // SAFETY: The interrupt of this handler is requested while its thread runs;
                // `disable_irq_nosync()` does not wait for the thread (this one). Once: the
                // test enables it again.
                unsafe { bindings::disable_irq_nosync(self.irq.load(Relaxed)) };
            }
            if self.sleep_ms != 0 {
                crate::time::delay::fsleep(crate::time::Delta::from_millis(self.sleep_ms.into()));
            }
            self.thread.fetch_add(1, Full);
            self.entered.complete_all();
            if self.hold {
                self.release.wait_for_completion();
            }
            IrqReturn::Handled
        }
    }

    /// Requests line `hwirq` of `m` ONESHOT with a [`Gated`] handler.
    fn request_gated<'a>(
        m: &'a crate::irq::Mapping<'_>,
        flags: Flags,
        hold: bool,
        disable: bool,
        sleep_ms: u32,
    ) -> Result<Pin<KBox<ThreadedRegistration<'a, Gated>>>> {
        // SAFETY: Every caller drops the registration before the test ends, never leaks it.
        let reg = KBox::pin_init(
            unsafe {
                ThreadedRegistration::new(
                    m.request(),
                    flags | Flags::ONESHOT,
                    c"rust-strict",
                    Gated::new(hold, disable, sleep_ms),
                )
            },
            GFP_KERNEL,
        )?;
        reg.handler().irq.store(m.irq(), Relaxed);
        Ok(reg)
    }

    /// Strict flow: a ONESHOT threaded interrupt masked by its active state is neither masked
    /// nor unmasked, and deactivated once, after its thread.
    #[test]
    fn strict_oneshot_deactivated_after_thread() -> Result {
        let domain = soft_domain(1)?;
        let m = domain.create_mapping(41)?;
        let reg = request_gated(&m, Flags::TRIGGER_NONE, false, false, 0)?;
        reset_log();
        raise(&domain, 41)?;
        reg.handler().entered.wait_for_completion();
        reg.synchronize();
        assert_eq!(&log()[..], &[HARD, THREAD, 16 + OP_EOI]);
        assert_eq!(domain.data().active[41].load(Relaxed), 0);
        // Counted like any handled interrupt.
        assert_eq!(kstat(m.irq()), 1);
        Ok(())
    }

    /// Strict flow: raised again while its thread runs, the line stays active and pending; it is
    /// delivered once after the thread's deactivate, not lost and not doubled.
    #[test]
    fn strict_reraise_during_thread_delivered_after() -> Result {
        let domain = soft_domain(1)?;
        let m = domain.create_mapping(42)?;
        let reg = request_gated(&m, Flags::TRIGGER_NONE, true, false, 0)?;
        let h = reg.handler();
        let c = domain.data();
        reset_log();
        raise(&domain, 42)?;
        h.entered.wait_for_completion();
        raise(&domain, 42)?;
        assert_eq!(h.hard.load(Relaxed), 1);
        assert_eq!(c.pending[42].load(Relaxed), 1);
        assert_eq!(c.active[42].load(Relaxed), 1);
        h.release.complete_all();
        reg.synchronize();
        assert_eq!(c.active[42].load(Relaxed), 0);
        flush(&domain)?;
        reg.synchronize();
        let log = log();
        assert_eq!(h.hard.load(Relaxed), 2);
        assert_eq!(h.thread.load(Relaxed), 2);
        assert_eq!(c.pending[42].load(Relaxed), 0);
        assert_eq!(c.active[42].load(Relaxed), 0);
        assert_eq!(count(&log, 16 + OP_EOI), 2);
        assert_eq!(count(&log, 16 + OP_MASK) + count(&log, 16 + OP_UNMASK), 0);
        Ok(())
    }

    /// Strict flow: `disable_irq_nosync()` in the thread; the deactivate still comes when the
    /// thread ends, and after `enable_irq()` the interrupt fires again.
    #[test]
    fn strict_disable_in_thread_then_enable() -> Result {
        let domain = soft_domain(1)?;
        let m = domain.create_mapping(43)?;
        let reg = request_gated(&m, Flags::TRIGGER_NONE, false, true, 0)?;
        let h = reg.handler();
        reset_log();
        raise(&domain, 43)?;
        h.entered.wait_for_completion();
        reg.synchronize();
        assert_eq!(count(&log(), 16 + OP_EOI), 1);
        assert_eq!(domain.data().active[43].load(Relaxed), 0);
        // SAFETY: Disabled once by the thread above; this balances it.
        unsafe { bindings::enable_irq(m.irq()) };
        raise(&domain, 43)?;
        reg.synchronize();
        assert_eq!(h.hard.load(Relaxed), 2);
        assert_eq!(h.thread.load(Relaxed), 2);
        assert_eq!(domain.data().active[43].load(Relaxed), 0);
        Ok(())
    }

    /// Strict flow: `free_irq()` while the thread runs waits for it, the interrupt is deactivated
    /// once, and a new request on the line gets its interrupts.
    #[test]
    fn strict_free_during_thread_then_request() -> Result {
        let domain = soft_domain(1)?;
        let m = domain.create_mapping(44)?;
        let reg = request_gated(&m, Flags::TRIGGER_NONE, false, false, 50)?;
        reset_log();
        raise(&domain, 44)?;
        // The thread sleeps 50 ms after recording its start: free it meanwhile.
        while count(&log(), THREAD) == 0 {
            crate::time::delay::fsleep(crate::time::Delta::from_millis(1));
        }
        drop(reg);
        assert_eq!(count(&log(), 16 + OP_EOI), 1);
        assert_eq!(domain.data().active[44].load(Relaxed), 0);
        let reg = request_gated(&m, Flags::TRIGGER_NONE, false, false, 0)?;
        raise(&domain, 44)?;
        reg.handler().entered.wait_for_completion();
        reg.synchronize();
        assert_eq!(reg.handler().thread.load(Relaxed), 1);
        assert_eq!(count(&log(), 16 + OP_EOI), 2);
        Ok(())
    }

    /// Strict flow: a shared ONESHOT line is deactivated once, after the last of its threads.
    #[test]
    fn strict_shared_deactivated_once_after_last_thread() -> Result {
        let domain = soft_domain(1)?;
        let m = domain.create_mapping(45)?;
        let a = request_gated(&m, Flags::SHARED, true, false, 0)?;
        let b = request_gated(&m, Flags::SHARED, false, false, 0)?;
        reset_log();
        raise(&domain, 45)?;
        a.handler().entered.wait_for_completion();
        b.handler().entered.wait_for_completion();
        // `b`'s thread is done or finishing; `a`'s still runs: the line stays active.
        crate::time::delay::fsleep(crate::time::Delta::from_millis(10));
        assert_eq!(count(&log(), 16 + OP_EOI), 0);
        assert_eq!(domain.data().active[45].load(Relaxed), 1);
        a.handler().release.complete_all();
        a.synchronize();
        let log = log();
        assert_eq!(count(&log, 16 + OP_EOI), 1);
        assert_eq!(log.last(), Some(&(16 + OP_EOI)));
        assert_eq!(count(&log, 16 + OP_MASK) + count(&log, 16 + OP_UNMASK), 0);
        assert_eq!(domain.data().active[45].load(Relaxed), 0);
        Ok(())
    }

    /// Strict flow: the flow swapped to the C fasteoi while a thread holds a deferred
    /// deactivate: that one still comes once, and the C flow masks from then on.
    #[test]
    fn strict_flow_swap_keeps_one_deactivate() -> Result {
        let domain = soft_domain(1)?;
        let m = domain.create_mapping(46)?;
        let reg = request_gated(&m, Flags::TRIGGER_NONE, true, false, 0)?;
        let h = reg.handler();
        reset_log();
        raise(&domain, 46)?;
        h.entered.wait_for_completion();
        // SAFETY: `m` keeps the interrupt mapped while the descriptor is used.
        let desc = unsafe { IrqDesc::from_raw(bindings::irq_to_desc(m.irq())) };
        desc.lock().irq_data().set_handler(FlowHandler::FastEoi)?;
        h.release.complete_all();
        reg.synchronize();
        assert_eq!(&log()[..], &[HARD, THREAD, 16 + OP_EOI]);
        reset_log();
        raise(&domain, 46)?;
        reg.synchronize();
        let log = log();
        assert_eq!(&log[..2], &[16 + OP_MASK, HARD]);
        assert_eq!(count(&log, 16 + OP_EOI), 1);
        assert_eq!(log.last(), Some(&(16 + OP_UNMASK)));
        assert_eq!(domain.data().active[46].load(Relaxed), 0);
        Ok(())
    }

    /// The top of a hierarchy shaped like the i.MX GPC's under a GIC: its chip `C` has no
    /// `irq_ack` and no `irq_mask`/`irq_unmask`; the flow is the parent level's. Line `n` sits
    /// on parent line `n + 16`.
    struct GpcChild<C>(SoftIrqc, core::marker::PhantomData<fn() -> C>, GpcAlloc);

    /// How a [`GpcChild`] allocates its level.
    #[derive(Clone, Copy, PartialEq)]
    enum GpcAlloc {
        /// The parent level first, then this level's chip (as most drivers do).
        ChipAfter,
        /// This level's chip first, then the parent level, which installs the flow.
        ChipFirst,
        /// The parent level, then frees it again itself and fails with `EIO`, as a C driver's
        /// error path does.
        FreeThenFail,
        /// The parent level twice (refused: `EBUSY`).
        Twice,
        /// The parent level and the chip, then frees both and returns success.
        FreeThenOk,
        /// As `ChipAfter`, but its `free` frees nothing, the parent's level included.
        LeakOnFree,
    }

    impl<C> AsRef<SoftIrqc> for GpcChild<C> {
        fn as_ref(&self) -> &SoftIrqc {
            &self.0
        }
    }

    /// A GPC-like chip that only forwards the EOI to the parent.
    struct GpcEoiChip;

    #[vtable]
    impl Chip for GpcEoiChip {
        type Data = GpcChild<GpcEoiChip>;
        const NAME: &'static CStr = c"soft-gpc";

        fn eoi(c: &GpcChild<GpcEoiChip>, d: &IrqData) {
            record(c.0.ev(OP_EOI));
            let _ = d.eoi_parent();
        }
    }

    /// A GPC-like chip without any callback.
    struct GpcBareChip;

    #[vtable]
    impl Chip for GpcBareChip {
        type Data = GpcChild<GpcBareChip>;
        const NAME: &'static CStr = c"soft-gpc-bare";
    }

    #[vtable]
    impl<C: Chip<Data = GpcChild<C>> + 'static> DomainOps for GpcChild<C> {
        fn translate(&self, spec: &FwSpec) -> Result<(usize, TriggerType)> {
            match spec.params() {
                [hwirq] if (*hwirq as usize) < 32 => Ok((*hwirq as usize, TriggerType::None)),
                _ => Err(EINVAL),
            }
        }

        fn alloc(
            &self,
            alloc: &crate::irq::Allocator<'_, Self>,
            virq: u32,
            nr: u32,
            spec: &FwSpec,
        ) -> Result {
            let (hwirq, _) = self.translate(spec)?;
            if self.2 == GpcAlloc::ChipFirst {
                for i in 0..nr {
                    alloc.set_hwirq_and_chip::<C>(virq + i, hwirq + i as usize)?;
                }
            }
            alloc.alloc_parent(virq, nr, &[hwirq as u32 + 16])?;
            if self.2 == GpcAlloc::Twice {
                alloc.alloc_parent(virq, nr, &[hwirq as u32 + 16])?;
            }
            match self.2 {
                GpcAlloc::ChipAfter | GpcAlloc::Twice | GpcAlloc::LeakOnFree => {
                    for i in 0..nr {
                        alloc.set_hwirq_and_chip::<C>(virq + i, hwirq + i as usize)?;
                    }
                }
                GpcAlloc::ChipFirst => {}
                GpcAlloc::FreeThenFail => {
                    alloc.free_common(virq, nr)?;
                    return Err(EIO);
                }
                GpcAlloc::FreeThenOk => {
                    for i in 0..nr {
                        alloc.set_hwirq_and_chip::<C>(virq + i, hwirq + i as usize)?;
                    }
                    alloc.free_common(virq, nr)?;
                }
            }
            Ok(())
        }

        fn free(&self, alloc: &crate::irq::Allocator<'_, Self>, virq: u32, nr: u32) {
            if self.2 != GpcAlloc::LeakOnFree {
                let _ = alloc.free_boxed(virq, nr);
            }
        }
    }

    /// A domain's parent levels are allocated once per interrupt and always freed, whatever its
    /// `alloc` and `free` do: a parent (C's x86 vector domain, say) keeps state that refers to
    /// the descriptor, which genirq frees next. A second allocation is refused, an `alloc` that
    /// freed the parent's level again and returned success fails, and a `free` that leaves the
    /// parent's level has it freed for it.
    #[test]
    fn parent_levels_stay_balanced() -> Result {
        let parent = Domain::new_tree(
            c"rust-soft-gic",
            NR_ALL,
            Ok::<_, Error>(HierParent(SoftIrqc::new(2), Atomic::new(0), Atomic::new(0))),
        )?;
        for mode in [GpcAlloc::Twice, GpcAlloc::FreeThenOk] {
            let child = Domain::new_hierarchy(
                c"rust-soft-gpc",
                &parent,
                32,
                Ok::<_, Error>(GpcChild::<GpcEoiChip>(
                    SoftIrqc::new(3),
                    core::marker::PhantomData,
                    mode,
                )),
            )?;
            let (held, allocs) = (parent.data().1.load(Relaxed), parent.data().2.load(Relaxed));
            // genirq reports any allocation error as "no mapping", hence `EINVAL`.
            assert_eq!(child.create_fwspec_mapping(&[25]).err(), Some(EINVAL));
            assert_eq!(parent.data().1.load(Relaxed), held);
            // The second allocation never reached the parent.
            assert_eq!(parent.data().2.load(Relaxed), allocs + 1);
        }
        let child = Domain::new_hierarchy(
            c"rust-soft-gpc",
            &parent,
            32,
            Ok::<_, Error>(GpcChild::<GpcEoiChip>(
                SoftIrqc::new(3),
                core::marker::PhantomData,
                GpcAlloc::LeakOnFree,
            )),
        )?;
        let held = parent.data().1.load(Relaxed);
        let m = child.create_fwspec_mapping(&[25])?;
        assert_eq!(parent.data().1.load(Relaxed), held + 1);
        drop(m);
        assert_eq!(parent.data().1.load(Relaxed), held);
        Ok(())
    }

    /// Answers every lookup: C would map its interrupts and stack its domains here.
    struct Selecting;

    #[vtable]
    impl DomainOps for Selecting {
        fn map(&self, _mapper: &Mapper<'_, Self>, _hwirq: usize) -> Result {
            Ok(())
        }

        fn select(&self, _fwspec: &FwSpec, _bus_token: bindings::irq_domain_bus_token) -> bool {
            true
        }
    }

    /// A domain with `select` on a fwnode of its own is refused: C asks every domain with
    /// `select` about each lookup, for any node.
    #[test]
    fn select_needs_an_unsafe_constructor() -> Result {
        assert_eq!(
            Domain::new_tree(c"rust-soft-select", 8, Ok::<_, Error>(Selecting)).err(),
            Some(EINVAL)
        );
        Ok(())
    }

    /// The fwnode whose specifiers [`claiming_select`] claims (0: none).
    static CLAIMED: Atomic<usize> = Atomic::new(0);

    /// A C domain's `select` that claims the specifiers of the node in [`CLAIMED`], on any bus.
    ///
    /// # Safety
    ///
    /// Called by genirq with a valid specifier.
    unsafe extern "C" fn claiming_select(
        _d: *mut bindings::irq_domain,
        fwspec: *mut bindings::irq_fwspec,
        _bus_token: bindings::irq_domain_bus_token,
    ) -> c_int {
        let claimed = CLAIMED.load(Relaxed);
        // SAFETY: genirq passes a valid specifier.
        let node = unsafe { (*fwspec).fwnode } as usize;
        c_int::from(claimed != 0 && node == claimed)
    }

    /// A specifier that C would map in another domain (a C domain whose `select` claims the
    /// Rust domain's node) is refused, and no mapping is made in either domain: the other
    /// domain's would have no owner. Once that domain is gone, the same specifier maps in the
    /// Rust domain.
    #[test]
    fn fwspec_claimed_elsewhere_is_refused() -> Result {
        static CLAIMING_OPS: bindings::irq_domain_ops = bindings::irq_domain_ops {
            select: Some(claiming_select),
            ..pin_init::zeroed()
        };
        let domain = soft_domain_named(c"rust-soft-claimed", 9)?;
        // SAFETY: The domain is live.
        let node = unsafe { (*domain.as_raw()).fwnode };
        // SAFETY: A valid C string; the core copies it.
        let fwnode =
            unsafe { bindings::irq_domain_alloc_named_fwnode(c"rust-soft-claiming".as_char_ptr()) };
        assert!(!fwnode.is_null());
        let info = bindings::irq_domain_info {
            fwnode,
            hwirq_max: NR_ALL,
            ops: &CLAIMING_OPS,
            ..pin_init::zeroed()
        };
        CLAIMED.store(node as usize, Relaxed);
        // SAFETY: `info` is fully initialised.
        let other = crate::error::from_err_ptr(unsafe { bindings::irq_domain_instantiate(&info) });
        // Hwirq 3, level-high: a specifier the Rust domain translates.
        let refused = other.map(|_| domain.create_fwspec_mapping(&[3, 4]).err());
        // SAFETY: Any domain may be looked up; `other`, if created, is live.
        let made_there = other
            .as_ref()
            .map_or(0, |d| unsafe { bindings::irq_find_mapping(*d, 3) });
        if let Ok(d) = other {
            // SAFETY: `d` was created above; a mapping made there (if this test fails) is
            // disposed of first, then its fwnode is unused.
            unsafe {
                if made_there != 0 {
                    bindings::irq_dispose_mapping(made_there);
                }
                bindings::irq_domain_remove(d);
            }
        }
        CLAIMED.store(0, Relaxed);
        // SAFETY: No domain is on it any more.
        unsafe { bindings::irq_domain_free_fwnode(fwnode) };
        assert_eq!(refused?, Some(EINVAL));
        assert_eq!(made_there, 0);
        assert_eq!(domain.find_mapping(3), None);
        // Its own again.
        let m = domain.create_fwspec_mapping(&[3, 4])?;
        assert_eq!(domain.find_mapping(3), Some(m.irq()));
        Ok(())
    }

    /// Strict flow under a GPC-shaped top chip (no `irq_ack`, no `irq_mask`/`irq_unmask`): its
    /// `irq_eoi` is its own, not `irq_chip_eoi_parent()`, so the flow cannot know it only
    /// forwards (a child's EOI may clear a latch, say) and takes the fasteoi path: EOI once,
    /// through the child to the parent, no call through the missing callbacks. A top chip
    /// without any callback is refused at allocation, or, installed behind the allocator's
    /// back, EOId at the parent. No oops either way. A failed allocation leaves nothing in the
    /// parent level, also when the failing `alloc` freed it itself.
    #[test]
    fn strict_under_gpc_shaped_top_chip() -> Result {
        let parent = Domain::new_tree(
            c"rust-soft-gic",
            NR_ALL,
            Ok::<_, Error>(HierParent(SoftIrqc::new(2), Atomic::new(0), Atomic::new(0))),
        )?;
        let gpc = Domain::new_hierarchy(
            c"rust-soft-gpc",
            &parent,
            32,
            Ok::<_, Error>(GpcChild::<GpcEoiChip>(
                SoftIrqc::new(3),
                core::marker::PhantomData,
                GpcAlloc::ChipAfter,
            )),
        )?;
        let m = gpc.create_fwspec_mapping(&[25])?;
        assert_eq!(parent.find_mapping(41), Some(m.irq()));
        // Raises line 25 with a ONESHOT threaded handler held in its thread and returns the
        // events seen while the thread is held (after checking the parent line is no longer
        // active: EOId before the thread ends) and those of the whole run.
        let raise_held = || -> Result<(KVec<u32>, KVec<u32>)> {
            let reg = request_gated(&m, Flags::TRIGGER_NONE, true, false, 0)?;
            reset_log();
            // Delivered as the GIC would: the parent line is acknowledged (active), then the
            // flow.
            parent.data().0.active[41].store(1, Relaxed);
            gpc.handle_irq_safe(25)?;
            reg.handler().entered.wait_for_completion();
            let held = log();
            assert_eq!(parent.data().0.active[41].load(Relaxed), 0);
            reg.handler().release.complete_all();
            reg.synchronize();
            Ok((held, log()))
        };
        // The EOI comes right after the hard handler, while the thread is held (the strict
        // flow would defer it to the thread's end and leave the line active until then).
        let (held, all) = raise_held()?;
        assert_eq!(held.first(), Some(&HARD));
        assert_eq!(count(&held, 3 * 16 + OP_EOI), 1);
        assert_eq!(count(&held, 2 * 16 + OP_EOI), 1);
        assert_eq!(count(&all, THREAD), 1);
        assert_eq!(all.len(), 4);
        // The top chip swapped for one without any callback after allocation (as a C driver
        // may do with `irq_set_chip()`, unchecked): the Rust flow EOIs the parent level, once,
        // before the thread ends, so the line is not left active, and calls nothing through the
        // missing callbacks.
        // SAFETY: `m` keeps the interrupt allocated; the bare chip has no callback, so it never
        // reads the chip data, which stays the domain's.
        to_result(unsafe { bindings::irq_set_chip(m.irq(), ChipVtable::<GpcBareChip>::build()) })?;
        let swapped = raise_held();
        // SAFETY: As above; the domain's own chip again, whose data it is.
        to_result(unsafe { bindings::irq_set_chip(m.irq(), ChipVtable::<GpcEoiChip>::build()) })?;
        let (held, all) = swapped?;
        assert_eq!(held.first(), Some(&HARD));
        assert_eq!(count(&held, 2 * 16 + OP_EOI), 1);
        assert_eq!(count(&all, THREAD), 1);
        assert_eq!(all.len(), 3);
        drop(m);

        // A top chip without `eoi` under a fasteoi flow, installed after or before the parent
        // level set the flow, on a line of the strict (Rust) flow and on one of the C fasteoi
        // flow (which would call through NULL): the allocation fails, nothing is left in the
        // parent level.
        for (mode, line) in [
            (GpcAlloc::ChipAfter, 26u32),
            (GpcAlloc::ChipFirst, 26),
            (GpcAlloc::ChipAfter, 20),
            (GpcAlloc::ChipFirst, 20),
        ] {
            let bare = Domain::new_hierarchy(
                c"rust-soft-gpc-bare",
                &parent,
                32,
                Ok::<_, Error>(GpcChild::<GpcBareChip>(
                    SoftIrqc::new(4),
                    core::marker::PhantomData,
                    mode,
                )),
            )?;
            let (held, allocs) = (parent.data().1.load(Relaxed), parent.data().2.load(Relaxed));
            // genirq reports any allocation error as "no mapping", hence `EINVAL`.
            assert_eq!(bare.create_fwspec_mapping(&[line]).err(), Some(EINVAL));
            // The parent level was allocated, then freed again.
            assert_eq!(parent.data().2.load(Relaxed), allocs + 1);
            assert_eq!(parent.data().1.load(Relaxed), held);
        }

        // An `alloc` that frees the parent level itself before it fails: freed once, not twice.
        let failing = Domain::new_hierarchy(
            c"rust-soft-gpc-fail",
            &parent,
            32,
            Ok::<_, Error>(GpcChild::<GpcEoiChip>(
                SoftIrqc::new(5),
                core::marker::PhantomData,
                GpcAlloc::FreeThenFail,
            )),
        )?;
        let (held, allocs) = (parent.data().1.load(Relaxed), parent.data().2.load(Relaxed));
        assert_eq!(failing.create_fwspec_mapping(&[27]).err(), Some(EINVAL));
        assert_eq!(parent.data().2.load(Relaxed), allocs + 1);
        assert_eq!(parent.data().1.load(Relaxed), held);
        Ok(())
    }
}
