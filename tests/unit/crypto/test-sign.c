/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-sign.c - SHA-256, Ed25519 key files, key ids, signatures, and the
 * signed manifest line.
 */
#include "config.h"

#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "canonjson.h"
#include "digest.h"
#include "sign.h"

static char tmpdir[] = "/tmp/sbx-test-sign-XXXXXX";

static char *tmp_path(const char *name)
{
	return sbx_xasprintf("%s/%s", tmpdir, name);
}

static int setup(void **state)
{
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char *cmd = sbx_xasprintf("rm -rf '%s'", tmpdir);
	int r = system(cmd);
	free(cmd);
	return r;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "re");
	char *buf = sbx_xcalloc(1, 65536);

	assert_non_null(f);
	assert_true(fread(buf, 1, 65535, f) > 0);
	fclose(f);
	return buf;
}

static mode_t mode_of(const char *path)
{
	struct stat st;

	assert_int_equal(lstat(path, &st), 0);
	return st.st_mode & 07777;
}

static const struct {
	const char *in;
	const char *hex;
} sha_vectors[] = {
	{ "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
	{ "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
	{ "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
	  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1" },
};

static void test_sha256_vectors(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(sha_vectors); i++) {
		char hex[SBX_SHA256_HEX_LEN + 1];
		_cleanup_sha256_ struct sbx_sha256 h = { 0 };
		size_t len = strlen(sha_vectors[i].in);

		assert_int_equal(sbx_sha256_buf(sha_vectors[i].in, len, hex, NULL), 0);
		assert_string_equal(hex, sha_vectors[i].hex);
		/* Streaming one byte at a time gives the same digest. */
		assert_int_equal(sbx_sha256_init(&h, NULL), 0);
		for (size_t k = 0; k < len; k++)
			assert_int_equal(sbx_sha256_update(&h, sha_vectors[i].in + k, 1, NULL), 0);
		assert_int_equal(sbx_sha256_final_hex(&h, hex, NULL), 0);
		assert_string_equal(hex, sha_vectors[i].hex);
	}
}

static void test_sha256_fd(void **state)
{
	_cleanup_free_ char *path = tmp_path("million-a");
	_cleanup_free_ char *buf = sbx_xmalloc(1000000);
	char hex[SBX_SHA256_HEX_LEN + 1];
	struct sbx_error err = { 0 };
	uint64_t size = 0;
	int fd;

	/* FIPS 180-2 vector: one million 'a', more than one read chunk. */
	memset(buf, 'a', 1000000);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(sbx_write_all(fd, buf, 1000000), 1000000);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	assert_int_equal(sbx_sha256_fd(fd, hex, &size, &err), 0);
	assert_string_equal(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	assert_int_equal(size, 1000000);
	/* Hashing starts at the current offset ("aaa", as sha256sum says). */
	assert_int_equal(lseek(fd, 999997, SEEK_SET), 999997);
	assert_int_equal(sbx_sha256_fd(fd, hex, &size, &err), 0);
	assert_int_equal(size, 3);
	assert_string_equal(hex, "9834876dcfb05cb167a5c24953eba58c4ac89b1adf57f28f2f9d09af107ee8f0");
	close(fd);
	/* A read error is reported, not hashed as end of file. */
	fd = open(tmpdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_int_equal(sbx_sha256_fd(fd, hex, &size, &err), -1);
	assert_int_equal(err.errnum, EISDIR);
	close(fd);
}

static void test_keygen_files(void **state)
{
	_cleanup_free_ char *path = tmp_path("k1"), *pub = tmp_path("k1.pub");
	_cleanup_free_ char *priv_text = NULL, *pub_text = NULL;
	struct sbx_error err = { 0 };

	assert_int_equal(sbx_sign_keygen(path, &err), 0);
	assert_int_equal(mode_of(path), 0600);
	assert_int_equal(mode_of(pub), 0644);
	priv_text = slurp(path);
	pub_text = slurp(pub);
	assert_non_null(strstr(priv_text, "-----BEGIN PRIVATE KEY-----\n"));
	assert_non_null(strstr(pub_text, "-----BEGIN PUBLIC KEY-----\n"));
	assert_null(strstr(pub_text, "PRIVATE"));
}

static void test_keygen_refuses_overwrite(void **state)
{
	_cleanup_free_ char *path = tmp_path("k2"), *pub = tmp_path("k2.pub");
	_cleanup_free_ char *lonely = tmp_path("k3"), *lonely_pub = tmp_path("k3.pub");
	_cleanup_free_ char *link = tmp_path("k4"), *target = tmp_path("k4-target");
	_cleanup_free_ char *before = NULL, *after = NULL;
	struct sbx_error err = { 0 };

	assert_int_equal(sbx_sign_keygen(path, &err), 0);
	before = slurp(path);
	assert_int_equal(sbx_sign_keygen(path, &err), -1);
	assert_int_equal(err.errnum, EEXIST);
	after = slurp(path);
	assert_string_equal(before, after);

	/* An existing .pub alone is enough to refuse, and nothing is left. */
	err = (struct sbx_error){ 0 };
	assert_int_equal(close(open(lonely_pub, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)), 0);
	assert_int_equal(sbx_sign_keygen(lonely, &err), -1);
	assert_int_equal(err.errnum, EEXIST);
	assert_int_equal(access(lonely, F_OK), -1);

	/* A dangling symlink at the path is not followed. */
	err = (struct sbx_error){ 0 };
	assert_int_equal(symlink(target, link), 0);
	assert_int_equal(sbx_sign_keygen(link, &err), -1);
	assert_int_equal(access(target, F_OK), -1);
	assert_int_equal(err.errnum, EEXIST);
}

static void test_load_key_permissions(void **state)
{
	static const struct {
		mode_t mode;
		bool loads;
	} cases[] = {
		{ 0600, true }, { 0400, true }, { 0640, false }, { 0610, false }, { 0601, false },
		{ 0644, false }, { 0604, false }, { 0660, false }, { 0602, false },
	};
	_cleanup_free_ char *path = tmp_path("k5");

	assert_int_equal(sbx_sign_keygen(path, NULL), 0);
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct sbx_error err = { 0 };
		struct sbx_key *key = NULL;
		int r;

		assert_int_equal(chmod(path, cases[i].mode), 0);
		r = sbx_sign_load_key(path, &key, &err);
		if (cases[i].loads != (r == 0))
			fail_msg("mode %04o: load returned %d (%s)", (unsigned)cases[i].mode, r, err.msg);
		if (r < 0) {
			assert_int_equal(err.code, SBX_EXIT_UNAVAILABLE);
			assert_non_null(strstr(err.hint, "chmod 600"));
		}
		sbx_key_free(key);
	}
}

/* A private key must be the caller's own file: root would otherwise sign
 * with a key some other user put at the configured path. */
static void test_load_key_owner(void **state)
{
	_cleanup_free_ char *path = tmp_path("k22");
	struct sbx_error err = { 0 };
	struct sbx_key *key = NULL;

	if (geteuid() != 0) {
		skip(); /* chown to another uid needs root; make check runs as root */
		return;
	}
	assert_int_equal(sbx_sign_keygen(path, NULL), 0);
	assert_int_equal(sbx_sign_load_key(path, &key, &err), 0);
	sbx_key_free(key);
	key = NULL;
	assert_int_equal(chown(path, 65534, 65534), 0);
	err = (struct sbx_error){ 0 };
	assert_int_equal(sbx_sign_load_key(path, &key, &err), -1);
	assert_null(key);
	assert_int_equal(err.code, SBX_EXIT_UNAVAILABLE);
	assert_non_null(strstr(err.msg, "owned by uid 65534"));
	assert_non_null(strstr(err.hint, "chown"));
	/* The public key may belong to anyone. */
	assert_int_equal(chown(path, 0, 0), 0);
}

static void test_load_key_rejects(void **state)
{
	_cleanup_free_ char *pem = tmp_path("k6"), *junk = tmp_path("junk"), *missing = tmp_path("none");
	_cleanup_free_ char *pub = tmp_path("k6.pub");
	struct sbx_error err = { 0 };
	struct sbx_key *key = NULL;
	int fd;

	assert_int_equal(sbx_sign_keygen(pem, NULL), 0);
	/* The public half is not a private key, and vice versa. */
	assert_int_equal(sbx_sign_load_key(pub, &key, &err), -1);
	err = (struct sbx_error){ 0 };
	assert_int_equal(sbx_sign_load_pubkey(pem, &key, &err), -1);
	err = (struct sbx_error){ 0 };
	fd = open(junk, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	assert_int_equal(sbx_write_all(fd, "not a key\n", 10), 10);
	close(fd);
	assert_int_equal(sbx_sign_load_key(junk, &key, &err), -1);
	err = (struct sbx_error){ 0 };
	assert_int_equal(sbx_sign_load_key(missing, &key, &err), -1);
	assert_int_equal(err.errnum, ENOENT);
	err = (struct sbx_error){ 0 };
	assert_int_equal(sbx_sign_load_key(tmpdir, &key, &err), -1);
	assert_null(key);
}

static void test_key_id(void **state)
{
	_cleanup_free_ char *path = tmp_path("k7"), *pub_path = tmp_path("k7.pub");
	_cleanup_free_ char *other = tmp_path("k8");
	_cleanup_key_ struct sbx_key *key = NULL, *pub = NULL, *again = NULL, *key2 = NULL;
	char id[SBX_KEY_ID_LEN], id_pub[SBX_KEY_ID_LEN], id_again[SBX_KEY_ID_LEN];
	char id2[SBX_KEY_ID_LEN], want[SBX_KEY_ID_LEN], hex[SBX_SHA256_HEX_LEN + 1];
	unsigned char raw[32];
	size_t raw_len = sizeof(raw);

	assert_int_equal(sbx_sign_keygen(path, NULL), 0);
	assert_int_equal(sbx_sign_keygen(other, NULL), 0);
	assert_int_equal(sbx_sign_load_key(path, &key, NULL), 0);
	assert_int_equal(sbx_sign_load_key(path, &again, NULL), 0);
	assert_int_equal(sbx_sign_load_pubkey(pub_path, &pub, NULL), 0);
	assert_int_equal(sbx_sign_load_key(other, &key2, NULL), 0);
	assert_int_equal(sbx_sign_key_id(key, id), 0);
	assert_int_equal(sbx_sign_key_id(pub, id_pub), 0);
	assert_int_equal(sbx_sign_key_id(again, id_again), 0);
	assert_int_equal(sbx_sign_key_id(key2, id2), 0);

	assert_int_equal(strlen(id), SBX_KEY_ID_LEN - 1);
	assert_memory_equal(id, "sha256:", 7);
	assert_int_equal(strspn(id + 7, "0123456789abcdef"), 64);
	assert_string_equal(id, id_pub);
	assert_string_equal(id, id_again);
	assert_string_not_equal(id, id2);
	/* Independently: SHA-256 of the 32 raw public key bytes. */
	memcpy(raw, pub->pub, sizeof(raw));
	assert_int_equal(sbx_sha256_buf(raw, raw_len, hex, NULL), 0);
	snprintf(want, sizeof(want), "sha256:%s", hex);
	assert_string_equal(id, want);
	assert_int_equal(sbx_sign_key_id(NULL, id), -1);
}

static void test_sign_verify(void **state)
{
	_cleanup_free_ char *path = tmp_path("k9"), *pub_path = tmp_path("k9.pub");
	_cleanup_free_ char *other = tmp_path("k10");
	_cleanup_key_ struct sbx_key *key = NULL, *pub = NULL, *key2 = NULL;
	_cleanup_free_ char *sig = NULL, *sig2 = NULL;
	char msg[] = "{\"a\":1,\"b\":\"two\"}";
	char bad[SBX_SIG_B64_LEN + 2];
	struct sbx_error err = { 0 };

	assert_int_equal(sbx_sign_keygen(path, NULL), 0);
	assert_int_equal(sbx_sign_keygen(other, NULL), 0);
	assert_int_equal(sbx_sign_load_key(path, &key, NULL), 0);
	assert_int_equal(sbx_sign_load_pubkey(pub_path, &pub, NULL), 0);
	assert_int_equal(sbx_sign_load_key(other, &key2, NULL), 0);

	assert_int_equal(sbx_sign_bytes(key, msg, strlen(msg), &sig, &err), 0);
	assert_int_equal(strlen(sig), SBX_SIG_B64_LEN);
	assert_string_equal(sig + SBX_SIG_B64_LEN - 2, "==");
	/* Ed25519 is deterministic. */
	assert_int_equal(sbx_sign_bytes(key, msg, strlen(msg), &sig2, &err), 0);
	assert_string_equal(sig, sig2);
	assert_int_equal(sbx_sign_verify_bytes(pub, msg, strlen(msg), sig, &err), 0);
	assert_int_equal(sbx_sign_verify_bytes(key, msg, strlen(msg), sig, &err), 0);

	/* Every single-byte change of the message fails. */
	for (size_t i = 0; i < strlen(msg); i++) {
		err = (struct sbx_error){ 0 };
		msg[i] ^= 1;
		assert_int_equal(sbx_sign_verify_bytes(pub, msg, strlen(msg), sig, &err), -1);
		assert_int_equal(err.code, SBX_EXIT_FAILED);
		msg[i] ^= 1;
	}
	/* A different key, a flipped signature character, a truncated or
	 * padded or non-canonical encoding: all refused. */
	err = (struct sbx_error){ 0 };
	assert_int_equal(sbx_sign_verify_bytes(key2, msg, strlen(msg), sig, &err), -1);
	strcpy(bad, sig);
	bad[10] = bad[10] == 'A' ? 'B' : 'A';
	assert_int_equal(sbx_sign_verify_bytes(pub, msg, strlen(msg), bad, NULL), -1);
	strcpy(bad, sig);
	bad[SBX_SIG_B64_LEN - 1] = '\0';
	assert_int_equal(sbx_sign_verify_bytes(pub, msg, strlen(msg), bad, NULL), -1);
	snprintf(bad, sizeof(bad), "%s\n", sig);
	assert_int_equal(sbx_sign_verify_bytes(pub, msg, strlen(msg), bad, NULL), -1);
	/* The last character before "==" carries 4 unused bits: setting one
	 * keeps the bytes but breaks canonical form. */
	strcpy(bad, sig);
	{
		static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
		size_t v = (size_t)(strchr(b64, bad[SBX_SIG_B64_LEN - 3]) - b64);
		bad[SBX_SIG_B64_LEN - 3] = b64[v ^ 1];
	}
	err = (struct sbx_error){ 0 };
	assert_int_equal(sbx_sign_verify_bytes(pub, msg, strlen(msg), bad, &err), -1);
	assert_non_null(strstr(err.msg, "canonical"));
}

/* Write @len bytes of @text to a new file @name in the test dir, mode @mode. */
static char *write_file(const char *name, const char *text, size_t len, mode_t mode)
{
	char *path = tmp_path(name);
	int fd;

	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
	assert_true(fd >= 0);
	assert_int_equal(sbx_write_all(fd, text, len), (ssize_t)len);
	close(fd);
	return path;
}

#define PEM_PRIV(body) "-----BEGIN PRIVATE KEY-----\n" body "\n-----END PRIVATE KEY-----\n"
/* RFC 8032 §7.1, TEST 1: the seed 9d61b1...7f60 as PKCS#8, its public key
 * as SubjectPublicKeyInfo (both as `openssl pkey` writes them), and the
 * signature of the empty message. */
#define RFC_SEED_B64 "MC4CAQAwBQYDK2VwBCIEIJ1hsZ3v/VpguoRK9JLsLMREScVpezJpGXA7rAMcrn9g"
#define RFC_PUB_PEM                                                        \
	"-----BEGIN PUBLIC KEY-----\n"                                     \
	"MCowBQYDK2VwAyEA11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=\n" \
	"-----END PUBLIC KEY-----\n"
#define RFC_SIG "5VZDAMNgrHKQhuLMgG6CioSHfx645dl02HPgZSJJAVVfuIIVkKM7rMYeOXAc+bRr0lv18FlbviRlUUFDjnoQCw=="

/* Nettle's Ed25519 against the RFC's own vector, not only against itself. */
static void test_rfc8032_vector(void **state)
{
	static const uint8_t want_pub[32] = {
		0xd7, 0x5a, 0x98, 0x01, 0x82, 0xb1, 0x0a, 0xb7, 0xd5, 0x4b, 0xfe,
		0xd3, 0xc9, 0x64, 0x07, 0x3a, 0x0e, 0xe1, 0x72, 0xf3, 0xda, 0xa6,
		0x23, 0x25, 0xaf, 0x02, 0x1a, 0x68, 0xf7, 0x07, 0x51, 0x1a,
	};
	_cleanup_free_ char *priv_path = write_file("rfc", PEM_PRIV(RFC_SEED_B64),
						    strlen(PEM_PRIV(RFC_SEED_B64)), 0600);
	_cleanup_free_ char *pub_path = write_file("rfc.pub", RFC_PUB_PEM, strlen(RFC_PUB_PEM), 0644);
	_cleanup_key_ struct sbx_key *key = NULL, *pub = NULL;
	_cleanup_free_ char *sig = NULL;
	char id[SBX_KEY_ID_LEN], id_pub[SBX_KEY_ID_LEN];

	assert_int_equal(sbx_sign_load_key(priv_path, &key, NULL), 0);
	assert_int_equal(sbx_sign_load_pubkey(pub_path, &pub, NULL), 0);
	assert_memory_equal(key->pub, want_pub, 32);
	assert_memory_equal(pub->pub, want_pub, 32);
	assert_false(pub->has_private);
	assert_int_equal(sbx_sign_key_id(key, id), 0);
	assert_int_equal(sbx_sign_key_id(pub, id_pub), 0);
	assert_string_equal(id, id_pub);
	assert_int_equal(sbx_sign_bytes(key, "", 0, &sig, NULL), 0);
	assert_string_equal(sig, RFC_SIG);
	assert_int_equal(sbx_sign_verify_bytes(pub, "", 0, RFC_SIG, NULL), 0);
	/* A public key cannot sign. */
	free(sig);
	sig = NULL;
	assert_int_equal(sbx_sign_bytes(pub, "", 0, &sig, NULL), -1);
}

/* S + L is the same signature arithmetically but not canonical (RFC 8032
 * §5.1.7 requires S < L): refused, so a manifest has one signature. */
static void test_noncanonical_s(void **state)
{
	static const uint8_t L[32] = {
		0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7,
		0xa2, 0xde, 0xf9, 0xde, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10,
	};
	_cleanup_free_ char *pub_path = write_file("rfc2.pub", RFC_PUB_PEM, strlen(RFC_PUB_PEM), 0644);
	_cleanup_key_ struct sbx_key *pub = NULL;
	uint8_t sig[66];
	char b64[SBX_SIG_B64_LEN + 1];
	struct sbx_error err = { 0 };
	unsigned carry = 0;
	FILE *f;

	assert_int_equal(sbx_sign_load_pubkey(pub_path, &pub, NULL), 0);
	f = popen("printf %s '" RFC_SIG "' | base64 -d", "r");
	assert_non_null(f);
	assert_int_equal(fread(sig, 1, sizeof(sig), f), 64);
	pclose(f);
	/* S is the second half, little-endian; L fits beside it. */
	for (int i = 0; i < 32; i++) {
		unsigned v = sig[32 + i] + L[i] + carry;
		sig[32 + i] = (uint8_t)v;
		carry = v >> 8;
	}
	assert_int_equal(carry, 0);
	{
		static const char tbl[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
		size_t o = 0;

		sig[64] = sig[65] = 0;
		for (size_t i = 0; i < 64; i += 3) {
			unsigned v = (unsigned)sig[i] << 16 | (unsigned)sig[i + 1] << 8 | sig[i + 2];
			b64[o++] = tbl[v >> 18 & 63];
			b64[o++] = tbl[v >> 12 & 63];
			b64[o++] = i + 1 < 64 ? tbl[v >> 6 & 63] : '=';
			b64[o++] = i + 2 < 64 ? tbl[v & 63] : '=';
		}
		b64[o] = '\0';
	}
	assert_string_not_equal(b64, RFC_SIG);
	assert_int_equal(sbx_sign_verify_bytes(pub, "", 0, b64, &err), -1);
	assert_int_equal(err.code, SBX_EXIT_FAILED);
	assert_non_null(strstr(err.msg, "does not verify"));
}

/* The key files are parsed here, not by an ASN.1 library: every shape
 * that is not exactly an Ed25519 key is refused, with what it is. */
static void test_key_shapes(void **state)
{
	static const struct {
		const char *name, *text;
		size_t len; /* 0: strlen */
		bool loads;
		const char *msg;
	} cases[] = {
		{ "plain", PEM_PRIV(RFC_SEED_B64), 0, true, NULL },
		/* Other line widths are the same DER. */
		{ "wrapped",
		  "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIJ1hsZ3v/Vpgu\noRK9JLsLMREScVpezJpGXA7rAMcrn9g\n"
		  "-----END PRIVATE KEY-----\n", 0, true, NULL },
		{ "trailing-space", PEM_PRIV(RFC_SEED_B64) "\n  \n", 0, true, NULL },
		{ "no-final-newline", "-----BEGIN PRIVATE KEY-----\n" RFC_SEED_B64 "\n-----END PRIVATE KEY-----",
		  0, true, NULL },
		{ "text-before", "a comment\n" PEM_PRIV(RFC_SEED_B64), 0, false, "PKCS#8" },
		{ "junk-after", PEM_PRIV(RFC_SEED_B64) "x\n", 0, false, "PKCS#8" },
		{ "nul-after", PEM_PRIV(RFC_SEED_B64) "\0", sizeof(PEM_PRIV(RFC_SEED_B64)), false, "PKCS#8" },
		{ "two-keys", PEM_PRIV(RFC_SEED_B64) PEM_PRIV(RFC_SEED_B64), 0, false, "PKCS#8" },
		{ "crlf", "-----BEGIN PRIVATE KEY-----\r\n" RFC_SEED_B64 "\r\n-----END PRIVATE KEY-----\r\n", 0,
		  false, "PKCS#8" },
		{ "bad-char", PEM_PRIV("MC4CAQAwBQYDK2VwBCIEIJ1hsZ3v/VpguoRK9JLsLMREScVpezJpGXA7rAMcrn9*"), 0, false,
		  "PKCS#8" },
		{ "truncated", PEM_PRIV("MC4CAQAwBQYDK2VwBCIEIJ1hsZ3v/VpguoRK9JLsLMREScVpezJpGXA7rAMc"), 0, false,
		  "PKCS#8" },
		{ "empty-body", "-----BEGIN PRIVATE KEY-----\n-----END PRIVATE KEY-----\n", 0, false, "PKCS#8" },
		/* The same seed under the X25519 OID: another algorithm. */
		{ "x25519", PEM_PRIV("MC4CAQAwBQYDK2VuBCIEIJ1hsZ3v/VpguoRK9JLsLMREScVpezJpGXA7rAMcrn9g"), 0, false,
		  "not an Ed25519 key" },
		/* RFC 8410 §10.3: PKCS#8 v2 with attributes and the public key. */
		{ "v2", PEM_PRIV("MHICAQEwBQYDK2VwBCIEINTuctv5E1hK1bbY8fdp+K06/nwoy/HU++CXqI9EdVhC\n"
				 "oB8wHQYKKoZIhvcNAQkJFDEPDA1DdXJkbGUgQ2hhaXJzgSEAGb9ECWmEzf6FQbrB\n"
				 "Z9w7lshQhqowtrbLDFw4rXAxZuE="), 0, false, "PKCS#8" },
		{ "encrypted", "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIGbMFcGCSqGSIb3DQEFDTBKMCkGCSqG\n"
			       "-----END ENCRYPTED PRIVATE KEY-----\n", 0, false, "encrypted" },
		{ "public-as-private", RFC_PUB_PEM, 0, false, "PKCS#8" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		size_t len = cases[i].len ? cases[i].len : strlen(cases[i].text);
		_cleanup_free_ char *path = write_file(cases[i].name, cases[i].text, len, 0600);
		_cleanup_key_ struct sbx_key *key = NULL;
		struct sbx_error err = { 0 };
		int r = sbx_sign_load_key(path, &key, &err);

		if (cases[i].loads != (r == 0))
			fail_msg("%s: load returned %d (%s)", cases[i].name, r, err.msg);
		if (r == 0)
			continue;
		assert_null(key);
		assert_int_equal(err.code, SBX_EXIT_UNAVAILABLE);
		if (!strstr(err.msg, cases[i].msg) || !strstr(err.msg, path))
			fail_msg("%s: message '%s' lacks '%s'", cases[i].name, err.msg, cases[i].msg);
		if (strcmp(cases[i].msg, "not an Ed25519 key") && !strstr(err.hint, "openssl pkey"))
			fail_msg("%s: hint '%s'", cases[i].name, err.hint);
	}
	/* And the public side: the private key is not a public key, nor is a
	 * public key with a byte of its header changed. */
	{
		_cleanup_free_ char *priv = write_file("p1", PEM_PRIV(RFC_SEED_B64),
						       strlen(PEM_PRIV(RFC_SEED_B64)), 0644);
		static const char x25519_pub[] =
			"-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VuAyEA11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=\n"
			"-----END PUBLIC KEY-----\n";
		_cleanup_free_ char *bad = write_file("p2", x25519_pub, strlen(x25519_pub), 0644);
		_cleanup_key_ struct sbx_key *key = NULL;
		struct sbx_error err = { 0 };

		assert_int_equal(sbx_sign_load_pubkey(priv, &key, &err), -1);
		assert_non_null(strstr(err.msg, "SubjectPublicKeyInfo"));
		assert_non_null(strstr(err.hint, "-pubin"));
		err = (struct sbx_error){ 0 };
		assert_int_equal(sbx_sign_load_pubkey(bad, &key, &err), -1);
		assert_non_null(strstr(err.msg, "not an Ed25519 key"));
		assert_null(key);
	}
}

static json_t *sample_manifest(void)
{
	return json_pack("{s:i, s:s, s:s, s:{s:s, s:I}, s:[{s:s, s:i, s:s, s:s}], s:o}",
			 "manifest_version", 1, "run_id", "r-123", "status", "succeeded",
			 "stdout", "excerpt", "h\xc3\xa9llo \xf0\x9f\x98\x80 \"q\" \\", "bytes",
			 (json_int_t)12, "artifacts", "path", "out/a.csv", "size", 3, "sha256",
			 "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "status",
			 "promoted", "landlock_abi", json_null());
}

static void test_manifest_finish_and_check(void **state)
{
	_cleanup_free_ char *path = tmp_path("k11"), *pub_path = tmp_path("k11.pub");
	_cleanup_free_ char *other = tmp_path("k12"), *other_pub = tmp_path("k12.pub");
	_cleanup_key_ struct sbx_key *key = NULL, *pub = NULL, *pub2 = NULL;
	_cleanup_free_ char *line = NULL, *line2 = NULL, *body = NULL;
	struct sbx_error err = { 0 };
	json_t *m = sample_manifest(), *parsed, *sig;
	char id[SBX_KEY_ID_LEN];
	size_t len = 0, len2 = 0, body_len = 0;

	assert_int_equal(sbx_sign_keygen(path, NULL), 0);
	assert_int_equal(sbx_sign_keygen(other, NULL), 0);
	assert_int_equal(sbx_sign_load_key(path, &key, NULL), 0);
	assert_int_equal(sbx_sign_load_pubkey(pub_path, &pub, NULL), 0);
	assert_int_equal(sbx_sign_load_pubkey(other_pub, &pub2, NULL), 0);
	assert_int_equal(sbx_sign_key_id(key, id), 0);

	/* A stale signature is replaced, not kept. */
	json_object_set_new(m, "signature", json_string("stale"));
	assert_int_equal(sbx_manifest_finish(m, key, &line, &len, &err), 0);
	assert_int_equal(len, strlen(line));
	assert_int_equal(line[len - 1], '\n');
	assert_null(memchr(line, '\n', len - 1));

	parsed = json_loadb(line, len, JSON_REJECT_DUPLICATES, NULL);
	assert_non_null(parsed);
	sig = json_object_get(parsed, "signature");
	assert_string_equal(json_string_value(json_object_get(sig, "alg")), "ed25519");
	assert_string_equal(json_string_value(json_object_get(sig, "key_id")), id);
	assert_int_equal(json_string_length(json_object_get(sig, "value")), SBX_SIG_B64_LEN);
	/* The line is the canonical form of what it holds. */
	assert_int_equal(sbx_canonjson_dump(parsed, &body, &body_len, &err), 0);
	assert_int_equal(body_len, len - 1);
	assert_memory_equal(body, line, body_len);

	assert_int_equal(sbx_manifest_check_signature(parsed, pub, &err), 0);

	/* A different value fails. */
	json_object_set_new(parsed, "status", json_string("failed"));
	err = (struct sbx_error){ 0 };
	assert_int_equal(sbx_manifest_check_signature(parsed, pub, &err), -1);
	assert_non_null(strstr(err.msg, "does not verify"));
	json_object_set_new(parsed, "status", json_string("succeeded"));
	assert_int_equal(sbx_manifest_check_signature(parsed, pub, NULL), 0);
	/* An added member fails. */
	json_object_set_new(parsed, "extra", json_true());
	assert_int_equal(sbx_manifest_check_signature(parsed, pub, NULL), -1);
	json_object_del(parsed, "extra");
	/* Another key: its key_id does not match. */
	err = (struct sbx_error){ 0 };
	assert_int_equal(sbx_manifest_check_signature(parsed, pub2, &err), -1);
	assert_non_null(strstr(err.msg, "key_id does not match"));
	/* Without a signature, or with a wrong alg. */
	json_object_set_new(sig, "alg", json_string("rsa"));
	err = (struct sbx_error){ 0 };
	assert_int_equal(sbx_manifest_check_signature(parsed, pub, &err), -1);
	assert_non_null(strstr(err.msg, "signature.alg"));
	json_object_del(parsed, "signature");
	assert_int_equal(sbx_manifest_check_signature(parsed, pub, NULL), -1);
	json_decref(parsed);

	/* Signing again gives the same line (deterministic signature). */
	assert_int_equal(sbx_manifest_finish(m, key, &line2, &len2, &err), 0);
	assert_string_equal(line, line2);
	json_decref(m);
}

/* The bytes are verified as given: only the canonical line (with or
 * without its newline) passes, never another spelling of the same value. */
static void test_manifest_check_line(void **state)
{
	_cleanup_free_ char *path = tmp_path("k21"), *pub_path = tmp_path("k21.pub");
	_cleanup_key_ struct sbx_key *key = NULL, *pub = NULL;
	_cleanup_free_ char *line = NULL, *pretty = NULL, *escaped = NULL, *twice = NULL;
	struct sbx_error err = { 0 };
	json_t *m = sample_manifest(), *parsed = NULL;
	size_t len = 0;
	char *at;

	assert_int_equal(sbx_sign_keygen(path, NULL), 0);
	assert_int_equal(sbx_sign_load_key(path, &key, NULL), 0);
	assert_int_equal(sbx_sign_load_pubkey(pub_path, &pub, NULL), 0);
	assert_int_equal(sbx_manifest_finish(m, key, &line, &len, &err), 0);

	assert_int_equal(sbx_manifest_check_line("m", line, len, pub, &parsed, &err), 0);
	assert_non_null(parsed);
	assert_string_equal(json_string_value(json_object_get(parsed, "status")), "succeeded");
	json_decref(parsed);
	assert_int_equal(sbx_manifest_check_line("m", line, len - 1, pub, NULL, &err), 0);

	/* Two newlines, or a pretty-printed rendering of the same value. */
	twice = sbx_xasprintf("%s\n", line);
	err = (struct sbx_error){ 0 };
	assert_int_equal(sbx_manifest_check_line("m", twice, strlen(twice), pub, NULL, &err), -1);
	assert_int_equal(err.code, SBX_EXIT_FAILED);
	assert_non_null(strstr(err.msg, "not the canonical line"));
	pretty = json_dumps(m, JSON_INDENT(2) | JSON_SORT_KEYS);
	assert_non_null(pretty);
	err = (struct sbx_error){ 0 };
	assert_int_equal(sbx_manifest_check_line("m", pretty, strlen(pretty), pub, NULL, &err), -1);
	assert_non_null(strstr(err.msg, "not the canonical line"));

	/* "succ\u0065eded" parses to the very same value. */
	at = strstr(line, "\"succeeded\"");
	assert_non_null(at);
	escaped = sbx_xasprintf("%.*ssucc\\u0065eded%s", (int)(at + 1 - line), line, at + 10);
	{
		json_t *a = json_loads(escaped, 0, NULL), *b = json_loads(line, 0, NULL);
		assert_non_null(a);
		assert_non_null(b);
		assert_true(json_equal(a, b));
		json_decref(a);
		json_decref(b);
	}
	err = (struct sbx_error){ 0 };
	assert_int_equal(sbx_manifest_check_line("m", escaped, strlen(escaped), pub, NULL, &err), -1);
	assert_non_null(strstr(err.msg, "not the canonical line"));

	/* Not JSON at all, and a duplicated member. */
	err = (struct sbx_error){ 0 };
	assert_int_equal(sbx_manifest_check_line("m", "{", 1, pub, NULL, &err), -1);
	assert_int_equal(err.code, SBX_EXIT_FAILED);
	json_decref(m);
}

static void touch(const char *rel)
{
	_cleanup_free_ char *p = tmp_path(rel);
	FILE *f = fopen(p, "we");

	assert_non_null(f);
	fputs("x\n", f);
	fclose(f);
}

static void mkdir_rel(const char *rel)
{
	_cleanup_free_ char *p = tmp_path(rel);
	assert_int_equal(mkdir(p, 0755), 0);
}

/* What --artifacts DIR holds beyond the promoted artifacts is counted. */
static void test_verify_unlisted(void **state)
{
	json_t *m = json_pack("{s:[{s:s,s:s},{s:s,s:s},{s:s,s:s}]}", "artifacts",
			      "path", "a.txt", "status", "promoted",
			      "path", "sub/deep/b.txt", "status", "promoted",
			      "path", "gone.txt", "status", "rejected");
	_cleanup_free_ char *root = tmp_path("art");
	_cleanup_free_ char *link = tmp_path("art/sub/alias.txt");
	_cleanup_close_ int fd = -1;
	struct sbx_error err = { 0 };
	size_t n = 99;

	mkdir_rel("art");
	mkdir_rel("art/sub");
	mkdir_rel("art/sub/deep");
	touch("art/a.txt");
	touch("art/sub/deep/b.txt");
	fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(sbx_verify_unlisted(fd, m, &n, &err), 0);
	assert_int_equal(n, 0);

	/* A file, a file at a rejected artifact's path, an empty directory,
	 * a directory of files, a symlink: five entries (the files inside
	 * the unlisted directory are not walked into). */
	touch("art/extra.txt");
	touch("art/gone.txt");
	mkdir_rel("art/empty");
	mkdir_rel("art/other");
	touch("art/other/x.txt");
	assert_int_equal(symlink("../a.txt", link), 0);
	assert_int_equal(sbx_verify_unlisted(fd, m, &n, &err), 0);
	assert_int_equal(n, 5);

	/* The stream captures in .sbx/ are listed when the manifest has
	 * those streams, and only then. */
	{
		_cleanup_free_ char *root2 = tmp_path("art2");
		_cleanup_close_ int fd2 = -1;

		mkdir_rel("art2");
		mkdir_rel("art2/sub");
		mkdir_rel("art2/sub/deep");
		mkdir_rel("art2/.sbx");
		touch("art2/a.txt");
		touch("art2/sub/deep/b.txt");
		touch("art2/.sbx/stdout");
		touch("art2/.sbx/stderr");
		fd2 = open(root2, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		assert_true(fd2 >= 0);
		/* .sbx/ is walked into (it may hold an attached run's
		 * manifest), so each capture is named: .sbx/stdout, .sbx/stderr. */
		assert_int_equal(sbx_verify_unlisted(fd2, m, &n, &err), 0);
		assert_int_equal(n, 2);
		/* An attached run's manifest there is never unlisted. */
		touch("art2/.sbx/manifest.json");
		assert_int_equal(sbx_verify_unlisted(fd2, m, &n, &err), 0);
		assert_int_equal(n, 2);
		json_object_set_new(m, "stdout", json_pack("{s:s}", "sha256", "00"));
		assert_int_equal(sbx_verify_unlisted(fd2, m, &n, &err), 0);
		assert_int_equal(n, 1); /* .sbx/stderr */
		json_object_set_new(m, "stderr", json_pack("{s:s}", "sha256", "00"));
		assert_int_equal(sbx_verify_unlisted(fd2, m, &n, &err), 0);
		assert_int_equal(n, 0);
		touch("art2/.sbx/other");
		assert_int_equal(sbx_verify_unlisted(fd2, m, &n, &err), 0);
		assert_int_equal(n, 1);
		json_object_set_new(m, "stderr", json_null());
		assert_int_equal(sbx_verify_unlisted(fd2, m, &n, &err), 0);
		assert_int_equal(n, 2);
	}

	/* A manifest without an artifacts array cannot be checked. */
	json_object_del(m, "artifacts");
	err = (struct sbx_error){ 0 };
	assert_int_equal(sbx_verify_unlisted(fd, m, &n, &err), -1);
	assert_int_equal(err.code, SBX_EXIT_FAILED);
	json_decref(m);
}

static void test_manifest_finish_cleans_and_refuses(void **state)
{
	_cleanup_free_ char *path = tmp_path("k13");
	_cleanup_key_ struct sbx_key *key = NULL;
	struct sbx_error err = { 0 };
	char *line = NULL;
	size_t len = 0;
	json_t *m = json_pack("{s:o, s:[s]}", "excerpt", json_stringn("a\x1b[2J\x7f\0b", 8), "names",
			      "ok");

	assert_int_equal(sbx_sign_keygen(path, NULL), 0);
	assert_int_equal(sbx_sign_load_key(path, &key, NULL), 0);
	json_array_append_new(json_object_get(m, "names"), json_string_nocheck("bad\xff"));
	assert_int_equal(sbx_manifest_finish(m, key, &line, &len, &err), 0);
	assert_string_equal(json_string_value(json_object_get(m, "excerpt")),
			    "a\x1b[2J\xef\xbf\xbd\xef\xbf\xbd" "b");
	assert_string_equal(json_string_value(json_array_get(json_object_get(m, "names"), 1)),
			    "bad\xef\xbf\xbd");
	assert_false(sbx_has_control(line, len - 1));
	free(line);

	/* A key jq would order differently, and a real: refused. */
	json_object_set_new(m, "\xf0\x9f\x98\x80", json_true());
	err = (struct sbx_error){ 0 };
	assert_int_equal(sbx_manifest_finish(m, key, &line, &len, &err), -1);
	assert_non_null(strstr(err.msg, "not reproducible by jq"));
	json_object_del(m, "\xf0\x9f\x98\x80");
	json_object_set_new(m, "ratio", json_real(0.5));
	err = (struct sbx_error){ 0 };
	assert_int_equal(sbx_manifest_finish(m, key, &line, &len, &err), -1);
	assert_non_null(strstr(err.msg, "ratio: real number"));
	json_decref(m);
}

/* sbx verify's reading of a manifest: errors are one clean line even when
 * jansson quotes hostile bytes (found by fuzz-verify: a raw 0x1a, or an
 * ESC sequence, went to stderr as it was). */
static void test_manifest_parse_errors_are_clean(void **state)
{
	static const char *const bad[] = {
		"{\"a\":1,\x1b[2J\"b\":2}", "{\"a\":\x1a}", "{\"a\":1\x9b\"}", "{\"a\":\"\x07",
		"[1]", "{\"a\":1,\"a\":2}",
	};
	struct sbx_error err;
	json_t *m;

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		memset(&err, 0, sizeof(err));
		m = sbx_manifest_parse("m.json", bad[i], strlen(bad[i]), &err);
		assert_null(m);
		assert_int_equal(err.code, SBX_EXIT_FAILED);
		assert_int_equal(strncmp(err.msg, "m.json: ", 8), 0);
		for (const char *p = err.msg; *p; p++)
			if ((unsigned char)*p < 0x20 || *p == 0x7f)
				fail_msg("case %zu: control byte in \"%s\"", i, err.msg);
		if (!sbx_utf8_valid(err.msg, strlen(err.msg)))
			fail_msg("case %zu: not UTF-8: \"%s\"", i, err.msg);
	}
	m = sbx_manifest_parse("m.json", "{\"a\":[]}", 8, &err);
	assert_non_null(m);
	json_decref(m);
}

static bool clean_line(const char *s)
{
	if (!sbx_utf8_valid(s, strlen(s)) || sbx_has_control(s, strlen(s)))
		return false;
	for (; *s; s++)
		if ((unsigned char)s[0] == 0xc2 && (unsigned char)s[1] >= 0x80 &&
		    (unsigned char)s[1] <= 0x9f)
			return false;
	return true;
}

/* A hostile manifest's keys appear in the signer's and the verifier's
 * errors escaped: no C1 control (CSI is U+009B), no character cut in two
 * by the path's bound.  Found by fuzz-verify. */
static void test_signature_errors_are_clean(void **state)
{
	_cleanup_free_ char *path = tmp_path("k14");
	_cleanup_key_ struct sbx_key *key = NULL;
	struct sbx_error err = { 0 };
	char key_id[SBX_KEY_ID_LEN], longkey[400];
	char *line = NULL;
	size_t len = 0;
	json_t *m;

	assert_int_equal(sbx_sign_keygen(path, NULL), 0);
	assert_int_equal(sbx_sign_load_key(path, &key, NULL), 0);
	assert_int_equal(sbx_sign_key_id(key, key_id), 0);

	/* The verifier: a real number under a key holding CSI. */
	m = json_pack("{s:f, s:{s:s, s:s, s:s}}", "\xc2\x9b[2J", 0.5, "signature", "alg", "ed25519",
		      "key_id", key_id, "value", "AA==");
	assert_int_equal(sbx_manifest_check_signature(m, key, &err), -1);
	if (!clean_line(err.msg))
		fail_msg("verifier: \"%s\"", err.msg);
	json_decref(m);

	/* ... and 300 two-byte characters, cut by the path's bound. */
	for (size_t i = 0; i < 150; i++)
		memcpy(longkey + 2 * i, "\xc3\xa9", 2);
	longkey[300] = '\0';
	m = json_pack("{s:f, s:{s:s, s:s, s:s}}", longkey, 0.5, "signature", "alg",
		      "ed25519", "key_id", key_id, "value", "AA==");
	memset(&err, 0, sizeof(err));
	assert_int_equal(sbx_manifest_check_signature(m, key, &err), -1);
	if (!clean_line(err.msg))
		fail_msg("verifier, long key: \"%s\"", err.msg);
	json_decref(m);

	/* The signer: a key jq would not reproduce, holding CSI and DEL. */
	m = json_pack("{s:b}", "s\xc2\x87n\x7f", 1);
	memset(&err, 0, sizeof(err));
	assert_int_equal(sbx_manifest_finish(m, key, &line, &len, &err), -1);
	assert_non_null(strstr(err.msg, "not reproducible by jq"));
	if (!clean_line(err.msg))
		fail_msg("signer: \"%s\"", err.msg);
	json_decref(m);
}

static void test_default_key(void **state)
{
	_cleanup_free_ char *xdg = tmp_path("xdg"), *expect = tmp_path("xdg/sbx/signing.key");
	_cleanup_free_ char *expect_pub = tmp_path("xdg/sbx/signing.key.pub");
	_cleanup_free_ char *dir = tmp_path("xdg/sbx"), *explicit_key = tmp_path("explicit");
	_cleanup_free_ char *path = NULL;
	struct sbx_key k1, k2, k3, k4;
	char id1[SBX_KEY_ID_LEN], id2[SBX_KEY_ID_LEN], id3[SBX_KEY_ID_LEN];
	struct sbx_error err = { 0 };

	setenv("XDG_CONFIG_HOME", xdg, 1);
	assert_int_equal(sbx_sign_default_path(false, &path, NULL), 0);
	assert_string_equal(path, expect);
	assert_int_equal(access(xdg, F_OK), -1);

	/* First use creates it (directories 0700), later uses load it. */
	assert_int_equal(sbx_sign_default_key(NULL, NULL, &k1, &err), 0);
	assert_true(k1.has_private);
	assert_int_equal(mode_of(expect), 0600);
	assert_int_equal(mode_of(expect_pub), 0644);
	assert_int_equal(mode_of(dir), 0700);
	assert_int_equal(sbx_sign_default_key(NULL, NULL, &k2, &err), 0);
	assert_int_equal(sbx_sign_key_id(&k1, id1), 0);
	assert_int_equal(sbx_sign_key_id(&k2, id2), 0);
	assert_string_equal(id1, id2);

	/* An explicit or configured key wins, and is never created. */
	err = (struct sbx_error){ 0 };
	assert_int_equal(sbx_sign_default_key(explicit_key, NULL, &k3, &err), -1);
	assert_int_equal(err.errnum, ENOENT);
	assert_int_equal(access(explicit_key, F_OK), -1);
	err = (struct sbx_error){ 0 };
	assert_int_equal(sbx_sign_default_key(NULL, explicit_key, &k3, &err), -1);
	assert_int_equal(access(explicit_key, F_OK), -1);
	assert_int_equal(sbx_sign_keygen(explicit_key, NULL), 0);
	assert_int_equal(sbx_sign_default_key(explicit_key, expect, &k3, &err), 0);
	assert_int_equal(sbx_sign_key_id(&k3, id3), 0);
	assert_string_not_equal(id1, id3);
	assert_int_equal(sbx_sign_default_key(NULL, explicit_key, &k4, &err), 0);

	/* A relative XDG_CONFIG_HOME is ignored (XDG base directory spec). */
	setenv("XDG_CONFIG_HOME", "relative", 1);
	setenv("HOME", tmpdir, 1);
	free(path);
	path = NULL;
	assert_int_equal(sbx_sign_default_path(false, &path, NULL), 0);
	assert_true(strncmp(path, tmpdir, strlen(tmpdir)) == 0);
	assert_non_null(strstr(path, "/.config/sbx/signing.key"));
	sbx_key_clear(&k1);
	sbx_key_clear(&k2);
	sbx_key_clear(&k3);
	sbx_key_clear(&k4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sha256_vectors),
		cmocka_unit_test(test_sha256_fd),
		cmocka_unit_test(test_keygen_files),
		cmocka_unit_test(test_keygen_refuses_overwrite),
		cmocka_unit_test(test_load_key_permissions),
		cmocka_unit_test(test_load_key_owner),
		cmocka_unit_test(test_load_key_rejects),
		cmocka_unit_test(test_key_id),
		cmocka_unit_test(test_sign_verify),
		cmocka_unit_test(test_manifest_finish_and_check),
		cmocka_unit_test(test_manifest_check_line),
		cmocka_unit_test(test_verify_unlisted),
		cmocka_unit_test(test_manifest_finish_cleans_and_refuses),
		cmocka_unit_test(test_manifest_parse_errors_are_clean),
		cmocka_unit_test(test_signature_errors_are_clean),
		cmocka_unit_test(test_default_key),
		cmocka_unit_test(test_rfc8032_vector),
		cmocka_unit_test(test_noncanonical_s),
		cmocka_unit_test(test_key_shapes),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
