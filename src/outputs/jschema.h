/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * jschema.h - a documented subset of JSON Schema 2020-12, for the
 * `schema` check of an output contract on application/json outputs.
 *
 * The schema comes from the job (trusted to be well-formed only after
 * sbx_jschema_compile() said so); the document is the payload's output
 * (untrusted).  Compilation refuses every keyword outside the subset rather
 * than ignoring it, so a caller never believes a check ran that did not.
 * Validation runs in bounded memory and time.  See sbx-job(5).
 */
#ifndef SBX_JSCHEMA_H
#define SBX_JSCHEMA_H

#include <stddef.h>
#include <jansson.h>

struct sbx_jschema;

/*
 * sbx_jschema_compile() - check SCHEMA against the subset and compile it.
 * Returns 0, -EINVAL with ERR holding "<JSON Pointer in the schema>:
 * <what was expected>" (e.g. "/properties/total/minimum: expected a
 * number"), or -ENOMEM.
 */
int sbx_jschema_compile(const json_t *schema, struct sbx_jschema **out,
			char *err, size_t errlen);

/*
 * Called once per failure, in document order: DOC_PATH is a JSON Pointer
 * into the document ("" for the root, "/rows/3/total"), KEYWORD the schema
 * keyword that failed ("type", "required", ...), DETAIL a one-line
 * explanation.  Return nonzero to stop validating.
 */
typedef int (*sbx_jschema_fail_fn)(void *arg, const char *doc_path,
				   const char *keyword, const char *detail);

/*
 * sbx_jschema_validate() - validate the JSON document DOC (LEN bytes, the
 * output file's content).  Returns the number of failures reported (0:
 * valid), or -EINVAL when DOC is not JSON within the parser's bounds, or
 * -ENOMEM.
 */
int sbx_jschema_validate(const struct sbx_jschema *s, const char *doc, size_t len,
			 sbx_jschema_fail_fn fail, void *arg);

void sbx_jschema_free(struct sbx_jschema *s);

#endif
