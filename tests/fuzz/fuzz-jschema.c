/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz-jschema.c - libFuzzer target for the JSON Schema subset.  The input
 * is a schema and a document separated by the first NUL byte.  Properties:
 * a refused schema has a clean one-line reason; a document is refused
 * (-EINVAL) exactly when jansson refuses it; otherwise the count returned
 * is the number of callbacks, at most SBX_JSCHEMA_MAX_FAILURES, each with a
 * known keyword and clean text; the schema `true` accepts every document.
 */
#include "fuzz-util.h"
#include "fuzz-media.h"

#include <errno.h>
#include <jansson.h>

#include "contract.h"
#include "jschema.h"

static const char *const keywords[] = {
	"false",   "type",	"const",	    "enum",	    "minimum",
	"maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength",
	"pattern", "minItems",	"maxItems",	    "required",	    "additionalProperties",
	"limit",
};

static int seen;

static int on_fail(void *arg, const char *doc_path, const char *keyword, const char *detail)
{
	bool known = false;

	(void)arg;
	seen++;
	for (size_t i = 0; i < sizeof(keywords) / sizeof(keywords[0]); i++)
		known |= strcmp(keyword, keywords[i]) == 0;
	fuzz_assert(known);
	fuzz_assert(!doc_path[0] || fuzz_clean_line(doc_path));
	fuzz_assert(!doc_path[0] || doc_path[0] == '/');
	fuzz_assert(strlen(doc_path) <= SBX_JSCHEMA_MAX_POINTER + 8);
	fuzz_assert(fuzz_clean_line(detail));
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, 0, size);
	size_t slen = nul ? (size_t)(nul - data) : size;
	const char *doc = nul ? (const char *)nul + 1 : "";
	size_t dlen = nul ? size - slen - 1 : 0;
	json_error_t jerr;
	json_t *schema = json_loadb((const char *)data, slen, JSON_DECODE_ANY, &jerr), *d;
	struct sbx_jschema *s = NULL, *any = NULL;
	char err[512];
	int r;

	if (!schema)
		return 0;
	r = sbx_jschema_compile(schema, &s, err, sizeof(err));
	if (r < 0) {
		json_decref(schema);
		fuzz_assert(r == -EINVAL && !s && fuzz_clean_line(err));
		return 0;
	}
	fuzz_assert(r == 0 && s);
	/* What sbx-validate does with the same schema as a job's contract
	 * on doc.json, through its entry point and back over the wire. */
	{
		json_t *outputs = json_pack("{s:{s:O}}", "doc.json", "schema", schema);
		struct sbx_contracts cs = { 0 };
		struct sbx_error e = { 0 };
		int fd = memfd_create("fuzz-jschema", MFD_CLOEXEC);

		fuzz_assert(fd >= 0 && write(fd, doc, dlen) == (ssize_t)dlen);
		if (sbx_contracts_parse(outputs, "fuzz.json", &cs, &e) == 0)
			fuzz_entry_with_contracts(outputs, fd, "doc.json", dlen);
		sbx_contracts_free(&cs);
		json_decref(outputs);
		close(fd);
	}
	json_decref(schema);

	d = json_loadb(doc, dlen, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &jerr);
	seen = 0;
	r = sbx_jschema_validate(s, doc, dlen, on_fail, NULL);
	if (!d) {
		fuzz_assert(r == -EINVAL && seen == 0);
	} else {
		fuzz_assert(r >= 0 && r == seen && r <= SBX_JSCHEMA_MAX_FAILURES);
		schema = json_true();
		fuzz_assert(sbx_jschema_compile(schema, &any, err, sizeof(err)) == 0);
		fuzz_assert(sbx_jschema_validate(any, doc, dlen, on_fail, NULL) == 0);
		sbx_jschema_free(any);
		json_decref(d);
	}
	sbx_jschema_free(s);
	return 0;
}
