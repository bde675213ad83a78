// SPDX-License-Identifier: GPL-2.0

//! ITS commands and the command queue.
//!
//! A command is 32 bytes, four little-endian doublewords (`struct its_cmd_block`), each field
//! where C's `its_encode_*()` puts it (GICv3 architecture specification, 5.3). The builders
//! check what C leaves to its callers: a DeviceID, EventID or collection the ITS cannot hold
//! (`GITS_TYPER`), an ITT that is not 256-byte aligned or sized as a power of two, a target that
//! is not a 64 KiB aligned redistributor address: `EINVAL`, never a command the ITS would
//! misread.
//!
//! The queue ([`CmdQueue`]) is C's `its->cmd_base`/`cmd_write` with the `GITS_CREADR`
//! arithmetic of `its_queue_full()` and `its_wait_for_range_completion()`: it never sleeps
//! (it runs under the ITS lock with interrupts off, from `irq_chip` callbacks under the
//! descriptor lock), and every wait is bounded. A full queue that does not drain is
//! `ETIMEDOUT`, a stalled ITS (`GITS_CREADR.Stalled`, a command error) `EIO`.
//!
//! C source: [`drivers/irqchip/irq-gic-v3-its.c`](srctree/drivers/irqchip/irq-gic-v3-its.c).

use super::{
    field,
    tables::Typer,
    with_field, //
};
use kernel::prelude::*;

/// `GITS_CMD_*`.
mod op {
    pub(super) const MOVI: u8 = 0x01;
    pub(super) const INT: u8 = 0x03;
    pub(super) const CLEAR: u8 = 0x04;
    pub(super) const SYNC: u8 = 0x05;
    pub(super) const MAPD: u8 = 0x08;
    pub(super) const MAPC: u8 = 0x09;
    pub(super) const MAPTI: u8 = 0x0a;
    pub(super) const INV: u8 = 0x0c;
    pub(super) const INVALL: u8 = 0x0d;
    pub(super) const DISCARD: u8 = 0x0f;
}

/// The first LPI INTID (`8192`).
pub(crate) const FIRST_LPI: u32 = 8192;

/// Where a collection's interrupts go, as `GITS_TYPER.PTA` says targets are named: the
/// redistributor's physical address (PTA 1) or its processor number (PTA 0,
/// `GICR_TYPER.Processor_Number`). C keeps either in `its_collection.target_address`,
/// pre-shifted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Target {
    /// A redistributor's physical address: 64 KiB aligned, below 2^52.
    Address(u64),
    /// A redistributor's processor number.
    ProcessorNumber(u16),
}

impl Target {
    /// The target field (RDbase, bits 51:16 of the third doubleword), checked against how `typer`
    /// names targets.
    fn rdbase(self, typer: &Typer) -> Result<u64> {
        match self {
            Self::Address(pa) if typer.pta() => {
                if pa & 0xffff != 0 || pa >> 52 != 0 {
                    return Err(EINVAL);
                }
                Ok(pa >> 16)
            }
            Self::ProcessorNumber(n) if !typer.pta() => Ok(u64::from(n)),
            _ => Err(EINVAL),
        }
    }
}

/// A device's Interrupt Translation Table, as MAPD names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Itt {
    /// Physical address, 256-byte aligned, below 2^52.
    pub(crate) pa: u64,
    /// Events it holds: a power of two from 2 (C: `max(2, roundup_pow_of_two(nvecs))`).
    pub(crate) events: u32,
}

impl Itt {
    /// The events and bytes of the ITT for `nvecs` vectors on an ITS described by `typer`
    /// (`its_create_device()`): at least 2 events, a power of two, each of
    /// `GITS_TYPER.ITT_entry_size` bytes, at least 256 bytes (`ITS_ITT_ALIGN`: ITTs are
    /// 256-byte aligned).
    ///
    /// Errors: `EINVAL` for no vector or more events than the ITS's EventID bits allow.
    pub(crate) fn layout(typer: &Typer, nvecs: u32) -> Result<(u32, usize)> {
        if nvecs == 0 {
            return Err(EINVAL);
        }
        let events = nvecs.checked_next_power_of_two().ok_or(EINVAL)?.max(2);
        if u64::from(events) > 1u64 << typer.idbits() {
            return Err(EINVAL);
        }
        let bytes = (events as usize).saturating_mul(typer.itt_entry_size() as usize);
        Ok((events, bytes.max(256)))
    }
}

/// One ITS command (`struct its_cmd_block`), in CPU order; [`Command::raw`] gives the
/// doublewords, [`Command::to_le`] what the queue holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Command {
    raw: [u64; 4],
}

impl Command {
    fn new(op: u8) -> Self {
        Self {
            raw: [u64::from(op), 0, 0, 0],
        }
    }

    /// Sets field `hi:lo` of doubleword `dw` (`its_mask_encode()`).
    fn set(mut self, dw: usize, val: u64, hi: u32, lo: u32) -> Self {
        if let Some(w) = self.raw.get_mut(dw) {
            *w = with_field(*w, val, hi, lo);
        }
        self
    }

    /// DeviceID (63:32 of the first doubleword), below `2^DevBits`.
    fn device(self, typer: &Typer, dev: u32) -> Result<Self> {
        if u64::from(dev) >> typer.devbits() != 0 {
            return Err(EINVAL);
        }
        Ok(self.set(0, dev.into(), 63, 32))
    }

    /// EventID (31:0 of the second doubleword), below `2^IDbits`.
    fn event(self, typer: &Typer, ev: u32) -> Result<Self> {
        if u64::from(ev) >> typer.idbits() != 0 {
            return Err(EINVAL);
        }
        Ok(self.set(1, ev.into(), 31, 0))
    }

    /// ICID (15:0 of the third doubleword), one of the ITS's collections.
    fn collection(self, typer: &Typer, col: u16) -> Result<Self> {
        if u32::from(col) >= typer.collections() {
            return Err(EINVAL);
        }
        Ok(self.set(2, col.into(), 15, 0))
    }

    /// MAPD: maps DeviceID `dev` to `itt` (V=1), or unmaps it (`None`, V=0; the ITS then drops
    /// the device's translations). `its_build_mapd_cmd()`.
    pub(crate) fn mapd(typer: &Typer, dev: u32, itt: Option<Itt>) -> Result<Self> {
        let cmd = Self::new(op::MAPD).device(typer, dev)?;
        let Some(itt) = itt else {
            return Ok(cmd);
        };
        if itt.events < 2
            || !itt.events.is_power_of_two()
            || itt.pa & 0xff != 0
            || itt.pa >> 52 != 0
        {
            return Err(EINVAL);
        }
        // Size is the number of EventID bits minus one: 2^(size + 1) events.
        let bits = itt.events.trailing_zeros();
        if u64::from(bits) > u64::from(typer.idbits()) {
            return Err(EINVAL);
        }
        Ok(cmd
            .set(1, u64::from(bits - 1), 4, 0)
            .set(2, itt.pa >> 8, 51, 8)
            .set(2, 1, 63, 63))
    }

    /// MAPC: maps collection `col` to `target` (V=1), or unmaps it (`None`).
    /// `its_build_mapc_cmd()`.
    pub(crate) fn mapc(typer: &Typer, col: u16, target: Option<Target>) -> Result<Self> {
        let cmd = Self::new(op::MAPC).collection(typer, col)?;
        match target {
            None => Ok(cmd),
            Some(t) => Ok(cmd.set(2, t.rdbase(typer)?, 51, 16).set(2, 1, 63, 63)),
        }
    }

    /// MAPTI: translates event `ev` of device `dev` to LPI `lpi`, delivered through collection
    /// `col`. `its_build_mapti_cmd()`.
    pub(crate) fn mapti(typer: &Typer, dev: u32, ev: u32, lpi: u32, col: u16) -> Result<Self> {
        if lpi < FIRST_LPI {
            return Err(EINVAL);
        }
        Self::new(op::MAPTI)
            .device(typer, dev)?
            .event(typer, ev)?
            .set(1, lpi.into(), 63, 32)
            .collection(typer, col)
    }

    /// MOVI: moves event `ev` of device `dev` to collection `col`. `its_build_movi_cmd()`.
    pub(crate) fn movi(typer: &Typer, dev: u32, ev: u32, col: u16) -> Result<Self> {
        Self::new(op::MOVI)
            .device(typer, dev)?
            .event(typer, ev)?
            .collection(typer, col)
    }

    /// A command naming one event: DISCARD, INV, INT, CLEAR.
    fn event_cmd(op: u8, typer: &Typer, dev: u32, ev: u32) -> Result<Self> {
        Self::new(op).device(typer, dev)?.event(typer, ev)
    }

    /// DISCARD: removes the event's translation (and its pending state).
    /// `its_build_discard_cmd()`.
    pub(crate) fn discard(typer: &Typer, dev: u32, ev: u32) -> Result<Self> {
        Self::event_cmd(op::DISCARD, typer, dev, ev)
    }

    /// INV: the ITS re-reads the event's LPI configuration (after a property-table write:
    /// mask, unmask, priority). `its_build_inv_cmd()`.
    pub(crate) fn inv(typer: &Typer, dev: u32, ev: u32) -> Result<Self> {
        Self::event_cmd(op::INV, typer, dev, ev)
    }

    /// INT: makes the event's LPI pending (retrigger, `set_irqchip_state`).
    /// `its_build_int_cmd()`.
    pub(crate) fn int(typer: &Typer, dev: u32, ev: u32) -> Result<Self> {
        Self::event_cmd(op::INT, typer, dev, ev)
    }

    /// CLEAR: clears the event's LPI pending state. `its_build_clear_cmd()`.
    pub(crate) fn clear(typer: &Typer, dev: u32, ev: u32) -> Result<Self> {
        Self::event_cmd(op::CLEAR, typer, dev, ev)
    }

    /// INVALL: re-reads the configuration of every LPI of collection `col`.
    /// `its_build_invall_cmd()`.
    pub(crate) fn invall(typer: &Typer, col: u16) -> Result<Self> {
        Self::new(op::INVALL).collection(typer, col)
    }

    /// SYNC: completes once every earlier command's effects are visible at `target`.
    /// `its_build_sync_cmd()`.
    pub(crate) fn sync(typer: &Typer, target: Target) -> Result<Self> {
        Ok(Self::new(op::SYNC).set(2, target.rdbase(typer)?, 51, 16))
    }

    /// The command number (7:0 of the first doubleword).
    pub(crate) fn opcode(&self) -> u8 {
        field(self.raw[0], 7, 0) as u8
    }

    /// The four doublewords, in CPU order. For the KUnit suite.
    #[cfg_attr(
        not(any(
            CONFIG_ARM_GIC_V3_RUST_ITS_KUNIT_TEST = "y",
            all(MODULE, CONFIG_ARM_GIC_V3_RUST_ITS_KUNIT_TEST = "m")
        )),
        allow(dead_code)
    )]
    pub(crate) fn raw(&self) -> [u64; 4] {
        self.raw
    }

    /// The four doublewords as the ITS reads them from the queue (`its_fixup_cmd()`).
    pub(crate) fn to_le(self) -> [u64; 4] {
        self.raw.map(u64::to_le)
    }
}

/// Queue size C uses (`ITS_CMD_QUEUE_SZ`, 64 KiB: 2048 commands).
pub(crate) const QUEUE_BYTES: usize = 64 * 1024;

/// Bytes per command.
const CMD_BYTES: u64 = 32;

/// Polls of `GITS_CREADR` before a wait gives up: 1 us apart, 1 s in all, as C.
pub(crate) const POLLS: u32 = 1_000_000;

/// What the queue needs of the ITS and of the memory behind it. The real implementation writes
/// the queue memory and the `GITS_CWRITER`/`GITS_CREADR` registers; KUnit's fakes model an ITS
/// that executes, lags or stalls.
pub(crate) trait QueueRegs {
    /// Writes `cmd` into slot `slot` of the queue memory, little-endian (an error for a slot
    /// outside it), and makes it observable by the ITS (`its_flush_cmd()`: `dsb(ishst)`, or a
    /// clean to the point of coherency on an ITS that does not snoop).
    fn write_slot(&mut self, slot: usize, cmd: &Command) -> Result;
    /// `GITS_CREADR`: the read offset in bits 19:5, Stalled in bit 0.
    fn creadr(&mut self) -> u64;
    /// Writes `GITS_CWRITER` (the write offset in bits 19:5).
    fn set_cwriter(&mut self, val: u64);
    /// Busy-waits 1 us between polls (`udelay(1)`); never sleeps.
    fn relax(&mut self);
}

/// The command queue's state (C's `cmd_base`, `cmd_write`): where the next command goes.
///
/// # Invariants
///
/// `write < slots`, and `slots >= 128`.
pub(crate) struct CmdQueue {
    slots: usize,
    write: usize,
    /// Polls of `GITS_CREADR` a wait makes before it gives up.
    polls: u32,
}

/// The ITS's progress through the queue as one wait sees it: the read index last seen and the
/// commands read since the wait began. Between two reads of `GITS_CREADR` the ITS can advance at
/// most to the write index, less than a full turn, so the distance mod the queue size is exact
/// across any number of wrap-arounds.
struct Progress {
    prev: usize,
    done: usize,
}

impl CmdQueue {
    /// A queue of `bytes` bytes (`GITS_CBASER.Size` pages of 4 KiB: 4 KiB to 1 MiB), empty, as
    /// after `GITS_CWRITER` and `GITS_CREADR` reset to 0.
    pub(crate) fn new(bytes: usize) -> Result<Self> {
        if bytes == 0 || bytes % 4096 != 0 || bytes > 256 * 4096 {
            return Err(EINVAL);
        }
        // INVARIANT: at least 128 slots, and the write index starts at 0.
        Ok(Self {
            slots: bytes / CMD_BYTES as usize,
            write: 0,
            polls: POLLS,
        })
    }

    /// The number of slots. For the KUnit suite.
    #[cfg_attr(
        not(any(
            CONFIG_ARM_GIC_V3_RUST_ITS_KUNIT_TEST = "y",
            all(MODULE, CONFIG_ARM_GIC_V3_RUST_ITS_KUNIT_TEST = "m")
        )),
        allow(dead_code)
    )]
    pub(crate) fn slots(&self) -> usize {
        self.slots
    }

    /// `GITS_CWRITER`'s value for the current write index.
    pub(crate) fn cwriter(&self) -> u64 {
        self.write as u64 * CMD_BYTES
    }

    /// The read index of a `GITS_CREADR` value: `EIO` if the ITS stalled on a command error,
    /// `EIO` too for an offset outside the queue (a broken ITS).
    fn read_index(&self, creadr: u64) -> Result<usize> {
        if creadr & 1 != 0 {
            return Err(EIO);
        }
        let idx = field(creadr, 19, 5) as usize;
        if idx >= self.slots {
            return Err(EIO);
        }
        Ok(idx)
    }

    /// Reads `GITS_CREADR` and accounts for the ITS's progress; returns the read index.
    fn observe(&self, regs: &mut impl QueueRegs, seen: &mut Progress) -> Result<usize> {
        let rd = self.read_index(regs.creadr())?;
        seen.done += (rd + self.slots - seen.prev) % self.slots;
        seen.prev = rd;
        Ok(rd)
    }

    /// Waits for a free slot in a full queue (`its_queue_full()`), first posting what the batch
    /// has queued so far (`posted` follows), within the batch's budget of `polls`; returns the
    /// free slots. On an error the write index goes back to what the ITS was given.
    #[cold]
    #[inline(never)]
    fn wait_for_room(
        &mut self,
        regs: &mut impl QueueRegs,
        seen: &mut Progress,
        posted: &mut usize,
        polls: &mut u32,
    ) -> Result<usize> {
        loop {
            let rd = match self.observe(regs, seen) {
                Ok(rd) => rd,
                Err(e) => {
                    // INVARIANT: back to what the ITS was given, within the queue.
                    self.write = *posted;
                    return Err(e);
                }
            };
            let room = (rd + self.slots - self.write - 1) % self.slots;
            if room != 0 {
                return Ok(room);
            }
            if *posted != self.write {
                regs.set_cwriter(self.cwriter());
                *posted = self.write;
            }
            *polls = polls.saturating_sub(1);
            if *polls == 0 {
                pr_err!("ITS queue not draining\n");
                // INVARIANT: everything queued is posted; the index stays.
                return Err(ETIMEDOUT);
            }
            regs.relax();
        }
    }

    /// Queues `cmds`, then `sync` (the SYNC that ends a batch, if any), tells the ITS
    /// (`GITS_CWRITER`), and waits until it has read them all: `its_send_single_command()` for a
    /// batch. A full queue is waited on as C does (one slot
    /// always stays free, so that full and empty differ), after posting what the batch has
    /// queued so far so that the ITS starts on it. One budget of polls ([`POLLS`], 1 us apart)
    /// bounds the whole call.
    ///
    /// Errors: `EINVAL` for an empty batch or one larger than the queue can ever hold,
    /// `ETIMEDOUT` if the ITS does not make room or does not reach the batch's end in time,
    /// `EIO` if it stalls, the error of [`QueueRegs::write_slot`] (`ERANGE` for a slot outside
    /// the queue memory). After an error the write index is what the ITS was last given:
    /// commands queued but not posted are dropped, never run by a later call.
    pub(crate) fn send<R: QueueRegs>(
        &mut self,
        regs: &mut R,
        cmds: &[Command],
        sync: Option<Command>,
    ) -> Result {
        let len = cmds.len() + usize::from(sync.is_some());
        if len == 0 || len >= self.slots {
            return Err(EINVAL);
        }
        let start = self.read_index(regs.creadr())?;
        let mut seen = Progress {
            prev: start,
            done: 0,
        };
        // Commands still unread from before, then this batch.
        let target = (self.write + self.slots - start) % self.slots + len;
        let mut polls = self.polls;
        // The write index the ITS was last given.
        let mut posted = self.write;
        // Free slots as the first read saw them (one always stays free): a batch that fits is
        // queued without reading `GITS_CREADR` again.
        let mut room = (start + self.slots - self.write - 1) % self.slots;
        let mut put = |q: &mut Self, regs: &mut R, cmd: &Command| -> Result {
            if room == 0 {
                room = q.wait_for_room(regs, &mut seen, &mut posted, &mut polls)?;
            }
            if let Err(e) = regs.write_slot(q.write, cmd) {
                // INVARIANT: back to what the ITS was given, within the queue.
                q.write = posted;
                return Err(e);
            }
            // INVARIANT: wraps to 0 at `slots`.
            q.write = (q.write + 1) % q.slots;
            room -= 1;
            Ok(())
        };
        for cmd in cmds {
            put(self, regs, cmd)?;
        }
        if let Some(cmd) = &sync {
            put(self, regs, cmd)?;
        }
        regs.set_cwriter(self.cwriter());

        // `its_wait_for_range_completion()`.
        loop {
            self.observe(regs, &mut seen)?;
            if seen.done >= target {
                return Ok(());
            }
            polls = polls.saturating_sub(1);
            if polls == 0 {
                pr_err!("ITS queue timeout ({} of {} commands)\n", seen.done, target);
                return Err(ETIMEDOUT);
            }
            regs.relax();
        }
    }
}

// Built in, or in the module of its own (irq_gic_v3_rust_its_kunit.rs).
#[cfg(any(
    CONFIG_ARM_GIC_V3_RUST_ITS_KUNIT_TEST = "y",
    all(MODULE, CONFIG_ARM_GIC_V3_RUST_ITS_KUNIT_TEST = "m")
))]
#[kunit_tests(rust_gicv3_its_cmd)]
mod tests {
    use super::*;

    /// An ITS with PTA 0, 16 DeviceID bits and 16 EventID bits.
    fn typer() -> Result<Typer> {
        // PLPIS | ITT entry size 8 (7 << 4) | IDbits 16 (15 << 8) | DevBits 16 (15 << 13)
        // | HCC 16 (24..31).
        Typer::from_raw(1 | 7 << 4 | 15 << 8 | 15 << 13 | 16 << 24)
    }

    /// Field `hi:lo` of doubleword `dw`.
    fn f(c: &Command, dw: usize, hi: u32, lo: u32) -> u64 {
        field(c.raw()[dw], hi, lo)
    }

    #[test]
    fn mapd_encodes_size_itt_and_valid() -> Result {
        let t = typer()?;
        let c = Command::mapd(
            &t,
            0x10,
            Some(Itt {
                pa: 0x4_1234_5600,
                events: 32,
            }),
        )?;
        assert_eq!(c.opcode(), 0x08);
        assert_eq!(f(&c, 0, 63, 32), 0x10);
        // 32 events: 5 EventID bits, Size = 4.
        assert_eq!(f(&c, 1, 4, 0), 4);
        assert_eq!(f(&c, 2, 51, 8) << 8, 0x4_1234_5600);
        assert_eq!(f(&c, 2, 63, 63), 1);
        assert_eq!(c.raw()[3], 0);

        let c = Command::mapd(&t, 0x10, None)?;
        assert_eq!(f(&c, 2, 63, 63), 0);
        assert_eq!(c.raw()[1] | c.raw()[2], 0);
        Ok(())
    }

    #[test]
    fn mapti_movi_and_event_commands() -> Result {
        let t = typer()?;
        let c = Command::mapti(&t, 0xbeef, 3, 8192 + 7, 2)?;
        assert_eq!(c.opcode(), 0x0a);
        assert_eq!(f(&c, 0, 63, 32), 0xbeef);
        assert_eq!(f(&c, 1, 31, 0), 3);
        assert_eq!(f(&c, 1, 63, 32), 8199);
        assert_eq!(f(&c, 2, 15, 0), 2);

        let c = Command::movi(&t, 0xbeef, 3, 5)?;
        assert_eq!((c.opcode(), f(&c, 2, 15, 0)), (0x01, 5));
        for (c, op) in [
            (Command::discard(&t, 1, 2)?, 0x0f),
            (Command::inv(&t, 1, 2)?, 0x0c),
            (Command::int(&t, 1, 2)?, 0x03),
            (Command::clear(&t, 1, 2)?, 0x04),
        ] {
            assert_eq!(c.opcode(), op);
            assert_eq!((f(&c, 0, 63, 32), f(&c, 1, 31, 0)), (1, 2));
            assert_eq!(c.raw()[2] | c.raw()[3], 0);
        }
        let c = Command::invall(&t, 15)?;
        assert_eq!((c.opcode(), f(&c, 2, 15, 0)), (0x0d, 15));
        Ok(())
    }

    #[test]
    fn itt_sizes_as_c_sizes_them() -> Result {
        let t = typer()?;
        // One vector: 2 events of 8 bytes, rounded up to 256 bytes.
        assert_eq!(Itt::layout(&t, 1)?, (2, 256));
        assert_eq!(Itt::layout(&t, 3)?, (4, 256));
        assert_eq!(Itt::layout(&t, 33)?, (64, 512));
        // 16 EventID bits: 65536 events at most.
        assert_eq!(Itt::layout(&t, 65536)?, (65536, 524288));
        assert_eq!(Itt::layout(&t, 65537), Err(EINVAL));
        assert_eq!(Itt::layout(&t, 0), Err(EINVAL));
        assert_eq!(Itt::layout(&t, u32::MAX), Err(EINVAL));
        Ok(())
    }

    #[test]
    fn targets_follow_pta() -> Result {
        let t = typer()?;
        // PTA 0: processor numbers.
        let c = Command::mapc(&t, 1, Some(Target::ProcessorNumber(3)))?;
        assert_eq!(
            (c.opcode(), f(&c, 2, 51, 16), f(&c, 2, 63, 63)),
            (0x09, 3, 1)
        );
        assert_eq!(Command::sync(&t, Target::Address(0x80a_0000)), Err(EINVAL));
        // PTA 1: 64 KiB aligned redistributor addresses.
        let t = Typer::from_raw(1 | 7 << 4 | 15 << 8 | 15 << 13 | 1 << 19)?;
        let c = Command::sync(&t, Target::Address(0x80a_0000))?;
        assert_eq!((c.opcode(), f(&c, 2, 51, 16) << 16), (0x05, 0x80a_0000));
        assert_eq!(Command::sync(&t, Target::Address(0x80a_8000)), Err(EINVAL));
        assert_eq!(Command::sync(&t, Target::ProcessorNumber(0)), Err(EINVAL));
        Ok(())
    }

    #[test]
    fn out_of_range_fields_are_einval() -> Result {
        // DevBits 4, IDbits 5, 4 collections (CIL, CIDbits 2).
        let t = Typer::from_raw(1 | 7 << 4 | 4 << 8 | 3 << 13 | 1 << 36 | 1 << 32)?;
        assert!(Command::mapti(&t, 15, 31, 8192, 3).is_ok());
        assert_eq!(Command::mapti(&t, 16, 0, 8192, 0), Err(EINVAL));
        assert_eq!(Command::mapti(&t, 0, 32, 8192, 0), Err(EINVAL));
        assert_eq!(Command::mapti(&t, 0, 0, 8191, 0), Err(EINVAL));
        assert_eq!(Command::movi(&t, 0, 0, 4), Err(EINVAL));
        let itt = |pa, events| Some(Itt { pa, events });
        assert!(Command::mapd(&t, 0, itt(0x1000, 32)).is_ok());
        assert_eq!(Command::mapd(&t, 0, itt(0x1000, 64)), Err(EINVAL));
        assert_eq!(Command::mapd(&t, 0, itt(0x1000, 1)), Err(EINVAL));
        assert_eq!(Command::mapd(&t, 0, itt(0x1000, 12)), Err(EINVAL));
        assert_eq!(Command::mapd(&t, 0, itt(0x1080, 2)), Err(EINVAL));
        assert_eq!(Command::mapd(&t, 0, itt(1 << 52, 2)), Err(EINVAL));
        Ok(())
    }

    /// An ITS behind the queue: it reads up to `rate` commands every `every` reads of
    /// `GITS_CREADR` (rate 0: none), and stalls (`GITS_CREADR.Stalled`) on a command whose opcode
    /// is `stall_on`.
    struct FakeIts {
        slots: usize,
        mem: KVec<[u64; 4]>,
        read: usize,
        write: usize,
        rate: usize,
        every: u32,
        calls: u32,
        stall_on: Option<u8>,
        /// Stalls at this read of `GITS_CREADR` (counted in `calls`).
        stall_at: Option<u32>,
        stalled: bool,
        executed: KVec<u8>,
        cwriter_writes: u32,
        relaxes: u32,
    }

    impl FakeIts {
        fn new(slots: usize, rate: usize) -> Result<Self> {
            let mut mem = KVec::new();
            for _ in 0..slots {
                mem.push([0; 4], GFP_KERNEL)?;
            }
            Ok(Self {
                slots,
                mem,
                read: 0,
                write: 0,
                rate,
                every: 1,
                calls: 0,
                stall_on: None,
                stall_at: None,
                stalled: false,
                executed: KVec::new(),
                cwriter_writes: 0,
                relaxes: 0,
            })
        }
    }

    impl QueueRegs for FakeIts {
        fn write_slot(&mut self, slot: usize, cmd: &Command) -> Result {
            *self.mem.get_mut(slot).ok_or(EINVAL)? = cmd.to_le();
            Ok(())
        }

        fn creadr(&mut self) -> u64 {
            self.calls += 1;
            if self.stall_at == Some(self.calls) {
                self.stalled = true;
            }
            let mut n = if self.calls % self.every == 0 {
                self.rate
            } else {
                0
            };
            while n > 0 && !self.stalled && self.read != self.write {
                let op = (u64::from_le(self.mem[self.read][0]) & 0xff) as u8;
                if Some(op) == self.stall_on {
                    self.stalled = true;
                    break;
                }
                if self.executed.push(op, GFP_KERNEL).is_err() {
                    // Recorded as a stall: the test fails on it, not on a missing command.
                    self.stalled = true;
                    break;
                }
                self.read = (self.read + 1) % self.slots;
                n -= 1;
            }
            (self.read as u64) << 5 | u64::from(self.stalled)
        }

        fn set_cwriter(&mut self, val: u64) {
            self.write = (val >> 5) as usize;
            self.cwriter_writes += 1;
        }

        fn relax(&mut self) {
            self.relaxes += 1;
        }
    }

    #[test]
    fn a_batch_wraps_around_the_queue_and_completes() -> Result {
        let t = typer()?;
        // The smallest queue: 4 KiB, 128 slots.
        let mut q = CmdQueue::new(4096)?;
        let mut its = FakeIts::new(q.slots(), 3)?;
        let inv = Command::inv(&t, 1, 1)?;
        let sync = Command::sync(&t, Target::ProcessorNumber(0))?;
        // 100 + 50 commands: the second batch wraps past slot 127.
        let mut batch = KVec::new();
        for _ in 0..99 {
            batch.push(inv, GFP_KERNEL)?;
        }
        batch.push(sync, GFP_KERNEL)?;
        q.send(&mut its, &batch, None)?;
        assert_eq!(q.cwriter(), 100 * 32);
        // The SYNC given apart ends the batch, in one write of `GITS_CWRITER`.
        batch.truncate(49);
        let writes = its.cwriter_writes;
        q.send(&mut its, &batch, Some(sync))?;
        assert_eq!(its.cwriter_writes, writes + 1);
        assert_eq!(q.cwriter(), (150 % 128) * 32);
        assert_eq!(its.executed.len(), 150);
        assert_eq!(its.executed[99], 0x05);
        assert_eq!(its.executed[149], 0x05);
        // What the ITS read is what was sent, little-endian.
        assert_eq!(its.mem[(150 - 1) % 128], sync.to_le());
        // A SYNC alone is a batch.
        q.send(&mut its, &[], Some(sync))?;
        assert_eq!(its.executed.len(), 151);
        assert_eq!(its.executed[150], 0x05);
        Ok(())
    }

    #[test]
    fn a_slot_that_cannot_be_written_drops_the_batch() -> Result {
        let t = typer()?;
        let mut q = CmdQueue::new(4096)?;
        let mut its = FakeIts::new(q.slots(), 4)?;
        let inv = Command::inv(&t, 1, 1)?;
        // Memory for two slots only: the third command of the batch has none.
        its.mem.truncate(2);
        assert_eq!(q.send(&mut its, &[inv, inv, inv], None), Err(EINVAL));
        // Nothing was posted: the write index is what the ITS was last given.
        assert_eq!(q.cwriter(), 0);
        assert_eq!(its.cwriter_writes, 0);
        assert!(its.executed.is_empty());
        Ok(())
    }

    #[test]
    fn a_full_queue_posts_what_it_has_and_waits_for_room() -> Result {
        let t = typer()?;
        let mut q = CmdQueue::new(4096)?;
        let mut its = FakeIts::new(q.slots(), 1)?;
        let inv = Command::inv(&t, 1, 1)?;
        let mut batch = KVec::new();
        for _ in 0..128 {
            batch.push(inv, GFP_KERNEL)?;
        }
        assert_eq!(q.send(&mut its, &batch, None), Err(EINVAL));
        // The SYNC counts: 127 and a SYNC are as many; nothing at all is no batch.
        let sync = Command::sync(&t, Target::ProcessorNumber(0))?;
        assert_eq!(q.send(&mut its, &batch[..127], Some(sync)), Err(EINVAL));
        assert_eq!(q.send(&mut its, &[], None), Err(EINVAL));
        // 127 commands fill an empty queue but for the slot kept free: one post.
        batch.truncate(127);
        q.send(&mut its, &batch, None)?;
        assert_eq!((its.cwriter_writes, its.executed.len()), (1, 127));
        // 100 commands the ITS does not read in time are left in the queue; 127 more then do
        // not fit before an ITS reading one command every 4 polls has read them: what is queued
        // is posted when the queue is full (once per full wait, so that the ITS starts on it),
        // and the wait covers the 100 left over as well.
        its.rate = 0;
        q.polls = 100;
        assert_eq!(q.send(&mut its, &batch[..100], None), Err(ETIMEDOUT));
        (its.rate, its.every) = (1, 4);
        q.polls = 10_000;
        q.send(&mut its, &batch, None)?;
        assert!(its.cwriter_writes > 3);
        assert_eq!(its.executed.len(), 127 + 100 + 127);
        assert_eq!(its.read, its.write);
        assert_eq!(q.cwriter(), ((127 + 100 + 127) % 128) * 32);
        Ok(())
    }

    #[test]
    fn a_stalled_its_is_eio_and_a_dead_one_times_out() -> Result {
        let t = typer()?;
        let mut q = CmdQueue::new(4096)?;
        let mut its = FakeIts::new(q.slots(), 4)?;
        its.stall_on = Some(0x0f);
        let batch = [
            Command::inv(&t, 1, 1)?,
            Command::discard(&t, 1, 1)?,
            Command::inv(&t, 1, 2)?,
        ];
        assert_eq!(q.send(&mut its, &batch, None), Err(EIO));
        assert_eq!(its.executed.len(), 1);

        // A stall seen in the wait: `EIO`, the batch posted (it fitted the room the first read
        // showed: no read while queuing); once the ITS goes on it runs the batch, then the next.
        let mut q = CmdQueue::new(4096)?;
        let mut its = FakeIts::new(q.slots(), 1)?;
        q.send(&mut its, &batch[..1], None)?;
        // The first read (the start) passes, the second (the wait) finds the ITS stalled.
        its.stall_at = Some(its.calls + 2);
        assert_eq!(q.send(&mut its, &batch[..2], None), Err(EIO));
        assert_eq!(q.cwriter(), 96);
        (its.stalled, its.stall_at) = (false, None);
        q.send(&mut its, &batch[2..], None)?;
        assert_eq!(&its.executed[..], &[0x0c, 0x0c, 0x0f, 0x0c]);

        // A stall seen while waiting for room: what was queued and not posted is dropped, and
        // the next batch does not run it.
        let mut q = CmdQueue::new(4096)?;
        q.polls = 1000;
        let mut its = FakeIts::new(q.slots(), 0)?;
        let mut fill = KVec::new();
        for _ in 0..126 {
            fill.push(batch[0], GFP_KERNEL)?;
        }
        // All but one usable slot, posted; the ITS reads nothing: the wait times out.
        assert_eq!(q.send(&mut its, &fill, None), Err(ETIMEDOUT));
        assert_eq!(q.cwriter(), 126 * 32);
        // The first DISCARD takes the last slot, the second waits for room and sees the stall.
        its.stall_at = Some(its.calls + 2);
        assert_eq!(q.send(&mut its, &[batch[1], batch[1]], None), Err(EIO));
        assert_eq!(q.cwriter(), 126 * 32);
        (its.stalled, its.stall_at, its.rate) = (false, None, 200);
        q.send(&mut its, &batch[2..], None)?;
        assert_eq!(its.executed.len(), 127);
        assert!(its.executed.iter().all(|op| *op == 0x0c));

        // An ITS that never reads: the wait ends after its polls, it does not hang.
        let mut q = CmdQueue::new(4096)?;
        q.polls = 1000;
        let mut its = FakeIts::new(q.slots(), 0)?;
        assert_eq!(q.send(&mut its, &batch[..1], None), Err(ETIMEDOUT));
        assert_eq!(its.relaxes, 999);
        // Nor does a full queue that never drains.
        let mut q = CmdQueue::new(4096)?;
        q.polls = 1000;
        let mut its = FakeIts::new(q.slots(), 0)?;
        let mut full = KVec::new();
        for _ in 0..127 {
            full.push(batch[0], GFP_KERNEL)?;
        }
        assert_eq!(q.send(&mut its, &full[..100], None), Err(ETIMEDOUT));
        assert_eq!(q.send(&mut its, &full[..50], None), Err(ETIMEDOUT));
        assert_eq!(its.write, 127);
        // C's queue: 2048 commands.
        assert_eq!(CmdQueue::new(QUEUE_BYTES)?.slots(), 2048);
        // A queue size the hardware cannot have.
        assert!(CmdQueue::new(4096 + 32).is_err());
        assert!(CmdQueue::new(257 * 4096).is_err());
        Ok(())
    }
}
