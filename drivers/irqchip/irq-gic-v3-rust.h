/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The interface between irq-gic-v3-select.c and the Rust GICv3 driver
 * (irq_gic_v3_rust.rs). rust/bindings/bindings_helper.h includes it: bindgen
 * gives the Rust side these types and prototypes (rust/kernel/irq/gic_v3/),
 * and the Rust entry points are checked against them at compile time.
 */
#ifndef _IRQ_GIC_V3_RUST_H
#define _IRQ_GIC_V3_RUST_H

#include <linux/irqchip/irq-msi-lib.h>	/* msi_lib_irq_domain_select(), for Rust */
#include <linux/msi.h>
#include <linux/smp.h>		/* cpu_logical_map(), called by Rust */
#include <linux/types.h>

#include "irq-gic-common.h"	/* gic_configure_irq(), called by Rust */

struct fwnode_handle;
struct irq_domain;
struct pt_regs;

/* One redistributor region, as the Rust probe takes it. */
struct gic_v3_rust_region {
	void __iomem *base;
	u64 phys;
	u64 size;
};

/*
 * What the Rust probe returns (filled from kernel::irq::gic_v3::Probed by the
 * kernel crate, which checks that domain is the one the probe created and
 * that ipi_base comes from kernel::irq::gic_v3::Probe::alloc_ipis() on it).
 * retained: the probe programmed the GIC or created its domain (then no C
 * driver, also on error).
 */
struct gic_v3_rust_probe {
	struct irq_domain *domain;
	/* 0 if the IPIs could not be allocated (then no set_smp_ipi_range()). */
	int ipi_base;
	bool lpis;
	bool split_eoi;
	u8 prio;
	u32 gicd_typer;
	u32 gicd_typer2;
	bool direct_lpi;
	/* GICv4 (rdists.has_vlpis, has_rvpeid, has_vpend_valid_dirty): for the ITS and KVM. */
	bool vlpis;
	bool rvpeid;
	bool vpend_valid_dirty;
	bool retained;
};

/*
 * Rust: defined by kernel::gic_v3_driver! for the driver of
 * drivers/irqchip/irq_gic_v3_rust.rs.
 */
/*
 * The probe: @fwnode is the GIC's device-tree node, or with @acpi the irqchip
 * fwnode of its MADT distributor entry; the regions are mapped for good.
 */
int rust_gicv3_init(struct fwnode_handle *fwnode, bool acpi, void __iomem *dist,
		    u64 dist_phys, u64 dist_size,
		    const struct gic_v3_rust_region *regions, u32 nr,
		    u64 stride, struct gic_v3_rust_probe *out);
int rust_gicv3_starting_cpu(unsigned int cpu);
int rust_gicv3_check_cpu(unsigned int cpu);
void rust_gicv3_cpu_pm(bool exit);
void gic_v3_rust_handle_irq(struct pt_regs *regs);
/*
 * The ITS probe, after a successful GIC probe that found LPIs and no GICv4:
 * @fwnode is the ITS's device-tree node or the irqchip fwnode of its MADT
 * entry; @base maps its @size bytes of frames at @phys for good. Non-zero: no
 * domain was made on @fwnode (the shim may free it) and the C ITS driver is
 * started instead (the Rust probe left the ITS disabled and no redistributor
 * with LPIs enabled).
 */
int rust_gicv3_its_init(struct fwnode_handle *fwnode, void __iomem *base,
			u64 phys, u64 size);
void gic_v3_rust_handle_irq_eoimode0(struct pt_regs *regs);

/* Called by Rust. */
void gic_v3_rust_set_rdist(unsigned int cpu, void __iomem *rd_base, u64 phys_base);
bool gic_v3_rust_hyp_mode_available(void);
bool gic_v3_rust_strict_flow(void);
bool gic_v3_rust_nolpi(void);
/*
 * The MSI parent operations of the Rust ITS's domain: the C ITS's (PCI/MSI
 * and platform MSI prepare, DeviceIDs from msi-map and DMA aliases), with the
 * child chips named "ITS-RS-". Set before rust_gicv3_its_init(), then never
 * changed.
 */
extern struct msi_parent_ops gic_v3_rust_its_msi_parent_ops;
/*
 * Reserves @size bytes at @pa (a redistributor's LPI table) across kexec, as
 * gic_reserve_range() does: 0 without EFI.
 */
int gic_v3_rust_reserve(u64 pa, u64 size);

#endif /* _IRQ_GIC_V3_RUST_H */
