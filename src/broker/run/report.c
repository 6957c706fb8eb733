/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * report.c - see report.h.  Every line is one fprintf on stderr, and the
 * status line is erased first, so that a line never lands in the middle
 * of it.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "report.h"
#include "run.h"

char *sbx_report_escape(const char *s)
{
	size_t n = strlen(s);
	char *out = sbx_xmalloc(4 * n + 1), *o = out;

	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p >= 0x20 && *p < 0x7f) {
			*o++ = (char)*p;
		} else {
			o += sprintf(o, "\\x%02x", *p);
		}
	}
	*o = '\0';
	return out;
}

static bool verbose(const struct sbx_run *run)
{
	return run->opts->common.verbosity > 0;
}

/* A person is watching: a terminal on stderr, an attached run (whose
 * manifest is not on stdout), or -v; never with -q. */
static bool watched(const struct sbx_run *run)
{
	int v = run->opts->common.verbosity;

	return v > 0 || (v == 0 && (isatty(STDERR_FILENO) || run->deliver.attached));
}

void sbx_report_started(struct sbx_run *run)
{
	sbx_status_line_set_run(&run->status_line, run->run_id,
				run->plan.limits.v[SBX_LIMIT_WALL_SECONDS],
				run->plan.limits.v[SBX_LIMIT_MEMORY_MIB]);
	if (verbose(run))
		fprintf(stderr, "sbx: run %s started\n", run->run_id);
}

void sbx_report_event(struct sbx_run *run, const char *event, const char *detail, uint64_t t_ms)
{
	if (!verbose(run))
		return;
	sbx_status_line_clear(&run->status_line);
	if (detail) {
		_cleanup_free_ char *d = sbx_report_escape(detail);
		fprintf(stderr, "sbx: %s (%s) at %llu ms\n", event, d, (unsigned long long)t_ms);
	} else {
		fprintf(stderr, "sbx: %s at %llu ms\n", event, (unsigned long long)t_ms);
	}
}

void sbx_report_end(struct sbx_run *run)
{
	size_t promoted = 0, rejected = 0, discarded = 0;
	uint64_t ms = run->ended_at_ms > run->started_at_ms ? run->ended_at_ms - run->started_at_ms : 0;
	_cleanup_free_ char *status = NULL, *where = NULL;

	if (!watched(run))
		return;
	/* An attached run's manifest is not on stdout: say where it is. */
	if (run->deliver.attached && run->deliver.shown) {
		_cleanup_free_ char *m = sbx_report_escape(run->deliver.shown);
		where = sbx_xasprintf("; manifest in %s", m);
	} else {
		where = sbx_xstrdup("");
	}
	sbx_status_line_clear(&run->status_line);
	for (size_t i = 0; run->collected && i < run->coll.n; i++) {
		const struct sbx_artifact *a = &run->coll.items[i];

		if (a->status == SBX_ARTIFACT_PROMOTED) {
			promoted++;
		} else if (a->status == SBX_ARTIFACT_DISCARDED) {
			discarded++;
		} else {
			_cleanup_free_ char *p = sbx_report_escape(a->path);
			_cleanup_free_ char *r = sbx_report_escape(a->reason ? a->reason : "rejected");

			rejected++;
			fprintf(stderr, "sbx: artifact %s rejected: %s\n", p, r);
		}
	}
	/* The reason says why a run did not succeed; success needs none. */
	if (run->status == SBX_STATUS_SUCCEEDED || !run->reason[0]) {
		status = sbx_xstrdup(sbx_status_name(run->status));
	} else {
		_cleanup_free_ char *r = sbx_report_escape(run->reason);
		status = sbx_xasprintf("%s (%s)", sbx_status_name(run->status), r);
	}
	if (promoted + rejected + discarded == 0) {
		fprintf(stderr, "sbx: %s in %llu.%02llus: no artifacts%s\n", status,
			(unsigned long long)(ms / 1000), (unsigned long long)(ms % 1000 / 10), where);
	} else {
		_cleanup_free_ char *dir = sbx_report_escape(run->artifacts.shown);
		_cleanup_free_ char *extra = discarded ? sbx_xasprintf(", %zu discarded", discarded) :
							 sbx_xstrdup("");
		size_t dl = strlen(dir);

		fprintf(stderr, "sbx: %s in %llu.%02llus: %zu artifact%s promoted, %zu rejected%s%s%s%s%s\n",
			status, (unsigned long long)(ms / 1000), (unsigned long long)(ms % 1000 / 10),
			promoted, promoted == 1 ? "" : "s", rejected, extra, promoted ? ", in " : "",
			promoted ? dir : "", promoted && dl && dir[dl - 1] != '/' ? "/" : "", where);
	}
}
