// SPDX-License-Identifier: GPL-2.0
// EXPECT: a chip with MoveDeferred must implement `mask` and `unmask`

//! Compile-fail case: a chip that defers affinity moves to its ack (`ChipFlag::MoveDeferred`)
//! must implement `mask` and `unmask`, which `__irq_move_irq()` calls around the move through
//! the top-level chip without a NULL check.

use kernel::{
    irq::{
        AckCtx,
        Chip,
        ChipFlag,
        ChipFlags,
        ChipVtable, //
    },
    prelude::*, //
};

module! {
    type: CfModule,
    name: "cf_move_deferred_needs_mask",
    authors: ["IRQ-RS Developers"],
    description: "compile-fail: MoveDeferred chip without mask and unmask",
    license: "GPL",
}

struct CfModule;

impl kernel::Module for CfModule {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        // Building the table evaluates its checks.
        let _ = ChipVtable::<CfChip>::build();
        Ok(CfModule)
    }
}

/// The chip of the case: moves at its ack, but cannot mask.
struct CfChip;

#[vtable]
impl Chip for CfChip {
    type Data = ();
    const NAME: &'static CStr = c"cf-move-deferred";
    const FLAGS: ChipFlags = ChipFlags::of(ChipFlag::MoveDeferred);

    fn ack(_data: &(), _irqd: &AckCtx<'_>) {}
}
