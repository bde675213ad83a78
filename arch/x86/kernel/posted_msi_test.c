// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of posted-MSI delivery, with the in-kernel posting agent.
 *
 * QEMU's intel-iommu never emulates posted interrupts, so software plays the IOMMU: the posting
 * agent of rust/kernel/irq/posted_agent.rs, the same one the Rust tests and the load generator
 * use. Its interrupts come from the x86 vector domain below a "POSTED-AGENT" chip that acks like
 * INTEL-IR-POST (the posted-MSI ack: a pending affinity move applied, no EOI) and keeps a
 * remapping entry (CPU, vector) per interrupt. Affinity changes take VT-d's path: the PCI/MSI
 * chip above INTEL-IR-POST is not IRQCHIP_MOVE_DEFERRED, so irq_set_affinity() moves the
 * interrupt at once, in process context, through the remapping chip's set_affinity (new vector,
 * IRTE rewrite, cleanup of the old vector: intel_ir_set_affinity()); only a move while the vector
 * domain is busy with the previous one's cleanup (-EBUSY) waits for the next ack. A second agent,
 * whose chip is IRQCHIP_MOVE_DEFERRED, tests that ack-time path on its own. A post does what
 * VT-d does for an MSI that hits a posted IRTE: atomically set the PIR bit, then set ON unless
 * ON or SN is set, and send the notification IPI on POSTED_MSI_NOTIFICATION_VECTOR only when it
 * set ON. This suite requests and counts the interrupts itself.
 *
 * The cases post to and inspect the live posted-MSI descriptors of CPU0 and CPU1 (SN and ON set,
 * PIRs expected empty): with posted MSIs really in use (intremap=posted_msi on a posting-capable
 * IOMMU) they would delay real device interrupts and fail on their posts, so they are skipped
 * there.
 *
 * Every case runs against both notification handlers, the Rust one (with
 * CONFIG_X86_POSTED_MSI_RUST) and upstream's C one, in one boot: the case's parameter selects
 * the implementation with x86_posted_msi_select(), as posted_msi=rust|c does at boot.
 */
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/cpu.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/interrupt.h>
#include <linux/irq.h>
#include <linux/irqdomain.h>
#include <linux/kthread.h>
#include <linux/smp.h>
#include <asm/apic.h>
#include <asm/hardirq.h>
#include <asm/hw_irq.h>
#include <asm/irq_remapping.h>
#include <asm/irqdomain.h>
#include <asm/posted_intr.h>

#define PMSI_MAX_LINES	32

struct pmsi_line {
	unsigned int	virq;
	bool		requested;
	atomic_t	hits;		/* (primary) handler runs */
	atomic_t	posted;		/* posts that set a clear PIR bit */
	atomic_t	thread_runs;	/* thread runs of a threaded line */
	atomic_t	seen;		/* hits when the last thread run started */
	atomic_t	in_notif;	/* hits with the notification vector in service */
	atomic_t	in_vector;	/* hits with the line's own vector in service */
	atomic_t	last_cpu;	/* CPU of the last hit */
	void		*agent;		/* the agent domain of the line */
	/* Called from the handler, in the notification's demux loop. */
	void		(*hook)(struct pmsi_line *line);
	struct pmsi_line *next;
};

static void *pmsi_agent;		/* the posting agent's domain: moves as VT-d's */
static void *pmsi_agent_deferred;	/* an agent whose chip is IRQCHIP_MOVE_DEFERRED */
static atomic_t pmsi_notifications;	/* notification IPIs the agent sent */

/*
 * Post @vector to @cpu's descriptor as VT-d does. Returns -EINVAL for a vector outside
 * 32..255 or an invalid CPU, 1 if a notification was sent, 0 if not. *@newly tells whether the
 * PIR bit was clear.
 */
static int pmsi_post_vector(unsigned int cpu, unsigned int vector, bool *newly)
{
	int ret = posted_msi_agent_post_vector(cpu, vector, newly);

	if (ret == 1)
		atomic_inc(&pmsi_notifications);
	return ret;
}

/* Post @line's MSI to wherever its interrupt is routed now. */
static int pmsi_post(struct pmsi_line *line)
{
	bool newly = false;
	int ret = posted_msi_agent_post(line->agent, line->virq, &newly);

	if (newly)
		atomic_inc(&line->posted);
	if (ret == 1)
		atomic_inc(&pmsi_notifications);
	return ret;
}

/* Whether @vector is in service on this CPU (its ISR bit: delivered and not EOId yet). */
static bool pmsi_in_service(unsigned int vector)
{
	return apic_read(APIC_ISR + (vector / 32) * 0x10) & BIT(vector % 32);
}

static irqreturn_t pmsi_handler(int irq, void *dev_id)
{
	struct pmsi_line *line = dev_id;

	/*
	 * In the notification's demux loop the notification vector stays in service until the
	 * handler EOIs it once for the burst: an ack that EOIs shows here. A line raised on its
	 * own vector (irq_retrigger()) shows that vector in service instead.
	 */
	if (pmsi_in_service(POSTED_MSI_NOTIFICATION_VECTOR))
		atomic_inc(&line->in_notif);
	if (pmsi_in_service(irqd_cfg(irq_get_irq_data(irq))->vector))
		atomic_inc(&line->in_vector);
	atomic_set(&line->last_cpu, smp_processor_id());
	atomic_inc(&line->hits);
	if (line->hook)
		line->hook(line);
	return IRQ_HANDLED;
}

/*
 * The primary handler of a threaded line: runs in the notification's demux loop, once per
 * harvested PIR bit, and wakes the thread.
 */
static irqreturn_t pmsi_primary(int irq, void *dev_id)
{
	struct pmsi_line *line = dev_id;

	atomic_inc(&line->hits);
	return IRQ_WAKE_THREAD;
}

static irqreturn_t pmsi_thread_fn(int irq, void *dev_id)
{
	struct pmsi_line *line = dev_id;

	/*
	 * The primary handler's increment precedes its fully ordered
	 * test_and_set_bit(IRQTF_RUNTHREAD), and irq_wait_for_interrupt() cleared the bit (fully
	 * ordered) before this call: this sees every primary run that woke the thread, and a
	 * primary run after this read sets the bit again, so the thread runs once more.
	 */
	atomic_set(&line->seen, atomic_read(&line->hits));
	atomic_inc(&line->thread_runs);
	return IRQ_HANDLED;
}

static unsigned int pmn_count(unsigned int cpu)
{
	return READ_ONCE(per_cpu(irq_stat, cpu).counts[IRQ_COUNT_POSTED_MSI_NOTIFICATION]);
}

/* The implementations a case runs against. */
struct pmsi_impl {
	const char	*name;
	bool		rust;
};

static const struct pmsi_impl pmsi_impls[] = {
#ifdef CONFIG_X86_POSTED_MSI_RUST
	{ .name = "rust", .rust = true },
#endif
	{ .name = "c", .rust = false },
};

static void pmsi_impl_desc(const struct pmsi_impl *impl, char *desc)
{
	strscpy(desc, impl->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(pmsi_impl, pmsi_impls, pmsi_impl_desc);

#ifdef CONFIG_X86_POSTED_MSI_RUST
static bool pmsi_boot_rust;	/* the implementation selected at boot, restored at exit */
#endif

/*
 * Selects the case's implementation: the notification handler's body and the ack (the agent's
 * chip calls the Rust ack directly when it is selected, as the Rust INTEL-IR-POST chip does, and
 * intel_ack_posted_msi_irq() otherwise).
 */
static int pmsi_case_init(struct kunit *test)
{
	const struct pmsi_impl *impl = test->param_value;

	if (!impl)
		return 0;
	/* False under QEMU: its intel-iommu cannot post, and no boot has intremap=posted_msi. */
	if (posted_msi_enabled())
		kunit_skip(test, "posted MSIs in use: real posts race with the cases' descriptors");
#ifdef CONFIG_X86_POSTED_MSI_RUST
	x86_posted_msi_select(impl->rust);
	KUNIT_ASSERT_EQ(test, x86_posted_msi_use_rust(), impl->rust);
#endif
	return 0;
}

static int pmsi_suite_init(struct kunit_suite *suite)
{
#ifdef CONFIG_X86_POSTED_MSI_RUST
	pmsi_boot_rust = x86_posted_msi_use_rust();
#endif
	if (num_online_cpus() < 2 || !x86_vector_domain)
		return 0;
	pmsi_agent = posted_msi_agent_create("posted-msi-test", false);
	if (!pmsi_agent)
		return -ENOMEM;
	pmsi_agent_deferred = posted_msi_agent_create("posted-msi-test-deferred", true);
	if (!pmsi_agent_deferred) {
		posted_msi_agent_destroy(pmsi_agent);
		pmsi_agent = NULL;
		return -ENOMEM;
	}
	return 0;
}

static void pmsi_suite_exit(struct kunit_suite *suite)
{
#ifdef CONFIG_X86_POSTED_MSI_RUST
	x86_posted_msi_select(pmsi_boot_rust);
#endif
	if (!pmsi_agent)
		return;
	posted_msi_agent_destroy(pmsi_agent_deferred);
	pmsi_agent_deferred = NULL;
	posted_msi_agent_destroy(pmsi_agent);
	pmsi_agent = NULL;
}

static void pmsi_lines_free(void *data)
{
	struct pmsi_line *lines = data;
	int i;

	for (i = 0; i < PMSI_MAX_LINES; i++) {
		if (!lines[i].virq)
			continue;
		if (lines[i].requested)
			free_irq(lines[i].virq, &lines[i]);
		posted_msi_agent_free(lines[i].virq);
	}
}

/*
 * Allocates @n interrupts routed to @cpu, each requested with the counting handler; @threaded
 * requests pmsi_primary() and pmsi_thread_fn() instead.
 *
 * The counting handler is IRQF_NO_THREAD: the cases check that the notification's demux runs
 * the flow once per newly set PIR bit, and with threadirqs (or PREEMPT_RT) a forced-threaded
 * handler runs later, in a thread whose wake-ups coalesce (IRQTF_RUNTHREAD is one bit), and
 * outside the demux loop (pmsi_posted_during_demux's hooks would post with ON clear). A threaded
 * line is IRQF_ONESHOT, which forced threading leaves alone: its primary handler stays in the
 * demux loop in both boots.
 */
static struct pmsi_line *pmsi_lines_of(struct kunit *test, void *agent, int n,
				       unsigned int cpu, bool threaded)
{
	struct pmsi_line *lines;
	int i, virq, ret;

	if (!agent)
		kunit_skip(test, "needs 2 CPUs and the x86 vector domain");
	lines = kunit_kcalloc(test, PMSI_MAX_LINES, sizeof(*lines), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, lines);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, pmsi_lines_free, lines), 0);
	for (i = 0; i < n; i++) {
		virq = posted_msi_agent_alloc(agent, cpu);
		KUNIT_ASSERT_GT(test, virq, 0);
		lines[i].virq = virq;
		lines[i].agent = agent;
		if (threaded)
			ret = request_threaded_irq(virq, pmsi_primary, pmsi_thread_fn, IRQF_ONESHOT,
						   "posted-msi-test", &lines[i]);
		else
			ret = request_irq(virq, pmsi_handler, IRQF_NO_THREAD, "posted-msi-test",
					  &lines[i]);
		KUNIT_ASSERT_EQ(test, ret, 0);
		lines[i].requested = true;
		KUNIT_ASSERT_EQ(test, irq_set_affinity(virq, cpumask_of(cpu)), 0);
	}
	return lines;
}

static struct pmsi_line *pmsi_lines_req(struct kunit *test, int n, unsigned int cpu,
					bool threaded)
{
	return pmsi_lines_of(test, pmsi_agent, n, cpu, threaded);
}

static struct pmsi_line *pmsi_lines(struct kunit *test, int n, unsigned int cpu)
{
	return pmsi_lines_req(test, n, cpu, false);
}

/* Waits until every line's handler ran once per newly posted bit; then checks for extras. */
static void pmsi_expect_drained(struct kunit *test, struct pmsi_line *lines, int n)
{
	unsigned long timeout = jiffies + 10 * HZ;
	int i, done;

	do {
		for (done = 0, i = 0; i < n; i++)
			done += atomic_read(&lines[i].hits) == atomic_read(&lines[i].posted);
		if (done == n)
			break;
		usleep_range(1000, 2000);
	} while (time_before(jiffies, timeout));
	msleep(20);
	for (i = 0; i < n; i++)
		KUNIT_EXPECT_EQ_MSG(test, atomic_read(&lines[i].hits),
				    atomic_read(&lines[i].posted), "line %d (irq %u)", i,
				    lines[i].virq);
}

static void pmsi_out_of_range_vector(struct kunit *test)
{
	struct pi_desc *pid = per_cpu_ptr(&posted_msi_pi_desc, 0);
	unsigned long before[NR_PIR_WORDS];
	bool newly = false;

	memcpy(before, pid->pir, sizeof(before));
	KUNIT_EXPECT_EQ(test, pmsi_post_vector(0, 0, &newly), -EINVAL);
	KUNIT_EXPECT_EQ(test, pmsi_post_vector(0, FIRST_EXTERNAL_VECTOR - 1, &newly), -EINVAL);
	KUNIT_EXPECT_EQ(test, pmsi_post_vector(0, NR_VECTORS, &newly), -EINVAL);
	KUNIT_EXPECT_EQ(test, pmsi_post_vector(0, UINT_MAX, &newly), -EINVAL);
	KUNIT_EXPECT_EQ(test, pmsi_post_vector(nr_cpu_ids, 0x40, &newly), -EINVAL);
	KUNIT_EXPECT_EQ(test, pmsi_post_vector(UINT_MAX, 0x40, &newly), -EINVAL);
	KUNIT_EXPECT_EQ(test, posted_msi_agent_notify(nr_cpu_ids), -EINVAL);
	KUNIT_EXPECT_EQ(test, posted_msi_agent_notify(UINT_MAX), -EINVAL);
	KUNIT_EXPECT_FALSE(test, newly);
	KUNIT_EXPECT_EQ(test, memcmp(before, pid->pir, sizeof(before)), 0);
}

static void pmsi_cpu1_restore(void *unused);
static void pmsi_expect_pid_sane(struct kunit *test, unsigned int cpu);

/*
 * A possible CPU that is not online is refused, by the post (nothing posted) and by the
 * notification alone: the APIC ID of a CPU that was never online is BAD_APICID, a broadcast in
 * x2APIC physical mode. The refused IPI would be harmless to CPU1, offline with a valid APIC ID,
 * so nothing but the return values shows a missing check, and they are what is asserted.
 */
static void pmsi_offline_cpu_refused(struct kunit *test)
{
	struct pi_desc *pid = per_cpu_ptr(&posted_msi_pi_desc, 1);
	unsigned long before[NR_PIR_WORDS];
	bool newly = false;
	u64 control;

	if (!IS_ENABLED(CONFIG_HOTPLUG_CPU) || num_online_cpus() < 2)
		kunit_skip(test, "needs CONFIG_HOTPLUG_CPU and 2 CPUs");
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, pmsi_cpu1_restore, NULL), 0);
	/* Online, the notification is sent: an empty one, which CPU1 takes harmlessly. */
	KUNIT_EXPECT_EQ(test, posted_msi_agent_notify(1), 0);
	KUNIT_ASSERT_EQ(test, remove_cpu(1), 0);
	memcpy(before, pid->pir, sizeof(before));
	control = READ_ONCE(pid->control);
	KUNIT_EXPECT_EQ(test, posted_msi_agent_notify(1), -EINVAL);
	KUNIT_EXPECT_EQ(test, pmsi_post_vector(1, 0x40, &newly), -EINVAL);
	KUNIT_EXPECT_FALSE(test, newly);
	KUNIT_EXPECT_EQ(test, memcmp(before, pid->pir, sizeof(before)), 0);
	KUNIT_EXPECT_EQ(test, READ_ONCE(pid->control), control);
	KUNIT_ASSERT_EQ(test, add_cpu(1), 0);
	pmsi_expect_pid_sane(test, 1);
}

static void pmsi_every_vector_once(struct kunit *test)
{
	struct pmsi_line *lines = pmsi_lines(test, 8, 1);
	int i;

	for (i = 0; i < 8; i++)
		KUNIT_EXPECT_GE(test, pmsi_post(&lines[i]), 0);
	pmsi_expect_drained(test, lines, 8);
	for (i = 0; i < 8; i++) {
		KUNIT_EXPECT_EQ(test, atomic_read(&lines[i].hits), 1);
		/* Demultiplexed inside the notification, whose EOI comes after the demux loop. */
		KUNIT_EXPECT_EQ(test, atomic_read(&lines[i].in_notif), 1);
		KUNIT_EXPECT_EQ(test, atomic_read(&lines[i].in_vector), 0);
	}
}

struct pmsi_burst {
	struct pmsi_line *lines;
	int n, sent;
};

/* Runs on the target CPU with interrupts disabled: the notification waits for all posts. */
static void pmsi_burst_fn(void *data)
{
	struct pmsi_burst *b = data;
	int i;

	for (i = 0; i < b->n; i++)
		b->sent += pmsi_post(&b->lines[i]) > 0;
}

static void pmsi_burst(struct kunit *test, int n)
{
	struct pmsi_line *lines = pmsi_lines(test, n, 1);
	struct pmsi_burst b = { .lines = lines, .n = n };
	unsigned int pmn = pmn_count(1);
	int i;

	KUNIT_ASSERT_EQ(test, smp_call_function_single(1, pmsi_burst_fn, &b, 1), 0);
	pmsi_expect_drained(test, lines, n);
	for (i = 0; i < n; i++) {
		KUNIT_EXPECT_EQ(test, atomic_read(&lines[i].hits), 1);
		KUNIT_EXPECT_EQ(test, atomic_read(&lines[i].in_notif), 1);
	}
	kunit_info(test, "burst of %d vectors: %d notification(s) sent, PMN +%u\n", n, b.sent,
		   pmn_count(1) - pmn);
	KUNIT_EXPECT_EQ(test, b.sent, 1);
	KUNIT_EXPECT_EQ(test, pmn_count(1) - pmn, 1);
	if (n > 1)
		KUNIT_EXPECT_LT(test, b.sent, n);
}

static void pmsi_burst_1(struct kunit *test)
{
	pmsi_burst(test, 1);
}

static void pmsi_burst_4(struct kunit *test)
{
	pmsi_burst(test, 4);
}

static void pmsi_burst_32(struct kunit *test)
{
	pmsi_burst(test, 32);
}

static void pmsi_post_next(struct pmsi_line *line)
{
	if (line->next)
		pmsi_post(line->next);
}

static void pmsi_posted_during_demux(struct kunit *test)
{
	struct pmsi_line *lines = pmsi_lines(test, 4, 1);
	unsigned int pmn = pmn_count(1);
	int i;

	/* Each handler posts the next line while the demux loop runs. */
	for (i = 0; i < 3; i++) {
		lines[i].next = &lines[i + 1];
		lines[i].hook = pmsi_post_next;
	}
	atomic_set(&pmsi_notifications, 0);
	KUNIT_EXPECT_EQ(test, pmsi_post(&lines[0]), 1);
	pmsi_expect_drained(test, lines, 4);
	for (i = 0; i < 4; i++)
		KUNIT_EXPECT_EQ(test, atomic_read(&lines[i].hits), 1);
	kunit_info(test, "4 chained posts: %d notification(s), PMN +%u\n",
		   atomic_read(&pmsi_notifications), pmn_count(1) - pmn);
	/*
	 * Posts made while ON is set need no notification: the first notification's two harvests
	 * with ON set run lines 0 and 1 (posting lines 1 and 2), ON is cleared, and its final
	 * harvest runs line 2, whose post of line 3 finds ON clear and notifies. Exactly two, in
	 * both implementations (MAX_POSTED_MSI_COALESCING_LOOP 3), each taken by CPU1.
	 */
	KUNIT_EXPECT_EQ(test, atomic_read(&pmsi_notifications), 2);
	KUNIT_EXPECT_EQ(test, pmn_count(1) - pmn, 2);
}

struct pmsi_agent {
	struct pmsi_line *lines;
	int n, posts;
	int to_cpu[2];			/* posts per target CPU */
	int progress;			/* posts made so far, updated every 1024 */
	atomic_t *stop;
	struct completion done;
};

static int pmsi_agent_fn(void *data)
{
	struct pmsi_agent *a = data;
	int i;

	for (i = 0; a->posts ? i < a->posts : !atomic_read(a->stop); i++) {
		struct pmsi_line *line = &a->lines[i % a->n];
		unsigned int cpu = cpumask_first(irq_get_effective_affinity_mask(line->virq));

		pmsi_post(line);
		if (cpu < 2)
			a->to_cpu[cpu]++;
		if (!(i % 1024)) {
			WRITE_ONCE(a->progress, i);
			cond_resched();
		}
	}
	a->posts = i;
	complete(&a->done);
	return 0;
}

static struct task_struct *pmsi_agent_start(struct kunit *test, struct pmsi_agent *a,
					    unsigned int cpu)
{
	struct task_struct *t;

	init_completion(&a->done);
	t = kthread_create(pmsi_agent_fn, a, "pmsi-agent/%u", cpu);
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	kthread_bind(t, cpu);
	wake_up_process(t);
	return t;
}

static void pmsi_concurrent_smp(struct kunit *test)
{
	struct pmsi_line *lines = pmsi_lines(test, 16, 1);
	struct pmsi_agent a = { .lines = lines, .n = 16, .posts = 100000 };
	int i, hits = 0, posted = 0;

	pmsi_agent_start(test, &a, 0);
	wait_for_completion(&a.done);
	pmsi_expect_drained(test, lines, 16);
	for (i = 0; i < 16; i++) {
		hits += atomic_read(&lines[i].hits);
		posted += atomic_read(&lines[i].posted);
	}
	kunit_info(test, "%d posts from CPU0: %d new PIR bits, %d handler runs\n", a.posts,
		   posted, hits);
	KUNIT_EXPECT_EQ(test, a.posts, 100000);
	KUNIT_EXPECT_EQ(test, hits, posted);
	KUNIT_EXPECT_GT(test, posted, 0);
}

/*
 * pmsi_concurrent_smp with threaded handlers. The primary handler runs once per newly set PIR
 * bit, exactly; thread runs may coalesce, but none is lost: after the drain, the last thread
 * run of every line started after the line's last primary run.
 */
static void pmsi_threaded_no_loss(struct kunit *test)
{
	struct pmsi_line *lines = pmsi_lines_req(test, 16, 1, true);
	struct pmsi_agent a = { .lines = lines, .n = 16, .posts = 100000 };
	int i, hits = 0, posted = 0, runs = 0;

	pmsi_agent_start(test, &a, 0);
	wait_for_completion(&a.done);
	pmsi_expect_drained(test, lines, 16);
	for (i = 0; i < 16; i++) {
		int line_hits, line_runs;

		/* Waits for the line's thread, woken by its last primary run. */
		synchronize_irq(lines[i].virq);
		line_hits = atomic_read(&lines[i].hits);
		line_runs = atomic_read(&lines[i].thread_runs);
		KUNIT_EXPECT_GT_MSG(test, line_hits, 0, "line %d", i);
		KUNIT_EXPECT_GT_MSG(test, line_runs, 0, "line %d", i);
		KUNIT_EXPECT_LE_MSG(test, line_runs, line_hits, "line %d", i);
		KUNIT_EXPECT_EQ_MSG(test, atomic_read(&lines[i].seen), line_hits,
				    "line %d: no thread run after the last interrupt", i);
		hits += line_hits;
		posted += atomic_read(&lines[i].posted);
		runs += line_runs;
	}
	kunit_info(test, "%d posts from CPU0: %d new PIR bits, %d primary runs, %d thread runs\n",
		   a.posts, posted, hits, runs);
	KUNIT_EXPECT_EQ(test, a.posts, 100000);
	KUNIT_EXPECT_EQ(test, hits, posted);
}

static void pmsi_suppressed(struct kunit *test)
{
	struct pmsi_line *lines = pmsi_lines(test, 8, 1);
	struct pi_desc *pid = per_cpu_ptr(&posted_msi_pi_desc, 1);
	int i, sent = 0;

	pi_set_sn(pid);
	for (i = 0; i < 8; i++)
		sent += pmsi_post(&lines[i]);
	msleep(50);
	KUNIT_EXPECT_EQ(test, sent, 0);
	KUNIT_EXPECT_FALSE(test, pi_test_on(pid));
	for (i = 0; i < 8; i++)
		KUNIT_EXPECT_EQ(test, atomic_read(&lines[i].hits), 0);

	/* Unsuppress, then drain what was posted meanwhile with one notification. */
	pi_clear_sn(pid);
	if (!pi_is_pir_empty(pid) && !pi_test_and_set_on(pid))
		__apic_send_IPI(1, POSTED_MSI_NOTIFICATION_VECTOR);
	pmsi_expect_drained(test, lines, 8);
	for (i = 0; i < 8; i++)
		KUNIT_EXPECT_EQ(test, atomic_read(&lines[i].hits), 1);
}

static void pmsi_affinity_move(struct kunit *test)
{
	struct pmsi_line *lines = pmsi_lines(test, 4, 1);
	atomic_t stop = ATOMIC_INIT(0);
	struct pmsi_agent a = { .lines = lines, .n = 4, .stop = &stop };
	int i, j, hits = 0, posted = 0, moved = 0;

	pmsi_agent_start(test, &a, 0);
	for (j = 0; j < 200; j++) {
		for (i = 0; i < 4; i++)
			moved += !irq_set_affinity(lines[i].virq, cpumask_of((i + j) & 1));
		usleep_range(100, 200);
	}
	atomic_set(&stop, 1);
	wait_for_completion(&a.done);
	pmsi_expect_drained(test, lines, 4);
	for (i = 0; i < 4; i++) {
		hits += atomic_read(&lines[i].hits);
		posted += atomic_read(&lines[i].posted);
	}
	kunit_info(test,
		   "%d posts (%d to CPU0, %d to CPU1) during %d accepted affinity changes: %d new PIR bits, %d handler runs\n",
		   a.posts, a.to_cpu[0], a.to_cpu[1], moved, posted, hits);
	KUNIT_EXPECT_EQ(test, hits, posted);
	KUNIT_EXPECT_GT(test, posted, 0);
	/* The interrupts really moved: both CPUs were posted to. */
	KUNIT_EXPECT_GT(test, a.to_cpu[0], 0);
	KUNIT_EXPECT_GT(test, a.to_cpu[1], 0);
	KUNIT_EXPECT_GT(test, moved, 0);
}

/* Runs on CPU1: is @data's vector still in service there? */
static void pmsi_vector_in_service_fn(void *data)
{
	unsigned int *vector = data;

	*vector = pmsi_in_service(*vector);
}

/* An interrupt of another agent domain is not this one's to post. */
static void pmsi_expect_foreign_refused(struct kunit *test)
{
	void *other = posted_msi_agent_create("posted-msi-test-other", false);
	bool newly = false;
	int virq;

	KUNIT_ASSERT_NOT_NULL(test, other);
	virq = posted_msi_agent_alloc(other, 1);
	KUNIT_EXPECT_GT(test, virq, 0);
	if (virq > 0) {
		KUNIT_EXPECT_EQ(test, posted_msi_agent_post(pmsi_agent, virq, &newly), -EINVAL);
		KUNIT_EXPECT_FALSE(test, newly);
		posted_msi_agent_free(virq);
	}
	posted_msi_agent_destroy(other);
}

/*
 * The move as VT-d takes it: irq_set_affinity() moves the line at once, in process context,
 * through the chip's set_affinity (new vector, IRTE rewrite, cleanup of the old vector), with no
 * interrupt needed: the next post is delivered on the new CPU.
 */
static void pmsi_immediate_move(struct kunit *test)
{
	struct pmsi_line *lines = pmsi_lines(test, 1, 1);
	struct irq_data *d = irq_get_irq_data(lines[0].virq);

	KUNIT_EXPECT_GE(test, pmsi_post(&lines[0]), 0);
	pmsi_expect_drained(test, lines, 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&lines[0].last_cpu), 1);

	/*
	 * A fresh line: its vector was assigned at activation, with no move whose cleanup could
	 * still be pending, so the vector domain is not busy (-EBUSY) and the move is not deferred.
	 */
	KUNIT_ASSERT_EQ(test, irq_set_affinity(lines[0].virq, cpumask_of(0)), 0);
	KUNIT_EXPECT_FALSE(test, irqd_is_setaffinity_pending(d));
	KUNIT_EXPECT_EQ(test, cpumask_first(irq_data_get_effective_affinity_mask(d)), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&lines[0].hits), 1);

	KUNIT_EXPECT_GE(test, pmsi_post(&lines[0]), 0);
	pmsi_expect_drained(test, lines, 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&lines[0].hits), 2);
	KUNIT_EXPECT_EQ(test, atomic_read(&lines[0].last_cpu), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&lines[0].in_notif), 2);
}

struct pmsi_busy {
	unsigned int virq;
	int ret[2];
	bool pending[2];
	unsigned int cpu[2];
};

/*
 * Runs on CPU1 with interrupts disabled, so that CPU1's vector cleanup timer cannot free the old
 * vector of the first move before the second: the vector domain is still busy with it.
 */
static void pmsi_busy_fn(void *data)
{
	struct pmsi_busy *b = data;
	struct irq_data *d = irq_get_irq_data(b->virq);
	int i;

	for (i = 0; i < 2; i++) {
		b->ret[i] = irq_set_affinity(b->virq, cpumask_of(!i ? 0 : 1));
		b->pending[i] = irqd_is_setaffinity_pending(d);
		b->cpu[i] = cpumask_first(irq_data_get_effective_affinity_mask(d));
	}
}

/*
 * The -EBUSY path of a move as VT-d takes it: CPU1 -> CPU0 is applied at once and schedules the
 * cleanup of the old vector on CPU1; CPU0 -> CPU1 right after finds the vector domain busy with
 * it (-EBUSY), which genirq turns into a pending move that the next interrupt's ack applies (or
 * a later one's, if the cleanup has not run by then). Nothing is lost or run twice meanwhile.
 */
static void pmsi_busy_move(struct kunit *test)
{
	struct pmsi_line *lines = pmsi_lines(test, 1, 1);
	struct irq_data *d = irq_get_irq_data(lines[0].virq);
	struct pmsi_busy b = { .virq = lines[0].virq };
	unsigned long timeout;
	int posts = 0;

	KUNIT_ASSERT_EQ(test, smp_call_function_single(1, pmsi_busy_fn, &b, 1), 0);
	KUNIT_EXPECT_EQ(test, b.ret[0], 0);
	KUNIT_EXPECT_FALSE(test, b.pending[0]);
	KUNIT_EXPECT_EQ(test, b.cpu[0], 0);
	KUNIT_EXPECT_EQ(test, b.ret[1], 0);
	KUNIT_EXPECT_TRUE(test, b.pending[1]);
	KUNIT_EXPECT_EQ(test, b.cpu[1], 0);

	/* Delivered on CPU0, where the first move routed it; an ack there applies the second. */
	timeout = jiffies + 10 * HZ;
	do {
		KUNIT_EXPECT_GE(test, pmsi_post(&lines[0]), 0);
		posts++;
		pmsi_expect_drained(test, lines, 1);
		KUNIT_EXPECT_EQ(test, atomic_read(&lines[0].last_cpu), 0);
	} while (irqd_is_setaffinity_pending(d) && time_before(jiffies, timeout));
	KUNIT_EXPECT_FALSE(test, irqd_is_setaffinity_pending(d));
	KUNIT_EXPECT_EQ(test, cpumask_first(irq_data_get_effective_affinity_mask(d)), 1);

	KUNIT_EXPECT_GE(test, pmsi_post(&lines[0]), 0);
	pmsi_expect_drained(test, lines, 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&lines[0].hits), posts + 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&lines[0].last_cpu), 1);
}

/*
 * With an IRQCHIP_MOVE_DEFERRED chip (the agent's second mode), every affinity change of a line
 * waits for its next interrupt, whose ack applies it: before, the line is still routed to CPU1,
 * after, to CPU0. The path a busy vector domain sends VT-d's moves to (pmsi_busy_move), here
 * taken by every move.
 */
static void pmsi_deferred_move(struct kunit *test)
{
	struct pmsi_line *lines = pmsi_lines_of(test, pmsi_agent_deferred, 1, 1, false);
	struct irq_data *d = irq_get_irq_data(lines[0].virq);

	/* Settle the move pmsi_lines() left pending (to the same CPU). */
	KUNIT_EXPECT_GE(test, pmsi_post(&lines[0]), 0);
	pmsi_expect_drained(test, lines, 1);
	KUNIT_ASSERT_FALSE(test, irqd_is_setaffinity_pending(d));

	KUNIT_ASSERT_EQ(test, irq_set_affinity(lines[0].virq, cpumask_of(0)), 0);
	KUNIT_EXPECT_TRUE(test, irqd_is_setaffinity_pending(d));
	KUNIT_EXPECT_EQ(test, cpumask_first(irq_data_get_effective_affinity_mask(d)), 1);
	pmsi_expect_foreign_refused(test);

	/* Delivered on CPU1; its ack moves the line. */
	KUNIT_EXPECT_GE(test, pmsi_post(&lines[0]), 0);
	pmsi_expect_drained(test, lines, 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&lines[0].hits), 2);
	KUNIT_EXPECT_FALSE(test, irqd_is_setaffinity_pending(d));
	KUNIT_EXPECT_EQ(test, cpumask_first(irq_data_get_effective_affinity_mask(d)), 0);

	/* And now delivered on CPU0. */
	KUNIT_EXPECT_GE(test, pmsi_post(&lines[0]), 0);
	pmsi_expect_drained(test, lines, 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&lines[0].hits), 3);
	KUNIT_EXPECT_EQ(test, atomic_read(&lines[0].in_notif), 3);
}

/*
 * The retrigger path: an MSI posted while its line is disabled is only marked pending; enabling
 * the line resends it through irq_retrigger(), which raises the line's own vector on CPU1. That
 * interrupt does not come through the notification, so its ack must EOI, or the vector stays in
 * service and blocks every vector of its priority class and below.
 */
static void pmsi_retrigger(struct kunit *test)
{
	struct pmsi_line *lines = pmsi_lines(test, 1, 1);
	unsigned int vector;

	disable_irq(lines[0].virq);
	KUNIT_EXPECT_EQ(test, pmsi_post(&lines[0]), 1);
	msleep(20);
	/* Harvested and acked by the notification, not handled. */
	KUNIT_EXPECT_EQ(test, atomic_read(&lines[0].hits), 0);

	enable_irq(lines[0].virq);
	pmsi_expect_drained(test, lines, 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&lines[0].hits), 1);
	/* Not through the notification, and the ack EOId the vector before the handler ran. */
	KUNIT_EXPECT_EQ(test, atomic_read(&lines[0].in_notif), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&lines[0].in_vector), 0);

	vector = irqd_cfg(irq_get_irq_data(lines[0].virq))->vector;
	KUNIT_ASSERT_EQ(test, smp_call_function_single(1, pmsi_vector_in_service_fn, &vector, 1),
			0);
	KUNIT_EXPECT_EQ_MSG(test, vector, 0, "the retriggered vector was never EOId");

	/* And the line still works through the notification. */
	KUNIT_EXPECT_GE(test, pmsi_post(&lines[0]), 0);
	pmsi_expect_drained(test, lines, 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&lines[0].hits), 2);
	KUNIT_EXPECT_EQ(test, atomic_read(&lines[0].in_notif), 1);
}

/* Routes @n lines to @cpu (deferred: each line's next ack applies it). */
static void pmsi_lines_to(struct pmsi_line *lines, int n, unsigned int cpu)
{
	int i;

	for (i = 0; i < n; i++)
		irq_set_affinity(lines[i].virq, cpumask_of(cpu));
}

/* @cpu's posted-interrupt descriptor after it came back online, with nothing posted to it. */
static void pmsi_expect_pid_sane(struct kunit *test, unsigned int cpu)
{
	struct pi_desc *pid = per_cpu_ptr(&posted_msi_pi_desc, cpu);
	u32 apic_id = per_cpu(x86_cpu_to_apicid, cpu);

	KUNIT_EXPECT_FALSE(test, pi_test_on(pid));
	KUNIT_EXPECT_FALSE(test, pi_test_sn(pid));
	KUNIT_EXPECT_TRUE_MSG(test, pi_is_pir_empty(pid), "PIR %*pb", NR_VECTORS, pid->pir);
	KUNIT_EXPECT_EQ(test, pid->nv, POSTED_MSI_NOTIFICATION_VECTOR);
	KUNIT_EXPECT_EQ(test, pid->ndst, x2apic_enabled() ? apic_id : apic_id << 8);
}

#define PMSI_HOTPLUG_ROUNDS	5

/* What a hotplug case leaves set on CPU1 just before each offline. */
enum pmsi_hotplug_mode {
	PMSI_PLAIN,
	PMSI_SN,	/* SN: posts only set PIR bits, which fixup_irqs() must retrigger */
	PMSI_ON,	/* ON: an outstanding notification, whose IPI the offline loses */
};

/* Brings CPU1 back and clears SN, whatever a case left behind (a kunit action). */
static void pmsi_cpu1_restore(void *unused)
{
	pi_clear_sn(per_cpu_ptr(&posted_msi_pi_desc, 1));
	if (!cpu_online(1))
		add_cpu(1);
}

/*
 * CPU1 goes offline and comes back, PMSI_HOTPLUG_ROUNDS times, while the agent on CPU0 posts
 * to lines routed to CPU1 (and back to it after each online). fixup_irqs() moves the lines off
 * CPU1 and retriggers every vector still pending in its IRR or PIR on the new target: every
 * posted vector's handler runs exactly once, none is lost in the PIR of the offline CPU, none
 * runs twice, and CPU1's descriptor is sane when it is back (intel_posted_msi_init() resets
 * what it held). @mode sets SN or ON on CPU1 just before each offline.
 */
static void pmsi_hotplug(struct kunit *test, enum pmsi_hotplug_mode mode)
{
	struct pmsi_line *lines = pmsi_lines(test, 8, 1);
	struct pi_desc *pid = per_cpu_ptr(&posted_msi_pi_desc, 1);
	atomic_t stop = ATOMIC_INIT(0);
	struct pmsi_agent a = { .lines = lines, .n = 8, .stop = &stop };
	int i, r, ret, hits = 0, posted = 0, pending = 0;

	if (!IS_ENABLED(CONFIG_HOTPLUG_CPU))
		kunit_skip(test, "needs CONFIG_HOTPLUG_CPU");
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, pmsi_cpu1_restore, NULL), 0);
	pmsi_agent_start(test, &a, 0);
	for (r = 0; r < PMSI_HOTPLUG_ROUNDS; r++) {
		usleep_range(2000, 4000);
		if (mode == PMSI_SN)
			pi_set_sn(pid);
		if (mode == PMSI_ON)
			pi_set_on(pid);
		usleep_range(1000, 2000);
		/* Vectors waiting in CPU1's PIR for the offline (SN, ON: no notification). */
		pending += !pi_is_pir_empty(pid);
		ret = remove_cpu(1);
		KUNIT_EXPECT_EQ(test, ret, 0);
		pi_clear_sn(pid);
		usleep_range(2000, 4000);
		if (!ret)
			KUNIT_EXPECT_EQ(test, add_cpu(1), 0);
		if (ret || !cpu_online(1))
			break;
		pmsi_lines_to(lines, 8, 1);
	}
	atomic_set(&stop, 1);
	wait_for_completion(&a.done);
	pmsi_expect_drained(test, lines, 8);
	for (i = 0; i < 8; i++) {
		hits += atomic_read(&lines[i].hits);
		posted += atomic_read(&lines[i].posted);
	}
	kunit_info(test, "%d posts (%d to CPU0, %d to CPU1) over %d offline/online rounds%s (PIR pending at %d offlines): %d new PIR bits, %d handler runs\n",
		   a.posts, a.to_cpu[0], a.to_cpu[1], r,
		   mode == PMSI_SN ? " with SN set" : mode == PMSI_ON ? " with ON set" : "",
		   pending, posted, hits);
	KUNIT_EXPECT_EQ(test, r, PMSI_HOTPLUG_ROUNDS);
	KUNIT_EXPECT_EQ(test, hits, posted);
	KUNIT_EXPECT_GT(test, a.to_cpu[1], 0);
	if (mode != PMSI_PLAIN)
		KUNIT_EXPECT_GT(test, pending, 0);
	/* Nothing posted to CPU1 now: what its descriptor holds is stale if anything. */
	pmsi_expect_pid_sane(test, 1);
}

static void pmsi_cpu_offline(struct kunit *test)
{
	pmsi_hotplug(test, PMSI_PLAIN);
}

static void pmsi_cpu_offline_suppressed(struct kunit *test)
{
	pmsi_hotplug(test, PMSI_SN);
}

static void pmsi_cpu_offline_notification_outstanding(struct kunit *test)
{
	pmsi_hotplug(test, PMSI_ON);
}

/*
 * Bad input around hotplug: the boot CPU cannot go offline (an error); a CPU already offline
 * stays so (device_offline()'s 1, "nothing to do", not an error); an affinity with no online CPU
 * is refused (-EINVAL from irq_do_set_affinity(), for VT-d's move path) or, by an
 * IRQCHIP_MOVE_DEFERRED chip, accepted as a pending move (0) that its next ack drops (the line
 * stays where it is); a post to a freed interrupt is EINVAL. Nothing is lost or run twice
 * meanwhile and no WARN fires.
 */
static void pmsi_hotplug_bad_input(struct kunit *test)
{
	struct pmsi_line *lines = pmsi_lines(test, 1, 1);
	struct pmsi_line *dlines = pmsi_lines_of(test, pmsi_agent_deferred, 1, 1, false);
	struct irq_data *d = irq_get_irq_data(lines[0].virq);
	struct irq_data *dd = irq_get_irq_data(dlines[0].virq);
	bool newly = false;
	int virq;

	if (!IS_ENABLED(CONFIG_HOTPLUG_CPU))
		kunit_skip(test, "needs CONFIG_HOTPLUG_CPU");
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, pmsi_cpu1_restore, NULL), 0);
	KUNIT_EXPECT_LT(test, remove_cpu(0), 0);
	KUNIT_ASSERT_EQ(test, remove_cpu(1), 0);
	KUNIT_EXPECT_EQ(test, remove_cpu(1), 1);
	KUNIT_EXPECT_EQ(test, irq_set_affinity(lines[0].virq, cpumask_of(1)), -EINVAL);
	KUNIT_EXPECT_FALSE(test, irqd_is_setaffinity_pending(d));
	KUNIT_EXPECT_EQ(test, irq_set_affinity(dlines[0].virq, cpumask_of(1)), 0);
	KUNIT_EXPECT_TRUE(test, irqd_is_setaffinity_pending(dd));
	KUNIT_EXPECT_GE(test, pmsi_post(&lines[0]), 0);
	KUNIT_EXPECT_GE(test, pmsi_post(&dlines[0]), 0);
	pmsi_expect_drained(test, lines, 1);
	pmsi_expect_drained(test, dlines, 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&lines[0].hits), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&dlines[0].hits), 1);
	KUNIT_EXPECT_FALSE(test, irqd_is_setaffinity_pending(d));
	KUNIT_EXPECT_FALSE(test, irqd_is_setaffinity_pending(dd));
	KUNIT_EXPECT_EQ(test, cpumask_first(irq_data_get_effective_affinity_mask(d)), 0);
	KUNIT_EXPECT_EQ(test, cpumask_first(irq_data_get_effective_affinity_mask(dd)), 0);
	KUNIT_ASSERT_EQ(test, add_cpu(1), 0);

	virq = posted_msi_agent_alloc(pmsi_agent, 1);
	KUNIT_ASSERT_GT(test, virq, 0);
	posted_msi_agent_free(virq);
	KUNIT_EXPECT_EQ(test, posted_msi_agent_post(pmsi_agent, virq, &newly), -EINVAL);
	KUNIT_EXPECT_FALSE(test, newly);
	pmsi_expect_pid_sane(test, 1);
}

/* Waits until the agent made @posts posts; false after 60 s. */
static bool pmsi_agent_wait(struct pmsi_agent *a, int posts)
{
	unsigned long timeout = jiffies + 60 * HZ;

	while (READ_ONCE(a->progress) < posts) {
		if (time_after(jiffies, timeout))
			return false;
		usleep_range(500, 1000);
	}
	return true;
}

static unsigned int soak_posts = 200000;
module_param(soak_posts, uint, 0444);
MODULE_PARM_DESC(soak_posts, "pmsi_soak posts per implementation, 1..100000000");

static unsigned int soak_cycles = 3;
module_param(soak_cycles, uint, 0444);
MODULE_PARM_DESC(soak_cycles, "CPU1 offline/online cycles of pmsi_soak (0..1000)");

/*
 * The soak: at least soak_posts MSIs posted from CPU0 over 32 lines, while CPU1 goes offline
 * and back soak_cycles times, spread over the run (a few thousand posts while it is offline),
 * and half of the lines move between the CPUs at each cycle. Exact counts at the end: one
 * handler run per newly set PIR bit.
 */
static void pmsi_soak(struct kunit *test)
{
	struct pmsi_line *lines = pmsi_lines(test, 32, 1);
	atomic_t stop = ATOMIC_INIT(0);
	struct pmsi_agent a = { .lines = lines, .n = 32, .stop = &stop };
	int i, c, p, hits = 0, posted = 0;
	u64 t0, ns;

	KUNIT_ASSERT_TRUE_MSG(test,
			      soak_posts >= 1 && soak_posts <= 100000000 && soak_cycles <= 1000,
			      "soak_posts %u, soak_cycles %u: out of range",
			      soak_posts, soak_cycles);
	if (soak_cycles && !IS_ENABLED(CONFIG_HOTPLUG_CPU))
		kunit_skip(test, "needs CONFIG_HOTPLUG_CPU");
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, pmsi_cpu1_restore, NULL), 0);
	t0 = ktime_get_ns();
	pmsi_agent_start(test, &a, 0);
	for (c = 0; c < soak_cycles; c++) {
		u64 due = (u64)soak_posts * (c + 1) / (soak_cycles + 1);

		if (!pmsi_agent_wait(&a, due) || remove_cpu(1))
			break;
		/* Posts while CPU1 is offline: a few thousand. */
		p = READ_ONCE(a.progress);
		pmsi_agent_wait(&a, p + 4096);
		if (add_cpu(1))
			break;
		for (i = 0; i < 32; i++)
			irq_set_affinity(lines[i].virq, cpumask_of((i + c) & 1));
	}
	KUNIT_EXPECT_EQ_MSG(test, c, (int)soak_cycles, "offline/online cycle %d failed", c);
	KUNIT_EXPECT_TRUE(test, pmsi_agent_wait(&a, soak_posts));
	atomic_set(&stop, 1);
	wait_for_completion(&a.done);
	pmsi_expect_drained(test, lines, 32);
	ns = ktime_get_ns() - t0;
	for (i = 0; i < 32; i++) {
		hits += atomic_read(&lines[i].hits);
		posted += atomic_read(&lines[i].posted);
	}
	kunit_info(test, "soak: %d posts (%d to CPU0, %d to CPU1), %u offline/online cycles: %d new PIR bits, %d handler runs, %llu ms, %llu interrupts/s\n",
		   a.posts, a.to_cpu[0], a.to_cpu[1], soak_cycles, posted, hits,
		   ns / NSEC_PER_MSEC, ns ? (u64)hits * NSEC_PER_SEC / ns : 0);
	KUNIT_EXPECT_GE(test, a.posts, (int)soak_posts);
	KUNIT_EXPECT_EQ(test, hits, posted);
	/* The cycles overlapped the posts: some went to CPU0 while CPU1 was offline. */
	if (soak_cycles)
		KUNIT_EXPECT_GT(test, a.to_cpu[0], 0);
	pmsi_expect_pid_sane(test, 1);
}

#if defined(CONFIG_X86_POSTED_MSI_RUST) && defined(CONFIG_INTEL_IOMMU)
/* The Rust INTEL-IR-POST chip VT-d installs on posted MSIs. */
static void pmsi_vtd_chip(struct kunit *test)
{
	const struct irq_chip *chip = rust_intel_ir_post_msi_chip();

	KUNIT_EXPECT_STREQ(test, chip->name, "INTEL-IR-POST");
	KUNIT_EXPECT_TRUE(test, chip->flags & IRQCHIP_IMMUTABLE);
	KUNIT_EXPECT_NOT_NULL(test, chip->irq_ack);
	KUNIT_EXPECT_NOT_NULL(test, chip->irq_set_affinity);
	KUNIT_EXPECT_NOT_NULL(test, chip->irq_compose_msi_msg);
	KUNIT_EXPECT_NOT_NULL(test, chip->irq_set_vcpu_affinity);
	KUNIT_EXPECT_NULL(test, chip->irq_eoi);
	KUNIT_EXPECT_NULL(test, chip->irq_mask);
}
#endif

#ifdef CONFIG_GENERIC_IRQ_REQUEST_SEQ
/*
 * The identity the Rust balancer checks before it moves an interrupt (irq_desc::request_seq):
 * the same descriptor freed and requested again (at the same address, with the same dev_id, so
 * a pointer-based identity would repeat) gets a new, larger one at the free and at the request.
 */
static void pmsi_request_seq_never_repeats(struct kunit *test)
{
	struct pmsi_line *lines = pmsi_lines(test, 1, 0);
	struct irq_desc *desc = irq_to_desc(lines[0].virq);
	u64 first, second;

	KUNIT_ASSERT_NOT_NULL(test, desc);
	first = READ_ONCE(desc->request_seq);
	KUNIT_EXPECT_NE(test, first, 0);
	free_irq(lines[0].virq, &lines[0]);
	lines[0].requested = false;
	KUNIT_EXPECT_NE(test, READ_ONCE(desc->request_seq), first);
	KUNIT_ASSERT_EQ(test, request_irq(lines[0].virq, pmsi_handler, IRQF_NO_THREAD,
					  "posted-msi-test", &lines[0]), 0);
	lines[0].requested = true;
	second = READ_ONCE(desc->request_seq);
	KUNIT_EXPECT_GT(test, second, first);
}
#endif

static struct kunit_case pmsi_cases[] = {
#ifdef CONFIG_GENERIC_IRQ_REQUEST_SEQ
	KUNIT_CASE(pmsi_request_seq_never_repeats),
#endif
#if defined(CONFIG_X86_POSTED_MSI_RUST) && defined(CONFIG_INTEL_IOMMU)
	KUNIT_CASE(pmsi_vtd_chip),
#endif
	KUNIT_CASE_PARAM(pmsi_out_of_range_vector, pmsi_impl_gen_params),
	KUNIT_CASE_PARAM(pmsi_offline_cpu_refused, pmsi_impl_gen_params),
	KUNIT_CASE_PARAM(pmsi_every_vector_once, pmsi_impl_gen_params),
	KUNIT_CASE_PARAM(pmsi_burst_1, pmsi_impl_gen_params),
	KUNIT_CASE_PARAM(pmsi_burst_4, pmsi_impl_gen_params),
	KUNIT_CASE_PARAM(pmsi_burst_32, pmsi_impl_gen_params),
	KUNIT_CASE_PARAM(pmsi_posted_during_demux, pmsi_impl_gen_params),
	KUNIT_CASE_PARAM(pmsi_concurrent_smp, pmsi_impl_gen_params),
	KUNIT_CASE_PARAM(pmsi_threaded_no_loss, pmsi_impl_gen_params),
	KUNIT_CASE_PARAM(pmsi_suppressed, pmsi_impl_gen_params),
	KUNIT_CASE_PARAM(pmsi_affinity_move, pmsi_impl_gen_params),
	KUNIT_CASE_PARAM(pmsi_immediate_move, pmsi_impl_gen_params),
	KUNIT_CASE_PARAM(pmsi_busy_move, pmsi_impl_gen_params),
	KUNIT_CASE_PARAM(pmsi_deferred_move, pmsi_impl_gen_params),
	KUNIT_CASE_PARAM(pmsi_retrigger, pmsi_impl_gen_params),
	KUNIT_CASE_PARAM(pmsi_cpu_offline, pmsi_impl_gen_params),
	KUNIT_CASE_PARAM(pmsi_cpu_offline_suppressed, pmsi_impl_gen_params),
	KUNIT_CASE_PARAM(pmsi_cpu_offline_notification_outstanding, pmsi_impl_gen_params),
	KUNIT_CASE_PARAM(pmsi_hotplug_bad_input, pmsi_impl_gen_params),
	KUNIT_CASE_PARAM(pmsi_soak, pmsi_impl_gen_params),
	{}
};

static struct kunit_suite pmsi_suite = {
	.name		= "x86_posted_msi",
	.suite_init	= pmsi_suite_init,
	.suite_exit	= pmsi_suite_exit,
	.init		= pmsi_case_init,
	.test_cases	= pmsi_cases,
};
kunit_test_suites(&pmsi_suite);

MODULE_DESCRIPTION("KUnit tests of posted-MSI delivery with an in-kernel posting agent");
MODULE_LICENSE("GPL");
