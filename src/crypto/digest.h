/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * digest.h - streaming SHA-256 over OpenSSL's EVP interface (which picks
 * the SHA-NI / AVX2 code paths), for hashing while copying and for checking
 * files after the fact.
 */
#ifndef SBX_DIGEST_H
#define SBX_DIGEST_H

#include <openssl/evp.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

#define SBX_SHA256_HEX_LEN 64

/**
 * sbx_crypto_init() - set OpenSSL up the way sbx uses it (no openssl.cnf,
 * no error strings, no exit-time teardown), once.  It must come before any
 * other OpenSSL call, which would otherwise initialize OpenSSL with the
 * host's configuration.  Every command but `sbx run` calls it first thing;
 * `sbx run` calls it when the sandbox is starting the payload, and before
 * any manifest is built, so that OpenSSL's set-up is off the start-up path.
 * Return: 0, or -1 when OpenSSL cannot be initialized.
 */
int sbx_crypto_init(void);

struct sbx_sha256 {
	EVP_MD_CTX *ctx;
};

/**
 * sbx_sha256_init() - start a digest.  @h must be zeroed or released.
 * Return: 0, or -1 with SBX_EXIT_SOFTWARE when OpenSSL fails.
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
