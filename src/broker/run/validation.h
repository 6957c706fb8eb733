/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * validation.h - the broker's side of validation: the collection's
 * candidates handed one by one to the confined validator, sbx-validate,
 * and its verdicts taken (src/outputs/verdict.h is the wire format).
 */
#ifndef SBX_VALIDATION_H
#define SBX_VALIDATION_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "collect.h"
#include "contract.h"
#include "error.h"

struct sbx_cgroup;

struct sbx_validation_ctl {
	struct sbx_cgroup *cg;       /* the run's: the validator is moved in */
	int cancel_fd;               /* a signalfd: readable means cancel; -1: none */
	uint64_t deadline_ns;        /* CLOCK_MONOTONIC: the run's wall clock plus
				      * validate_seconds */
	uint64_t allowance_s;        /* wall_seconds + validate_seconds, for messages */
	uint64_t memory_mib;         /* its RLIMIT_AS */
	uid_t uid;                   /* (uid_t)-1: the broker's own ids */
	gid_t gid;
	char *const *allowed;        /* the job's effective allowed types */
	char *const *refuse_active;  /* the profile's refuse_active_content */
	const json_t *outputs;       /* the job's "outputs" (contracts), or NULL */
	const struct sbx_contracts *contracts; /* the broker's parse of it */
	uint64_t output_files;       /* what is left of the run's output_files and */
	uint64_t output_bytes;       /* output_bytes: a ZIP's members count in them */
};

struct sbx_validation_stats {
	uint64_t ms;                 /* wall time from start to the validator's end */
	size_t files;                /* candidates handed over */
	bool cancelled;              /* the caller cancelled while it ran */
	bool timed_out;              /* the deadline came first */
};

/*
 * sbx_validation_run() - validate every pending candidate of @c.  No
 * validator is started when nothing is pending.  A validator that dies,
 * runs out of time, is cancelled or answers badly is killed, and every
 * candidate without a verdict is rejected with the reason.
 * Return: 0, or -1 with @err set: SBX_EXIT_UNAVAILABLE when the validator
 * could not confine itself (with a Hint), SBX_EXIT_SOFTWARE when it could
 * not be started or a quarantined copy not opened.
 */
int sbx_validation_run(struct sbx_collection *c, const struct sbx_validation_ctl *ctl,
		       struct sbx_validation_stats *st, struct sbx_error *err);

#endif
