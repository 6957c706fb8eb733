/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * report.h - what `sbx run` tells a person on stderr, beside the manifest
 * on stdout: with -v the run id and one line per stage as it happens; on a
 * terminal, in an attached run (deliver.h) or with -v, each rejected
 * artifact and a one-line summary at the end, which in an attached run
 * also says where the manifest went.  -q silences all of it.  Names that come from the payload are
 * escaped (\xNN) so that they cannot drive the terminal.
 */
#ifndef SBX_REPORT_H
#define SBX_REPORT_H

#include <stddef.h>
#include <stdint.h>

struct sbx_run;

/* The run has its state entry (it is listed by `sbx ps` from now on):
 * "sbx: run <id> started" under -v; the status line learns the id and
 * the limits. */
void sbx_report_started(struct sbx_run *run);

/* One lifecycle event, at @t_ms since the start: "sbx: <event> at N ms"
 * (with its detail in parentheses) under -v. */
void sbx_report_event(struct sbx_run *run, const char *event, const char *detail, uint64_t t_ms);

/* After the manifest: the rejected artifacts and the summary line. */
void sbx_report_end(struct sbx_run *run);

/*
 * sbx_report_escape() - @s for a terminal: printable ASCII as is, every
 * other byte as "\xNN".  A backslash stays one: artifact paths come
 * already escaped that way for display (collect.h), and are shown as the
 * manifest shows them.  Caller frees.
 */
char *sbx_report_escape(const char *s);

#endif
