/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * regex-match.c - matching a compiled pattern (src/common/regex.c)
 * against the payload's bytes, in bounded work: only the confined
 * validator links it.  See regex.h for why PCRE2 and why no JIT.
 *
 * PCRE2's own match limit is no bound on time: it counts steps from one
 * start position and starts from zero at the next, and one step may scan
 * a whole run of characters, so \w+$ over a line of 64 KiB letters and a
 * '!' does 2 billion byte comparisons in 130,000 steps.  Every pattern is
 * therefore compiled with automatic callouts (one before each item the
 * matcher tries, backtracking included), and the callout charges the call
 * for what the matcher did since the last one:
 *
 *  - SBX_REGEX_STEP_COST for the step;
 *  - the bytes the position advanced since the previous callout of this
 *    start position (a repeat, a lookahead, a backreference that matched:
 *    the scan ends where the next item begins);
 *  - what the next item may scan and then fail without another callout:
 *    a counted repeat ({n}, {n,m}: fewer than n characters, at most 4n
 *    bytes) and a backreference (up to the end of the subject).  Those are
 *    known from the item's text in the pattern.
 *
 * Moving back (backtracking, a lookbehind) costs nothing of itself; what
 * is scanned forward again is charged again.  PCRE2's match, depth and
 * heap limits stay as further fences.  Measured, a unit is about 1 ns of
 * CPU (1.6 at most among the patterns tried: exponential backtracking,
 * caseless backreferences, \p{L}{3,}).  The first match of a pattern
 * that backtracks deeply also pays for growing PCRE2's frames up to the
 * heap limit, once (up to about 50 ms).  The callouts
 * cost about 10 ns each: a cell of ^region-[0-9]+$ (11 of them) takes
 * 170 ns instead of 50, one of x 47 instead of 36.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "regex-internal.h"
#include "regex.h"

/*
 * The bytes the item at @item (@n bytes of the pattern) may scan before it
 * fails without a callout, at most @rest (the rest of the subject).
 */
static uint64_t silent_scan(const char *item, size_t n, size_t rest)
{
	const char *q;
	uint64_t min = 0;

	/* The end of a group, with its quantifier (")" "{3}"), scans
	 * nothing: the group's items have callouts of their own. */
	if (n < 2 || item[0] == ')')
		return 0;
	/* A backreference: \1..\9, \g, \k, (?P=name).  It compares as far
	 * as its group matched, which can be the rest of the subject. */
	if ((item[0] == '\\' && ((item[1] >= '1' && item[1] <= '9') || item[1] == 'g' ||
				  item[1] == 'k')) ||
	    (n >= 4 && memcmp(item, "(?P=", 4) == 0))
		return rest;
	/* A counted repeat ends in {n}, {n,} or {n,m}, maybe + or ? (the
	 * last brace: \p{L}{3}): it scans fewer than n characters before it
	 * fails, 4 bytes each at most (UTF-8); a grapheme cluster (\X) has
	 * no such bound. */
	q = memrchr(item, '{', n);
	if (!q)
		return 0;
	for (q++; q < item + n && *q >= '0' && *q <= '9' && min < SBX_REGEX_MATCH_LIMIT; q++)
		min = min * 10 + (uint64_t)(*q - '0');
	if (memmem(item, n, "\\X", 2))
		return rest;
	return 4 * min < rest ? 4 * min : rest;
}

static int charge(pcre2_callout_block *b, void *arg)
{
	struct sbx_regex *re = arg;
	size_t pos = b->current_position;

	if (b->start_match != re->start) {
		/* A new start position: what the last one scanned was
		 * charged at its callouts. */
		re->start = b->start_match;
		re->pos = b->start_match;
	}
	re->work += SBX_REGEX_STEP_COST;
	if (pos > re->pos)
		re->work += pos - re->pos;
	re->pos = pos;
	if (b->next_item_length > 1)
		re->work += silent_scan(re->pattern + b->pattern_position, b->next_item_length,
					re->len - pos);
	/* A negative value abandons the match with that error. */
	return re->work > re->limit ? PCRE2_ERROR_MATCHLIMIT : 0;
}

static int match_limited(struct sbx_regex *re, const char *subject, size_t len, uint64_t limit)
{
	int rc;

	re->len = len;
	re->work = SBX_REGEX_STEP_COST; /* the call itself */
	re->limit = limit;
	re->start = SIZE_MAX;
	pcre2_set_callout(re->mctx, charge, re);
	if (re->work > limit)
		return SBX_REGEX_LIMIT;
	rc = pcre2_match(re->code, (PCRE2_SPTR)subject, len, 0, 0, re->md, re->mctx);

	if (rc >= 0)
		return SBX_REGEX_MATCH;
	switch (rc) {
	case PCRE2_ERROR_NOMATCH:
		return SBX_REGEX_NOMATCH;
	case PCRE2_ERROR_NOMEMORY:
		return -ENOMEM;
	case PCRE2_ERROR_MATCHLIMIT:
	case PCRE2_ERROR_DEPTHLIMIT:
	case PCRE2_ERROR_HEAPLIMIT:
	default:
		/* Any other failure is treated as a limit: an answer that
		 * does not claim a match. */
		return SBX_REGEX_LIMIT;
	}
}

int sbx_regex_match(struct sbx_regex *re, const char *subject, size_t len)
{
	return match_limited(re, subject, len, SBX_REGEX_MATCH_LIMIT);
}

int sbx_regex_match_budget(struct sbx_regex *re, const char *subject, size_t len,
			   uint64_t *budget)
{
	uint64_t limit = *budget < SBX_REGEX_MATCH_LIMIT ? *budget : SBX_REGEX_MATCH_LIMIT;
	int rc;

	if (limit == 0)
		return SBX_REGEX_LIMIT;
	rc = match_limited(re, subject, len, limit);
	/* the work may pass the limit by the callout that stopped it */
	*budget -= re->work < limit ? re->work : limit;
	return rc;
}
