// SPDX-License-Identifier: GPL-2.0

//! Must not build: `kernel::built_in_module!()`, the kernel image as owner, in a loadable module
//! (kbuild compiles it with `--cfg MODULE`). It is invoked in a submodule so that its
//! `LocalModule` does not clash with the one of `module!`: the `compile_error!` is the only error.

use kernel::prelude::*;

module! {
    type: BuiltinMacro,
    name: "cf_builtin_macro",
    authors: ["IRQ-RS Developers"],
    description: "compile-fail: kernel::built_in_module!() in a module",
    license: "GPL",
}

mod owner {
    kernel::built_in_module!();
}

struct BuiltinMacro;

impl kernel::Module for BuiltinMacro {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        Ok(Self)
    }
}
