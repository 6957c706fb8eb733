/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fetch-run.h - a job's remote inputs ("fetch"), materialized into
 * /work/in before the payload starts: from the cache where a pinned
 * digest is there, else by sbx-fetch, the confined fetcher
 * (src/helpers/fetch), exec'd into the run's cgroup on the run's wall
 * clock and cancellation, as sbx-extract is.
 *
 * The broker parses nothing a server sent: it reads the fetcher's status
 * lines, each checked against a fixed shape (name, HTTP status, size,
 * digest, final URL) and the job's own entries, and hashes each file the
 * fetcher wrote itself; a report that does not match the file is an
 * internal error (70), a pin that does not match the bytes a refusal (77,
 * fetch_sha256_mismatch).
 */
#ifndef SBX_FETCH_RUN_H
#define SBX_FETCH_RUN_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "catalog.h"
#include "error.h"
#include "job.h"

struct sbx_cgroup;
struct sbx_extract_ctl;

struct sbx_fetch_ctl {
	struct sbx_cgroup *cg;   /* the helper is moved in before it runs */
	int cancel_fd;           /* a signalfd: readable means cancel; -1: none */
	uint64_t deadline_ns;    /* CLOCK_MONOTONIC; 0: none */
	uint64_t wall_seconds;   /* named in the timeout message */
	uint64_t memory_mib;     /* the helper's address space cap */
	bool own_id;             /* as struct sbx_extract_ctl (store.h) */
	const char *state_dir;   /* the cache lives below it */
	uint64_t cache_bytes;    /* fetch_cache_bytes; 0: no cache */
	/* How a fetched archive (its "as" in the job's "extract") is
	 * extracted: sbx-extract under the same cgroup, clock and
	 * cancellation (store.h). */
	const struct sbx_extract_ctl *extract;
};

/*
 * sbx_fetch_materialize() - fetch @job's entries under @fp into @in_dirfd,
 * at most @room bytes together (what input_bytes_max leaves), and append
 * each one's record to @records (the manifest's "inputs").  The caller's
 * fsuid is the id /work/in is written as (run.c); the cache is used with
 * sbx's own.  *@used gets the bytes written.
 * Return: 0, or -1 with @err set and *@code the run's reason_code when a
 * fetch was refused (77) or failed (1); SBX_EXIT_TIMEOUT and
 * SBX_EXIT_CANCELLED as for archives (store.h); 70 otherwise.
 */
int sbx_fetch_materialize(const struct sbx_fetchprofile *fp, const struct sbx_job *job,
			  int in_dirfd, uint64_t room, const struct sbx_fetch_ctl *ctl,
			  json_t *records, const char **code, uint64_t *used, struct sbx_error *err);

#endif
