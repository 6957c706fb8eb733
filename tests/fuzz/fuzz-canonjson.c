/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz-canonjson.c - libFuzzer entry point for canonical JSON (RFC 8785)
 * and the manifest's string cleaners.  Properties: canonical output parses
 * back to an equal value and canonicalizing it again changes nothing;
 * cleaned strings are clean, within their bound, and cleaning is
 * idempotent.
 */
#include "fuzz-util.h"

#include <jansson.h>

#include "canonjson.h"

static void check_clean(const uint8_t *data, size_t size)
{
	size_t max = size ? data[0] * 2u : 0;
	bool truncated = false, again_truncated = true;
	char *c = sbx_canonjson_clean_string((const char *)data, size, max, &truncated);
	size_t n = strlen(c);
	char *c2;

	fuzz_assert(n <= max);
	/* The documented promise: valid UTF-8 without C0 controls or DEL
	 * (C1 characters are printed literally by JCS and jq alike). */
	fuzz_assert(sbx_utf8_valid(c, n) && !sbx_has_control(c, n));
	/* Whole input kept: only replacements may differ. */
	if (!truncated && size && sbx_utf8_valid((const char *)data, size) &&
	    !sbx_has_control((const char *)data, size))
		fuzz_assert(n == size && memcmp(c, data, size) == 0);
	c2 = sbx_canonjson_clean_string(c, n, max, &again_truncated);
	fuzz_assert(!again_truncated && strcmp(c, c2) == 0);
	free(c2);
	free(c);
}

/* The excerpts' cleaner: valid UTF-8 without NUL or DEL, within bound,
 * idempotent; C0 controls other than NUL are kept. */
static void check_clean_text(const uint8_t *data, size_t size)
{
	size_t max = size ? data[0] * 2u : 0;
	bool truncated = false, again_truncated = true;
	char *c = sbx_canonjson_clean_text((const char *)data, size, max, &truncated);
	size_t n = strlen(c);
	char *c2;

	fuzz_assert(n <= max);
	fuzz_assert(sbx_utf8_valid(c, n) && !memchr(c, 0x7f, n));
	if (!truncated && size && sbx_utf8_valid((const char *)data, size) &&
	    !memchr(data, 0, size) && !memchr(data, 0x7f, size))
		fuzz_assert(n == size && memcmp(c, data, size) == 0);
	c2 = sbx_canonjson_clean_text(c, n, max, &again_truncated);
	fuzz_assert(!again_truncated && strcmp(c, c2) == 0);
	free(c2);
	free(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const size_t flags = JSON_DECODE_ANY | JSON_ALLOW_NUL;
	struct sbx_error err = { 0 };
	json_t *v = json_loadb((const char *)data, size, flags, NULL);
	char *out = NULL, *out2 = NULL;
	size_t len = 0, len2 = 0;

	check_clean(data, size);
	check_clean_text(data, size);
	if (!v)
		return 0;
	if (sbx_canonjson_dump(v, &out, &len, &err) < 0) {
		fuzz_check_error(&err, SBX_EXIT_SOFTWARE);
	} else {
		json_t *back = json_loadb(out, len, flags, NULL);

		fuzz_assert(strlen(out) == len || memchr(out, '\0', len));
		fuzz_assert(back && json_equal(v, back));
		fuzz_assert(sbx_canonjson_dump(back, &out2, &len2, &err) == 0);
		fuzz_assert(len2 == len && memcmp(out, out2, len) == 0);
		/* No whitespace outside strings: the output is compact, so
		 * a newline can only come from an escape, never raw. */
		fuzz_assert(!memchr(out, '\n', len));
		json_decref(back);
	}
	free(out);
	free(out2);
	json_decref(v);
	return 0;
}
