// SPDX-License-Identifier: GPL-2.0
// EXPECT: cannot be sent between threads safely

//! Compile-fail case: a context type is not `Send`: it cannot be handed to another thread
//! (a work item, a kthread) that would use it outside the callback and the lock.

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
    name: "cf_ctx_not_send",
    authors: ["IRQ-RS Developers"],
    description: "compile-fail: context type sent to another thread",
    license: "GPL",
}

struct CfModule;

impl kernel::Module for CfModule {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        Ok(CfModule)
    }
}

/// What `Send` would allow: moving the value to another thread.
fn send_elsewhere<T: Send>(_value: &T) {}

/// The chip of the case.
pub struct CfChip;

#[vtable]
impl Chip for CfChip {
    type Data = ();
    const NAME: &'static CStr = c"cf-not-send";

    fn set_affinity(
        _data: &(),
        irqd: &SetAffinityCtx<'_>,
        _mask: &Cpumask,
        _force: bool,
    ) -> Result<SetAffinity> {
        send_elsewhere(irqd);
        Ok(SetAffinity::Ok)
    }
}
