/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz-media.h - shared body of the media validator fuzzers.  The input is
 * written to a memfd (the validators read files, not buffers) and checked
 * through the confined validator's entry point, sbx_validator_check()
 * (what sbx-validate runs for each file), every type allowed.  Its verdict
 * then goes over the wire format and through the broker's parser of it,
 * which must accept what a sound validator says.  Where detection stops
 * the file before the type's validator (no magic, not text), that
 * validator runs on it directly as well, so that the fuzzer reaches it.
 */
#ifndef SBX_FUZZ_MEDIA_H
#define SBX_FUZZ_MEDIA_H

#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <jansson.h>

#include "serve.h"
#include "validate.h"
#include "verdict.h"

static struct sbx_validator *fuzz_validator(void)
{
	static const char req[] =
		"{\"sbx_validate\":1,\"outputs\":null,\"allowed\":[\"text/csv\",\"text/plain\","
		"\"application/json\",\"image/png\",\"image/jpeg\",\"application/pdf\","
		"\"image/svg+xml\",\"text/tab-separated-values\",\"application/x-ndjson\","
		"\"text/markdown\",\"text/html\",\"application/vnd.apache.parquet\","
		"\"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet\","
		"\"application/vnd.openxmlformats-officedocument.wordprocessingml.document\","
		"\"application/vnd.openxmlformats-officedocument.presentationml.presentation\",\"image/webp\","
		"\"text/x-tex\",\"application/x-npy\",\"application/zip\"]}";
	static struct sbx_validator *val;
	char why[256];

	if (!val && sbx_validator_new(req, sizeof(req) - 1, &val, why, sizeof(why)) < 0)
		abort();
	return val;
}

static int fuzz_media(const char *type, const char *name, const uint8_t *data, size_t size)
{
	static int fd = -1;
	struct sbx_media_report rep;
	struct sbx_verdict v, back;
	char why[256];
	char *wire;

	if (fd < 0) {
		fd = memfd_create("fuzz-media", MFD_CLOEXEC);
		if (fd < 0)
			abort();
	}
	if (ftruncate(fd, 0) < 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
		abort();
	sbx_validator_check(fuzz_validator(), fd, name, size, &v);
	v.index = 7;
	if (!v.ok && v.reason[0] == '\0')
		abort(); /* every rejection must say why */
	wire = sbx_verdict_format(&v);
	if (sbx_verdict_parse(wire, strlen(wire), 7, &back, why, sizeof(why)) < 0 ||
	    back.ok != v.ok || back.flags != v.flags || back.media_type != v.media_type)
		abort(); /* the broker must read what the validator meant */
	free(wire);
	if (!v.media_type || strcmp(v.media_type, type) != 0)
		if (sbx_media_validate(type, fd, size, &rep) < 0 && rep.reason[0] == '\0')
			abort();
	return 0;
}

/*
 * The entry point with the job's contracts @outputs (a JSON object the
 * broker's parser accepted): the file at @fd checked as @path, and its
 * verdict read back by the broker's parser.
 */
static void fuzz_entry_with_contracts(json_t *outputs, int fd, const char *path, size_t size)
{
	json_t *req = json_pack("{s:i,s:O,s:[s,s,s,s,s,s]}", "sbx_validate", 1, "outputs", outputs,
				"allowed", "text/csv", "text/plain", "application/json",
				"text/tab-separated-values", "text/markdown", "application/x-ndjson");
	char *text = json_dumps(req, JSON_COMPACT), *wire, why[256];
	struct sbx_validator *val = NULL;
	struct sbx_verdict v, back;

	json_decref(req);
	/* The broker accepted the contracts: so must the validator. */
	if (!text || sbx_validator_new(text, strlen(text), &val, why, sizeof(why)) < 0)
		abort();
	free(text);
	sbx_validator_check(val, fd, path, size, &v);
	wire = sbx_verdict_format(&v);
	if (sbx_verdict_parse(wire, strlen(wire), 0, &back, why, sizeof(why)) < 0 ||
	    back.has_contract != v.has_contract || back.contract.count != v.contract.count)
		abort();
	free(wire);
	sbx_validator_free(val);
}

#endif
