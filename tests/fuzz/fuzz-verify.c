/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz-verify.c - libFuzzer entry point for `sbx verify`'s reading of a
 * manifest (parse, then the signature check), and the property that
 * signing any JSON object the fuzzer makes and verifying the result always
 * passes: whatever sbx_manifest_finish() emits, sbx verify accepts, and it
 * is the canonical form of itself.  One fixed test key.
 */
#include "fuzz-util.h"

#include <nettle/eddsa.h>

#include "canonjson.h"
#include "sign.h"

static struct sbx_key priv_key, pub_key, *priv, *pub;

static void keys(void)
{
	static const unsigned char seed[32] = "sbx fuzz test key, never secret";

	if (priv)
		return;
	memcpy(priv_key.seed, seed, sizeof(seed));
	ed25519_sha512_public_key(priv_key.pub, priv_key.seed);
	priv_key.has_private = true;
	memcpy(pub_key.pub, priv_key.pub, sizeof(pub_key.pub));
	priv = &priv_key;
	pub = &pub_key;
}

static void sign_then_verify(json_t *m)
{
	struct sbx_error err = { 0 };
	char *line = NULL, *canon = NULL;
	size_t len = 0, clen = 0;
	json_t *back;

	if (sbx_manifest_finish(m, priv, &line, &len, &err) < 0) {
		fuzz_check_error(&err, SBX_EXIT_SOFTWARE);
		return;
	}
	fuzz_assert(len > 1 && line[len - 1] == '\n' && strlen(line) == len);
	back = sbx_manifest_parse("signed.json", line, len, &err);
	if (!back)
		fprintf(stderr, "signed manifest does not parse: %s\n", err.msg);
	fuzz_assert(back);
	if (sbx_manifest_check_signature(back, pub, &err) < 0)
		fprintf(stderr, "signed manifest does not verify: %s\n", err.msg);
	fuzz_assert(sbx_manifest_check_signature(back, pub, &err) == 0);
	/* The line is the canonical form of what it says. */
	fuzz_assert(sbx_canonjson_dump(back, &canon, &clen, &err) == 0);
	fuzz_assert(clen == len - 1 && memcmp(canon, line, clen) == 0);
	free(canon);
	free(line);
	json_decref(back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sbx_error err = { 0 };
	json_t *m, *copy;

	keys();
	m = sbx_manifest_parse("fuzz.json", (const char *)data, size, &err);
	if (!m) {
		fuzz_check_error(&err, SBX_EXIT_FAILED);
		return 0;
	}
	fuzz_assert(json_is_object(m));
	if (sbx_manifest_check_signature(m, pub, &err) < 0)
		fuzz_assert((err.code == SBX_EXIT_FAILED || err.code == SBX_EXIT_SOFTWARE) &&
			    fuzz_clean_line(err.msg));
	copy = json_deep_copy(m);
	sign_then_verify(copy);
	json_decref(copy);
	json_decref(m);
	return 0;
}
