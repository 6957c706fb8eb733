/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hostconfig.h - the host configuration (SPEC §9): one JSON object, every
 * key optional, unknown keys and bad values are errors (69).
 */
#ifndef SBX_HOSTCONFIG_H
#define SBX_HOSTCONFIG_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"

/* root_ids: the host ids of root's runs (rootids.c). */
/*
 * The default range: 2130706432 (0x7F000000) and the 4095 ids after it,
 * one per possible admission slot.  It lies where no allocator hands out
 * ids by default: above systemd's container ranges (524288-1879048191) and
 * shadow's subordinate ids for /etc/subuid (100000-600100000), in the
 * block systemd documents as unused below its "foreign" range
 * (0x7FFE0000) and below 2^31 (ids at or above it confuse programs that
 * treat uid_t as signed).
 */
#define SBX_ROOT_IDS_FIRST_DEFAULT 2130706432u
#define SBX_ROOT_IDS_COUNT_DEFAULT 4096u
/* Bounds for the host config: clear of 0, 65534 (nobody) and 65535
 * ((uid_t)-1 of 16-bit programs), and below 2^31. */
#define SBX_ROOT_IDS_COUNT_MAX 4096u
#define SBX_ROOT_IDS_END_MAX 2147483648u

struct sbx_hostconfig {
	char *file;          /* NULL when no file was read */
	const char *origin;  /* how file was chosen: "--config", "$SBX_CONFIG",
			      * "the user's file", "the system file"; "none" (static) */
	char *store;
	char *policy;
	char *signing_key;
	char *state_dir;
	char *prepared_dir;  /* profiles' prepared trees (prepare.h); NULL: default */
	char *cgroup_parent;
	uint64_t max_concurrent;    /* 0 = not set */
	uint64_t memory_budget_mib; /* 0 = not set */
	/* Host uids/gids for root's runs (rootids.h): first + admission
	 * slot.  Always set: the defaults when the file has no root_ids. */
	uint32_t root_ids_first;
	uint32_t root_ids_count;
	/* Held outputs (src/broker/hold.c): where, NULL for the default, and
	 * how long sbx gc keeps them.  hold_max_age_hours is always set. */
	char *hold_dir;
	uint64_t hold_max_age_hours;
	/* Results of runs without --artifacts (src/broker/run/results.h): the
	 * area, NULL for the default, and what sbx gc keeps of it.  Both
	 * limits are always set. */
	char *results_dir;
	uint64_t results_max_age_hours;
	uint64_t results_max_count;
	/* The cache of pinned remote inputs, <state_dir>/fetch-cache
	 * (src/broker/fetch-cache.c): its most bytes; always set, 0 keeps
	 * nothing. */
	uint64_t fetch_cache_bytes;
	/* Profiles' templates (sbx(1) TEMPLATES), always set: whether runs
	 * may use them, and when a template exits (idle, after so many
	 * runs, after so long), and how long one may take to import before
	 * its start is given up (not in the digest: it changes nothing in
	 * the template). */
	bool templates;
	uint64_t template_idle_seconds;
	uint64_t template_max_runs;
	uint64_t template_max_seconds;
	uint64_t template_start_seconds;
};

#define SBX_FETCH_CACHE_BYTES_DEFAULT (UINT64_C(1) << 30)

#define SBX_TEMPLATE_IDLE_SECONDS_DEFAULT 300u
#define SBX_TEMPLATE_IDLE_SECONDS_MAX 86400u
#define SBX_TEMPLATE_MAX_RUNS_DEFAULT 1000u
#define SBX_TEMPLATE_MAX_RUNS_MAX 1000000u
#define SBX_TEMPLATE_MAX_SECONDS_DEFAULT 3600u
#define SBX_TEMPLATE_MAX_SECONDS_MAX 604800u
#define SBX_TEMPLATE_START_SECONDS_DEFAULT 60u
#define SBX_TEMPLATE_START_SECONDS_MAX 3600u

/* sbx gc keeps a run's results 30 days, and the newest 1000 at most. */
#define SBX_RESULTS_MAX_AGE_HOURS_DEFAULT 720u
#define SBX_RESULTS_MAX_COUNT_DEFAULT 1000u
#define SBX_RESULTS_MAX_COUNT_MAX 1000000u

/* sbx gc removes holds older than this unless hold_max_age_hours says. */
#define SBX_HOLD_MAX_AGE_HOURS_DEFAULT 168u
/* Ten years: a bound against nonsense, not a policy. */
#define SBX_HOLD_MAX_AGE_HOURS_MAX 87600u

/*
 * sbx_hostconfig_load() - read @path (--config); when @path is NULL,
 * $SBX_CONFIG, else the user's file (sbx_hostconfig_user_file()) if
 * present, else SYSCONFDIR/sbx/sbx.json if present, else an empty config.
 * The first found is the whole configuration: files are not merged.  An
 * explicitly named file that is missing is an error.  Errors are
 * SBX_EXIT_UNAVAILABLE.  Also tells error.h which file hints should name.
 */
int sbx_hostconfig_load(struct sbx_hostconfig *cfg, const char *path, struct sbx_error *err);
/* The user's config file, newly allocated; NULL for root or no home. */
char *sbx_hostconfig_user_file(void);
int sbx_hostconfig_parse(struct sbx_hostconfig *cfg, const char *source, const char *data,
			 size_t len, struct sbx_error *err);
void sbx_hostconfig_free(struct sbx_hostconfig *cfg);

#endif
