// SPDX-License-Identifier: GPL-2.0

//! Must not build: a loadable module naming the kernel crate's public null owner
//! (`kernel::module::BuiltIn` before issue 21), which let it queue calls into its own text
//! without holding a reference on itself.

use kernel::{
    module::{
        this_module,
        BuiltIn, //
    },
    prelude::*,
};

module! {
    type: BuiltinType,
    name: "cf_builtin_type",
    authors: ["IRQ-RS Developers"],
    description: "compile-fail: kernel::module::BuiltIn in a module",
    license: "GPL",
}

struct BuiltinType;

impl kernel::Module for BuiltinType {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        // A null owner: the kernel image.
        let owner: &'static ThisModule = this_module::<BuiltIn>();
        pr_info!("owner {:p}\n", owner.as_ptr());
        Ok(Self)
    }
}
