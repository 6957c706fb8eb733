/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sign.c - Ed25519 key files, key ids, and raw signatures via Nettle.
 *
 * The key files are the PEM that OpenSSL reads and writes - PKCS#8 for the
 * private key, SubjectPublicKeyInfo for the public one - and for Ed25519
 * both are a fixed DER header followed by the 32 key bytes (RFC 8410), so
 * they are read and written here without an ASN.1 library.  Signing and
 * verifying are Nettle's ed25519_sha512 (RFC 8032), whose verification
 * refuses a non-canonical S and a public key that is no curve point.
 */
#include "config.h"

#include <fcntl.h>
#include <nettle/base64.h>
#include <nettle/eddsa.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "digest.h"
#include "sign.h"

/* A PEM Ed25519 key is ~120 bytes; anything past this is not one. */
#define KEY_FILE_MAX (64 * 1024)

/* The DER of an Ed25519 key, up to its 32 key bytes (RFC 8410 §7 and §10):
 * PKCS#8 v1 PrivateKeyInfo { version 0, AlgorithmIdentifier { id-Ed25519 },
 * OCTET STRING { OCTET STRING (32) } } and SubjectPublicKeyInfo
 * { AlgorithmIdentifier { id-Ed25519 }, BIT STRING (0 unused bits, 32) }. */
static const uint8_t pkcs8_prefix[16] = { 0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06,
					  0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20 };
static const uint8_t spki_prefix[12] = { 0x30, 0x2a, 0x30, 0x05, 0x06, 0x03,
					 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00 };
/* id-Ed25519 (1.3.101.112), to tell "another algorithm" from "not a key". */
static const uint8_t ed25519_oid[5] = { 0x06, 0x03, 0x2b, 0x65, 0x70 };

/* Private key bytes are wiped, not just freed. */
struct secret {
	char *data;
	size_t len;
};

static void secret_wipe(struct secret *s)
{
	if (s->data) {
		explicit_bzero(s->data, s->len);
		free(s->data);
	}
}

/*
 * Write @data to a fresh temporary file beside @path, then link it into
 * place: link() never replaces an existing name (nor follows a symlink
 * there), and the file appears complete or not at all.
 */
static int write_new_file(const char *path, const char *data, size_t len, mode_t mode,
			  struct sbx_error *err)
{
	_cleanup_free_ char *tmp = sbx_xasprintf("%s.XXXXXX", path);
	_cleanup_close_ int fd = mkostemp(tmp, O_CLOEXEC);
	int r = -1, saved;

	if (fd < 0)
		return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, errno, "%s: cannot create", path);
	if (fchmod(fd, mode) < 0 || sbx_write_all(fd, data, len) < 0 || fsync(fd) < 0) {
		sbx_error_set(err, SBX_EXIT_UNAVAILABLE, errno, "%s: cannot write", path);
		goto out;
	}
	if (link(tmp, path) < 0) {
		sbx_error_set(err, SBX_EXIT_UNAVAILABLE, errno, "%s: cannot create", path);
		goto out;
	}
	r = 0;
out:
	saved = errno;
	unlink(tmp);
	errno = saved;
	return r;
}

/*
 * PEM of @der: the BEGIN line, the base64 in lines of 64 characters, the
 * END line - byte for byte what OpenSSL writes.  Into @out (wiped by the
 * caller when it holds a private key).
 */
static void pem_encode(const char *label, const uint8_t *der, size_t len, struct secret *out)
{
	size_t b64_len = BASE64_ENCODE_RAW_LENGTH(len), o;
	_cleanup_free_ char *b64 = sbx_xmalloc(b64_len);
	int head;

	base64_encode_raw(b64, len, der);
	out->len = strlen(label) * 2 + 40 + b64_len + b64_len / 64 + 1;
	out->data = sbx_xmalloc(out->len);
	head = snprintf(out->data, out->len, "-----BEGIN %s-----\n", label);
	o = (size_t)head;
	for (size_t i = 0; i < b64_len; i += 64) {
		size_t n = b64_len - i < 64 ? b64_len - i : 64;

		memcpy(out->data + o, b64 + i, n);
		o += n;
		out->data[o++] = '\n';
	}
	o += (size_t)snprintf(out->data + o, out->len - o, "-----END %s-----\n", label);
	out->len = o;
	explicit_bzero(b64, b64_len);
}

static int refuse_existing(const char *path, struct sbx_error *err)
{
	struct stat st;

	if (lstat(path, &st) == 0)
		return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, EEXIST,
				     "%s: refusing to overwrite an existing file", path);
	return 0;
}

int sbx_sign_keygen(const char *path, struct sbx_error *err)
{
	_cleanup_(secret_wipe) struct secret priv = { 0 }, pub = { 0 };
	_cleanup_free_ char *pub_path = sbx_xasprintf("%s.pub", path);
	uint8_t der[48], pubder[44];
	struct sbx_key key = { 0 };

	/* Checked first so that an existing .pub does not cost a private key
	 * that then has to be removed again. */
	if (refuse_existing(path, err) < 0 || refuse_existing(pub_path, err) < 0)
		return -1;
	/* The seed is the private key (RFC 8032 §5.1.5): 32 bytes from the
	 * kernel's CSPRNG, which blocks only until it is first seeded. */
	if (getrandom(key.seed, sizeof(key.seed), 0) != (ssize_t)sizeof(key.seed))
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "keygen: getrandom");
	ed25519_sha512_public_key(key.pub, key.seed);
	memcpy(der, pkcs8_prefix, sizeof(pkcs8_prefix));
	memcpy(der + sizeof(pkcs8_prefix), key.seed, sizeof(key.seed));
	memcpy(pubder, spki_prefix, sizeof(spki_prefix));
	memcpy(pubder + sizeof(spki_prefix), key.pub, sizeof(key.pub));
	pem_encode("PRIVATE KEY", der, sizeof(der), &priv);
	pem_encode("PUBLIC KEY", pubder, sizeof(pubder), &pub);
	explicit_bzero(der, sizeof(der));
	sbx_key_clear(&key);

	if (write_new_file(path, priv.data, priv.len, 0600, err) < 0)
		return -1;
	if (write_new_file(pub_path, pub.data, pub.len, 0644, err) < 0) {
		/* Do not leave a private key whose .pub is someone else's. */
		unlink(path);
		return -1;
	}
	return 0;
}

static int read_key_file(const char *path, bool private, struct secret *out,
			 struct sbx_error *err)
{
	/* O_NONBLOCK: a fifo planted at the key path must not hang sbx. */
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	struct stat st;
	ssize_t n;

	if (fd < 0)
		return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, errno, "%s", path);
	if (fstat(fd, &st) < 0)
		return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, errno, "%s", path);
	if (!S_ISREG(st.st_mode))
		return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, 0, "%s: not a regular file", path);
	/* Whoever owns the file can change the key or read it: for root,
	 * which reads any file, a key another user put at the configured
	 * path would sign root's manifests with that user's key. */
	if (private && st.st_uid != geteuid()) {
		sbx_error_set(err, SBX_EXIT_UNAVAILABLE, 0,
			      "%s: private key is owned by uid %u, not by the caller (uid %u)", path,
			      (unsigned)st.st_uid, (unsigned)geteuid());
		sbx_error_hint(err, "chown %u %s, or use a key of your own", (unsigned)geteuid(),
			       path);
		return -1;
	}
	/* Only its owner, who signs with it, has any business with it. */
	if (private && (st.st_mode & 077)) {
		sbx_error_set(err, SBX_EXIT_UNAVAILABLE, 0,
			      "%s: private key is accessible by its group or others (mode %04o)", path,
			      (unsigned)(st.st_mode & 07777));
		sbx_error_hint(err, "chmod 600 %s", path);
		return -1;
	}
	if (st.st_size > KEY_FILE_MAX)
		return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, 0, "%s: too large for a key file", path);

	/* Sized by the file (one byte more shows a file that grew), so that
	 * wiping it touches no more memory than it holds. */
	out->len = (size_t)st.st_size + 2;
	out->data = sbx_xmalloc(out->len);
	n = sbx_read_all(fd, out->data, out->len - 1);
	if (n < 0)
		return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, errno, "%s: read", path);
	if (n > st.st_size)
		return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, 0, "%s: changed while read", path);
	out->data[n] = '\0';
	return (int)n;
}

/*
 * The DER inside a PEM block labelled @label: @text must be that block and
 * nothing else - the BEGIN line, base64 lines, the END line and at most
 * trailing white space.  Decoded into @der (room for @max bytes).
 * Return: the DER's length, or -1 when @text is not such a block.
 */
static ssize_t pem_decode(const char *text, size_t len, const char *label, uint8_t *der,
			  size_t max)
{
	_cleanup_free_ char *begin = sbx_xasprintf("-----BEGIN %s-----\n", label);
	_cleanup_free_ char *end = sbx_xasprintf("-----END %s-----", label);
	struct base64_decode_ctx ctx;
	const char *body, *stop;
	size_t out = 0;

	if (len < strlen(begin) || memcmp(text, begin, strlen(begin)))
		return -1;
	body = text + strlen(begin);
	stop = memmem(body, len - (size_t)(body - text), end, strlen(end));
	if (!stop || stop == body || stop[-1] != '\n')
		return -1;
	for (const char *p = stop + strlen(end); p < text + len; p++)
		if (*p == '\0' || !strchr(" \t\r\n", *p))
			return -1;
	/* Nettle's decoder skips white space between characters; anything
	 * else that is not base64 fails it.  (The file is at most
	 * KEY_FILE_MAX bytes, so the buffer is bounded.) */
	size_t room = BASE64_DECODE_LENGTH((size_t)(stop - body));
	_cleanup_free_ uint8_t *buf = sbx_xmalloc(room + 1);
	bool ok;

	base64_decode_init(&ctx);
	ok = base64_decode_update(&ctx, &out, buf, (size_t)(stop - body), body) &&
	     base64_decode_final(&ctx) && out <= max;
	if (ok)
		memcpy(der, buf, out);
	explicit_bzero(buf, room + 1);
	return ok ? (ssize_t)out : -1;
}

/* Why a PEM file that is not our Ed25519 key was refused, with the Hint
 * that converts one OpenSSL can read. */
static int refuse_key(const char *path, const char *text, size_t len, bool private,
		      const uint8_t *der, ssize_t der_len, struct sbx_error *err)
{
	const char *what = private ? "private" : "public";

	if (private && memmem(text, len, "ENCRYPTED", 9)) {
		sbx_error_set(err, SBX_EXIT_UNAVAILABLE, 0,
			      "%s: an encrypted private key (sbx runs unattended and asks for no "
			      "passphrase)", path);
		sbx_error_hint(err, "openssl pkey -in %s -out KEY.new (then chmod 600 KEY.new)", path);
		return -1;
	}
	if (der_len > 0 && !memmem(der, (size_t)der_len, ed25519_oid, sizeof(ed25519_oid)))
		return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, 0, "%s: not an Ed25519 key", path);
	sbx_error_set(err, SBX_EXIT_UNAVAILABLE, 0, "%s: not an Ed25519 %s key in %s PEM", path,
		      what, private ? "PKCS#8" : "SubjectPublicKeyInfo");
	sbx_error_hint(err, "openssl pkey %s-in %s -out KEY.new%s writes that form",
		       private ? "" : "-pubin ", path, private ? " (then chmod 600 KEY.new)" : "");
	return -1;
}

static int load_key(const char *path, struct sbx_key *key, struct sbx_error *err)
{
	_cleanup_(secret_wipe) struct secret file = { 0 };
	uint8_t der[64];
	ssize_t der_len;
	int n = read_key_file(path, true, &file, err);
	int r = 0;

	*key = (struct sbx_key){ 0 };
	if (n < 0)
		return -1;
	der_len = pem_decode(file.data, (size_t)n, "PRIVATE KEY", der, sizeof(der));
	if (der_len == 48 && !memcmp(der, pkcs8_prefix, sizeof(pkcs8_prefix))) {
		memcpy(key->seed, der + sizeof(pkcs8_prefix), sizeof(key->seed));
		ed25519_sha512_public_key(key->pub, key->seed);
		key->has_private = true;
	} else {
		r = refuse_key(path, file.data, (size_t)n, true, der, der_len, err);
	}
	explicit_bzero(der, sizeof(der));
	return r;
}

int sbx_sign_load_key(const char *path, struct sbx_key **key, struct sbx_error *err)
{
	_cleanup_key_ struct sbx_key *k = sbx_xmalloc(sizeof(*k));

	if (load_key(path, k, err) < 0)
		return -1;
	*key = TAKE_PTR(k);
	return 0;
}

int sbx_sign_load_pubkey(const char *path, struct sbx_key **key, struct sbx_error *err)
{
	_cleanup_(secret_wipe) struct secret file = { 0 };
	_cleanup_key_ struct sbx_key *k = NULL;
	uint8_t der[64];
	ssize_t der_len;
	int n = read_key_file(path, false, &file, err);

	if (n < 0)
		return -1;
	der_len = pem_decode(file.data, (size_t)n, "PUBLIC KEY", der, sizeof(der));
	if (der_len != 44 || memcmp(der, spki_prefix, sizeof(spki_prefix)))
		return refuse_key(path, file.data, (size_t)n, false, der, der_len, err);
	k = sbx_xmalloc(sizeof(*k));
	*k = (struct sbx_key){ 0 };
	memcpy(k->pub, der + sizeof(spki_prefix), sizeof(k->pub));
	*key = TAKE_PTR(k);
	return 0;
}

void sbx_key_clear(struct sbx_key *key)
{
	explicit_bzero(key, sizeof(*key));
}

void sbx_key_free(struct sbx_key *key)
{
	if (key) {
		sbx_key_clear(key);
		free(key);
	}
}

static const char *home_dir(void)
{
	const char *home = getenv("HOME");
	struct passwd *pw;

	if (home && home[0] == '/')
		return home;
	pw = getpwuid(getuid());
	return pw && pw->pw_dir && pw->pw_dir[0] == '/' ? pw->pw_dir : NULL;
}

/* mkdir -p of the directory part of @path, new directories 0700. */
static int make_parents(const char *path, struct sbx_error *err)
{
	_cleanup_free_ char *dir = sbx_xstrdup(path);
	char *slash = strrchr(dir, '/');

	if (!slash || slash == dir)
		return 0;
	*slash = '\0';
	for (char *p = dir + 1; ; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		char saved = *p;
		*p = '\0';
		if (mkdir(dir, 0700) < 0 && errno != EEXIST)
			return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, errno, "%s: cannot create", dir);
		*p = saved;
		if (!saved)
			break;
	}
	return 0;
}

int sbx_sign_default_path(bool create_dirs, char **path, struct sbx_error *err)
{
	const char *xdg = getenv("XDG_CONFIG_HOME");
	_cleanup_free_ char *p = NULL;

	if (xdg && xdg[0] == '/') {
		p = sbx_xasprintf("%s/sbx/signing.key", xdg);
	} else {
		const char *home = home_dir();

		if (!home)
			return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, 0,
					     "signing key: no home directory to keep the default key in");
		p = sbx_xasprintf("%s/.config/sbx/signing.key", home);
	}
	if (create_dirs && make_parents(p, err) < 0)
		return -1;
	*path = TAKE_PTR(p);
	return 0;
}


int sbx_sign_default_key(const char *explicit_path, const char *config_path, struct sbx_key *key,
			 struct sbx_error *err)
{
	_cleanup_free_ char *path = NULL;
	struct sbx_error gen = { 0 };
	struct stat st;

	*key = (struct sbx_key){ 0 };
	if (explicit_path)
		return load_key(explicit_path, key, err);
	if (config_path)
		return load_key(config_path, key, err);
	if (sbx_sign_default_path(true, &path, err) < 0)
		return -1;
	if (lstat(path, &st) < 0 && errno == ENOENT) {
		if (sbx_sign_keygen(path, &gen) == 0) {
			sbx_warn("created signing key %s (public key %s.pub)", path, path);
		} else if (gen.errnum != EEXIST) {
			/* EEXIST: a concurrent sbx created it first; use
			 * theirs, which link() made visible only whole. */
			*err = gen;
			return -1;
		}
	}
	return load_key(path, key, err);
}

int sbx_sign_key_id(const struct sbx_key *key, char out[SBX_KEY_ID_LEN])
{
	char hex[SBX_SHA256_HEX_LEN + 1];

	if (!key || sbx_sha256_buf(key->pub, sizeof(key->pub), hex, NULL) < 0)
		return -1;
	snprintf(out, SBX_KEY_ID_LEN, "sha256:%s", hex);
	return 0;
}

int sbx_sign_bytes(const struct sbx_key *key, const void *msg, size_t len, char **b64,
		   struct sbx_error *err)
{
	uint8_t sig[ED25519_SIGNATURE_SIZE];

	if (!key || !key->has_private)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, 0, "signing: no private key");
	/* Ed25519 is "pure": no separate digest, the whole message at once. */
	ed25519_sha512_sign(key->pub, key->seed, len, msg, sig);
	*b64 = sbx_xmalloc(SBX_SIG_B64_LEN + 1);
	base64_encode_raw(*b64, sizeof(sig), sig);
	(*b64)[SBX_SIG_B64_LEN] = '\0';
	return 0;
}

int sbx_sign_verify_bytes(const struct sbx_key *key, const void *msg, size_t len, const char *b64,
			  struct sbx_error *err)
{
	struct base64_decode_ctx ctx;
	uint8_t sig[BASE64_DECODE_LENGTH(SBX_SIG_B64_LEN)];
	char again[SBX_SIG_B64_LEN + 1];
	size_t n = 0;

	/* 88 characters are the 64 bytes and "=="; encoding them back must
	 * give the same text, which rejects white space (which the decoder
	 * would skip).  Nettle's decoder itself refuses non-zero padding
	 * bits; either way a signature has one spelling. */
	base64_decode_init(&ctx);
	if (strlen(b64) != SBX_SIG_B64_LEN ||
	    !base64_decode_update(&ctx, &n, sig, SBX_SIG_B64_LEN, b64) ||
	    !base64_decode_final(&ctx) || n != ED25519_SIGNATURE_SIZE) {
		return sbx_error_set(err, SBX_EXIT_FAILED, 0,
				     "signature: value is not the canonical base64 of 64 bytes");
	}
	base64_encode_raw(again, ED25519_SIGNATURE_SIZE, sig);
	again[SBX_SIG_B64_LEN] = '\0';
	if (strcmp(again, b64))
		return sbx_error_set(err, SBX_EXIT_FAILED, 0,
				     "signature: value is not the canonical base64 of 64 bytes");
	if (!key || !ed25519_sha512_verify(key->pub, len, msg, sig))
		return sbx_error_set(err, SBX_EXIT_FAILED, 0, "signature: does not verify");
	return 0;
}
