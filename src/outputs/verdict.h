/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * verdict.h - the wire format between the broker and the confined
 * validator, sbx-validate (src/helpers/validate).
 *
 * The validator parses the payload's output bytes, so it is treated as
 * compromised the moment it has read one: what it answers is untrusted
 * input to the broker, which holds the signing key.  The format is
 * therefore small, strict, bounded and versioned, and the broker's parser
 * (sbx_verdict_parse) is fuzzed (tests/fuzz/fuzz-verdict.c).
 *
 * Channels (the broker sets them up, docs/design.md):
 *   fd 0  the request: one JSON object, at most SBX_VERDICT_MAX_REQUEST
 *         bytes, in a memfd:
 *           {"sbx_validate": 1, "allowed": ["text/csv", ...],
 *            "outputs": <the job's "outputs" object, or null>}
 *   fd 3  a SOCK_SEQPACKET socket.  For each candidate the broker sends
 *         one message {"i": N, "path": "dir/name.csv", "size": BYTES}
 *         carrying the quarantined copy's fd (SCM_RIGHTS), a few ahead of
 *         the answers; the validator answers each, in order, with one
 *         message of at most SBX_VERDICT_MAX_ANSWER bytes:
 *           {"v": 1, "i": N, "ok": true|false,
 *            "media_type": "text/csv" | null,
 *            "reason": "...", "code": "..."   (only when ok is false;
 *                                              code: a name of reasoncode.h)
 *            "flags": ["active_content", ...], "formula_cells": false,
 *            "width": 0, "height": 0,
 *            "contract": {"ok": bool, "count": N,   (only when a contract
 *                         "failures": [{"check": "...", "detail": "...",
 *                                       "row": N}, ...]},   was checked)
 *            "members": [{"path": "...", "size": N, "sha256": "hex",
 *                         "media_type": "text/csv" | null, "ok": bool,
 *                         "reason": "...", "code": "...",  (when not ok)
 *                         "flags": [...], "formula_cells": bool}, ...]}
 *                        (application/zip only: its members as checked,
 *                         at most SBX_VERDICT_MAX_MEMBERS, up to and
 *                         including the first one refused)
 *         The broker ends the exchange by shutting down its side; the
 *         validator then exits 0.
 *   fd 2  diagnostics, read by the broker with a bound.
 *
 * Anything else (an unknown key, a type, flag or count that cannot be, a
 * message too long, an answer to another question) is a bad answer: the
 * artifact is rejected and the validator killed.
 */
#ifndef SBX_VERDICT_H
#define SBX_VERDICT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "contract.h"

#define SBX_VERDICT_VERSION 1
/* The request (the job's outputs object is bounded by the job file's
 * size, SBX_JOB_MAX_BYTES, well below this). */
#define SBX_VERDICT_MAX_REQUEST (8u << 20)
/* One item message, broker -> validator. */
#define SBX_VERDICT_MAX_ITEM 8192
/* One answer, validator -> broker: 20 contract failures of 160 + 256
 * bytes, escaped, fit with room to spare. */
#define SBX_VERDICT_MAX_ANSWER 65536
/* Longest rejection reason kept from an answer: room for what an unknown
 * file looked like and the list of types the job allows. */
#define SBX_VERDICT_MAX_REASON 511

/* Members of an application/zip listed in one answer: what fits in
 * SBX_VERDICT_MAX_ANSWER with a path of 255 bytes escaped twice over.
 * An archive with more members is refused (serve-zip.c). */
#define SBX_VERDICT_MAX_MEMBERS 64
#define SBX_VERDICT_MAX_MEMBER_PATH 255
#define SBX_VERDICT_MAX_MEMBER_REASON 255

/* One member of an application/zip artifact, as the validator saw it. */
struct sbx_verdict_member {
	char path[SBX_VERDICT_MAX_MEMBER_PATH + 1];
	uint64_t size;           /* inflated bytes */
	char sha256[65];         /* of the inflated bytes, lowercase hex */
	const char *media_type;  /* static (mediatype.h), or NULL */
	bool ok;
	char reason[SBX_VERDICT_MAX_MEMBER_REASON + 1]; /* "" when ok */
	const char *reason_code; /* static (reasoncode.h) when not ok */
	unsigned flags;          /* SBX_MEDIA_FLAG_* */
	bool formula_cells;
};

struct sbx_verdict {
	size_t index;
	bool ok;
	const char *media_type; /* static (mediatype.h), or NULL */
	char reason[SBX_VERDICT_MAX_REASON + 1];
	const char *reason_code; /* static (reasoncode.h); NULL: invalid_content */
	unsigned flags;         /* SBX_MEDIA_FLAG_* */
	bool formula_cells;
	uint64_t width, height;
	bool has_contract;
	struct sbx_contract_result contract;
	bool has_members;       /* application/zip: the list below was sent */
	size_t n_members;
	struct sbx_verdict_member members[SBX_VERDICT_MAX_MEMBERS];
};

/*
 * sbx_verdict_parse() - the broker's reading of one answer.
 * @buf, @len: the message as received (not NUL-terminated);
 * @index: the item the broker asked about last;
 * @out: filled in.
 * Return: 0, or -1 with a one-line reason in @why (the answer is bad).
 */
int sbx_verdict_parse(const char *buf, size_t len, size_t index, struct sbx_verdict *out,
		      char *why, size_t why_len);

/*
 * sbx_verdict_format() - the validator's answer for @v as one JSON text.
 * Return: a malloc'd NUL-terminated string of at most
 * SBX_VERDICT_MAX_ANSWER bytes (strings are cut to their bounds first).
 */
char *sbx_verdict_format(const struct sbx_verdict *v);

#endif
