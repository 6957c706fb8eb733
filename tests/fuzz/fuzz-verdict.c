/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz-verdict.c - libFuzzer entry point for the broker's parser of the
 * confined validator's answers (src/outputs/verdict.c), which reads what
 * a compromised validator may have written.  An answer is either refused
 * with one clean line, or accepted with every value within its bounds:
 * a type sbx knows, clean text, a failure list that agrees with its
 * count.  An accepted answer, written again, reads back the same.
 */
#include "fuzz-util.h"

#include "mediatype.h"
#include "reasoncode.h"
#include "verdict.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sbx_verdict v, back;
	char why[256];
	char *again;

	if (sbx_verdict_parse((const char *)data, size, 3, &v, why, sizeof(why)) < 0) {
		fuzz_assert(fuzz_clean_line(why));
		return 0;
	}
	fuzz_assert(v.index == 3);
	fuzz_assert(!v.media_type || sbx_media_type_static(v.media_type) == v.media_type);
	fuzz_assert(v.ok ? v.media_type != NULL : fuzz_clean_line(v.reason));
	/* A refusal's code is the table's own string; a valid file has none. */
	fuzz_assert(v.ok ? v.reason_code == NULL :
			   sbx_reason_code_static(v.reason_code) == v.reason_code);
	fuzz_assert(v.flags < (1u << SBX_MEDIA_FLAG_COUNT));
	if (v.has_contract) {
		fuzz_assert(v.contract.n <= SBX_CONTRACT_MAX_FAILURES && v.contract.n <= v.contract.count);
		fuzz_assert(v.contract.ok == (v.contract.count == 0));
		for (size_t i = 0; i < v.contract.n; i++)
			fuzz_assert(fuzz_clean_line(v.contract.fail[i].check));
	}
	again = sbx_verdict_format(&v);
	fuzz_assert(sbx_verdict_parse(again, strlen(again), 3, &back, why, sizeof(why)) == 0);
	fuzz_assert(back.ok == v.ok && back.flags == v.flags && back.media_type == v.media_type &&
		    back.width == v.width && back.height == v.height &&
		    back.has_contract == v.has_contract && !strcmp(back.reason, v.reason) &&
		    back.reason_code == v.reason_code);
	free(again);
	return 0;
}
