/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ps.h - `sbx ps`: the live runs of a state directory (state.h), as a
 * table or as JSON.  Reading an entry trusts nothing in it: the caller may
 * be root reading a directory another user can write, so every file is
 * opened without following links or blocking, must be a regular file of
 * the directory's owner, and every string shown on a terminal is cleaned
 * of control characters.
 */
#ifndef SBX_PS_H
#define SBX_PS_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"
#include "runid.h"

struct sbx_ps_entry {
	char run_id[SBX_RUN_ID_LEN + 1];
	uid_t uid;
	char *user;          /* login name of uid, or NULL (shown as the number) */
	char *principal;     /* NULL when not recorded */
	char *profile;       /* NULL when not recorded */
	const char *state;   /* a static word: queued, materializing, running,
			      * terminating, collecting, cleaning, starting,
			      * unknown, stale */
	pid_t pid;           /* the run's sbx */
	uint64_t started_ms; /* wall clock, ms since the epoch; 0: unknown */
	bool has_memory;
	uint64_t memory_bytes; /* current usage of the run's memory cgroup */
};

struct sbx_ps_list {
	struct sbx_ps_entry *v;
	size_t n;
};

/*
 * sbx_ps_entry_parse() - one entry from the bytes of its state.json and
 * of its lock file.  @live: whether the lock is held (an sbx runs it);
 * when not, the state is "stale" whatever the lock file says.  The
 * record must name @run_id and @owner.  Returns 0, or -1 with @err set
 * (70) when the record is malformed or names another run or user.
 */
int sbx_ps_entry_parse(const char *run_id, uid_t owner, const char *state_json, size_t n,
		       const char *lock_word, size_t lock_n, bool live, struct sbx_ps_entry *e,
		       struct sbx_error *err);

/*
 * sbx_ps_scan() - add every run entry of the state directory at @state_fd
 * to @l, with the memory usage of its cgroup where readable.  Entries that
 * are not sbx's (names that are no run id), not @owner's or malformed are
 * skipped.  Errors: 70 when runs/ exists but cannot be read.
 */
int sbx_ps_scan(int state_fd, uid_t owner, struct sbx_ps_list *l, struct sbx_error *err);

/* Order by run id, which is by start time. */
void sbx_ps_sort(struct sbx_ps_list *l);
void sbx_ps_list_free(struct sbx_ps_list *l);

/*
 * sbx_ps_json() - the list as a JSON array, one object per run:
 * run_id, uid, user, principal, profile, state, pid, started_at (RFC 3339),
 * elapsed_ms (at @now_ms), memory_bytes (null when unreadable).
 */
json_t *sbx_ps_json(const struct sbx_ps_list *l, uint64_t now_ms);

/*
 * sbx_ps_table() - the list as aligned columns under a header line:
 * RUN ID, USER, PRINCIPAL, PROFILE, STATE, ELAPSED, MEMORY.  Every line
 * ends with "\n"; no trailing blanks.  Caller frees; NULL when out of memory.
 */
char *sbx_ps_table(const struct sbx_ps_list *l, uint64_t now_ms);

/* "0.4s", "12.0s", "4m05s", "2h03m", "3d04h". */
void sbx_ps_format_elapsed(uint64_t ms, char out[16]);

#endif
