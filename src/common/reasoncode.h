/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * reasoncode.h - the reason codes of refused and discarded artifacts: a
 * stable name beside each artifact's prose reason, so that a program reads
 * what to do from a word it can switch on (sbx(1), THE MANIFEST; the enum
 * of "reason_code" in schema/manifest.schema.json).
 *
 * Both sides of the validator's channel use this table: the collector and
 * the promotion in the broker give their own refusals a code, the confined
 * validator sends one with each refusal (verdict.h), and the broker keeps
 * only a code that is in the table (sbx_reason_code_static()), so nothing
 * the validator writes reaches the manifest but one of these names.
 *
 * A new refusal takes an existing code where one fits; a new code is added
 * here, to the schema's enum, to sbx(1) and to docs/outputs.md together
 * (tests/schemas.py compares the table with the schema).
 */
#ifndef SBX_REASONCODE_H
#define SBX_REASONCODE_H

/* Detection and the validators (src/helpers/validate). */
#define SBX_RC_UNKNOWN_TYPE "unknown_type"           /* content is no type sbx knows */
#define SBX_RC_UNKNOWN_EXTENSION "unknown_extension" /* the name's extension names none */
#define SBX_RC_TYPE_MISMATCH "type_mismatch"         /* content and extension disagree */
#define SBX_RC_NOT_ALLOWED_TYPE "not_allowed_type"   /* type not in allowed_outputs */
#define SBX_RC_INVALID_CONTENT "invalid_content"     /* the type's validator refused it */
#define SBX_RC_ACTIVE_CONTENT "active_content"       /* scripts, handlers, fetches */
#define SBX_RC_POLYGLOT "polyglot"                   /* another format a reader would open */
#define SBX_RC_TOO_LARGE "too_large"                 /* over a size or pixel bound */
#define SBX_RC_CODE_AS_DATA "code_as_data"           /* a pickle: runs code when loaded */
#define SBX_RC_NESTED_ARCHIVE "nested_archive"       /* an archive inside an application/zip */
#define SBX_RC_CONTRACT_FAILED "contract_failed"     /* the job's output contract */
/* The collector and promotion (src/outputs, the broker). */
#define SBX_RC_SYMLINK "symlink"
#define SBX_RC_HARD_LINK "hard_link"
#define SBX_RC_SPECIAL_FILE "special_file"           /* fifo, socket, device */
#define SBX_RC_BAD_NAME "bad_name"                   /* control bytes, not UTF-8, too long */
#define SBX_RC_RESERVED_NAME "reserved_name"         /* .sbx, sbx's own */
#define SBX_RC_TOO_DEEP "too_deep"                   /* directory nesting */
#define SBX_RC_OVER_COUNT "over_count"               /* output_files, or the walk's cap */
#define SBX_RC_CHANGED "changed"                     /* changed or vanished while collected */
#define SBX_RC_NOT_VALIDATED "not_validated"         /* the validator gave no usable answer */
#define SBX_RC_IO_ERROR "io_error"                   /* sbx could not read, hold or deliver it */
/* A discarded artifact: valid, but its run did not complete. */
#define SBX_RC_RUN_INCOMPLETE "run_incomplete"

/*
 * A run's reason_code when a remote input ("fetch") ended it before the
 * payload started (sbx-job(5), REMOTE INPUTS).  Not artifact codes: a
 * table of their own (sbx_fetch_reason_codes), which the confined fetcher
 * sends on its status line and the broker takes nothing but.
 */
#define SBX_RC_FETCH_HOST_NOT_ALLOWED "fetch_host_not_allowed" /* host:port not listed */
#define SBX_RC_FETCH_SCHEME_REFUSED "fetch_scheme_refused"     /* http where only https */
#define SBX_RC_FETCH_ADDRESS_REFUSED "fetch_address_refused"   /* private, loopback, ... */
#define SBX_RC_FETCH_REDIRECT_REFUSED "fetch_redirect_refused" /* a hop refused, or too many */
#define SBX_RC_FETCH_TOO_LARGE "fetch_too_large"               /* max_bytes, max_file_bytes */
#define SBX_RC_FETCH_TIMEOUT "fetch_timeout"                   /* timeout_seconds */
#define SBX_RC_FETCH_ENCODING_REFUSED "fetch_encoding_refused" /* Content-Encoding */
#define SBX_RC_FETCH_MEDIA_TYPE "fetch_media_type"             /* not the job's media_type */
#define SBX_RC_FETCH_SHA256_MISMATCH "fetch_sha256_mismatch"   /* not the pinned digest */
#define SBX_RC_FETCH_HTTP_STATUS "fetch_http_status"           /* not 2xx */
#define SBX_RC_FETCH_FAILED "fetch_failed"                     /* DNS, TLS, connection */

struct sbx_reason_code {
	const char *name;
	const char *meaning; /* one line, as sbx(1) says it */
};

/* The table, ended by a { NULL, NULL } entry. */
extern const struct sbx_reason_code sbx_reason_codes[];

/* The table's own string for @name, or NULL when @name is not a code. */
const char *sbx_reason_code_static(const char *name);

/* The fetch codes, likewise ended by { NULL, NULL }, and their lookup. */
extern const struct sbx_reason_code sbx_fetch_reason_codes[];
const char *sbx_fetch_reason_code_static(const char *name);

#endif
