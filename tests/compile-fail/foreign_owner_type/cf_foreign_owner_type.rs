// SPDX-License-Identifier: GPL-2.0

//! Must not build: a loadable module implementing `ModuleMetadata` (a safe trait) for a type of
//! its own with a `THIS_MODULE` copied from a public null owner of the kernel crate, and passing
//! it as the owner type of a queued cross-CPU call.

use kernel::{
    cpu::CpuId,
    prelude::*,
    smp,
    ModuleMetadata, //
};

module! {
    type: ForeignOwnerType,
    name: "cf_foreign_owner_type",
    authors: ["IRQ-RS Developers"],
    description: "compile-fail: a copied null owner passed to call_on_nowait",
    license: "GPL",
}

/// Claims to be the kernel image.
struct Foreign;

impl ModuleMetadata for Foreign {
    const NAME: &'static kernel::str::CStr = c"vmlinux";
    const THIS_MODULE: ThisModule = <kernel::module::BuiltIn as ModuleMetadata>::THIS_MODULE;
}

struct ForeignOwnerType;

impl kernel::Module for ForeignOwnerType {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        smp::call_on_nowait::<Foreign, _>(CpuId::current(), || {})?;
        Ok(Self)
    }
}
