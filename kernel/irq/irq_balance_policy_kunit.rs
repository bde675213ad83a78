// SPDX-License-Identifier: GPL-2.0

//! The KUnit suite of the Rust interrupt balancer's decision, `rust_irq_balance`, as a loadable
//! module (`CONFIG_IRQ_BALANCE_RUST_KUNIT_TEST=m`).
//!
//! The module compiles the balancer's pure decision function ([`irq_balance_policy`]) with its
//! suite; built in (`=y`), the suite is in the balancer's crate (`irq_balance.rs`) instead. It
//! tests the decision on tables of its own: loading the module reads no interrupt statistics and
//! moves no interrupt.

use kernel::prelude::*;

// The suite uses part of the policy's items; the balancer uses the rest.
#[allow(dead_code)]
#[path = "irq_balance_policy.rs"]
mod irq_balance_policy;

module! {
    type: IrqBalancePolicyKunit,
    name: "irq_balance_policy_kunit",
    authors: ["IRQ-RS Developers"],
    description: "KUnit tests of the Rust interrupt balancer's decision",
    license: "GPL",
}

/// The module: its suite runs when it is loaded; it has nothing else to do.
struct IrqBalancePolicyKunit;

impl kernel::Module for IrqBalancePolicyKunit {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        Ok(Self)
    }
}
