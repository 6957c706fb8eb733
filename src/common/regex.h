/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * regex.h - regular expressions from a job or an output contract, matched
 * against untrusted bytes in bounded time and memory.
 *
 * PCRE2 (8-bit, UTF mode) rather than POSIX <regex.h>: glibc's matcher has
 * no step limit, so one pattern like (a+)+$ over a long line of a payload's
 * output would stall the broker.  Here every match is bounded in work, in
 * backtracking depth and in heap; running out is an answer of its own
 * (SBX_REGEX_LIMIT), never a hang.  No JIT: the limits are simplest to
 * reason about in the interpreter, and patterns are small.
 *
 * Work is counted in units of about a byte scanned (regex.c says how):
 * every step PCRE2 tries costs SBX_REGEX_STEP_COST, and the bytes it may
 * scan are added, because one step can scan a whole run of characters
 * (\w+ over 64 KiB is one step).
 */
#ifndef SBX_REGEX_H
#define SBX_REGEX_H

#include <stddef.h>
#include <stdint.h>

/* Longest pattern accepted, in bytes. */
#define SBX_REGEX_MAX_PATTERN 1024

/* Units of work one step costs, and a match may do (over every start
 * position of a search); heap bytes per match. */
#define SBX_REGEX_STEP_COST 16u
#define SBX_REGEX_MATCH_LIMIT (1u << 24)
#define SBX_REGEX_HEAP_LIMIT_KIB 2048u

/* Units all the matches over one document of @bytes bytes (an output, a
 * JSON document) may do together: a constant, plus an allowance for each
 * byte, so that matching stays linear in the document's size however
 * many cells or lines share the budget. */
#define SBX_REGEX_BUDGET_BASE (1ull << 24)
#define SBX_REGEX_BUDGET_PER_BYTE 64u
static inline uint64_t sbx_regex_budget(uint64_t bytes)
{
	return SBX_REGEX_BUDGET_BASE + SBX_REGEX_BUDGET_PER_BYTE * bytes;
}

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
	SBX_REGEX_LIMIT = 2,	/* the work, depth or heap limit was reached */
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
 * sbx_regex_match_budget() - sbx_regex_match() with a budget of work shared
 * by many calls (the cells of a column, the lines of a text, the strings
 * of a document): the call may use at most min(*BUDGET,
 * SBX_REGEX_MATCH_LIMIT) units, and the units it used are taken from
 * *BUDGET.  A budget of 0 answers SBX_REGEX_LIMIT.
 */
int sbx_regex_match_budget(struct sbx_regex *re, const char *subject, size_t len,
			   uint64_t *budget);

void sbx_regex_free(struct sbx_regex *re);

#endif
