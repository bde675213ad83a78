// SPDX-License-Identifier: GPL-2.0
// EXPECT: no method named `update_effective_affinity` found

//! Compile-fail case: holding the descriptor lock does not let a task set an interrupt's
//! effective affinity, which `irq_migrate_all_off_this_cpu()` trusts at CPU offline: only the
//! chip's `set_affinity` may (`SetAffinityCtx::update_effective_affinity`).

use kernel::{
    cpumask::Cpumask,
    irq::IrqDesc,
    prelude::*, //
};

module! {
    type: CfModule,
    name: "cf_locked_no_effective_affinity",
    authors: ["IRQ-RS Developers"],
    description: "compile-fail: effective affinity outside set_affinity",
    license: "GPL",
}

struct CfModule;

impl kernel::Module for CfModule {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        Ok(CfModule)
    }
}

/// Any task, the descriptor lock held, claims the interrupt targets `mask`.
pub fn misuse(desc: &IrqDesc, mask: &Cpumask) {
    desc.lock().irq_data().update_effective_affinity(mask);
}
