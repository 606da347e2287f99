// SPDX-License-Identifier: GPL-2.0
/*
 * insn_profile: a QEMU TCG plugin (plugin API version 1, QEMU 7.2) that
 * counts the guest instructions executed between two marker instructions,
 * per translation block: an instruction profile of one benchmark cell.
 *
 * The markers are 7-byte NOPs that nothing else uses, "nopl DISP(%rax)"
 * with DISP 0x1a0c0b01 (begin) and 0x1a0c0e01 (end), which the benchmarks
 * execute when a cell's measured time starts and ends
 * (selftests/bench_helpers.h, bench_mark()). At a begin, every counter is
 * zeroed; at an end, the counts are written to OUT.N (N = 1, 2, ... in the
 * order the cells ended): one line per instruction of each block that
 * ran, "address executions" (hex, decimal; an address may come more than
 * once, from blocks translated again).  lib/guest_profile.py insns turns
 * a file into instructions per function.
 *
 * Counting is an inline add per block execution (no call into the
 * plugin), so a run is about as fast as without it; under -icount the
 * guest's clock, which counts instructions, does not see it at all.
 * A block that faults halfway is counted whole (rare in a steady loop).
 *
 * Build: gcc -shared -fPIC -O2 -o insn_profile.so insn_profile.c
 * Use:   qemu-system-x86_64 ... -plugin ./insn_profile.so,out=/tmp/prof
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The few declarations of QEMU's plugin API (qemu-plugin.h) used here. */
typedef uint64_t qemu_plugin_id_t;
struct qemu_info_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;

#define EXPORT __attribute__((visibility("default")))
#define QEMU_PLUGIN_INLINE_ADD_U64	0	/* enum qemu_plugin_op */
#define QEMU_PLUGIN_CB_NO_REGS		0	/* enum qemu_plugin_cb_flags */

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
		void (*cb)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb));
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb,
		int op, void *ptr, uint64_t imm);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn,
		void (*cb)(unsigned int vcpu, void *udata), int flags,
		void *udata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb,
						 size_t idx);
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);

EXPORT int qemu_plugin_version = 1;

#define MARK_BEGIN	0x1a0c0b01u
#define MARK_END	0x1a0c0e01u

/* One translation of a block; a block translated again gets another. */
struct block {
	uint64_t count;		/* executions, by the inline add */
	size_t insns;
	uint64_t vaddr[];	/* of each instruction */
};

static struct block **blocks;
static size_t nblocks, cap;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static const char *out = "insn_profile";
static unsigned int seq;

static void mark(unsigned int vcpu, void *udata)
{
	bool end = (uintptr_t)udata == MARK_END;
	char path[4096];
	size_t i;
	FILE *f;

	(void)vcpu;
	pthread_mutex_lock(&lock);
	if (!end) {
		for (i = 0; i < nblocks; i++)
			blocks[i]->count = 0;
		pthread_mutex_unlock(&lock);
		return;
	}
	snprintf(path, sizeof(path), "%s.%u", out, ++seq);
	f = fopen(path, "w");
	if (f) {
		for (i = 0; i < nblocks; i++) {
			size_t k;

			if (!blocks[i]->count)
				continue;
			for (k = 0; k < blocks[i]->insns; k++)
				fprintf(f, "%" PRIx64 " %" PRIu64 "\n",
					blocks[i]->vaddr[k], blocks[i]->count);
		}
		fclose(f);
	}
	pthread_mutex_unlock(&lock);
}

static void translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t i, n = qemu_plugin_tb_n_insns(tb);
	struct block *b;

	(void)id;
	b = n ? calloc(1, sizeof(*b) + n * sizeof(b->vaddr[0])) : NULL;
	if (!b)
		return;
	b->insns = n;
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		const unsigned char *p = qemu_plugin_insn_data(insn);
		uint32_t disp;

		b->vaddr[i] = qemu_plugin_insn_vaddr(insn);
		if (qemu_plugin_insn_size(insn) != 7 || p[0] != 0x0f ||
		    p[1] != 0x1f || p[2] != 0x80)
			continue;
		memcpy(&disp, p + 3, 4);
		if (disp == MARK_BEGIN || disp == MARK_END)
			qemu_plugin_register_vcpu_insn_exec_cb(insn, mark,
					QEMU_PLUGIN_CB_NO_REGS,
					(void *)(uintptr_t)disp);
	}
	pthread_mutex_lock(&lock);
	if (nblocks == cap) {
		struct block **grown;

		cap = cap ? 2 * cap : 65536;
		grown = realloc(blocks, cap * sizeof(*blocks));
		if (!grown) {
			pthread_mutex_unlock(&lock);
			free(b);
			return;
		}
		blocks = grown;
	}
	blocks[nblocks++] = b;
	pthread_mutex_unlock(&lock);
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
						 &b->count, 1);
}

EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
			       const struct qemu_info_t *info, int argc,
			       char **argv)
{
	int i;

	(void)info;
	for (i = 0; i < argc; i++)
		if (!strncmp(argv[i], "out=", 4))
			out = argv[i] + 4;
	qemu_plugin_register_vcpu_tb_trans_cb(id, translate);
	return 0;
}
