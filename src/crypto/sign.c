/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sign.c - Ed25519 key files, key ids, and raw signatures via OpenSSL EVP.
 */
#include "config.h"

#include <fcntl.h>
#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/pem.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "digest.h"
#include "sign.h"

/* Messages give no OpenSSL reason string: <openssl/err.h> needs the C
 * library's <limits.h>, which src/limits.h shadows under -I src. */

/* A PEM Ed25519 key is ~120 bytes; anything past this is not one. */
#define KEY_FILE_MAX (64 * 1024)

DEFINE_TRIVIAL_CLEANUP_FUNC(BIO *, BIO_free_all)
DEFINE_TRIVIAL_CLEANUP_FUNC(EVP_MD_CTX *, EVP_MD_CTX_free)

/* Private key bytes are wiped, not just freed. */
struct secret {
	char *data;
	size_t len;
};

static void secret_wipe(struct secret *s)
{
	if (s->data) {
		OPENSSL_cleanse(s->data, s->len);
		free(s->data);
	}
}

/* Refuse to prompt on the terminal for the passphrase of an encrypted key:
 * sbx runs unattended. */
static int no_passphrase(char *buf, int size, int rwflag, void *u)
{
	return -1;
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

static int pem_private(EVP_PKEY *key, struct secret *pem, struct sbx_error *err)
{
	_cleanup_(BIO_free_allp) BIO *bio = BIO_new(BIO_s_secmem());
	char *p = NULL;
	long n;

	/* PEM_write_bio_PrivateKey writes PKCS#8 ("BEGIN PRIVATE KEY"). */
	if (!bio || !PEM_write_bio_PrivateKey(bio, key, NULL, NULL, 0, NULL, NULL))
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, 0, "keygen: cannot encode the private key");
	n = BIO_get_mem_data(bio, &p);
	pem->data = sbx_xmalloc((size_t)n);
	memcpy(pem->data, p, (size_t)n);
	pem->len = (size_t)n;
	return 0;
}

static int pem_public(EVP_PKEY *key, char **out, size_t *len, struct sbx_error *err)
{
	_cleanup_(BIO_free_allp) BIO *bio = BIO_new(BIO_s_mem());
	char *p = NULL;
	long n;

	if (!bio || !PEM_write_bio_PUBKEY(bio, key))
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, 0, "keygen: cannot encode the public key");
	n = BIO_get_mem_data(bio, &p);
	*out = sbx_xstrndup(p, (size_t)n);
	*len = (size_t)n;
	return 0;
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
	_cleanup_pkey_ EVP_PKEY *key = NULL;
	_cleanup_(secret_wipe) struct secret priv = { 0 };
	_cleanup_free_ char *pub_path = sbx_xasprintf("%s.pub", path);
	_cleanup_free_ char *pub = NULL;
	size_t pub_len = 0;

	/* Checked first so that an existing .pub does not cost a private key
	 * that then has to be removed again. */
	if (refuse_existing(path, err) < 0 || refuse_existing(pub_path, err) < 0)
		return -1;
	key = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
	if (!key)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, 0, "keygen: OpenSSL cannot generate an Ed25519 key");
	if (pem_private(key, &priv, err) < 0 || pem_public(key, &pub, &pub_len, err) < 0)
		return -1;

	if (write_new_file(path, priv.data, priv.len, 0600, err) < 0)
		return -1;
	if (write_new_file(pub_path, pub, pub_len, 0644, err) < 0) {
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

static int check_ed25519(const char *path, EVP_PKEY *key, struct sbx_error *err)
{
	if (!EVP_PKEY_is_a(key, "ED25519"))
		return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, 0, "%s: not an Ed25519 key (%s)", path,
				     EVP_PKEY_get0_type_name(key));
	return 0;
}

/*
 * The common case, a key sbx keygen wrote: PKCS#8 PEM of an Ed25519 key is
 * always the same 16-byte DER header followed by the 32-byte seed.
 * OpenSSL 3's generic decoder costs several milliseconds on every run (it
 * loads and tries each decoder); this reads that one shape directly and
 * leaves everything else to PEM_read_bio_PrivateKey.  Returns false when
 * the text is not exactly that shape.
 */
static bool ed25519_pkcs8_fast(const char *text, size_t len, unsigned char seed[32])
{
	static const char begin[] = "-----BEGIN PRIVATE KEY-----\n";
	static const char end[] = "\n-----END PRIVATE KEY-----";
	static const unsigned char prefix[16] = { 0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06,
						  0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20 };
	unsigned char der[51];
	const char *b64, *stop;
	bool ok;
	int n;

	if (len < sizeof(begin) || memcmp(text, begin, sizeof(begin) - 1))
		return false;
	b64 = text + sizeof(begin) - 1;
	stop = memmem(b64, len - (size_t)(b64 - text), end, sizeof(end) - 1);
	/* 48 bytes of DER are exactly 64 base64 characters, one line. */
	if (!stop || stop - b64 != 64)
		return false;
	n = EVP_DecodeBlock(der, (const unsigned char *)b64, 64);
	ok = n == 48 && !memcmp(der, prefix, sizeof(prefix));
	if (ok)
		memcpy(seed, der + 16, 32);
	OPENSSL_cleanse(der, sizeof(der));
	return ok;
}

static int load_key(const char *path, struct sbx_key *key, struct sbx_error *err)
{
	_cleanup_(secret_wipe) struct secret file = { 0 };
	_cleanup_(BIO_free_allp) BIO *bio = NULL;
	_cleanup_pkey_ EVP_PKEY *k = NULL;
	int n = read_key_file(path, true, &file, err);

	*key = (struct sbx_key){ 0 };
	if (n < 0)
		return -1;
	if (ed25519_pkcs8_fast(file.data, (size_t)n, key->seed)) {
		key->has_seed = true;
		return 0;
	}
	if (sbx_crypto_init() < 0)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, 0, "%s: initializing OpenSSL failed", path);
	bio = BIO_new_mem_buf(file.data, n);
	if (!bio)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, 0, "%s: out of memory", path);
	k = PEM_read_bio_PrivateKey(bio, NULL, no_passphrase, NULL);
	if (!k)
		return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, 0,
				     "%s: not an unencrypted PEM private key", path);
	if (check_ed25519(path, k, err) < 0)
		return -1;
	key->pkey = TAKE_PTR(k);
	return 0;
}

EVP_PKEY *sbx_key_pkey(struct sbx_key *key)
{
	if (!key->pkey && key->has_seed && sbx_crypto_init() == 0) {
		key->pkey = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, key->seed,
							 sizeof(key->seed));
		OPENSSL_cleanse(key->seed, sizeof(key->seed));
		key->has_seed = false;
	}
	return key->pkey;
}

void sbx_key_clear(struct sbx_key *key)
{
	EVP_PKEY_free(key->pkey);
	OPENSSL_cleanse(key, sizeof(*key));
}

int sbx_sign_load_key(const char *path, EVP_PKEY **key, struct sbx_error *err)
{
	struct sbx_key k;

	if (load_key(path, &k, err) < 0)
		return -1;
	*key = sbx_key_pkey(&k);
	if (!*key)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, 0, "%s: OpenSSL cannot use the key", path);
	return 0;
}

int sbx_sign_load_pubkey(const char *path, EVP_PKEY **key, struct sbx_error *err)
{
	_cleanup_(secret_wipe) struct secret file = { 0 };
	_cleanup_(BIO_free_allp) BIO *bio = NULL;
	_cleanup_pkey_ EVP_PKEY *k = NULL;
	int n = read_key_file(path, false, &file, err);

	if (n < 0)
		return -1;
	bio = BIO_new_mem_buf(file.data, n);
	if (!bio)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, 0, "%s: out of memory", path);
	k = PEM_read_bio_PUBKEY(bio, NULL, no_passphrase, NULL);
	if (!k)
		return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, 0, "%s: not a PEM public key", path);
	if (check_ed25519(path, k, err) < 0)
		return -1;
	*key = TAKE_PTR(k);
	return 0;
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

int sbx_sign_key_id(EVP_PKEY *key, char out[SBX_KEY_ID_LEN])
{
	unsigned char raw[32];
	size_t raw_len = sizeof(raw);
	char hex[SBX_SHA256_HEX_LEN + 1];

	if (!key || !EVP_PKEY_is_a(key, "ED25519") ||
	    !EVP_PKEY_get_raw_public_key(key, raw, &raw_len) || raw_len != sizeof(raw)) {
		return -1;
	}
	if (sbx_sha256_buf(raw, raw_len, hex, NULL) < 0)
		return -1;
	snprintf(out, SBX_KEY_ID_LEN, "sha256:%s", hex);
	return 0;
}

int sbx_sign_bytes(EVP_PKEY *key, const void *msg, size_t len, char **b64,
		   struct sbx_error *err)
{
	_cleanup_(EVP_MD_CTX_freep) EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	unsigned char sig[64];
	size_t sig_len = sizeof(sig);

	/* Ed25519 is "pure": no separate digest, the whole message at once. */
	if (!ctx || EVP_DigestSignInit(ctx, NULL, NULL, NULL, key) != 1 ||
	    EVP_DigestSign(ctx, sig, &sig_len, msg, len) != 1 || sig_len != sizeof(sig))
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, 0, "signing failed in OpenSSL");
	*b64 = sbx_xmalloc(SBX_SIG_B64_LEN + 1);
	EVP_EncodeBlock((unsigned char *)*b64, sig, (int)sig_len);
	return 0;
}

int sbx_sign_verify_bytes(EVP_PKEY *key, const void *msg, size_t len, const char *b64,
			  struct sbx_error *err)
{
	_cleanup_(EVP_MD_CTX_freep) EVP_MD_CTX *ctx = NULL;
	unsigned char sig[66];
	char again[SBX_SIG_B64_LEN + 1];
	int r;

	/* 88 characters decode to 66 bytes, the last two from the "=="
	 * padding; encoding the 64 back must give the same text, which
	 * rejects stray whitespace and non-zero padding bits. */
	if (strlen(b64) != SBX_SIG_B64_LEN ||
	    EVP_DecodeBlock(sig, (const unsigned char *)b64, SBX_SIG_B64_LEN) != 66) {
		return sbx_error_set(err, SBX_EXIT_FAILED, 0,
				     "signature: value is not the base64 of 64 bytes");
	}
	EVP_EncodeBlock((unsigned char *)again, sig, 64);
	if (strcmp(again, b64))
		return sbx_error_set(err, SBX_EXIT_FAILED, 0,
				     "signature: value is not canonical base64");

	ctx = EVP_MD_CTX_new();
	if (!ctx || EVP_DigestVerifyInit(ctx, NULL, NULL, NULL, key) != 1)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, 0, "verification failed in OpenSSL");
	r = EVP_DigestVerify(ctx, sig, 64, msg, len);
	if (r != 1) {
		return sbx_error_set(err, SBX_EXIT_FAILED, 0, "signature: does not verify");
	}
	return 0;
}
