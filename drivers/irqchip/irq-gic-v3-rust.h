/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The interface between irq-gic-v3-select.c and the Rust GICv3 driver
 * (irq_gic_v3_rust.rs, gic_v3_hw.rs).
 */
#ifndef _IRQ_GIC_V3_RUST_H
#define _IRQ_GIC_V3_RUST_H

#include <linux/build_bug.h>
#include <linux/stddef.h>
#include <linux/types.h>

struct fwnode_handle;
struct irq_domain;
struct pt_regs;

/* One redistributor region, as the Rust probe takes it. */
struct gic_v3_rust_region {
	void __iomem *base;
	u64 phys;
	u64 size;
};

/* What the Rust probe returns (ProbeOut in gic_v3_hw.rs). */
struct gic_v3_rust_probe {
	struct irq_domain *domain;
	int ipi_base;
	bool lpis;
	bool split_eoi;
	u8 prio;
	u32 gicd_typer;
	u32 gicd_typer2;
	bool direct_lpi;
	bool retained;
};

/* The Rust side asserts the same layouts. */
static_assert(sizeof(struct gic_v3_rust_probe) == 32);
static_assert(offsetof(struct gic_v3_rust_probe, gicd_typer2) == 20);
static_assert(offsetof(struct gic_v3_rust_probe, retained) == 25);
static_assert(sizeof(struct gic_v3_rust_region) == 24);

/* Rust: drivers/irqchip/gic_v3_hw.rs. */
int rust_gicv3_of_init(struct fwnode_handle *fwnode, void __iomem *dist,
		       u64 dist_phys, u64 dist_size,
		       const struct gic_v3_rust_region *regions, u32 nr,
		       u64 stride, struct gic_v3_rust_probe *out);
int rust_gicv3_starting_cpu(unsigned int cpu);
int rust_gicv3_check_cpu(unsigned int cpu);
void rust_gicv3_cpu_pm(bool exit);
void gic_v3_rust_handle_irq(struct pt_regs *regs);
void gic_v3_rust_handle_irq_eoimode0(struct pt_regs *regs);

/* Called by Rust. */
void gic_v3_rust_set_rdist(unsigned int cpu, void __iomem *rd_base, u64 phys_base);
bool gic_v3_rust_hyp_mode_available(void);
bool gic_v3_rust_strict_flow(void);

#endif /* _IRQ_GIC_V3_RUST_H */
