/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz-json.c - differential libFuzzer target for the streaming JSON
 * checker: its verdict must be the one of parsing with jansson
 * (JSON_DECODE_ANY | JSON_REJECT_DUPLICATES) after the UTF-8, NUL and
 * depth checks, on every input.  A disagreement aborts.
 */
#include "fuzz-media.h"

#include <jansson.h>
#include <stdbool.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool reference(const uint8_t *p, size_t n)
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	struct sbx_media_report rep;
	int ours;

	if (fd < 0) {
		fd = memfd_create("fuzz-json", MFD_CLOEXEC);
		if (fd < 0)
			abort();
	}
	if (ftruncate(fd, 0) < 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
		abort();
	ours = sbx_media_validate("application/json", fd, size, &rep);
	if (ours < 0 && rep.reason[0] == '\0')
		abort();
	if ((ours == 0) != reference(data, size))
		abort();
	return 0;
}
