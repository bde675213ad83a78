// SPDX-License-Identifier: GPL-2.0
// EXPECT: is unsafe and requires unsafe

//! Compile-fail case: an ack has no proof of the descriptor lock (`chained_irq_enter()`
//! and the per-CPU flows ack without it), so applying a deferred move there is `unsafe`.

use kernel::{
    irq::{
        AckCtx,
        Chip, //
    },
    prelude::*, //
};

module! {
    type: CfModule,
    name: "cf_ack_move_irq_unsafe",
    authors: ["IRQ-RS Developers"],
    description: "compile-fail: deferred move in an ack without unsafe",
    license: "GPL",
}

struct CfModule;

impl kernel::Module for CfModule {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        Ok(CfModule)
    }
}

/// The chip of the case.
pub struct CfChip;

#[vtable]
impl Chip for CfChip {
    type Data = ();
    const NAME: &'static CStr = c"cf-ack-move";

    fn ack(_data: &(), irqd: &AckCtx<'_>) {
        irqd.move_irq();
    }
}
