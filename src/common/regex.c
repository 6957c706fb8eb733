/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * regex.c - compiling a pattern from a job or an output contract, with
 * PCRE2's limits set.  See regex.h for why PCRE2 and why no JIT.  The
 * matching, which reads the payload's bytes and counts its work by the
 * byte, is src/helpers/validate/regex-match.c: only the confined
 * validator links it, never the broker.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "regex-internal.h"
#include "regex.h"

void sbx_regex_free(struct sbx_regex *re)
{
	if (!re)
		return;
	pcre2_match_data_free(re->md);
	pcre2_match_context_free(re->mctx);
	pcre2_code_free(re->code);
	free((char *)re->pattern);
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
	re->pattern = strdup(pattern);
	if (!re->pattern) {
		free(re);
		return -ENOMEM;
	}
	/* MATCH_INVALID_UTF: subjects are the payload's bytes; a bad sequence
	 * is a boundary no match crosses, not an error.  AUTO_CALLOUT: the
	 * matcher (regex-match.c) counts the work in the callouts. */
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
	/* A step costs at least SBX_REGEX_STEP_COST: PCRE2's own count never
	 * passes the callouts', and its depth limit bounds the frames kept
	 * for backtracking. */
	pcre2_set_match_limit(re->mctx, SBX_REGEX_MATCH_LIMIT / SBX_REGEX_STEP_COST);
	pcre2_set_depth_limit(re->mctx, 100000);
	pcre2_set_heap_limit(re->mctx, SBX_REGEX_HEAP_LIMIT_KIB);
	*out = re;
	return 0;
}
