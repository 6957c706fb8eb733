/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * verdict.c - the validator's answers (verdict.h): written by sbx-validate,
 * read by the broker.  The reading side is the one that matters: every
 * key is expected, every value is checked for its type and its bounds, and
 * nothing of the answer is kept that sbx could not have produced itself
 * (types and flags become sbx's own static names; strings must be short,
 * valid UTF-8 without control characters).
 */
#include "config.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "mediatype.h"
#include "reasoncode.h"
#include "util.h"
#include "verdict.h"

static int bad(char *why, size_t len, const char *what)
{
	snprintf(why, len, "bad answer from the validator: %s", what);
	return -1;
}

/* A string of at most @max bytes, valid UTF-8 (jansson checked that), no
 * C0, DEL or C1 controls, copied into @dst. */
static bool get_text(const json_t *v, size_t max, char *dst)
{
	const char *s = json_string_value(v);
	size_t n = json_string_length(v);

	if (!s || n > max || strlen(s) != n)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c < 0x20 || c == 0x7f || (c == 0xc2 && i + 1 < n &&
					      (unsigned char)s[i + 1] >= 0x80 &&
					      (unsigned char)s[i + 1] <= 0x9f))
			return false;
	}
	memcpy(dst, s, n + 1);
	return true;
}

static bool get_u64(const json_t *v, uint64_t max, uint64_t *out)
{
	json_int_t i;

	if (!json_is_integer(v))
		return false;
	i = json_integer_value(v);
	if (i < 0 || (uint64_t)i > max)
		return false;
	*out = (uint64_t)i;
	return true;
}

/* Every key of @o must be one of @keys. */
static bool only_keys(const json_t *o, const char *const *keys)
{
	const char *k;
	json_t *v;

	json_object_foreach((json_t *)o, k, v) {
		size_t i;

		for (i = 0; keys[i] && strcmp(keys[i], k) != 0; i++)
			;
		if (!keys[i])
			return false;
	}
	return true;
}

static int parse_flags(const json_t *a, unsigned *flags)
{
	size_t i;
	json_t *v;

	if (!json_is_array(a) || json_array_size(a) > SBX_MEDIA_FLAG_COUNT)
		return -1;
	*flags = 0;
	json_array_foreach(a, i, v) {
		unsigned b;

		for (b = 0; b < SBX_MEDIA_FLAG_COUNT; b++)
			if (json_is_string(v) && strcmp(json_string_value(v), sbx_media_flag_name(b)) == 0)
				break;
		if (b == SBX_MEDIA_FLAG_COUNT || (*flags & (1u << b)))
			return -1; /* unknown, or twice */
		*flags |= 1u << b;
	}
	return 0;
}

static int parse_contract(const json_t *o, struct sbx_contract_result *r, char *why, size_t len)
{
	static const char *const keys[] = { "ok", "count", "failures", NULL };
	static const char *const fkeys[] = { "check", "detail", "row", NULL };
	const json_t *ok = json_object_get(o, "ok"), *fails = json_object_get(o, "failures");
	size_t i;
	json_t *f;

	memset(r, 0, sizeof(*r));
	if (!json_is_object(o) || !only_keys(o, keys) || !json_is_boolean(ok) ||
	    !get_u64(json_object_get(o, "count"), INT64_MAX, &r->count) || !json_is_array(fails))
		return bad(why, len, "contract: expected ok, count and failures");
	r->ok = json_is_true(ok);
	/* The listed failures are the first ones, up to the bound. */
	if (json_array_size(fails) > SBX_CONTRACT_MAX_FAILURES ||
	    json_array_size(fails) != (r->count < SBX_CONTRACT_MAX_FAILURES ?
					       r->count : SBX_CONTRACT_MAX_FAILURES) ||
	    r->ok != (r->count == 0))
		return bad(why, len, "contract: ok, count and failures disagree");
	json_array_foreach(fails, i, f) {
		struct sbx_contract_failure *x = &r->fail[i];

		if (!json_is_object(f) || !only_keys(f, fkeys) ||
		    !get_text(json_object_get(f, "check"), sizeof(x->check) - 1, x->check) ||
		    !get_text(json_object_get(f, "detail"), sizeof(x->detail) - 1, x->detail) ||
		    !x->check[0] || !get_u64(json_object_get(f, "row"), INT64_MAX, &x->row))
			return bad(why, len, "contract: a failure is not {check, detail, row}");
	}
	r->n = json_array_size(fails);
	return 0;
}

static bool is_hex64(const char *s)
{
	for (size_t i = 0; i < 64; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return s[64] == '\0';
}

/*
 * The members of an application/zip: each a path, a size, a digest, a
 * type sbx knows (or null) and a verdict; the validator stops at the
 * first one refused, so only the last may be refused.  What the list
 * claims is the validator's word (the broker does not open ZIPs), held to
 * shapes sbx could have produced.
 */
static int parse_members(const json_t *a, struct sbx_verdict *out, char *why, size_t len)
{
	static const char *const keys[] = { "path", "size", "sha256", "media_type", "ok", "reason",
					    "code", "flags", "formula_cells", NULL };
	size_t i;
	json_t *m;

	if (!json_is_array(a) || json_array_size(a) > SBX_VERDICT_MAX_MEMBERS)
		return bad(why, len, "members: an array of at most SBX_VERDICT_MAX_MEMBERS");
	json_array_foreach(a, i, m) {
		struct sbx_verdict_member *x = &out->members[i];
		const json_t *ok = json_object_get(m, "ok"), *type = json_object_get(m, "media_type"),
			     *reason = json_object_get(m, "reason"), *code = json_object_get(m, "code"),
			     *formula = json_object_get(m, "formula_cells");

		if (!json_is_object(m) || !only_keys(m, keys) ||
		    !get_text(json_object_get(m, "path"), SBX_VERDICT_MAX_MEMBER_PATH, x->path) ||
		    !x->path[0] || !get_u64(json_object_get(m, "size"), INT64_MAX, &x->size) ||
		    !get_text(json_object_get(m, "sha256"), 64, x->sha256) || !is_hex64(x->sha256) ||
		    !json_is_boolean(ok) || !json_is_boolean(formula) ||
		    parse_flags(json_object_get(m, "flags"), &x->flags) < 0)
			return bad(why, len, "members: a member is not {path, size, sha256, media_type, "
					     "ok, flags, formula_cells}");
		x->ok = json_is_true(ok);
		x->formula_cells = json_is_true(formula);
		if (!json_is_null(type) &&
		    !(x->media_type = sbx_media_type_static(json_string_value(type))))
			return bad(why, len, "members: a media_type sbx does not know");
		if (x->ok ? (!x->media_type || reason || code) :
			    (!get_text(reason, SBX_VERDICT_MAX_MEMBER_REASON, x->reason) ||
			     !x->reason[0] ||
			     !(x->reason_code = sbx_reason_code_static(json_string_value(code))) ||
			     x->flags || x->formula_cells || i + 1 != json_array_size(a)))
			return bad(why, len, "members: ok, media_type, reason and code disagree, or a "
					     "refused member is not the last");
		/* A promoted archive holds promoted members only; a refused
		 * member refuses the archive. */
		if (!x->ok && out->ok)
			return bad(why, len, "members: a refused member in a valid archive");
	}
	out->n_members = json_array_size(a);
	out->has_members = true;
	return 0;
}

int sbx_verdict_parse(const char *buf, size_t len, size_t index, struct sbx_verdict *out,
		      char *why, size_t why_len)
{
	static const char *const keys[] = { "v", "i", "ok", "media_type", "reason", "flags",
					    "formula_cells", "width", "height", "contract", "code",
					    "members", NULL };
	_cleanup_json_ json_t *root = NULL;
	const json_t *ok, *type, *reason, *formula, *contract, *code;
	uint64_t v = 0, i = 0;

	memset(out, 0, sizeof(*out));
	if (len > SBX_VERDICT_MAX_ANSWER)
		return bad(why, why_len, "too long");
	/* Duplicate keys would let the two sides read different answers. */
	root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, NULL);
	if (!json_is_object(root) || !only_keys(root, keys))
		return bad(why, why_len, "not an answer object");
	if (!get_u64(json_object_get(root, "v"), UINT32_MAX, &v) || v != SBX_VERDICT_VERSION)
		return bad(why, why_len, "unknown version");
	if (!get_u64(json_object_get(root, "i"), SIZE_MAX, &i) || i != index)
		return bad(why, why_len, "an answer to another item");
	out->index = (size_t)i;
	ok = json_object_get(root, "ok");
	type = json_object_get(root, "media_type");
	reason = json_object_get(root, "reason");
	formula = json_object_get(root, "formula_cells");
	contract = json_object_get(root, "contract");
	code = json_object_get(root, "code");
	if (!json_is_boolean(ok) || !json_is_boolean(formula))
		return bad(why, why_len, "ok and formula_cells must be booleans");
	out->ok = json_is_true(ok);
	out->formula_cells = json_is_true(formula);
	if (!json_is_null(type) && !(out->media_type = sbx_media_type_static(json_string_value(type))))
		return bad(why, why_len, "media_type is not a type sbx knows");
	/* Valid means a type; rejected means a reason, and nothing else. */
	if (out->ok ? (!out->media_type || reason) :
		      (!reason || !get_text(reason, SBX_VERDICT_MAX_REASON, out->reason) ||
		       !out->reason[0]))
		return bad(why, why_len, "ok, media_type and reason disagree");
	/* A refusal's code is one of sbx's own names (reasoncode.h). */
	if (out->ok ? code != NULL :
		      !(out->reason_code = sbx_reason_code_static(json_string_value(code))))
		return bad(why, why_len, "a rejected file has a reason code sbx knows, a valid one none");
	if (parse_flags(json_object_get(root, "flags"), &out->flags) < 0)
		return bad(why, why_len, "flags must be distinct names sbx knows");
	if (!get_u64(json_object_get(root, "width"), UINT32_MAX, &out->width) ||
	    !get_u64(json_object_get(root, "height"), UINT32_MAX, &out->height))
		return bad(why, why_len, "width and height must be integers");
	if (contract) {
		out->has_contract = true;
		if (parse_contract(contract, &out->contract, why, why_len) < 0)
			return -1;
	}
	if (!out->ok && (out->flags || out->formula_cells || out->has_contract))
		return bad(why, why_len, "a rejected file has no flags or contract");
	if (json_object_get(root, "members")) {
		/* Members belong to an application/zip, and to nothing else. */
		if (out->media_type && strcmp(out->media_type, "application/zip") != 0)
			return bad(why, why_len, "members of a file that is no application/zip");
		if (parse_members(json_object_get(root, "members"), out, why, why_len) < 0)
			return -1;
	} else if (out->ok && out->media_type && strcmp(out->media_type, "application/zip") == 0) {
		return bad(why, why_len, "a valid application/zip without its members");
	}
	return 0;
}

/* --- the validator's side ------------------------------------------------------ */

char *sbx_verdict_format(const struct sbx_verdict *v)
{
	json_t *o = json_object(), *flags = json_array();
	char *text;

	json_object_set_new(o, "v", json_integer(SBX_VERDICT_VERSION));
	json_object_set_new(o, "i", json_integer((json_int_t)v->index));
	json_object_set_new(o, "ok", json_boolean(v->ok));
	json_object_set_new(o, "media_type", v->media_type ? json_string(v->media_type) : json_null());
	if (!v->ok) {
		json_object_set_new(o, "reason", json_stringn(v->reason, strnlen(v->reason,
										SBX_VERDICT_MAX_REASON)));
		json_object_set_new(o, "code", json_string(v->reason_code ? v->reason_code :
										 SBX_RC_INVALID_CONTENT));
	}
	for (unsigned b = 0; b < SBX_MEDIA_FLAG_COUNT; b++)
		if (v->flags & (1u << b))
			json_array_append_new(flags, json_string(sbx_media_flag_name(b)));
	json_object_set_new(o, "flags", flags);
	json_object_set_new(o, "formula_cells", json_boolean(v->formula_cells));
	json_object_set_new(o, "width", json_integer((json_int_t)v->width));
	json_object_set_new(o, "height", json_integer((json_int_t)v->height));
	if (v->has_contract) {
		json_t *c = json_object(), *fails = json_array();

		json_object_set_new(c, "ok", json_boolean(v->contract.ok));
		json_object_set_new(c, "count", json_integer((json_int_t)v->contract.count));
		for (size_t i = 0; i < v->contract.n; i++)
			json_array_append_new(fails, json_pack("{s:s,s:s,s:I}", "check",
							       v->contract.fail[i].check, "detail",
							       v->contract.fail[i].detail, "row",
							       (json_int_t)v->contract.fail[i].row));
		json_object_set_new(c, "failures", fails);
		json_object_set_new(o, "contract", c);
	}
	if (v->has_members) {
		json_t *ms = json_array();

		for (size_t i = 0; i < v->n_members && i < SBX_VERDICT_MAX_MEMBERS; i++) {
			const struct sbx_verdict_member *x = &v->members[i];
			json_t *m = json_object(), *mf = json_array();

			json_object_set_new(m, "path", json_string(x->path));
			json_object_set_new(m, "size", json_integer((json_int_t)x->size));
			json_object_set_new(m, "sha256", json_string(x->sha256));
			json_object_set_new(m, "media_type",
					    x->media_type ? json_string(x->media_type) : json_null());
			json_object_set_new(m, "ok", json_boolean(x->ok));
			if (!x->ok) {
				json_object_set_new(m, "reason", json_string(x->reason));
				json_object_set_new(m, "code", json_string(x->reason_code ?
									     x->reason_code :
									     SBX_RC_INVALID_CONTENT));
			}
			for (unsigned b = 0; b < SBX_MEDIA_FLAG_COUNT; b++)
				if (x->flags & (1u << b))
					json_array_append_new(mf, json_string(sbx_media_flag_name(b)));
			json_object_set_new(m, "flags", mf);
			json_object_set_new(m, "formula_cells", json_boolean(x->formula_cells));
			json_array_append_new(ms, m);
		}
		json_object_set_new(o, "members", ms);
	}
	text = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (!text)
		abort(); /* out of memory: the answer cannot be made */
	return text;
}
