// SPDX-License-Identifier: GPL-2.0
// EXPECT: no method named `set_forwarded_to_vcpu` found

//! Compile-fail case: holding the descriptor lock does not let a task mark an interrupt
//! forwarded to a vCPU, which makes the GIC skip its deactivation: only the chip's
//! `set_vcpu_affinity` may (`SetVcpuAffinityCtx::set_forwarded_to_vcpu`).

use kernel::{
    irq::IrqDesc,
    prelude::*, //
};

module! {
    type: CfModule,
    name: "cf_locked_no_forwarded",
    authors: ["IRQ-RS Developers"],
    description: "compile-fail: forwarded flag outside set_vcpu_affinity",
    license: "GPL",
}

struct CfModule;

impl kernel::Module for CfModule {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        Ok(CfModule)
    }
}

/// Any task, the descriptor lock held, marks the interrupt forwarded.
pub fn misuse(desc: &IrqDesc) {
    desc.lock().irq_data().set_forwarded_to_vcpu(true);
}
