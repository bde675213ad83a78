// SPDX-License-Identifier: GPL-2.0
// EXPECT: no method named `move_irq` found

//! Compile-fail case: holding the descriptor lock does not let a task apply a deferred
//! affinity move, which must run in the interrupt's own ack, on a CPU it still targets: only
//! `AckCtx::move_irq` (unsafe) does.

use kernel::{
    irq::IrqDesc,
    prelude::*, //
};

module! {
    type: CfModule,
    name: "cf_locked_no_move_irq",
    authors: ["IRQ-RS Developers"],
    description: "compile-fail: deferred move outside the ack",
    license: "GPL",
}

struct CfModule;

impl kernel::Module for CfModule {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        Ok(CfModule)
    }
}

/// A task, in process context with the descriptor lock held, applies the pending move.
pub fn misuse(desc: &IrqDesc) {
    desc.lock().irq_data().move_irq();
}
