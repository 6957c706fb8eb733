/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * regex.h - regular expressions from a job or an output contract, matched
 * against untrusted bytes in bounded time and memory.
 *
 * PCRE2 (8-bit, UTF mode) rather than POSIX <regex.h>: glibc's matcher has
 * no step limit, so one pattern like (a+)+$ over a long line of a payload's
 * output would stall the broker.  Here every match is bounded by a step
 * limit, a backtracking-depth limit and a heap limit; hitting one is an
 * answer of its own (SBX_REGEX_LIMIT), never a hang.  No JIT: the limits
 * are simplest to reason about in the interpreter, and patterns are small.
 */
#ifndef SBX_REGEX_H
#define SBX_REGEX_H

#include <stddef.h>
#include <stdint.h>

/* Longest pattern accepted, in bytes. */
#define SBX_REGEX_MAX_PATTERN 1024

/* Match steps per call (over every start position of a search) and heap
 * bytes per match. */
#define SBX_REGEX_MATCH_LIMIT 1000000u
#define SBX_REGEX_HEAP_LIMIT_KIB 2048u

enum sbx_regex_flags {
	/* Unanchored search: the pattern may match anywhere (JSON Schema's
	 * "pattern" and a text contract's "pattern"). */
	SBX_REGEX_SEARCH = 0,
	/* The pattern must match the whole subject (a CSV cell). */
	SBX_REGEX_WHOLE = 1u << 0,
	/* $ matches only at the very end, not also before a final newline
	 * (ECMA-262's reading, which JSON Schema's "pattern" follows). */
	SBX_REGEX_DOLLAR_END = 1u << 1,
};

enum sbx_regex_result {
	SBX_REGEX_NOMATCH = 0,
	SBX_REGEX_MATCH = 1,
	SBX_REGEX_LIMIT = 2,	/* a step, depth or heap limit was hit */
};

struct sbx_regex;

/*
 * sbx_regex_compile() - compile PATTERN (UTF-8).  Returns 0, or -EINVAL
 * with a one-line reason in ERR ("missing closing parenthesis at offset
 * 3"), or -ENOMEM.
 */
int sbx_regex_compile(const char *pattern, unsigned flags, struct sbx_regex **out,
		      char *err, size_t errlen);

/*
 * sbx_regex_match() - match SUBJECT (LEN bytes, need not be
 * NUL-terminated; invalid UTF-8 never matches across the bad bytes).
 * Returns an enum sbx_regex_result, or -ENOMEM.
 */
int sbx_regex_match(struct sbx_regex *re, const char *subject, size_t len);

/*
 * sbx_regex_match_budget() - sbx_regex_match() with a step budget shared by
 * many calls (a document with many strings): the call may use at most
 * min(*BUDGET, SBX_REGEX_MATCH_LIMIT) steps, and the steps it used are
 * taken from *BUDGET.  A budget of 0 answers SBX_REGEX_LIMIT.
 */
int sbx_regex_match_budget(struct sbx_regex *re, const char *subject, size_t len,
			   uint64_t *budget);

void sbx_regex_free(struct sbx_regex *re);

#endif
