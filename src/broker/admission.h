/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * admission.h - reserve a run slot and the job's memory against a host
 * budget shared by every sbx process using the same state directory.
 *
 * Mechanism (docs/state.md): <state>/slots/<n>.lock for n < max_concurrent;
 * a reservation is a slot file held with flock(LOCK_EX) whose content is
 * the reserved MiB.  The kernel drops the flock when the holder exits, so a
 * reservation dies with its process, however it dies.  Reservers take
 * <state>/admission.lock to count held slots and sum their memory, so two
 * of them never both take the last capacity.  A slot whose lock can be
 * taken is free and its recorded number is ignored.
 */
#ifndef SBX_ADMISSION_H
#define SBX_ADMISSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

#define SBX_ADMISSION_SLOTS_MAX 4096

struct sbx_admission_limits {
	uint64_t max_concurrent;    /* runs at once, >= 1 */
	uint64_t memory_budget_mib; /* sum of reserved memory limits */
};

/*
 * sbx_admission_limits_default() - fill @lim from the host configuration's
 * values, 0 meaning "not set": max_concurrent defaults to the number of
 * online CPUs (at least 2); memory_budget_mib to MemAvailable minus a
 * reserve of max(512 MiB, 10% of MemTotal) kept for the host itself (0
 * when nothing is left, which refuses every job).  max_concurrent is
 * capped at SBX_ADMISSION_SLOTS_MAX.
 * Errors: SBX_EXIT_SOFTWARE (70) when /proc/meminfo cannot be read.
 */
int sbx_admission_limits_default(struct sbx_admission_limits *lim, uint64_t cfg_max_concurrent,
				 uint64_t cfg_memory_budget_mib, struct sbx_error *err);

/*
 * sbx_admission_budget_from_meminfo() - the default budget from the text
 * of /proc/meminfo (exposed for tests).  -1 when MemTotal or MemAvailable
 * is missing.
 */
int sbx_admission_budget_from_meminfo(const char *text, uint64_t *budget_mib);

/*
 * The pieces of the census, exposed for tests and fuzzers:
 * sbx_admission_slot_name() - @name is a slot file "<n>.lock" (decimal, no
 *   leading zero, n < 100000); sets *@n.
 * sbx_admission_slot_mib() - the MiB a held slot's @len bytes of content
 *   reserve ("<mib> <run_id>\n"); anything else, an empty file or a number
 *   past 2^64-1 reads as UINT64_MAX, so a slot that cannot be read
 *   reserves the whole budget (admission fails closed).
 * sbx_admission_fits() - @mib more fits @budget_mib on top of
 *   @reserved_mib, without wrapping.
 */
bool sbx_admission_slot_name(const char *name, unsigned *n);
uint64_t sbx_admission_slot_mib(const char *text, size_t len);
bool sbx_admission_fits(uint64_t reserved_mib, uint64_t mib, uint64_t budget_mib);

struct sbx_admission;

/*
 * sbx_admission_reserve() - take a slot and @memory_mib of the budget.
 * When there is no capacity and @queue_timeout_ms is 0, fail at once; else
 * call @on_queued(@userdata) once (the caller emits the `queued` event) and
 * wait, woken by inotify when a slot file is closed, until capacity frees
 * up or the deadline passes.  A job asking more than the whole budget
 * fails at once.  @run_id is recorded in the slot for diagnostics.
 * On success *@res holds the reservation until sbx_admission_release() or
 * process exit; its fd is close-on-exec, so payloads never inherit it.
 * Errors: SBX_EXIT_CAPACITY (75) "admission: no capacity: N of M runs
 * active, X of Y MiB reserved"; SBX_EXIT_SOFTWARE (70) for I/O failures.
 */
int sbx_admission_reserve(const char *state_dir, const struct sbx_admission_limits *lim,
			  uint64_t memory_mib, uint64_t queue_timeout_ms, const char *run_id,
			  void (*on_queued)(void *), void *userdata, struct sbx_admission **res,
			  struct sbx_error *err);

/*
 * sbx_admission_reserve_cancellable() - sbx_admission_reserve(), but a
 * wait in the queue also ends when @cancel_fd becomes readable (the
 * caller's signalfd for SIGINT/SIGTERM/SIGHUP; -1: none).  Nothing is
 * read from @cancel_fd.
 * Errors: as sbx_admission_reserve(), and SBX_EXIT_CANCELLED (130)
 * "admission: cancelled while queued".
 */
int sbx_admission_reserve_cancellable(const char *state_dir,
				      const struct sbx_admission_limits *lim, uint64_t memory_mib,
				      uint64_t queue_timeout_ms, const char *run_id, int cancel_fd,
				      void (*on_queued)(void *), void *userdata,
				      struct sbx_admission **res, struct sbx_error *err);

/* The held slot's number, < max_concurrent: no two live reservations of
 * one state directory have the same (root's per-run host id is drawn
 * from it, rootids.h). */
unsigned sbx_admission_slot(const struct sbx_admission *res);

/* Give the slot back.  NULL is a no-op. */
void sbx_admission_release(struct sbx_admission *res);

#endif
