// SPDX-License-Identifier: GPL-2.0
// EXPECT: no method named `set_handler` found

//! Compile-fail case: an ack's context dereferences to `IrqData`, not `LockedIrqData`: it
//! has no proof of the descriptor lock, so what needs the lock is not there.

use kernel::{
    irq::{
        AckCtx,
        Chip,
        FlowHandler, //
    },
    prelude::*, //
};

module! {
    type: CfModule,
    name: "cf_ack_no_lock",
    authors: ["IRQ-RS Developers"],
    description: "compile-fail: lock-only operation in an ack",
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
    const NAME: &'static CStr = c"cf-ack-lock";

    fn ack(_data: &(), irqd: &AckCtx<'_>) {
        let _ = irqd.set_handler(FlowHandler::Level);
    }
}
