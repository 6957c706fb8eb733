/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * contract-text.c - the text checks of an output contract: `lines` and a
 * `pattern` that must match somewhere.
 *
 * Lines are counted as a reader counts them: every LF ends one, and text
 * after the last LF is one more.  The pattern is searched line by line
 * (PCRE2 through regex.h: bounded in steps and memory), in the first
 * SBX_CONTRACT_MAX_LINE bytes of each line, so a 10 MB line costs one
 * bounded match, not a copy of the line.  A match that hits a limit does
 * not count as a match, and all the matches of one file share a budget
 * of work in proportion to its size (sbx_regex_budget()), so a million
 * lines cannot each take a match's full limit.
 */
#include "config.h"

#include <string.h>

#include "contract-check.h"
#include "regex.h"
#include "util.h"
#include "validate.h"

int sbx_contract_check_text(const struct sbx_contract *k, int fd, uint64_t size,
			    struct sbx_contract_result *res)
{
	_cleanup_free_ struct sbx_media_reader *r = sbx_media_reader_new(fd, size);
	_cleanup_free_ char *line = k->pattern ? sbx_xmalloc(SBX_CONTRACT_MAX_LINE) : NULL;
	size_t len = 0;
	uint64_t lines = 0;
	uint64_t budget = sbx_regex_budget(size);
	bool open = false, matched = false, limited = false;
	int ret = 0;

	for (;;) {
		const unsigned char *p;
		ssize_t n = sbx_media_reader_chunk(r, &p, SIZE_MAX);
		size_t i = 0;

		if (n < 0) {
			sbx_contract_fail(res, 0, "read", "read error");
			ret = -1;
			break;
		}
		if (n == 0)
			break;
		while (i < (size_t)n) {
			const unsigned char *nl = memchr(p + i, '\n', (size_t)n - i);
			size_t j = nl ? (size_t)(nl - p) : (size_t)n;

			open = true;
			if (line && !matched) {
				size_t take = j - i;

				if (take > SBX_CONTRACT_MAX_LINE - len)
					take = SBX_CONTRACT_MAX_LINE - len;
				memcpy(line + len, p + i, take);
				len += take;
			}
			i = j;
			if (!nl)
				break;
			i++;
			lines++;
			open = false;
			if (line && !matched) {
				int m = sbx_regex_match_budget(k->pattern, line, len, &budget);

				matched = m == SBX_REGEX_MATCH;
				limited |= m == SBX_REGEX_LIMIT;
			}
			len = 0;
		}
	}
	if (open) {
		lines++;
		if (line && !matched) {
			int m = sbx_regex_match_budget(k->pattern, line, len, &budget);

			matched = m == SBX_REGEX_MATCH;
			limited |= m == SBX_REGEX_LIMIT;
		}
	}
	if (ret < 0)
		return ret;
	if (k->lines.has_min && lines < k->lines.min)
		sbx_contract_fail(res, 0, "lines", "%llu lines, expected at least %llu",
				  (unsigned long long)lines, (unsigned long long)k->lines.min);
	if (k->lines.has_max && lines > k->lines.max)
		sbx_contract_fail(res, 0, "lines", "%llu lines, expected at most %llu",
				  (unsigned long long)lines, (unsigned long long)k->lines.max);
	if (k->pattern && !matched)
		sbx_contract_fail(res, 0, "pattern", "no line matches%s",
				  limited ? " (matching stopped at the pattern's work limit)" : "");
	return 0;
}
