/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * digest.c - SHA-256 through OpenSSL EVP.
 */
#include "config.h"

#include <openssl/crypto.h>
#include <string.h>

#include "digest.h"

/*
 * sbx uses OpenSSL for SHA-256 and Ed25519 from the built-in default
 * provider, and never prints OpenSSL's error strings.  Its implicit
 * initialization would parse the host's openssl.cnf, load every error
 * string and tear it all down again at exit: a few milliseconds of every
 * run.  Without the host's configuration the digests and signatures are
 * the same on every host, as they must be.  Nor does sbx look ciphers or
 * digests up by their legacy names (EVP_get_digestbyname): everything is
 * fetched from the provider, so the table of every legacy name, which the
 * first fetch would otherwise build (~0.5 ms), is left out too.
 */
int sbx_crypto_init(void)
{
	static int done;

	if (!done)
		done = OPENSSL_init_crypto(OPENSSL_INIT_NO_LOAD_CONFIG |
						   OPENSSL_INIT_NO_LOAD_CRYPTO_STRINGS |
						   OPENSSL_INIT_NO_ADD_ALL_CIPHERS |
						   OPENSSL_INIT_NO_ADD_ALL_DIGESTS |
						   OPENSSL_INIT_NO_ATEXIT,
					   NULL)
			       ? 1
			       : -1;
	return done > 0 ? 0 : -1;
}

/* Large enough that the per-read cost vanishes next to hashing at
 * ~1.7 GB/s; on the heap so that callers deep in a walk keep their stack. */
#define READ_CHUNK (64 * 1024)

int sbx_sha256_init(struct sbx_sha256 *h, struct sbx_error *err)
{
	h->ctx = EVP_MD_CTX_new();
	if (!h->ctx || !EVP_DigestInit_ex(h->ctx, EVP_sha256(), NULL)) {
		sbx_sha256_release(h);
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, 0, "sha256: cannot initialize digest");
	}
	return 0;
}

int sbx_sha256_update(struct sbx_sha256 *h, const void *data, size_t len, struct sbx_error *err)
{
	if (!h->ctx || !EVP_DigestUpdate(h->ctx, data, len))
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, 0, "sha256: digest update failed");
	return 0;
}

int sbx_sha256_final_hex(struct sbx_sha256 *h, char hex[SBX_SHA256_HEX_LEN + 1],
			 struct sbx_error *err)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int md_len = 0;
	int ok = h->ctx && EVP_DigestFinal_ex(h->ctx, md, &md_len) && md_len == 32;

	sbx_sha256_release(h);
	if (!ok)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, 0, "sha256: digest finalization failed");
	sbx_hex(md, md_len, hex);
	return 0;
}

void sbx_sha256_release(struct sbx_sha256 *h)
{
	EVP_MD_CTX_free(h->ctx);
	h->ctx = NULL;
}

int sbx_sha256_buf(const void *data, size_t len, char hex[SBX_SHA256_HEX_LEN + 1],
		   struct sbx_error *err)
{
	_cleanup_sha256_ struct sbx_sha256 h = { 0 };

	if (sbx_sha256_init(&h, err) < 0 || sbx_sha256_update(&h, data, len, err) < 0)
		return -1;
	return sbx_sha256_final_hex(&h, hex, err);
}

int sbx_sha256_fd(int fd, char hex[SBX_SHA256_HEX_LEN + 1], uint64_t *size,
		  struct sbx_error *err)
{
	_cleanup_sha256_ struct sbx_sha256 h = { 0 };
	_cleanup_free_ unsigned char *chunk = sbx_xmalloc(READ_CHUNK);
	uint64_t total = 0;

	if (sbx_sha256_init(&h, err) < 0)
		return -1;
	for (;;) {
		ssize_t r = read(fd, chunk, READ_CHUNK);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "sha256: read");
		if (r == 0)
			break;
		if (sbx_sha256_update(&h, chunk, (size_t)r, err) < 0)
			return -1;
		total += (uint64_t)r;
	}
	if (sbx_sha256_final_hex(&h, hex, err) < 0)
		return -1;
	if (size)
		*size = total;
	return 0;
}
