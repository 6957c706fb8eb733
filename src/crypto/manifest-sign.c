/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * manifest-sign.c - the signed manifest line, and its verification.
 *
 * Signing: clean every string (NUL, DEL and invalid UTF-8 become U+FFFD;
 * other control characters stay, to be escaped), drop any old
 * "signature", canonicalize (RFC 8785), sign those bytes with Ed25519,
 * add the signature object and canonicalize again.  Verifying reverses it: remove "signature",
 * canonicalize, check.  jq -cjS 'del(.signature)' computes the same bytes,
 * which is what lets a user verify with jq and openssl alone.
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "canonjson.h"
#include "json.h"
#include "sign.h"

/*
 * A key jq would print or order differently from RFC 8785, or that is not
 * UTF-8 at all: control characters and DEL (escaped differently), and
 * characters above U+FFFF (JCS orders by UTF-16 units, jq by code points).
 */
static bool key_reproducible(const char *key, size_t len)
{
	if (!sbx_utf8_valid(key, len) || sbx_has_control(key, len))
		return false;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)key[i] >= 0xf0)
			return false;
	return true;
}

static int prepare(json_t *v, unsigned depth, struct sbx_error *err)
{
	const char *key;
	json_t *child;
	size_t i;

	if (depth > SBX_CANONJSON_DEPTH_MAX)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, 0, "manifest: nested too deeply");
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		for (void *it = json_object_iter(v); it; it = json_object_iter_next(v, it)) {
			size_t len = json_object_iter_key_len(it);

			key = json_object_iter_key(it);
			child = json_object_iter_value(it);
			if (!key_reproducible(key, len)) {
				_cleanup_free_ char *k = sbx_xstrndup(key, len);
				char shown[96];

				sbx_json_escape(k, shown, sizeof(shown));
				return sbx_error_set(err, SBX_EXIT_SOFTWARE, 0,
						     "manifest: key \"%s\": not reproducible by jq", shown);
			}
			if (prepare(child, depth + 1, err) < 0)
				return -1;
		}
		return 0;
	case JSON_ARRAY:
		json_array_foreach(v, i, child)
			if (prepare(child, depth + 1, err) < 0)
				return -1;
		return 0;
	case JSON_STRING: {
		const char *s = json_string_value(v);
		size_t len = json_string_length(v);
		_cleanup_free_ char *clean = NULL;

		/* C0 controls are left to the writer's escapes (jq's too);
		 * what jq would write otherwise, or not read, is replaced. */
		if (sbx_utf8_valid(s, len) && !memchr(s, 0, len) && !memchr(s, 0x7f, len))
			return 0;
		clean = sbx_canonjson_clean_text(s, len, SIZE_MAX, NULL);
		if (json_string_setn_nocheck(v, clean, strlen(clean)) < 0)
			return sbx_error_set(err, SBX_EXIT_SOFTWARE, 0, "manifest: out of memory");
		return 0;
	}
	default:
		return 0;
	}
}

int sbx_manifest_finish(json_t *manifest, const struct sbx_key *key, char **line, size_t *len,
			struct sbx_error *err)
{
	_cleanup_free_ char *unsigned_text = NULL, *value = NULL, *text = NULL;
	size_t unsigned_len = 0, text_len = 0;
	char key_id[SBX_KEY_ID_LEN];
	json_t *sig;

	if (!json_is_object(manifest))
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, 0, "manifest: not a JSON object");
	json_object_del(manifest, "signature");
	if (prepare(manifest, 0, err) < 0 ||
	    sbx_canonjson_dump(manifest, &unsigned_text, &unsigned_len, err) < 0)
		return -1;
	if (sbx_sign_key_id(key, key_id) < 0)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, 0, "manifest: signing key is not Ed25519");
	if (sbx_sign_bytes(key, unsigned_text, unsigned_len, &value, err) < 0)
		return -1;

	sig = json_pack("{s:s, s:s, s:s}", "alg", "ed25519", "key_id", key_id, "value", value);
	if (!sig || json_object_set_new(manifest, "signature", sig) < 0)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, 0, "manifest: out of memory");
	if (sbx_canonjson_dump(manifest, &text, &text_len, err) < 0)
		return -1;
	text = sbx_xrealloc(text, text_len + 2);
	text[text_len++] = '\n';
	text[text_len] = '\0';
	*line = TAKE_PTR(text);
	*len = text_len;
	return 0;
}

static bool key_id_wellformed(const char *s)
{
	if (strncmp(s, "sha256:", 7) || strlen(s) != SBX_KEY_ID_LEN - 1)
		return false;
	for (s += 7; *s; s++)
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
			return false;
	return true;
}

static const char *member_string(const json_t *obj, const char *name)
{
	return json_string_value(json_object_get(obj, name));
}

int sbx_manifest_check_signature(const json_t *manifest, const struct sbx_key *pub, struct sbx_error *err)
{
	_cleanup_(json_decrefp) json_t *body = NULL;
	_cleanup_free_ char *text = NULL;
	const json_t *sig = json_object_get(manifest, "signature");
	const char *alg, *key_id, *value;
	char want[SBX_KEY_ID_LEN];
	size_t text_len = 0;

	if (!json_is_object(manifest))
		return sbx_error_set(err, SBX_EXIT_FAILED, 0, "manifest: not a JSON object");
	if (!json_is_object(sig))
		return sbx_error_set(err, SBX_EXIT_FAILED, 0, "signature: missing or not an object");
	alg = member_string(sig, "alg");
	key_id = member_string(sig, "key_id");
	value = member_string(sig, "value");
	if (json_object_size(sig) != 3 || !alg || !key_id || !value)
		return sbx_error_set(err, SBX_EXIT_FAILED, 0,
				     "signature: expected exactly the strings alg, key_id, value");
	if (strcmp(alg, "ed25519"))
		return sbx_error_set(err, SBX_EXIT_FAILED, 0, "signature.alg: not \"ed25519\"");
	if (!key_id_wellformed(key_id))
		return sbx_error_set(err, SBX_EXIT_FAILED, 0,
				     "signature.key_id: expected \"sha256:\" and 64 hex digits");
	if (sbx_sign_key_id(pub, want) < 0)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, 0, "public key is not Ed25519");
	if (strcmp(key_id, want))
		return sbx_error_set(err, SBX_EXIT_FAILED, 0,
				     "signature.key_id: key_id does not match the public key (manifest %s, key %s)",
				     key_id, want);

	/* A shallow copy shares the members; only "signature" is dropped. */
	body = json_copy((json_t *)manifest);
	if (!body)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, 0, "manifest: out of memory");
	json_object_del(body, "signature");
	if (sbx_canonjson_dump(body, &text, &text_len, err) < 0) {
		/* Not sbx's fault: the manifest holds what no signer emits. */
		if (err)
			err->code = SBX_EXIT_FAILED;
		return -1;
	}
	return sbx_sign_verify_bytes(pub, text, text_len, value, err);
}

json_t *sbx_manifest_parse(const char *name, const char *data, size_t len, struct sbx_error *err)
{
	json_error_t jerr;
	char text[sizeof(jerr.text) * 4 + 4];
	json_t *v;

	/* Duplicate keys are refused: with them, sbx and jq could each see a
	 * different manifest behind the same signature. */
	v = json_loadb(data, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!v) {
		/* jansson quotes the bytes at fault: escaped, they cannot
		 * reach the caller's terminal as control sequences. */
		sbx_json_escape(jerr.text, text, sizeof(text));
		sbx_error_set(err, SBX_EXIT_FAILED, 0, "%s: line %d column %d: %s", name, jerr.line,
			      jerr.column, text);
		return NULL;
	}
	if (!json_is_object(v)) {
		json_decref(v);
		sbx_error_set(err, SBX_EXIT_FAILED, 0, "%s: not a JSON object", name);
		return NULL;
	}
	return v;
}

int sbx_manifest_check_line(const char *name, const char *data, size_t len,
			    const struct sbx_key *pub,
			    json_t **out, struct sbx_error *err)
{
	_cleanup_(json_decrefp) json_t *v = NULL;
	_cleanup_free_ char *text = NULL;
	size_t text_len = 0, body = len, at = 0;

	v = sbx_manifest_parse(name, data, len, err);
	if (!v)
		return -1;
	/* The bytes as given, not a re-rendering of what they parse to: a
	 * signed manifest is one canonical line, and any other spelling of
	 * the same value (whitespace, \u escapes, member order) is not what
	 * was signed, nor what jq + openssl would check. */
	if (sbx_canonjson_dump(v, &text, &text_len, NULL) < 0)
		return sbx_error_set(err, SBX_EXIT_FAILED, 0,
				     "%s: holds what no canonical manifest can (a real number, an integer past 2^53-1, nesting too deep)",
				     name);
	if (body && data[body - 1] == '\n')
		body--;
	while (at < body && at < text_len && data[at] == text[at])
		at++;
	if (at != body || body != text_len)
		return sbx_error_set(err, SBX_EXIT_FAILED, 0,
				     "%s: not the canonical line sbx signs (RFC 8785, one line), first difference at byte %zu; the bytes are verified as given",
				     name, at);
	if (sbx_manifest_check_signature(v, pub, err) < 0)
		return -1;
	if (out)
		*out = TAKE_PTR(v);
	return 0;
}

/* Not a regular file (a pipe: sbx verify -): bounded chunks up to the
 * cap, without reading much past it. */
static int read_stream(int fd, const char *name, char **data, size_t *len, struct sbx_error *err)
{
	_cleanup_free_ char *buf = NULL;
	size_t used = 0, cap = 0;

	for (;;) {
		ssize_t n;

		if (cap - used < 65536) {
			cap = cap ? cap * 2 : 65536;
			if (cap > SBX_MANIFEST_MAX_BYTES + 1)
				cap = SBX_MANIFEST_MAX_BYTES + 1;
			buf = sbx_xrealloc(buf, cap + 1);
		}
		n = read(fd, buf + used, cap - used);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return sbx_error_set(err, SBX_EXIT_FAILED, errno, "%s: read", name);
		if (n == 0)
			break;
		used += (size_t)n;
		if (used > SBX_MANIFEST_MAX_BYTES)
			return sbx_error_set(err, SBX_EXIT_FAILED, 0, "%s: larger than %u bytes", name,
					     SBX_MANIFEST_MAX_BYTES);
	}
	buf[used] = '\0';
	*data = TAKE_PTR(buf);
	*len = used;
	return 0;
}

int sbx_manifest_read(int fd, const char *name, char **data, size_t *len, struct sbx_error *err)
{
	_cleanup_free_ char *buf = NULL;
	struct stat st;
	ssize_t n;

	if (fstat(fd, &st) < 0)
		return sbx_error_set(err, SBX_EXIT_FAILED, errno, "%s: stat", name);
	/* (A size of 0 may be a file of /proc's, whose size is not known.) */
	if (!S_ISREG(st.st_mode) || st.st_size == 0)
		return read_stream(fd, name, data, len, err);
	/* A file's size is known: one read of it, and one byte more to see
	 * that it did not grow meanwhile. */
	if (st.st_size > SBX_MANIFEST_MAX_BYTES)
		return sbx_error_set(err, SBX_EXIT_FAILED, 0, "%s: larger than %u bytes", name,
				     SBX_MANIFEST_MAX_BYTES);
	buf = sbx_xmalloc((size_t)st.st_size + 2);
	do
		n = read(fd, buf, (size_t)st.st_size + 1);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return sbx_error_set(err, SBX_EXIT_FAILED, errno, "%s: read", name);
	if (n != st.st_size)
		return sbx_error_set(err, SBX_EXIT_FAILED, 0, "%s: changed while it was read", name);
	buf[n] = '\0';
	*data = TAKE_PTR(buf);
	*len = (size_t)n;
	return 0;
}

int sbx_manifest_load(int fd, const char *name, const struct sbx_key *pub, json_t **out,
		      struct sbx_error *err)
{
	_cleanup_free_ char *data = NULL;
	size_t len = 0;

	if (sbx_manifest_read(fd, name, &data, &len, err) < 0)
		return -1;
	return sbx_manifest_check_line(name, data, len, pub, out, err);
}
