/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * digest.h - streaming SHA-256 (Nettle's, which picks the SHA-NI code
 * path at run time), for hashing while copying and for checking files
 * after the fact.
 */
#ifndef SBX_DIGEST_H
#define SBX_DIGEST_H

#include <nettle/sha2.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

#define SBX_SHA256_HEX_LEN 64

struct sbx_sha256 {
	struct sha256_ctx ctx;
	bool live;
};

/**
 * sbx_sha256_init() - start a digest.  @h must be zeroed or released.
 * Return: 0 (the failure return is kept for callers' symmetry).
 */
int sbx_sha256_init(struct sbx_sha256 *h, struct sbx_error *err);

/**
 * sbx_sha256_update() - feed @len bytes.
 * Return: 0, or -1 with SBX_EXIT_SOFTWARE.
 */
int sbx_sha256_update(struct sbx_sha256 *h, const void *data, size_t len, struct sbx_error *err);

/**
 * sbx_sha256_final_hex() - finish into 64 lowercase hex digits and a NUL,
 * and release the context (so @h may be init'ed again).
 * Return: 0, or -1 with SBX_EXIT_SOFTWARE.
 */
int sbx_sha256_final_hex(struct sbx_sha256 *h, char hex[SBX_SHA256_HEX_LEN + 1],
			 struct sbx_error *err);

/* Release @h without a result; safe on a zeroed or finished one.  Use as
 * _cleanup_sha256_. */
void sbx_sha256_release(struct sbx_sha256 *h);
#define _cleanup_sha256_ _cleanup_(sbx_sha256_release)

/**
 * sbx_sha256_buf() - one-shot digest of @len bytes at @data.
 * Return: 0, or -1 with SBX_EXIT_SOFTWARE.
 */
int sbx_sha256_buf(const void *data, size_t len, char hex[SBX_SHA256_HEX_LEN + 1],
		   struct sbx_error *err);

/**
 * sbx_sha256_fd() - digest what remains of @fd, reading from its current
 * offset to end of file in bounded chunks (never the whole file at once).
 * @size: set to the number of bytes hashed; may be NULL.
 * Return: 0, or -1 with SBX_EXIT_SOFTWARE and the errno of a failed read.
 */
int sbx_sha256_fd(int fd, char hex[SBX_SHA256_HEX_LEN + 1], uint64_t *size,
		  struct sbx_error *err);

#endif
