// SPDX-License-Identifier: GPL-2.0

//! References on modules, held by the owners of C-visible objects whose callbacks are a module's
//! code.

use crate::{
    bindings,
    prelude::*, //
};

/// A reference on a module (`try_module_get()`), released with `module_put()` on drop.
///
/// Owners of C-visible objects whose callbacks are a module's code (domain operations, chips,
/// chained handlers, interrupt handlers) hold one: leaked (`mem::forget`), they keep the module
/// loaded instead of leaving genirq with pointers into unloaded code. For the kernel image (a
/// null module) it is free.
///
/// Dropping the last reference returns into the code that dropped its owner, which may be the
/// module's own (a driver dropping its [`Domain`](super::Domain) or
/// [`Chained`](super::Chained)). As for C code that calls `module_put()` on its own module, that
/// code runs where the module's exit waits for it (its driver's unbind, a work item the exit
/// cancels, the exit itself), so the module's text outlives the return. Calls queued for a module
/// drop their reference from the kernel's own code instead (`smp::call_on_nowait()`).
///
/// # Invariants
///
/// `self.0` is null or a module whose reference count `self` holds one reference of.
pub(crate) struct ModuleRef(*mut bindings::module);

// SAFETY: A module reference may be dropped on any thread.
unsafe impl Send for ModuleRef {}
// SAFETY: `&ModuleRef` allows nothing.
unsafe impl Sync for ModuleRef {}

impl ModuleRef {
    /// Takes a reference on `module` (`kernel::module::try_pin()`); `ENODEV` if it is being
    /// unloaded (or, where references are not counted, still initialising).
    pub(crate) fn get(module: &'static crate::ThisModule) -> Result<Self> {
        if crate::module::try_pin(module) {
            // INVARIANT: The reference was just taken.
            Ok(Self(module.as_ptr()))
        } else {
            Err(ENODEV)
        }
    }
}

impl Drop for ModuleRef {
    fn drop(&mut self) {
        // SAFETY: `self` holds a reference on the module (type invariant).
        unsafe { bindings::module_put(self.0) };
    }
}
