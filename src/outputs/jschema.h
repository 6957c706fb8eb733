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
 * Bounds (documented in sbx-job(5)).  A schema deeper than MAX_DEPTH JSON
 * levels, with more than MAX_NODES values or more than MAX_PATTERNS
 * patterns (each at most SBX_REGEX_MAX_PATTERN bytes) is refused at
 * compile time.  A
 * document larger than MAX_DOC bytes, or whose jansson tree would take
 * more than MAX_TREE bytes (estimated from the text before parsing: the
 * tree of 16 MiB of empty objects takes 1.3 GB), is not parsed.  Validation stops after MAX_FAILURES failures,
 * and fails with keyword "limit" when it needs more than MAX_WORK units
 * (one per schema node applied to a value, per value compared by
 * enum/const, per 64 bytes of a string checked) or more than
 * sbx_regex_budget(document size) units of work over all its pattern
 * matches (regex.h).
 */
#define SBX_JSCHEMA_MAX_DEPTH 64
#define SBX_JSCHEMA_MAX_NODES 10000
#define SBX_JSCHEMA_MAX_PATTERNS 128
#define SBX_JSCHEMA_MAX_DOC (16u << 20)
#define SBX_JSCHEMA_MAX_TREE (128ull << 20)
#define SBX_JSCHEMA_MAX_FAILURES 100
#define SBX_JSCHEMA_MAX_WORK (32ull << 20)
/* Longest JSON Pointer in a message; a longer one ends in "...". */
#define SBX_JSCHEMA_MAX_POINTER 256

/*
 * sbx_jschema_compile() - check SCHEMA against the subset and compile it.
 * Returns 0, -EINVAL with ERR holding "<JSON Pointer in the schema>:
 * <what was expected>" (e.g. "/properties/total/minimum: expected a
 * number"; an error about the schema's root has no pointer), or
 * -ENOMEM.  Every keyword outside the subset is "<pointer>: unsupported
 * keyword".
 */
int sbx_jschema_compile(const json_t *schema, struct sbx_jschema **out,
			char *err, size_t errlen);

/*
 * Called once per failure, in document order: DOC_PATH is a JSON Pointer
 * into the document ("" for the root, "/rows/3/total"), KEYWORD the schema
 * keyword that failed ("type", "required", ...; "limit" when a work bound
 * stopped the validation), DETAIL a one-line explanation.  Neither holds a
 * control character.  Return nonzero to stop validating.
 */
typedef int (*sbx_jschema_fail_fn)(void *arg, const char *doc_path,
				   const char *keyword, const char *detail);

/*
 * sbx_jschema_validate() - validate the JSON document DOC (LEN bytes, the
 * output file's content).  Returns the number of failures reported (0:
 * valid), or -EINVAL when DOC is not JSON within the parser's bounds, or
 * -ENOMEM.  One validation at a time per compiled schema: its patterns
 * keep their match state.
 */
int sbx_jschema_validate(const struct sbx_jschema *s, const char *doc, size_t len,
			 sbx_jschema_fail_fn fail, void *arg);

void sbx_jschema_free(struct sbx_jschema *s);

#endif
