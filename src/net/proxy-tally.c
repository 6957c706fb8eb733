/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * proxy-tally.c - refusals counted per reason, for events that stay few
 * however fast a payload gets itself refused (see proxy.h).
 */
#include "config.h"

#include <string.h>

#include "proxy.h"

#define OTHER "other reasons"

static struct sbx_tally_entry *entry(struct sbx_tally *t, const char *reason)
{
	struct sbx_tally_entry *e;

	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(t->e[i].reason, reason))
			return &t->e[i];
	/* The last slot is kept for what the table cannot tell apart. */
	if (t->n == SBX_TALLY_REASONS - 1) {
		reason = OTHER;
		for (size_t i = 0; i < t->n; i++)
			if (!strcmp(t->e[i].reason, reason))
				return &t->e[i];
	}
	if (t->n == SBX_TALLY_REASONS)
		return &t->e[t->n - 1];
	e = &t->e[t->n++];
	memset(e, 0, sizeof(*e));
	e->reason = sbx_xstrdup(reason);
	return e;
}

bool sbx_tally_add(struct sbx_tally *t, const char *reason, uint64_t now_ms)
{
	struct sbx_tally_entry *e = entry(t, reason);

	e->total++;
	/* A window that ended with nothing held is as good as closed (the
	 * flush that would close it may not have run yet). */
	if (!e->open || (now_ms >= e->window_end_ms && !e->held)) {
		e->open = true;
		e->window_end_ms = now_ms + t->window_ms;
		return true;
	}
	if (!e->held++)
		e->first_ms = now_ms;
	e->last_ms = now_ms;
	return false;
}

void sbx_tally_flush(struct sbx_tally *t, uint64_t now_ms, bool all,
		     void (*fn)(void *ud, const char *reason, uint64_t count, uint64_t first_ms,
				uint64_t last_ms),
		     void *ud)
{
	for (size_t i = 0; i < t->n; i++) {
		struct sbx_tally_entry *e = &t->e[i];

		if (!e->open || (!all && now_ms < e->window_end_ms))
			continue;
		if (e->held) {
			fn(ud, e->reason, e->held, e->first_ms, e->last_ms);
			e->held = 0;
			/* Still refusing: the report opened the next window. */
			e->window_end_ms = now_ms + t->window_ms;
		} else {
			e->open = false;
		}
		if (all)
			e->open = false;
	}
}

json_t *sbx_tally_json(const struct sbx_tally *t)
{
	json_t *o = json_object();

	for (size_t i = 0; i < t->n; i++)
		json_object_set_new(o, t->e[i].reason, json_integer((json_int_t)t->e[i].total));
	return o;
}

void sbx_tally_free(struct sbx_tally *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->e[i].reason);
	t->n = 0;
}
