/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sign.h - Ed25519 keys and signatures (Nettle), and the signed
 * manifest line (SPEC §7).
 *
 * Keys are files: the private key as PKCS#8 PEM, mode 0600, and beside it
 * FILE.pub, the SubjectPublicKeyInfo PEM, mode 0644 - both readable by
 * `openssl pkey`.  A key is named by its key_id, "sha256:" followed by the
 * lowercase hex SHA-256 of the 32 raw public key bytes (RFC 8032 encoding),
 * i.e. `openssl pkey -pubin -in FILE.pub -outform DER | tail -c 32 |
 * sha256sum`.
 *
 * Permissions of a private key file (decided here, documented in sbx(1)):
 * it must be a regular file owned by the effective uid that gives its
 * group and others no access at all; otherwise loading it is refused (69)
 * with a chown or chmod hint.  Whoever else can read a key can sign as its
 * owner, and whoever owns it can swap it: so root does not sign with a key
 * another user owns, and a key shared with a group (root:sbx 0640) is no
 * longer a deployment sbx accepts - each caller signs with a key of its own.
 */
#ifndef SBX_SIGN_H
#define SBX_SIGN_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

/*
 * An Ed25519 key: always its 32-byte public key (RFC 8032 encoding), and
 * for a private key its 32-byte seed.  Wiped by sbx_key_clear.
 */
struct sbx_key {
	uint8_t pub[32];
	uint8_t seed[32];
	bool has_private;
};

/* Wipe and free a key from sbx_sign_load_key/_pubkey (NULL is fine). */
void sbx_key_free(struct sbx_key *key);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct sbx_key *, sbx_key_free)
#define _cleanup_key_ _cleanup_(sbx_key_freep)

/* "sha256:" + 64 hex digits + NUL */
#define SBX_KEY_ID_LEN 72
/* Base64 of a 64-byte Ed25519 signature, with padding. */
#define SBX_SIG_B64_LEN 88

/**
 * sbx_sign_keygen() - create a new Ed25519 key at @path and @path.pub.
 *
 * Neither file is ever overwritten: each is written to a temporary file in
 * the same directory (created O_EXCL, mode 0600) and then hard-linked into
 * place, which fails on any existing name, symlinks included, and means a
 * concurrent reader never sees a half-written key.  The directory must
 * exist.
 *
 * Return: 0, or -1 with SBX_EXIT_UNAVAILABLE naming the file (errnum EEXIST
 * when one of them exists), or SBX_EXIT_SOFTWARE when no random seed can be
 * had.
 */
int sbx_sign_keygen(const char *path, struct sbx_error *err);

/**
 * sbx_sign_load_key() - load the Ed25519 private key at @path: unencrypted
 * PKCS#8 PEM ("BEGIN PRIVATE KEY"), what `openssl genpkey -algorithm
 * ed25519` and `openssl pkey` write.  Encrypted keys and other encodings
 * are refused with a Hint to convert them, never prompted for.
 * Permissions as described at the top of this file.
 * Return: 0 with *@key owned by the caller (sbx_key_free), or -1 with
 * SBX_EXIT_UNAVAILABLE naming @path (errnum ENOENT when it does not exist).
 */
int sbx_sign_load_key(const char *path, struct sbx_key **key, struct sbx_error *err);

/**
 * sbx_sign_load_pubkey() - load an Ed25519 public key (SubjectPublicKeyInfo
 * PEM, "BEGIN PUBLIC KEY") from @path.
 * Return: 0 with *@key owned by the caller, or -1 with SBX_EXIT_UNAVAILABLE.
 */
int sbx_sign_load_pubkey(const char *path, struct sbx_key **key, struct sbx_error *err);

/**
 * sbx_sign_default_path() - the per-user key path,
 * $XDG_CONFIG_HOME/sbx/signing.key, with ~/.config when XDG_CONFIG_HOME is
 * unset, empty or relative (as the XDG base directory spec says).
 * @create_dirs: also create its missing directories, mode 0700.
 * Return: 0 with *@path owned by the caller, or -1 with
 * SBX_EXIT_UNAVAILABLE when no home directory is known or a directory
 * cannot be created.
 */
int sbx_sign_default_path(bool create_dirs, char **path, struct sbx_error *err);

/* Wipe a key held in place (sbx_sign_default_key's). */
void sbx_key_clear(struct sbx_key *key);

/**
 * sbx_sign_default_key() - the signing key of a run: @explicit_path (--key)
 * if given, else @config_path (the host config's signing_key) if given,
 * else the per-user key, which is created on first use (directories mode
 * 0700) with one notice on stderr:
 * "sbx: created signing key <path> (public key <path>.pub)".
 * Explicit and configured keys are never created.
 * Return: 0 with @key filled (sbx_key_clear it), or -1 (SBX_EXIT_UNAVAILABLE
 * for file problems).
 */
int sbx_sign_default_key(const char *explicit_path, const char *config_path, struct sbx_key *key,
			 struct sbx_error *err);

/**
 * sbx_sign_key_id() - "sha256:<hex>" of @key's raw public key into @out.
 * @key may be a private or a public Ed25519 key.
 * Return: 0, or -1 when @key is NULL.
 */
int sbx_sign_key_id(const struct sbx_key *key, char out[SBX_KEY_ID_LEN]);

/**
 * sbx_sign_bytes() - Ed25519 signature of @len bytes at @msg, as standard
 * base64 with padding (88 characters).
 * Return: 0 with *@b64 owned by the caller, or -1 with SBX_EXIT_SOFTWARE
 * when @key is not a private key.
 */
int sbx_sign_bytes(const struct sbx_key *key, const void *msg, size_t len, char **b64,
		   struct sbx_error *err);

/**
 * sbx_sign_verify_bytes() - check the base64 signature @b64 of @len bytes
 * at @msg with @key (public or private).  Only the canonical encoding of a
 * 64-byte signature is accepted, so a signature has one spelling.
 * Return: 0 when it verifies, or -1 with SBX_EXIT_FAILED saying why
 * (malformed, does not verify).
 */
int sbx_sign_verify_bytes(const struct sbx_key *key, const void *msg, size_t len, const char *b64,
			  struct sbx_error *err);

/**
 * sbx_manifest_finish() - sign @manifest and render its final line.
 * @manifest: a JSON object, changed in place: any "signature" member is
 *            replaced, and any string that holds NUL, DEL or invalid
 *            UTF-8 is cleaned with sbx_canonjson_clean_text() without
 *            truncation, so that a builder's slip costs a U+FFFD, never
 *            the manifest (other control characters are escaped, as jq
 *            escapes them).
 * @key: the private key.
 * @line: on success the canonical manifest with its signature, followed by
 *        "\n" and a NUL, owned by the caller.
 * @len: its length including the "\n".
 *
 * The signature is Ed25519 over the canonical bytes of @manifest without
 * "signature"; then "signature" = {"alg":"ed25519","key_id":...,"value":...}
 * is added and the whole canonicalized again.
 * Return: 0, or -1 with SBX_EXIT_SOFTWARE: a real number, an integer past
 * 2^53-1, or an object key that jq would print or order differently from
 * RFC 8785 (control characters, DEL, characters above U+FFFF) - keys are
 * sbx's own names, so that is a bug, named by its JSON path.
 */
int sbx_manifest_finish(json_t *manifest, const struct sbx_key *key, char **line, size_t *len,
			struct sbx_error *err);

/**
 * sbx_manifest_check_signature() - verify @manifest's "signature" with the
 * public key @pub: alg must be "ed25519", key_id must be @pub's, and value
 * must verify over the canonical bytes of @manifest without "signature".
 * @manifest is not changed.
 * Return: 0 when valid, or -1 with SBX_EXIT_FAILED and the reason.
 */
int sbx_manifest_check_signature(const json_t *manifest, const struct sbx_key *pub, struct sbx_error *err);

/**
 * sbx_manifest_parse() - `sbx verify`'s reading of a manifest's @len bytes
 * (manifest-sign.c): one JSON object, duplicate keys refused, jansson's
 * quoted bytes escaped in the message; then
 * sbx_manifest_check_signature() decides.  @name is the file in messages.
 * Return: a new reference, or NULL with SBX_EXIT_FAILED and the reason.
 */
json_t *sbx_manifest_parse(const char *name, const char *data, size_t len, struct sbx_error *err);

/**
 * sbx_manifest_check_line() - verify a manifest exactly as it was given.
 * @name: the file's name for messages ("(stdin)");
 * @data, @len: its bytes: the canonical line and at most one "\n".  The
 *              same value written any other way (pretty-printed, other
 *              escapes, other member order, a duplicated member) fails.
 * @out: on success the parsed manifest, owned by the caller (may be NULL).
 * Return: 0 when valid, or -1 with SBX_EXIT_FAILED and the reason.
 */
int sbx_manifest_check_line(const char *name, const char *data, size_t len,
			    const struct sbx_key *pub,
			    json_t **out, struct sbx_error *err);

/* The largest manifest read: one lists at most a few thousand artifacts,
 * and 16 MiB is far past any real one and small enough to hold in memory. */
#define SBX_MANIFEST_MAX_BYTES (16u * 1024 * 1024)

/**
 * sbx_manifest_read() - the bytes of the manifest open as @fd, at most
 * SBX_MANIFEST_MAX_BYTES of them.  A regular file is read with one read(2)
 * of its size (fstat), and one larger than the cap is refused unread; any
 * other fd (a pipe) in bounded chunks, refused once past the cap.  Open a
 * file that others can write with O_NONBLOCK: a FIFO then fails at once.
 * @name: the file for messages.
 * Return: 0 with *@data (NUL-terminated, the caller's to free) and *@len,
 * or -1 with SBX_EXIT_FAILED and the reason: too large, a read error (its
 * errnum), or a file that changed size while it was read.
 */
int sbx_manifest_read(int fd, const char *name, char **data, size_t *len, struct sbx_error *err);

/**
 * sbx_manifest_load() - sbx_manifest_read() and then
 * sbx_manifest_check_line() of the bytes read: the manifest in @fd,
 * verified with @pub.  @out as for sbx_manifest_check_line().
 * Return: 0 when valid, or -1 with SBX_EXIT_FAILED and the reason.
 */
int sbx_manifest_load(int fd, const char *name, const struct sbx_key *pub, json_t **out,
		      struct sbx_error *err);

/**
 * sbx_verify_unlisted() - the entries of an artifacts directory that
 * @manifest does not list as promoted: every file, symlink or other
 * non-directory whose path relative to @dirfd is no promoted artifact's
 * `path` (nor .sbx/stdout or .sbx/stderr, the captures sbx run leaves there,
 * when the manifest's stdout or stderr is an object), and every directory
 * with nothing listed below it.  Each is
 * named on stderr (the first few), and counted in *@unlisted.  Nothing is
 * followed: symlinks are entries, not ways in.
 * Return: 0, or -1 with SBX_EXIT_FAILED when DIR cannot be read.
 */
int sbx_verify_unlisted(int dirfd, const json_t *manifest, size_t *unlisted,
			struct sbx_error *err);

#endif
