/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * regex-internal.h - the compiled pattern, shared by regex.c (compiling
 * the job's patterns, in the broker and in the validator) and
 * src/helpers/validate/regex-match.c (matching them against the payload's
 * bytes, in the validator only).  Not for other modules.
 */
#ifndef SBX_REGEX_INTERNAL_H
#define SBX_REGEX_INTERNAL_H

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stddef.h>
#include <stdint.h>

struct sbx_regex {
	pcre2_code *code;
	pcre2_match_data *md;
	pcre2_match_context *mctx;
	const char *pattern; /* a copy: the callouts read its items */
	unsigned flags;
	/* the current call: its length, the work done and allowed, and the
	 * start position and position of the last callout */
	size_t len;
	uint64_t work, limit;
	size_t start, pos;
};

#endif
