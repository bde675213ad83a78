// SPDX-License-Identifier: GPL-2.0

//! Compile-fail control: a loadable module that names its own owner the intended ways. It must
//! build: if it does not, the harness (toolchain, flags, kernel output directory) is broken, and
//! the failures of the other cases would prove nothing.

use kernel::{
    cpu::CpuId,
    prelude::*,
    smp, //
};

module! {
    type: Control,
    name: "cf_control",
    authors: ["IRQ-RS Developers"],
    description: "compile-fail control: the module's own owner, by type",
    license: "GPL",
}

struct Control;

impl kernel::Module for Control {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        // The owner of the queued function's code is this module, named by its type.
        smp::call_on_nowait::<LocalModule, _>(CpuId::current(), || {})?;
        smp::call_on_nowait::<crate::LocalModule, _>(CpuId::current(), || {})?;
        Ok(Self)
    }
}
