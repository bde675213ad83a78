// SPDX-License-Identifier: GPL-2.0

//! Must not build: the owner of a queued cross-CPU call passed as a runtime `&'static
//! ThisModule` (the API before issue 21), which any `ThisModule` could be passed as. The owner is
//! a type parameter now: `smp::call_on_nowait::<LocalModule, _>(cpu, f)`.

use kernel::{
    cpu::CpuId,
    prelude::*,
    smp, //
};

module! {
    type: RuntimeOwnerArg,
    name: "cf_runtime_owner_arg",
    authors: ["IRQ-RS Developers"],
    description: "compile-fail: a runtime owner argument to call_on_nowait",
    license: "GPL",
}

struct RuntimeOwnerArg;

impl kernel::Module for RuntimeOwnerArg {
    fn init(module: &'static ThisModule) -> Result<Self> {
        smp::call_on_nowait(module, CpuId::current(), || {})?;
        Ok(Self)
    }
}
