/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz-contract.c - libFuzzer entry point for output contracts: the input
 * is a contract (JSON, the value of one job's outputs) and, after the
 * first NUL byte, a file to check against it.  The parser either accepts
 * or fails with one clean line (65); an accepted contract's checks run on
 * the file as CSV, TSV or text (whatever its type is) without crashing,
 * with a bounded list of clean failures, which the broker reads back
 * from the validator's wire format.
 */
#include "fuzz-util.h"
#include "fuzz-media.h"

#include <sys/mman.h>
#include <unistd.h>

#include "contract-check.h"
#include "mediatype.h"
#include "verdict.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, 0, size);
	size_t jlen = nul ? (size_t)(nul - data) : size;
	struct sbx_contracts cs = { 0 };
	struct sbx_error err = { 0 };
	json_t *v = json_loadb((const char *)data, jlen, JSON_REJECT_DUPLICATES, NULL);
	int r;

	if (!v)
		return 0;
	r = sbx_contracts_parse(v, "fuzz.json", &cs, &err);
	if (r < 0) {
		fuzz_check_error(&err, SBX_EXIT_INVALID);
	} else if (nul) {
		const char *body = (const char *)nul + 1;
		size_t blen = size - jlen - 1;
		int fd = memfd_create("fuzz-contract", MFD_CLOEXEC);

		fuzz_assert(fd >= 0);
		fuzz_assert(write(fd, body, blen) == (ssize_t)blen);
		for (size_t i = 0; i < cs.n; i++) {
			struct sbx_contract_result res;

			/* The checks assume what the validator established;
			 * they must still hold on any bytes. */
			sbx_contract_check(&cs.v[i], fd, blen, cs.v[i].media_type, blen, blen, &res);
			fuzz_assert(res.n <= SBX_CONTRACT_MAX_FAILURES && res.n <= res.count);
			fuzz_assert(res.ok == (res.count == 0));
			for (size_t k = 0; k < res.n; k++)
				fuzz_assert(fuzz_clean_line(res.fail[k].check) &&
					    (!res.fail[k].detail[0] || fuzz_clean_line(res.fail[k].detail)));
			/* What the validator sends, the broker must read. */
			{
				struct sbx_verdict vd = { .ok = true, .has_contract = true,
							  .media_type = sbx_media_type_static(
								  cs.v[i].media_type),
							  .contract = res };
				struct sbx_verdict back;
				char why[256], *wire = sbx_verdict_format(&vd);

				fuzz_assert(sbx_verdict_parse(wire, strlen(wire), 0, &back, why,
							      sizeof(why)) == 0 &&
					    back.contract.count == res.count);
				free(wire);
			}
		}
		/* What sbx-validate does with the same contracts and file. */
		for (size_t i = 0; i < cs.n && i < 4; i++)
			fuzz_entry_with_contracts(v, fd, cs.v[i].path, blen);
		close(fd);
	}
	json_decref(v);
	sbx_contracts_free(&cs);
	return 0;
}
