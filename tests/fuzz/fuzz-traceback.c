/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz-traceback.c - libFuzzer entry point for the reading of a Python
 * traceback at the end of the payload's stderr (src/broker/run/
 * traceback.c), which runs in the broker on bytes the payload wrote.  What
 * is found is within its fields' bounds, a type is a dotted name, and only
 * the tail is read: the same bytes behind a longer head give the same
 * answer.
 */
#include "fuzz-util.h"

#include "traceback.h"

static bool same(const struct sbx_traceback *a, const struct sbx_traceback *b)
{
	return !strcmp(a->type, b->type) && !strcmp(a->message, b->message) &&
	       !strcmp(a->file, b->file) && a->line == b->line;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sbx_traceback tb, again;
	bool found = sbx_traceback_find((const char *)data, size, &tb);

	if (found) {
		size_t n = strnlen(tb.type, sizeof(tb.type));

		fuzz_assert(n > 0 && n < sizeof(tb.type) && tb.type[n - 1] != '.');
		for (size_t i = 0; i < n; i++) {
			char c = tb.type[i];

			fuzz_assert((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' ||
				    (i > 0 && ((c >= '0' && c <= '9') || c == '.')));
		}
		fuzz_assert(strnlen(tb.message, sizeof(tb.message)) < sizeof(tb.message));
		fuzz_assert(strnlen(tb.file, sizeof(tb.file)) < sizeof(tb.file));
		fuzz_assert(tb.line <= 999999999);
	}
	/* Longer than the tail: one byte less at the head changes nothing. */
	if (size > SBX_TRACEBACK_TAIL) {
		bool f2 = sbx_traceback_find((const char *)data + 1, size - 1, &again);

		fuzz_assert(f2 == found && (!found || same(&tb, &again)));
	}
	return 0;
}
