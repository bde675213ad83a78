// SPDX-License-Identifier: GPL-2.0
/*
 * A QEMU TCG plugin for the benches (tests/bench/its.sh): the guest instructions executed by
 * all vCPUs between consecutive entries of one guest function.
 *
 *   qemu-system-aarch64 ... -plugin file=qemu-insn-window.so,pc=0xADDRESS,out=FILE
 *
 * Every time vCPU 0 or any other enters the translation block that starts at `pc` (a function's
 * address from System.map), the number of instructions all vCPUs executed since the previous
 * entry is recorded; the list goes to `out` at exit, one number a line. Unlike guest time under
 * -icount, which also advances while a vCPU waits (the clock is moved to the next timer), this
 * counts instructions only, so two kernels' loops compare to the instruction.
 *
 * Debian ships QEMU without qemu-plugin.h: the few functions of QEMU's stable plugin API
 * (include/qemu/qemu-plugin.h, unchanged since API version 2, QEMU 8.1) used here are declared
 * below.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t qemu_plugin_id_t;
typedef struct {
	const char *target_name;
	struct {
		int min, cur;
	} version;
	bool system_emulation;
} qemu_info_t;
struct qemu_plugin_tb;
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
					   void (*cb)(qemu_plugin_id_t, struct qemu_plugin_tb *));
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb,
					  void (*cb)(unsigned int, void *), int flags,
					  void *userdata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, void (*cb)(qemu_plugin_id_t, void *),
				    void *userdata);

__attribute__((visibility("default"))) int qemu_plugin_version = 2;

static uint64_t pc, total, last;
static bool started;
static uint64_t *lens;
static size_t n, cap;
static FILE *out;

/*
 * The translation block's instruction count, shifted left once, with bit 0 set if it starts at
 * `pc`. -icount runs the vCPUs one at a time (round-robin), so no counter is shared between
 * threads.
 */
static void exec(unsigned int vcpu, void *udata)
{
	uint64_t v = (uintptr_t)udata;

	total += v >> 1;
	if (!(v & 1))
		return;
	if (started) {
		if (n == cap) {
			cap = cap ? 2 * cap : 16384;
			lens = realloc(lens, cap * sizeof(*lens));
			if (!lens)
				abort();
		}
		lens[n++] = total - (v >> 1) - last;
	}
	started = true;
	last = total - (v >> 1);
}

static void trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	uint64_t v = (uint64_t)qemu_plugin_tb_n_insns(tb) << 1 | (qemu_plugin_tb_vaddr(tb) == pc);

	qemu_plugin_register_vcpu_tb_exec_cb(tb, exec, 0 /* QEMU_PLUGIN_CB_NO_REGS */,
					     (void *)(uintptr_t)v);
}

static void done(qemu_plugin_id_t id, void *udata)
{
	for (size_t i = 0; i < n; i++)
		fprintf(out, "%" PRIu64 "\n", lens[i]);
	fclose(out);
}

__attribute__((visibility("default"))) int
qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv)
{
	const char *path = NULL;

	for (int i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "pc=", 3))
			pc = strtoull(argv[i] + 3, NULL, 16);
		else if (!strncmp(argv[i], "out=", 4))
			path = argv[i] + 4;
	}
	if (!pc || !path) {
		fprintf(stderr, "qemu-insn-window: pc=ADDRESS and out=FILE are needed\n");
		return -1;
	}
	out = fopen(path, "w");
	if (!out) {
		perror(path);
		return -1;
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, trans);
	qemu_plugin_register_atexit_cb(id, done, NULL);
	return 0;
}
