/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * json-reference.h - the JSON verdict sbx gave before its validator
 * streamed, kept as the reference that the streaming checker
 * (src/outputs/media-json.c) must agree with: shared by the unit test
 * (tests/unit/test-validate.c) and the differential fuzzer (fuzz-json.c).
 */
#ifndef SBX_TESTS_JSON_REFERENCE_H
#define SBX_TESTS_JSON_REFERENCE_H

#include <jansson.h>
#include <stdbool.h>

#include "validate.h"

/*
 * The verdict the validator gave before it streamed: UTF-8 without NUL,
 * nesting at most 64, then jansson with JSON_DECODE_ANY |
 * JSON_REJECT_DUPLICATES.  The streaming checker must agree on every input.
 */
static inline bool jansson_accepts(const unsigned char *p, size_t n)
{
	struct sbx_media_utf8 u = { 0 };
	unsigned depth = 0, max = 0;
	bool in_str = false, esc = false;
	json_error_t e;
	json_t *v;

	for (size_t i = 0; i < n; i++) {
		if (p[i] == 0 || !sbx_media_utf8_feed(&u, p[i]))
			return false;
		if (in_str) {
			if (esc)
				esc = false;
			else if (p[i] == '\\')
				esc = true;
			else if (p[i] == '"')
				in_str = false;
		} else if (p[i] == '"') {
			in_str = true;
		} else if (p[i] == '[' || p[i] == '{') {
			if (++depth > max)
				max = depth;
		} else if ((p[i] == ']' || p[i] == '}') && depth > 0) {
			depth--;
		}
	}
	if (!sbx_media_utf8_end(&u) || max > SBX_MEDIA_JSON_MAX_DEPTH)
		return false;
	v = json_loadb((const char *)p, n, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &e);
	json_decref(v);
	return v != NULL;
}

#endif
