/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * serve.h - the confined validator's work, without the confinement: read
 * the request, then answer one quarantined file at a time (verdict.h has
 * the wire format).  sbx-validate.c confines the process and runs
 * sbx_validator_serve(); the fuzzers and unit tests call
 * sbx_validator_check() directly, so that they drive the same entry point
 * the helper runs.
 */
#ifndef SBX_VALIDATE_SERVE_H
#define SBX_VALIDATE_SERVE_H

#include <stddef.h>
#include <stdint.h>

#include "verdict.h"

struct sbx_validator;

/*
 * sbx_validator_new() - the validator for one run, from the request text
 * (@req, @len bytes; verdict.h).  The job's contracts are parsed again
 * here, as the broker parsed them at admission.
 * Return: 0, or -1 with a one-line reason in @why.
 */
int sbx_validator_new(const char *req, size_t len, struct sbx_validator **out, char *why,
		      size_t why_len);

/*
 * sbx_validator_check() - the verdict on one file: @fd (read with pread
 * from offset 0) of @size bytes, found at @path below /work/out (display
 * form, as the broker lists it).  Detection, the extension, the allowed
 * types, the type's validator, then the path's contract if it has one.
 * @v is filled in (index left 0: the caller sets it).
 */
void sbx_validator_check(struct sbx_validator *val, int fd, const char *path, uint64_t size,
			 struct sbx_verdict *v);

/*
 * sbx_validator_serve() - answer the broker on @sock until it shuts its
 * side down.  Return: 0 at the end of the exchange, or -1 with a reason
 * in @why (a message that is not an item, a socket error).
 */
int sbx_validator_serve(struct sbx_validator *val, int sock, char *why, size_t why_len);

void sbx_validator_free(struct sbx_validator *val);

/* For serve-zip.c: a ZIP member checked by the rules of any output
 * (detection, extension, allowed types, validator, refuse_active), not
 * by a contract; and the run's caps that bound an archive's members. */
void sbx_validator_check_file(struct sbx_validator *val, int fd, const char *path, uint64_t size,
			      struct sbx_verdict *v);
void sbx_validator_output_caps(const struct sbx_validator *val, uint64_t *files, uint64_t *bytes);

struct sbx_media_report;
/*
 * sbx_validator_check_zip() - an application/zip of @size bytes at @fd:
 * the container, then each member (serve-zip.c).  Fills @v's members and
 * ORs their flags into @v's.
 * Return: 0, or -1 with @rep's reason and code for the archive.
 */
int sbx_validator_check_zip(struct sbx_validator *val, int fd, uint64_t size,
			    struct sbx_verdict *v, struct sbx_media_report *rep);

/*
 * For the failure tests only (tests/e2e/validate.sh): how the validator
 * misbehaves on its first item, as a compromised one might: "spin",
 * "crash", "syscall" (a call its filter forbids), "exit" (without an
 * answer), "garbage", "long" (an answer over the bound), "other" (the
 * answer to another item), "forge" (an allowed type the name does not
 * stand for).  sbx passes it on from SBX_TEST_VALIDATE in its own
 * environment; NULL: behave.
 */
extern const char *sbx_validator_misbehave;

#endif
