/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nproc.h - the caller's RLIMIT_NPROC: the one process limit a run shares
 * with whoever started it (nproc.c).
 */
#ifndef SBX_NPROC_H
#define SBX_NPROC_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "error.h"

/*
 * sbx_nproc_count() - the number of tasks (threads included, as the kernel
 * counts them for RLIMIT_NPROC) whose real uid is @uid, as this process
 * sees them in /proc.  Tasks that come and go meanwhile may be missed or
 * counted.  Returns 0, or -1 with errno set when /proc cannot be read.
 */
int sbx_nproc_count(uid_t uid, uint64_t *count);

/*
 * sbx_nproc_exhausted() - could the caller's RLIMIT_NPROC have refused a
 * fork of a sandbox whose process count peaked at @peak?  True when
 * @others (the caller's tasks outside the sandbox), @peak and the refused
 * fork itself reach @budget, within @slack for tasks that came and went.
 */
static inline bool sbx_nproc_exhausted(uint64_t others, uint64_t peak, rlim_t budget,
				       uint64_t slack)
{
	return budget != RLIM_INFINITY && others + peak + 1 + slack > (uint64_t)budget;
}

#endif
