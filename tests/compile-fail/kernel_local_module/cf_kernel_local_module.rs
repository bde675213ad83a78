// SPDX-License-Identifier: GPL-2.0

//! Must not build: a loadable module naming the kernel crate's own `LocalModule` (null: the
//! kernel crate is built in) as the owner of its code. It is private to the kernel crate, and
//! must stay so.

use kernel::{
    cpu::CpuId,
    prelude::*,
    smp, //
};

module! {
    type: KernelLocalModule,
    name: "cf_kernel_local_module",
    authors: ["IRQ-RS Developers"],
    description: "compile-fail: the kernel crate's LocalModule in a module",
    license: "GPL",
}

struct KernelLocalModule;

impl kernel::Module for KernelLocalModule {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        smp::call_on_nowait::<kernel::LocalModule, _>(CpuId::current(), || {})?;
        Ok(Self)
    }
}
