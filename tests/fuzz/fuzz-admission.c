/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz-admission.c - libFuzzer entry point for what admission reads from
 * other processes: slot file names, slot contents, and /proc/meminfo's
 * text.  Properties: a slot name is accepted only in its one canonical
 * spelling; a slot's MiB is its leading decimal number or, for anything
 * else, UINT64_MAX (fails closed); the budget check never wraps; the
 * default budget never exceeds MemAvailable.
 */
#include "fuzz-util.h"

#include <inttypes.h>

#include "admission.h"

static uint64_t u64_at(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_strndup(data, size), canon[32], digits[32];
	const char *text = (const char *)data;
	uint64_t mib, budget;
	unsigned n;
	size_t d = 0, z = 0;

	if (sbx_admission_slot_name(s, &n)) {
		snprintf(canon, sizeof(canon), "%u.lock", n);
		fuzz_assert(n < 100000 && strcmp(canon, s) == 0);
	}

	mib = sbx_admission_slot_mib(text, size);
	while (d < size && text[d] >= '0' && text[d] <= '9')
		d++;
	if (mib != UINT64_MAX) {
		fuzz_assert(d > 0 && (d == size || text[d] == ' ' || text[d] == '\n'));
		while (z + 1 < d && text[z] == '0')
			z++;
		snprintf(digits, sizeof(digits), "%" PRIu64, mib);
		fuzz_assert(strlen(digits) == d - z && memcmp(digits, text + z, d - z) == 0);
	} else if (d > 0 && (d == size || text[d] == ' ' || text[d] == '\n')) {
		/* Well-formed: only a number of 2^64-1 or more reads as that. */
		fuzz_assert(d >= 20);
	}

	if (size >= 24) {
		uint64_t r = u64_at(data), m = u64_at(data + 8), b = u64_at(data + 16);
		fuzz_assert(sbx_admission_fits(r, m, b) == ((unsigned __int128)r + m <= b));
	}

	if (sbx_admission_budget_from_meminfo(s, &budget) == 0)
		fuzz_assert(strstr(s, "MemAvailable:") && strstr(s, "MemTotal:"));
	free(s);
	return 0;
}
