/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz-util.h - what the parser fuzzers check besides "no crash": every
 * error is one clean line (a hostile input must not reach the caller's
 * terminal or the manifest as control characters or broken UTF-8), and a
 * failed property names itself before aborting.
 */
#ifndef SBX_FUZZ_UTIL_H
#define SBX_FUZZ_UTIL_H

#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define fuzz_assert(cond)                                                              \
	do {                                                                           \
		if (!(cond)) {                                                         \
			fprintf(stderr, "%s:%d: property failed: %s\n", __FILE__, __LINE__, \
				#cond);                                                \
			abort();                                                       \
		}                                                                      \
	} while (0)

/* A message as sbx prints it: non-empty, valid UTF-8, and no control
 * character: C0, DEL, or C1 (U+0080..U+009F, which some terminals obey). */
static inline bool fuzz_clean_line(const char *s)
{
	size_t n = strlen(s);

	if (!n || !sbx_utf8_valid(s, n))
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c < 0x20 || c == 0x7f)
			return false;
		if (c == 0xc2 && (unsigned char)s[i + 1] >= 0x80 && (unsigned char)s[i + 1] <= 0x9f)
			return false;
	}
	return true;
}

/* An error set by a failed call: @code as documented, a clean line. */
static inline void fuzz_check_error(const struct sbx_error *err, int code)
{
	if (err->code != code || !fuzz_clean_line(err->msg)) {
		fprintf(stderr, "bad error (code %d, want %d): \"%s\"\n", err->code, code, err->msg);
		abort();
	}
}

/* The input as a NUL-terminated string, for parsers that want one. */
static inline char *fuzz_strndup(const uint8_t *data, size_t size)
{
	char *s = sbx_xmalloc(size + 1);

	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

#endif
