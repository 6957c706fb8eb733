/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * events.h - lifecycle events as JSON Lines (`sbx run --events FILE|-`).
 *
 * Each line is one object {"run_id":...,"t_ms":...,"event":...,...extra},
 * written with a single write(2) on a file opened O_APPEND, so lines from
 * several sbx processes sharing one file never interleave.  t_ms counts
 * milliseconds on the monotonic clock since sbx_events_open().
 */
#ifndef SBX_EVENTS_H
#define SBX_EVENTS_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "error.h"

struct sbx_events;

/*
 * sbx_events_open() - start the run's clock and open the sink.
 * @spec: NULL (events disabled; the clock still runs), "-" (stderr), or a
 * file path, opened O_WRONLY|O_CREAT|O_APPEND|O_CLOEXEC, mode 0644.
 * @run_id: copied.  Call it as early as the run starts: t_ms counts from here.
 * Errors: SBX_EXIT_USAGE (64) when the file cannot be opened (it is the
 * caller's option that is at fault).
 */
int sbx_events_open(const char *spec, const char *run_id, struct sbx_events **ev,
		    struct sbx_error *err);

/* True when events go somewhere: callers may skip building extras. */
bool sbx_events_enabled(const struct sbx_events *ev);

/*
 * sbx_events_emit() - write one event line.  @extra (stolen, may be NULL)
 * is an object whose members follow the fixed ones; members named run_id,
 * t_ms or event are dropped.  Disabled or NULL @ev: @extra is released and
 * nothing else happens.  A failed write is reported once on stderr and
 * otherwise ignored: events are a record, not a reason to fail a run.
 */
void sbx_events_emit(struct sbx_events *ev, const char *event, json_t *extra);

/* Milliseconds since sbx_events_open(); 0 for NULL. */
uint64_t sbx_events_t_ms(const struct sbx_events *ev);

/* Close the sink (not stderr) and free.  NULL is a no-op. */
void sbx_events_close(struct sbx_events *ev);

#endif
