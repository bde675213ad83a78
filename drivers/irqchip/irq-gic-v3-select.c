// SPDX-License-Identifier: GPL-2.0
/*
 * GICv3 driver selection: the one IRQCHIP_DECLARE() of "arm,gic-v3" and the
 * init function of irq-gic-v3.c's IRQCHIP_ACPI_DECLARE()s when the Rust driver
 * (irq_gic_v3_rust.rs) is built beside the C one (irq-gic-v3.c), and the C side
 * of the Rust driver.
 *
 * of_irq_init() takes one match per device-tree node, and the MADT has one
 * GIC distributor entry, so the two drivers cannot each declare the GIC;
 * "irqchip.gicv3=rust" (the default) or "irqchip.gicv3=c" chooses at boot, one
 * kernel carrying both, on device-tree and ACPI machines alike.
 *
 * For the Rust driver this file does what Rust code outside the init
 * sections cannot, or what C data structures need: it maps the distributor
 * and redistributor regions (from the device tree; on ACPI from the MADT's
 * GICR entries, else each enabled GICC entry's redistributor, as
 * gic_acpi_init() does), installs the Rust root handler with
 * set_handle_irq(), registers the CPU hotplug and CPU PM callbacks, hands the
 * IPIs to the arm64 SMP code (set_smp_ipi_range()), starts the C ITS driver on
 * top of the Rust domain with the redistributor table (struct rdists) it needs
 * (or GICv2m frames without LPIs; both find their frames in the device tree or
 * the MADT and the IORT), and gives KVM the GIC's description. On ACPI it
 * registers the Rust domain, made on an irqchip fwnode this file allocates (and
 * frees only if the probe made no domain on it), as the GSI domain
 * (acpi_set_irq_model()).
 *
 * A GIC the Rust driver does not support gets the C driver: one that needs an
 * erratum workaround of irq-gic-v3.c's gic_quirks[], pseudo-NMIs, PPI
 * partitions (a "ppi-partitions" child: 4-cell specifiers whose fourth cell
 * names a partition), and what the Rust probe refuses before touching the
 * hardware (EOPNOTSUPP: extended SPIs, message-based SPIs). A GICv4 keeps the
 * Rust root: the ITS driver's vPEs, doorbells and vLPIs sit on its domain.
 *
 * So does any other error before the Rust probe programmed the GIC or created
 * its domain (the one write before, a GICv4.1 redistributor's boot-time vPE
 * cleanup, is C's too; a mapping or an allocation that failed, a distributor whose
 * GICD_PIDR2 is not a GICv3/v4 one, a redistributor region too small for its
 * redistributors, the boot CPU without one), with a line saying why: a probe
 * error must not leave the machine without a root interrupt controller. Once
 * it programmed the GIC or created its domain the Rust probe does not fail;
 * were it to, a domain of the Rust driver may exist on the node, so the C
 * driver is not started: a warning says the machine has no interrupt
 * controller.
 *
 * The mappings handed to the Rust probe are never unmapped, whatever it
 * returns: its register frames are 'static values of safe Rust code, which may
 * have kept one. A fallback to the C driver releases only the memory regions
 * (the C driver requests them again) and leaks the virtual mappings.
 *
 * Nothing the Rust probe returns is trusted beyond what the kernel crate
 * guarantees: the IPIs are checked to be 8 interrupts of the Rust domain, and
 * the ITS runs only on CPUs whose redistributor the probe published, each handed
 * to the ITS driver as its CPU comes up.
 */

#define pr_fmt(fmt) "GICv3: " fmt

#include <linux/acpi.h>
#include <linux/acpi_iort.h>
#include <linux/cc_platform.h>
#include <linux/cpu_pm.h>
#include <linux/cpufeature.h>
#include <linux/cpuhotplug.h>
#include <linux/efi.h>
#include <linux/init.h>
#include <linux/io.h>
#include <linux/irq.h>
#include <linux/irqchip.h>
#include <linux/irqchip/arm-gic-common.h>
#include <linux/irqchip/arm-gic-v3.h>
#include <linux/irqchip/arm-vgic-info.h>
#include <linux/irqdomain.h>
#include <linux/of.h>
#include <linux/of_address.h>
#include <linux/of_irq.h>
#include <linux/percpu.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/string.h>

#include <asm/virt.h>

#include "irq-gic-common.h"
#include "irq-gic-its-msi-parent.h"
#include "irq-gic-v3-rust.h"

static bool gicv3_rust __initdata = true;

static int __init gicv3_select(char *buf)
{
	if (!buf)
		return -EINVAL;
	if (!strcmp(buf, "rust"))
		gicv3_rust = true;
	else if (!strcmp(buf, "c"))
		gicv3_rust = false;
	else
		return -EINVAL;
	return 0;
}
early_param("irqchip.gicv3", gicv3_select);

/*
 * The ITS on the Rust driver: "irqchip.gicv3_its=rust" (the default) drives the
 * machine's one ITS with physical LPIs in Rust (irq_gic_v3_rust/its/), from the
 * device tree or the MADT; "irqchip.gicv3_its=c" with irq-gic-v3-its.c. GICv4
 * (virtual LPIs), more than one ITS, C's ITS errata and non-coherent ITSes stay
 * with C, said at boot.
 */
static bool gicv3_its_rust __initdata = true;

static int __init gicv3_its_select(char *buf)
{
	if (!buf)
		return -EINVAL;
	if (!strcmp(buf, "rust"))
		gicv3_its_rust = true;
	else if (!strcmp(buf, "c"))
		gicv3_its_rust = false;
	else
		return -EINVAL;
	return 0;
}
early_param("irqchip.gicv3_its", gicv3_its_select);

/*
 * The flow of the Rust driver's SGIs, PPIs and SPIs in EOImode=1: "strict" (the default) leaves
 * ONESHOT interrupts masked by their active state until their threads are done, "fasteoi" masks
 * them at the distributor as handle_fasteoi_irq() does.
 */
static bool gicv3_strict_flow __ro_after_init = true;

static int __init gicv3_flow_select(char *buf)
{
	if (!buf)
		return -EINVAL;
	if (!strcmp(buf, "strict"))
		gicv3_strict_flow = true;
	else if (!strcmp(buf, "fasteoi"))
		gicv3_strict_flow = false;
	else
		return -EINVAL;
	return 0;
}
early_param("irqchip.gicv3_flow", gicv3_flow_select);

/* The redistributors of every CPU for the ITS driver (its_init(), its_cpu_init()). */
static struct rdists gic_v3_rust_rdists;
static bool gic_v3_rust_lpis __ro_after_init;
/* The Rust ITS drives the LPIs (then the C ITS driver never starts). */
static bool gic_v3_rust_its __ro_after_init;

struct msi_parent_ops gic_v3_rust_its_msi_parent_ops __ro_after_init;

/* Not __init: the Rust ITS's probe, which calls it, is not in .init.text. */
int gic_v3_rust_reserve(u64 pa, u64 size)
{
	if (!efi_enabled(EFI_CONFIG_TABLES))
		return 0;
	return efi_mem_reserve_persistent(pa, size);
}
/*
 * The Rust driver drives a GIC (its probe committed). The shim's state (the ITS's struct rdists,
 * the root handler, the hotplug callbacks) is for that one: a second GICv3 is ignored, with an
 * error, and gets no C driver either (both drivers support one).
 */
static bool gic_v3_rust_owned __initdata;

/*
 * The redistributor the Rust probe found for each CPU. The ITS driver sees one only once its CPU
 * comes up (gic_v3_rust_publish_rdist()), as gic_populate_rdist() does in C: its GICv4.1 code
 * takes a redistributor in struct rdists for one whose CPU went through its_cpu_init().
 */
struct gic_v3_rust_found_rdist {
	void __iomem *rd_base;
	u64 phys_base;
};
static DEFINE_PER_CPU(struct gic_v3_rust_found_rdist, gic_v3_rust_found_rdist);

void gic_v3_rust_set_rdist(unsigned int cpu, void __iomem *rd_base, u64 phys_base)
{
	struct gic_v3_rust_found_rdist *f = per_cpu_ptr(&gic_v3_rust_found_rdist, cpu);

	f->rd_base = rd_base;
	f->phys_base = phys_base;
}

/* Whether the Rust probe found @cpu's redistributor. */
static bool gic_v3_rust_rdist_found(unsigned int cpu)
{
	return per_cpu_ptr(&gic_v3_rust_found_rdist, cpu)->rd_base;
}

/* Hands @cpu's redistributor to the ITS driver, on @cpu as it comes up (or the boot CPU). */
static void gic_v3_rust_publish_rdist(unsigned int cpu)
{
	struct gic_v3_rust_found_rdist *f = per_cpu_ptr(&gic_v3_rust_found_rdist, cpu);
	typeof(gic_v3_rust_rdists.rdist) rd = per_cpu_ptr(gic_v3_rust_rdists.rdist, cpu);

	raw_spin_lock_init(&rd->rd_lock);
	rd->rd_base = f->rd_base;
	rd->phys_base = f->phys_base;
}

bool gic_v3_rust_hyp_mode_available(void)
{
	return is_hyp_mode_available();
}

/* Not __init, as gic_v3_rust_strict_flow(): irqchip.gicv3_nolpi, the kdump escape hatch. */
bool gic_v3_rust_nolpi(void)
{
	return gic_v3_nolpi();
}

/* Not __init: the Rust driver's init code, which calls it, is not in .init.text. */
bool gic_v3_rust_strict_flow(void)
{
	return gicv3_strict_flow;
}

/* The PREPARE check: the driver's, and with LPIs a redistributor for the ITS. */
static int gic_v3_rust_check_cpu(unsigned int cpu)
{
	if (gic_v3_rust_lpis && !gic_v3_rust_rdist_found(cpu)) {
		pr_err("CPU%u: no redistributor for the ITS, refusing the CPU\n", cpu);
		return -EINVAL;
	}
	return rust_gicv3_check_cpu(cpu);
}

static int gic_v3_rust_starting_cpu(unsigned int cpu)
{
	/*
	 * STARTING callbacks must not fail: the PREPARE check refused CPUs without a
	 * redistributor; without its redistributor set up, the ITS part is skipped.
	 */
	if (rust_gicv3_starting_cpu(cpu))
		return 0;
	if (!gic_v3_rust_lpis)
		return 0;
	if (gic_v3_rust_its) {
		/* The Rust STARTING callback set up the CPU's LPIs and collection. */
	} else if (gic_v3_rust_rdist_found(cpu)) {
		gic_v3_rust_publish_rdist(cpu);
		its_cpu_init();
	} else {
		pr_err("CPU%u: no redistributor, no LPIs\n", cpu);
	}
	return 0;
}

static int gic_v3_rust_cpu_pm_notifier(struct notifier_block *self, unsigned long cmd, void *v)
{
	if (cmd == CPU_PM_EXIT || cmd == CPU_PM_ENTER_FAILED)
		rust_gicv3_cpu_pm(true);
	else if (cmd == CPU_PM_ENTER)
		rust_gicv3_cpu_pm(false);
	return NOTIFY_OK;
}

static struct notifier_block gic_v3_rust_cpu_pm_notifier_block = {
	.notifier_call = gic_v3_rust_cpu_pm_notifier,
};

/* As gic_of_setup_kvm_info() (EOImode=1 only): the maintenance interrupt, GICV, GICv4. */
static void __init gic_v3_rust_setup_kvm_info(struct device_node *node, u32 nr_redist_regions)
{
	static struct gic_kvm_info info __initdata;
	struct resource r;

	info.type = GIC_V3;
	/* As the ITS driver left them (its_init() may drop GICv4 for want of an ITS with it). */
	info.has_v4 = gic_v3_rust_rdists.has_vlpis;
	info.has_v4_1 = gic_v3_rust_rdists.has_rvpeid;
	info.maint_irq = irq_of_parse_and_map(node, 0);
	if (!info.maint_irq)
		return;
	/* Skip GICD, GICR, then GICC and GICH. */
	if (!of_address_to_resource(node, nr_redist_regions + 3, &r))
		info.vcpu = r;
	vgic_set_kvm_info(&info);
}

static void __iomem *__init gic_v3_rust_iomap(struct device_node *node, int idx,
					     const char *name, struct resource *res)
{
	void __iomem *base;

	if (of_address_to_resource(node, idx, res))
		return NULL;
	if (!request_mem_region(res->start, resource_size(res), name)) {
		pr_warn_once(FW_BUG "%s region %pa has overlapping address\n",
			     name, &res->start);
		res->flags = 0;		/* not ours: never released */
	}
	base = of_iomap(node, idx);
	if (!base && res->flags)
		release_mem_region(res->start, resource_size(res));
	return base;
}

/* Releases a mapping: unmaps it unless the Rust probe was handed it (@keep), then its region. */
static void __init gic_v3_rust_iounmap(void __iomem *base, struct resource *res, bool keep)
{
	if (!keep)
		iounmap(base);
	if (res->flags)		/* requested by gic_v3_rust_iomap() */
		release_mem_region(res->start, resource_size(res));
}

/* Whether @base..@base + 8 are interrupts of @domain (the Rust probe's IPIs). */
static bool __init gic_v3_rust_ipis_valid(int base, struct irq_domain *domain)
{
	int i;

	if (base <= 0 || !domain)
		return false;
	for (i = 0; i < 8; i++) {
		struct irq_data *d = irq_get_irq_data(base + i);

		if (!d || d->domain != domain)
			return false;
	}
	return true;
}

#ifdef CONFIG_ACPI
/* The MADT's ITS entries: how many, and the first. */
static struct acpi_madt_generic_translator gic_v3_rust_acpi_its __initdata;
static int gic_v3_rust_acpi_its_nr __initdata;

static int __init gic_v3_rust_acpi_its_entry(union acpi_subtable_headers *header,
					     const unsigned long end)
{
	if (!gic_v3_rust_acpi_its_nr++)
		gic_v3_rust_acpi_its = *(struct acpi_madt_generic_translator *)header;
	return 0;
}
#endif

/*
 * Starts the Rust ITS on the GIC's one ITS: the device tree's msi-controller child
 * of the GIC's node, or the MADT's one ITS entry (its domain token registered with
 * the IORT, which maps device IDs to it). Returns whether it runs; otherwise the C
 * ITS driver starts, with a line saying why. The ITS's mapping, once handed to Rust,
 * is never unmapped (as the GIC's); C maps the ITS again.
 */
static bool __init gic_v3_rust_its_start(struct fwnode_handle *fwnode,
					 const struct gic_v3_rust_probe *p)
{
	struct device_node *node = to_of_node(fwnode), *np, *its = NULL;
	struct fwnode_handle *its_fwnode = NULL;
	struct resource res = {};
	int nr = 0, err, acpi_id = -1;
	void __iomem *base;

	if (!gicv3_its_rust)
		return false;
	if (p->vlpis) {
		pr_info("Rust ITS: GICv4 virtual LPIs are C's; using the C ITS driver\n");
		return false;
	}
	/* Tables shared with a realm's host must be decrypted, as its_alloc_pages_node() does. */
	if (cc_platform_has(CC_ATTR_MEM_ENCRYPT)) {
		pr_info("Rust ITS: encrypted guest memory; using the C ITS driver\n");
		return false;
	}
	if (node) {
		/* Every ITS of the tree, as its_of_probe() finds them. */
		for_each_compatible_node(np, NULL, "arm,gic-v3-its") {
			if (!of_device_is_available(np) ||
			    !of_property_read_bool(np, "msi-controller"))
				continue;
			if (!nr++)
				its = of_node_get(np);
		}
	} else {
#ifdef CONFIG_ACPI
		acpi_table_parse_madt(ACPI_MADT_TYPE_GENERIC_TRANSLATOR,
				      gic_v3_rust_acpi_its_entry, 0);
		nr = gic_v3_rust_acpi_its_nr;
#endif
	}
	if (nr != 1) {
		if (nr)
			pr_info("Rust ITS: %d ITSes, the Rust ITS drives one; using the C ITS driver\n",
				nr);
		of_node_put(its);
		return false;
	}
	if (its) {
		/* The control frame and the translation frame (GITS_TRANSLATER). */
		if (of_address_to_resource(its, 0, &res) || resource_size(&res) < SZ_128K) {
			pr_warn("%pOF: no ITS frame; using the C ITS driver\n", its);
			of_node_put(its);
			return false;
		}
	} else {
#ifdef CONFIG_ACPI
		if (acpi_get_madt_revision() >= 7 &&
		    (gic_v3_rust_acpi_its.flags & ACPI_MADT_ITS_NON_COHERENT)) {
			pr_info("Rust ITS: the MADT's ITS is not coherent; using the C ITS driver\n");
			return false;
		}
		res.start = gic_v3_rust_acpi_its.base_address;
		acpi_id = gic_v3_rust_acpi_its.translation_id;
#endif
	}
	base = ioremap(res.start, SZ_64K);
	if (!base) {
		of_node_put(its);
		return false;
	}
	/*
	 * An ITS erratum of C's (its_quirks[]), a non-coherent ITS ("dma-noncoherent"), or one
	 * that loses its state across suspend ("reset-on-suspend", which C saves and restores).
	 */
	if (its_needs_quirks(its, base) ||
	    (its && of_property_read_bool(its, "reset-on-suspend"))) {
		pr_info("Rust ITS: the ITS needs a C ITS quirk; using the C ITS driver\n");
		iounmap(base);
		of_node_put(its);
		return false;
	}
	if (its) {
		/* The node stays referenced: the Rust ITS's domain is on it for good. */
		its_fwnode = of_fwnode_handle(its);
	} else {
		its_fwnode = irq_domain_alloc_fwnode(&res.start);
		if (!its_fwnode) {
			iounmap(base);
			return false;
		}
		err = iort_register_domain_token(acpi_id, res.start, its_fwnode);
		if (err) {
			pr_warn("Rust ITS: ITS ID %d not registered to the IORT (%d); using the C ITS driver\n",
				acpi_id, err);
			irq_domain_free_fwnode(its_fwnode);
			iounmap(base);
			return false;
		}
		pr_info("Rust ITS: the ITS of the ACPI MADT, ITS ID %d @%pa\n", acpi_id,
			&res.start);
	}
	gic_v3_rust_its_msi_parent_ops = gic_v3_its_msi_parent_ops;
	gic_v3_rust_its_msi_parent_ops.prefix = "ITS-RS-";
	err = rust_gicv3_its_init(its_fwnode, base, res.start, SZ_64K);
	if (err) {
		if (err != -EOPNOTSUPP)
			pr_warn("Rust ITS: probe error %d; using the C ITS driver\n", err);
		/* No domain on the fwnode: C makes its own. */
		if (its) {
			of_node_put(its);
		} else {
			iort_deregister_domain_token(acpi_id);
			irq_domain_free_fwnode(its_fwnode);
		}
		return false;
	}
	return true;
}

/*
 * Starts what a committed Rust probe leaves to C: the root handler, the CPU hotplug and CPU PM
 * callbacks, the IPIs, and the ITS (or GICv2m) on the Rust domain, found through @fwnode (the
 * GIC's device-tree node, or on ACPI the MADT and the IORT).
 */
static void __init gic_v3_rust_start(struct fwnode_handle *fwnode,
				     const struct gic_v3_rust_probe *p)
{
	int err;

	set_handle_irq(p->split_eoi ? gic_v3_rust_handle_irq :
					 gic_v3_rust_handle_irq_eoimode0);

	err = cpuhp_setup_state_nocalls(CPUHP_BP_PREPARE_DYN, "irqchip/arm/gicv3-rust:checkrdist",
					gic_v3_rust_check_cpu, NULL);
	if (err < 0)
		pr_err("cannot check redistributors at CPU bring-up: %d\n", err);
	err = cpuhp_setup_state_nocalls(CPUHP_AP_IRQ_GIC_STARTING,
					"irqchip/arm/gicv3-rust:starting",
					gic_v3_rust_starting_cpu, NULL);
	if (err < 0)
		pr_err("cannot set up CPUs brought up later: %d\n", err);
	/* As gic_smp_init(): without IPIs (their allocation failed, said), no SMP. */
	if (gic_v3_rust_ipis_valid(p->ipi_base, p->domain))
		set_smp_ipi_range(p->ipi_base, 8);
	else if (p->ipi_base)
		pr_err("IPIs %d.. are not the Rust domain's: no SMP\n", p->ipi_base);
	if (IS_ENABLED(CONFIG_CPU_PM))
		cpu_pm_register_notifier(&gic_v3_rust_cpu_pm_notifier_block);

	if (p->lpis && !gic_v3_rust_rdist_found(smp_processor_id())) {
		/* its_init() and its_cpu_init() would use its NULL rd_base. */
		pr_err("the boot CPU's redistributor was not found: no LPIs\n");
	} else if (p->lpis) {
		gic_v3_rust_lpis = true;
		gic_v3_rust_publish_rdist(smp_processor_id());
		gic_v3_rust_rdists.gicd_typer = p->gicd_typer;
		gic_v3_rust_rdists.gicd_typer2 = p->gicd_typer2;
		gic_v3_rust_rdists.has_direct_lpi = p->direct_lpi;
		/* GICv4: the vPEs, doorbells and vLPIs are the ITS driver's, on the Rust domain. */
		gic_v3_rust_rdists.has_vlpis = p->vlpis;
		gic_v3_rust_rdists.has_rvpeid = p->rvpeid;
		gic_v3_rust_rdists.has_vpend_valid_dirty = p->vpend_valid_dirty;
		if (gic_v3_rust_its_start(fwnode, p)) {
			gic_v3_rust_its = true;
		} else {
			its_init(fwnode, &gic_v3_rust_rdists, p->domain, p->prio);
			its_cpu_init();
			its_lpi_memreserve_init();
		}
	} else if (IS_ENABLED(CONFIG_ARM_GIC_V2M)) {
		gicv2m_init(fwnode, p->domain);
	}
}

/*
 * Returns -EOPNOTSUPP, having released everything (but the mappings the Rust probe had), for a
 * GIC the C driver should take, and another error, having released as much, when the probe
 * failed before the GIC was programmed and before a domain was created on the node. Sets
 * *committed when either happened: the GIC is then the Rust driver's, whatever the result.
 */
static int __init gic_v3_rust_of_init(struct device_node *node, bool *committed)
{
	struct gic_v3_rust_probe probe = {};
	struct gic_v3_rust_region *regions = NULL;
	struct resource dist_res, *res = NULL;
	struct device_node *parts;
	void __iomem *dist;
	bool handed = false;
	u32 nr = 1;
	u64 stride = 0;
	int err, i;

	*committed = false;
	if (gic_v3_rust_owned) {
		pr_err("a second GICv3 is not supported: ignored\n");
		*committed = true;
		return -EBUSY;
	}
	if (system_uses_irq_prio_masking()) {
		pr_info("Rust driver: no pseudo-NMIs; using the C driver\n");
		return -EOPNOTSUPP;
	}
	/* As gic_populate_ppi_partitions(): the Rust driver has no partitions. */
	parts = of_get_child_by_name(node, "ppi-partitions");
	if (parts) {
		pr_info("Rust driver: PPI partitions in %pOF; using the C driver\n", node);
		of_node_put(parts);
		return -EOPNOTSUPP;
	}

	dist = gic_v3_rust_iomap(node, 0, "GICD", &dist_res);
	if (!dist) {
		pr_err("%pOF: unable to map gic dist registers\n", node);
		return -ENOMEM;
	}
	if (gic_v3_needs_quirks(node, dist)) {
		pr_info("Rust driver: this GIC needs erratum workarounds; using the C driver\n");
		gic_v3_rust_iounmap(dist, &dist_res, false);
		return -EOPNOTSUPP;
	}

	of_property_read_u32(node, "#redistributor-regions", &nr);
	of_property_read_u64(node, "redistributor-stride", &stride);
	regions = kcalloc(nr, sizeof(*regions), GFP_KERNEL);
	res = kcalloc(nr, sizeof(*res), GFP_KERNEL);
	gic_v3_rust_rdists.rdist = alloc_percpu(typeof(*gic_v3_rust_rdists.rdist));
	if (!regions || !res || !gic_v3_rust_rdists.rdist) {
		err = -ENOMEM;
		goto out_unmap;
	}
	for (i = 0; i < nr; i++) {
		regions[i].base = gic_v3_rust_iomap(node, 1 + i, "GICR", &res[i]);
		if (!regions[i].base) {
			pr_err("%pOF: couldn't map region %d\n", node, i);
			err = -ENODEV;
			goto out_unmap;
		}
		regions[i].phys = res[i].start;
		regions[i].size = resource_size(&res[i]);
	}

	/* From here on the mappings are never unmapped: safe Rust code may hold them. */
	handed = true;
	err = rust_gicv3_init(of_fwnode_handle(node), false, dist, dist_res.start,
			      resource_size(&dist_res), regions, nr, stride, &probe);
	if (err && (probe.retained ||
		    irq_find_matching_fwnode(of_fwnode_handle(node), DOMAIN_BUS_ANY))) {
		/*
		 * The GIC is programmed or a Rust domain is on the node: no C driver, whose
		 * domain would be a second one on the node. Keep everything, fail loudly.
		 */
		*committed = true;
		gic_v3_rust_owned = true;
		WARN(1, "GICv3: Rust driver failed after committing (%d): no interrupt controller\n",
		     err);
		kfree(regions);
		kfree(res);
		return err;
	}
	if (err)
		goto out_unmap;

	/* The mappings stay for the kernel's lifetime; the tables were copied. */
	*committed = true;
	gic_v3_rust_owned = true;
	kfree(regions);
	kfree(res);
	gic_v3_rust_start(of_fwnode_handle(node), &probe);
	if (probe.split_eoi)
		gic_v3_rust_setup_kvm_info(node, nr);
	return 0;

out_unmap:
	for (i = 0; regions && res && i < nr; i++)
		if (regions[i].base)
			gic_v3_rust_iounmap(regions[i].base, &res[i], handed);
	free_percpu(gic_v3_rust_rdists.rdist);
	gic_v3_rust_rdists.rdist = NULL;
	kfree(regions);
	kfree(res);
	gic_v3_rust_iounmap(dist, &dist_res, handed);
	return err;
}

static int __init gic_v3_select_of_init(struct device_node *node, struct device_node *parent)
{
	bool committed;
	int err;

	if (!gicv3_rust)
		return gic_v3_c_of_init(node, parent);
	err = gic_v3_rust_of_init(node, &committed);
	if (!err || committed)
		return err;
	/* Nothing programmed, everything released: the C driver starts from scratch. */
	if (err != -EOPNOTSUPP)
		pr_warn("Rust driver: probe error %d before programming the GIC; using the C driver\n",
			err);
	return gic_v3_c_of_init(node, parent);
}
IRQCHIP_DECLARE(gic_v3, "arm,gic-v3", gic_v3_select_of_init);

#ifdef CONFIG_ACPI
/* As irq-gic-v3.c's ACPI_GICV3_DIST_MEM_SIZE. */
#define GIC_V3_RUST_ACPI_DIST_SIZE	SZ_64K

/*
 * The MADT's redistributors for the Rust probe: one region per GICR entry or, without any, one
 * per enabled GICC entry (that CPU's redistributor alone). acpi_table_parse_madt() callbacks
 * take no argument of their own: the boot CPU's one probe keeps its state here.
 */
static struct {
	struct gic_v3_rust_region *regions;
	struct resource *res;
	u32 nr;
	u32 max;
	u64 gicc_size;
} gic_v3_rust_acpi __initdata;

/* The domain of every GSI: the Rust driver's, on the fwnode it never gives back. */
static struct fwnode_handle *gic_v3_rust_gsi_fwnode __ro_after_init;

static struct fwnode_handle *gic_v3_rust_gsi_domain_id(u32 gsi)
{
	return gic_v3_rust_gsi_fwnode;
}

/* As gic_v3_rust_iomap(), for a region the MADT describes. */
static void __iomem *__init gic_v3_rust_acpi_iomap(u64 phys, u64 size, const char *name,
						   struct resource *res)
{
	void __iomem *base;

	*res = DEFINE_RES_MEM(phys, size);
	if (!request_mem_region(phys, size, name)) {
		pr_warn_once(FW_BUG "%s region %pa has overlapping address\n", name, &res->start);
		res->flags = 0;		/* not ours: never released */
	}
	base = ioremap(phys, size);
	if (!base && res->flags)
		release_mem_region(phys, size);
	return base;
}

static int __init gic_v3_rust_acpi_count(union acpi_subtable_headers *header,
					 const unsigned long end)
{
	return 0;
}

/* Maps a redistributor region of the MADT for the probe; an error stops the MADT walk. */
static int __init gic_v3_rust_acpi_add(u64 phys, u64 size)
{
	u32 i = gic_v3_rust_acpi.nr;

	if (i == gic_v3_rust_acpi.max)
		return -EINVAL;
	if (!phys || !size) {
		pr_err(FW_BUG "redistributor region at %#llx, %#llx bytes\n", phys, size);
		return -EINVAL;
	}
	gic_v3_rust_acpi.regions[i].base = gic_v3_rust_acpi_iomap(phys, size, "GICR",
								  &gic_v3_rust_acpi.res[i]);
	if (!gic_v3_rust_acpi.regions[i].base) {
		pr_err("couldn't map GICR region @%llx\n", phys);
		return -ENOMEM;
	}
	gic_v3_rust_acpi.regions[i].phys = phys;
	gic_v3_rust_acpi.regions[i].size = size;
	gic_v3_rust_acpi.nr++;
	return 0;
}

/* As gic_acpi_parse_madt_redist(). */
static int __init gic_v3_rust_acpi_gicr(union acpi_subtable_headers *header,
					const unsigned long end)
{
	struct acpi_madt_generic_redistributor *redist =
		(struct acpi_madt_generic_redistributor *)header;

	if (acpi_get_madt_revision() >= 7 && (redist->flags & ACPI_MADT_GICR_NON_COHERENT))
		gic_v3_rust_rdists.flags |= RDIST_FLAGS_FORCE_NON_SHAREABLE;
	return gic_v3_rust_acpi_add(redist->base_address, redist->length);
}

/*
 * As gic_acpi_parse_madt_gicc(): a CPU whose GICC entry is not enabled has no redistributor
 * described, and the PREPARE check refuses to bring it up.
 */
static int __init gic_v3_rust_acpi_gicc(union acpi_subtable_headers *header,
					const unsigned long end)
{
	struct acpi_madt_generic_interrupt *gicc = (struct acpi_madt_generic_interrupt *)header;

	if (!(gicc->flags & ACPI_MADT_ENABLED)) {
		if (gicc->flags & ACPI_MADT_GICC_ONLINE_CAPABLE)
			pr_warn("CPU %d's redistributor is inaccessible: this CPU can't be brought online\n",
				get_cpu_for_acpi_id(gicc->uid));
		return 0;
	}
	if (acpi_get_madt_revision() >= 7 && (gicc->flags & ACPI_MADT_GICC_NON_COHERENT))
		gic_v3_rust_rdists.flags |= RDIST_FLAGS_FORCE_NON_SHAREABLE;
	return gic_v3_rust_acpi_add(gicc->gicr_base_address, gic_v3_rust_acpi.gicc_size);
}

/* As gic_v3_rust_of_init(), for the GIC of the MADT's distributor entry @header. */
static int __init gic_v3_rust_acpi_init(union acpi_subtable_headers *header, bool *committed)
{
	struct acpi_madt_generic_distributor *d = (struct acpi_madt_generic_distributor *)header;
	struct gic_v3_rust_probe probe = {};
	struct fwnode_handle *fwnode = NULL;
	struct resource dist_res;
	void __iomem *dist;
	bool handed = false, gicc;
	int count, err;
	u32 pidr2, i;

	*committed = false;
	if (gic_v3_rust_owned) {
		pr_err("a second GICv3 is not supported: ignored\n");
		*committed = true;
		return -EBUSY;
	}
	if (system_uses_irq_prio_masking()) {
		pr_info("Rust driver: no pseudo-NMIs; using the C driver\n");
		return -EOPNOTSUPP;
	}
	dist = gic_v3_rust_acpi_iomap(d->base_address, GIC_V3_RUST_ACPI_DIST_SIZE, "GICD",
				      &dist_res);
	if (!dist) {
		pr_err("Unable to map GICD registers\n");
		return -ENOMEM;
	}
	if (gic_v3_needs_quirks(NULL, dist)) {
		pr_info("Rust driver: this GIC needs erratum workarounds; using the C driver\n");
		gic_v3_rust_iounmap(dist, &dist_res, false);
		return -EOPNOTSUPP;
	}

	/* As gic_acpi_count_gicr_regions(): GICR entries, else the GICC entries. */
	count = acpi_table_parse_madt(ACPI_MADT_TYPE_GENERIC_REDISTRIBUTOR,
				      gic_v3_rust_acpi_count, 0);
	gicc = count <= 0;
	if (gicc)
		count = acpi_table_parse_madt(ACPI_MADT_TYPE_GENERIC_INTERRUPT,
					      gic_v3_rust_acpi_count, 0);
	if (count <= 0) {
		pr_err("no redistributor in the MADT\n");
		gic_v3_rust_iounmap(dist, &dist_res, false);
		return -ENODEV;
	}
	pidr2 = readl_relaxed(dist + GICD_PIDR2) & GIC_PIDR2_ARCH_MASK;
	gic_v3_rust_acpi.gicc_size = pidr2 == GIC_PIDR2_ARCH_GICv4 ? SZ_64K * 4 : SZ_64K * 2;
	gic_v3_rust_acpi.max = count;
	gic_v3_rust_acpi.regions = kcalloc(count, sizeof(*gic_v3_rust_acpi.regions), GFP_KERNEL);
	gic_v3_rust_acpi.res = kcalloc(count, sizeof(*gic_v3_rust_acpi.res), GFP_KERNEL);
	gic_v3_rust_rdists.rdist = alloc_percpu(typeof(*gic_v3_rust_rdists.rdist));
	if (!gic_v3_rust_acpi.regions || !gic_v3_rust_acpi.res || !gic_v3_rust_rdists.rdist) {
		err = -ENOMEM;
		goto out_unmap;
	}
	err = acpi_table_parse_madt(gicc ? ACPI_MADT_TYPE_GENERIC_INTERRUPT :
				    ACPI_MADT_TYPE_GENERIC_REDISTRIBUTOR,
				    gicc ? gic_v3_rust_acpi_gicc : gic_v3_rust_acpi_gicr, 0);
	if (err < 0)
		goto out_unmap;
	if (!gic_v3_rust_acpi.nr) {
		pr_err("no enabled redistributor in the MADT\n");
		err = -ENODEV;
		goto out_unmap;
	}
	/* As gic_acpi_init(): named after the distributor's address in the MADT. */
	fwnode = irq_domain_alloc_fwnode(&d->base_address);
	if (!fwnode) {
		err = -ENOMEM;
		goto out_unmap;
	}

	/* From here on the mappings are never unmapped: safe Rust code may hold them. */
	handed = true;
	err = rust_gicv3_init(fwnode, true, dist, dist_res.start, resource_size(&dist_res),
			      gic_v3_rust_acpi.regions, gic_v3_rust_acpi.nr, 0, &probe);
	if (err && (probe.retained || irq_find_matching_fwnode(fwnode, DOMAIN_BUS_ANY))) {
		/* As gic_v3_rust_of_init(): the GIC is the Rust driver's, and broken. */
		*committed = true;
		gic_v3_rust_owned = true;
		WARN(1, "GICv3: Rust driver failed after committing (%d): no interrupt controller\n",
		     err);
		goto out_free;
	}
	if (err)
		goto out_unmap;

	*committed = true;
	gic_v3_rust_owned = true;
	pr_info("Rust driver: the GIC of the ACPI MADT, %u redistributor region(s) from its %s entries\n",
		gic_v3_rust_acpi.nr, gicc ? "GICC" : "GICR");
	kfree(gic_v3_rust_acpi.regions);
	kfree(gic_v3_rust_acpi.res);
	gic_v3_rust_start(fwnode, &probe);
	gic_v3_rust_gsi_fwnode = fwnode;
	acpi_set_irq_model(ACPI_IRQ_MODEL_GIC, gic_v3_rust_gsi_domain_id, NULL);
	if (probe.split_eoi)
		gic_v3_acpi_setup_kvm_info(gic_v3_rust_rdists.has_vlpis,
					   gic_v3_rust_rdists.has_rvpeid);
	return 0;

out_unmap:
	/* No domain on it: the Rust probe did not keep the fwnode. */
	if (fwnode)
		irq_domain_free_fwnode(fwnode);
	for (i = 0; i < gic_v3_rust_acpi.nr; i++)
		gic_v3_rust_iounmap(gic_v3_rust_acpi.regions[i].base, &gic_v3_rust_acpi.res[i],
				    handed);
	free_percpu(gic_v3_rust_rdists.rdist);
	gic_v3_rust_rdists.rdist = NULL;
	gic_v3_rust_rdists.flags = 0;
	gic_v3_rust_iounmap(dist, &dist_res, handed);
out_free:
	kfree(gic_v3_rust_acpi.regions);
	kfree(gic_v3_rust_acpi.res);
	gic_v3_rust_acpi.regions = NULL;
	gic_v3_rust_acpi.res = NULL;
	gic_v3_rust_acpi.nr = 0;
	return err;
}

/* The init function of irq-gic-v3.c's IRQCHIP_ACPI_DECLARE()s (as gic_v3_select_of_init()). */
int __init gic_v3_select_acpi_init(union acpi_subtable_headers *header, const unsigned long end)
{
	bool committed;
	int err;

	if (!gicv3_rust)
		return gic_v3_c_acpi_init(header, end);
	err = gic_v3_rust_acpi_init(header, &committed);
	if (!err || committed)
		return err;
	if (err != -EOPNOTSUPP)
		pr_warn("Rust driver: probe error %d before programming the GIC; using the C driver\n",
			err);
	return gic_v3_c_acpi_init(header, end);
}
#endif
