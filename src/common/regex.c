/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * regex.c - PCRE2 with its limits set, for patterns matched against
 * untrusted bytes.  See regex.h for why PCRE2 and why no JIT.
 *
 * PCRE2's own match limit counts the steps tried from one start position
 * and starts from zero at the next one, so an unanchored search over a
 * subject of many blocks that each cost just under it took seconds per
 * kilobyte.  Every pattern is therefore compiled with automatic callouts
 * (one before each item the matcher tries, backtracking included), and the
 * callout counts them against a limit for the whole call; the match limit
 * stays as a second fence.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <errno.h>
#include <pcre2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "regex.h"

struct sbx_regex {
	pcre2_code *code;
	pcre2_match_data *md;
	pcre2_match_context *mctx;
	unsigned flags;
	/* the current call's callout count and its limit */
	uint64_t steps, limit;
};

void sbx_regex_free(struct sbx_regex *re)
{
	if (!re)
		return;
	pcre2_match_data_free(re->md);
	pcre2_match_context_free(re->mctx);
	pcre2_code_free(re->code);
	free(re);
}

int sbx_regex_compile(const char *pattern, unsigned flags, struct sbx_regex **out,
		      char *err, size_t errlen)
{
	size_t len = strlen(pattern);
	int code;
	PCRE2_SIZE off;
	struct sbx_regex *re;

	*out = NULL;
	if (len > SBX_REGEX_MAX_PATTERN) {
		snprintf(err, errlen, "longer than %d bytes", SBX_REGEX_MAX_PATTERN);
		return -EINVAL;
	}
	re = calloc(1, sizeof(*re));
	if (!re)
		return -ENOMEM;
	re->flags = flags;
	/* MATCH_INVALID_UTF: subjects are the payload's bytes; a bad sequence
	 * is a boundary no match crosses, not an error. */
	re->code = pcre2_compile((PCRE2_SPTR)pattern, len,
				 PCRE2_AUTO_CALLOUT | PCRE2_UTF | PCRE2_MATCH_INVALID_UTF |
				 PCRE2_NEVER_BACKSLASH_C |
				 ((flags & SBX_REGEX_WHOLE) ? PCRE2_ANCHORED | PCRE2_ENDANCHORED : 0) |
				 ((flags & SBX_REGEX_DOLLAR_END) ? PCRE2_DOLLAR_ENDONLY : 0),
				 &code, &off, NULL);
	if (!re->code) {
		PCRE2_UCHAR msg[160];

		if (pcre2_get_error_message(code, msg, sizeof(msg)) < 0)
			snprintf((char *)msg, sizeof(msg), "error %d", code);
		snprintf(err, errlen, "%s at offset %zu", (char *)msg, (size_t)off);
		sbx_regex_free(re);
		return -EINVAL;
	}
	re->md = pcre2_match_data_create(1, NULL);
	re->mctx = pcre2_match_context_create(NULL);
	if (!re->md || !re->mctx) {
		sbx_regex_free(re);
		return -ENOMEM;
	}
	pcre2_set_match_limit(re->mctx, SBX_REGEX_MATCH_LIMIT);
	pcre2_set_depth_limit(re->mctx, SBX_REGEX_MATCH_LIMIT / 10);
	pcre2_set_heap_limit(re->mctx, SBX_REGEX_HEAP_LIMIT_KIB);
	*out = re;
	return 0;
}

static int count_step(pcre2_callout_block *block, void *arg)
{
	struct sbx_regex *re = arg;

	(void)block;
	/* A negative value abandons the match with that error. */
	return ++re->steps > re->limit ? PCRE2_ERROR_MATCHLIMIT : 0;
}

static int match_limited(struct sbx_regex *re, const char *subject, size_t len, uint64_t limit)
{
	int rc;

	re->steps = 0;
	re->limit = limit;
	pcre2_set_callout(re->mctx, count_step, re);
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
	/* steps may pass the limit by the one callout that stopped the match */
	*budget -= re->steps < limit ? re->steps : limit;
	return rc;
}
