// SPDX-License-Identifier: GPL-2.0
// EXPECT: are private

//! Compile-fail case: a context type cannot be made outside the `ChipVtable` trampoline of
//! its callback, not even from the descriptor lock.

use kernel::{
    cpumask::Cpumask,
    irq::{
        IrqDesc,
        SetAffinityCtx, //
    },
    prelude::*,
    types::NotThreadSafe, //
};

module! {
    type: CfModule,
    name: "cf_ctx_no_construct",
    authors: ["IRQ-RS Developers"],
    description: "compile-fail: context type built outside its trampoline",
    license: "GPL",
}

struct CfModule;

impl kernel::Module for CfModule {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        Ok(CfModule)
    }
}

/// A task forges a `set_affinity` context from the descriptor lock.
pub fn misuse(desc: &IrqDesc, mask: &Cpumask) {
    let guard = desc.lock();
    let ctx = SetAffinityCtx {
        irqd: guard.irq_data(),
        _not_send: NotThreadSafe,
    };
    ctx.update_effective_affinity(mask);
}
