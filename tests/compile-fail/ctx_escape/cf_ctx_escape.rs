// SPDX-License-Identifier: GPL-2.0
// EXPECT: lifetime may not live long enough

//! Compile-fail case: a context type is bound to its callback's call: it cannot be kept
//! for later, when the lock is no longer held.

use kernel::{
    cpumask::Cpumask,
    irq::{
        Chip,
        SetAffinity,
        SetAffinityCtx, //
    },
    prelude::*, //
};

module! {
    type: CfModule,
    name: "cf_ctx_escape",
    authors: ["IRQ-RS Developers"],
    description: "compile-fail: context type kept beyond its call",
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
    const NAME: &'static CStr = c"cf-escape";

    fn set_affinity(
        _data: &(),
        irqd: &SetAffinityCtx<'_>,
        _mask: &Cpumask,
        _force: bool,
    ) -> Result<SetAffinity> {
        let _kept: &'static SetAffinityCtx<'static> = irqd;
        Ok(SetAffinity::Ok)
    }
}
