/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * contract.c - output contracts: the parser (65 for a malformed one), the
 * type admission (77), and the checking of a collection's candidates.
 *
 * Which checks a contract may hold depends on its media type, given as
 * "media_type" or named by the path's extension (the two must agree: the
 * collector rejects a file whose content and extension disagree anyway,
 * so a contract that asks for anything else could never be met):
 *
 *   every type          media_type, required, hold, bytes
 *   text/csv, TSV       header, columns, rows
 *   image/png, jpeg     width, height
 *   text types          lines, pattern   (text/plain, text/markdown,
 *                                         text/html, application/x-ndjson)
 *   application/json    schema
 *
 * A check that does not apply to the type is an error rather than
 * ignored, so a caller never believes a check ran that did not.  The
 * CSV checks are in contract-csv.c, the text checks in contract-text.c.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "collect-internal.h"
#include "collect.h"
#include "contract.h"
#include "jschema.h"
#include "json.h"
#include "regex.h"
#include "util.h"
#include "validate.h"

static const char *const entry_keys[] = {
	"media_type", "required", "hold", "bytes", "rows", "header", "columns",
	"width", "height", "lines", "pattern", "schema", NULL,
};
static const char *const column_keys[] = {
	"type", "min", "max", "pattern", "unique", "not_null", "sum", NULL,
};
static const char *const range_keys[] = { "min", "max", NULL };
static const char *const sum_keys[] = { "equals", "tolerance", NULL };

/* The types sbx validates (validate.c), as static strings. */
static const char *const known_types[] = {
	"image/png", "image/jpeg", "application/pdf", "text/plain", "text/csv",
	"application/json", "text/tab-separated-values", "application/x-ndjson",
	"image/svg+xml", "text/html", "text/markdown", NULL,
};

static const char *known_type(const char *s)
{
	for (size_t i = 0; known_types[i]; i++)
		if (strcmp(known_types[i], s) == 0)
			return known_types[i];
	return NULL;
}

static bool is_csv(const char *t)
{
	return !strcmp(t, "text/csv") || !strcmp(t, "text/tab-separated-values");
}

static bool is_image(const char *t)
{
	return !strcmp(t, "image/png") || !strcmp(t, "image/jpeg");
}

static bool is_text(const char *t)
{
	return !strcmp(t, "text/plain") || !strcmp(t, "text/markdown") || !strcmp(t, "text/html") ||
	       !strcmp(t, "application/x-ndjson");
}

static int parse_range(const struct sbx_jctx *c, const char *parent, const char *key,
		       const json_t *v, struct sbx_contract_range *r)
{
	char p[SBX_JSON_PATH_MAX], q[SBX_JSON_PATH_MAX];
	const json_t *m;

	sbx_json_path_key(p, parent, key);
	if (sbx_json_object(c, p, v) < 0 || sbx_json_check_keys(c, p, v, range_keys) < 0)
		return -1;
	if (json_object_size(v) == 0)
		return sbx_json_expected(c, p, v, "an object with \"min\", \"max\" or both");
	if ((m = json_object_get(v, "min"))) {
		sbx_json_path_key(q, p, "min");
		if (sbx_json_uint(c, q, m, 0, INT64_MAX, &r->min) < 0)
			return -1;
		r->has_min = true;
	}
	if ((m = json_object_get(v, "max"))) {
		sbx_json_path_key(q, p, "max");
		if (sbx_json_uint(c, q, m, 0, INT64_MAX, &r->max) < 0)
			return -1;
		r->has_max = true;
	}
	if (r->has_min && r->has_max && r->min > r->max) {
		sbx_json_path_key(q, p, "max");
		return sbx_json_error(c, q, "must not be less than min (%llu), got %llu",
				      (unsigned long long)r->min, (unsigned long long)r->max);
	}
	return 0;
}

static int parse_number(const struct sbx_jctx *c, const char *path, const json_t *v, bool nonneg,
			double *out)
{
	/* jansson refuses 1e400 at load time; NaN and inf are not JSON. */
	if (!json_is_number(v) || !isfinite(json_number_value(v)) ||
	    (nonneg && json_number_value(v) < 0))
		return sbx_json_expected(c, path, v, nonneg ? "a non-negative number" : "a number");
	*out = json_number_value(v);
	return 0;
}

static int parse_regex(const struct sbx_jctx *c, const char *path, const json_t *v,
		       unsigned flags, struct sbx_regex **out)
{
	char why[256];
	int r;

	if (sbx_json_string(c, path, v, SBX_REGEX_MAX_PATTERN, NULL) < 0)
		return -1;
	r = sbx_regex_compile(json_string_value(v), flags, out, why, sizeof(why));
	if (r == -ENOMEM)
		return sbx_error_set(c->err, SBX_EXIT_SOFTWARE, ENOMEM, "%s: %s: compiling the pattern",
				     c->source, path);
	if (r < 0)
		return sbx_json_error(c, path, "expected a regular expression (PCRE2): %s", why);
	return 0;
}

static int parse_date_bound(const struct sbx_jctx *c, const char *path, const json_t *v,
			    char **out)
{
	if (!json_is_string(v) || !sbx_contract_date_valid(json_string_value(v)))
		return sbx_json_expected(c, path, v, "an ISO 8601 date (YYYY-MM-DD)");
	*out = sbx_xstrdup(json_string_value(v));
	return 0;
}

static int parse_type(const struct sbx_jctx *c, const char *path, const json_t *v,
		      enum sbx_contract_type *t)
{
	static const char *const names[] = { "string", "integer", "number", "date" };
	static const enum sbx_contract_type types[] = { SBX_COL_STRING, SBX_COL_INTEGER,
							SBX_COL_NUMBER, SBX_COL_DATE };

	for (size_t i = 0; json_is_string(v) && i < ARRAY_SIZE(names); i++)
		if (strcmp(json_string_value(v), names[i]) == 0) {
			*t = types[i];
			return 0;
		}
	return sbx_json_expected(c, path, v, "\"string\", \"integer\", \"number\" or \"date\"");
}

static int parse_column(const struct sbx_jctx *c, const char *parent, const char *name,
			const json_t *v, struct sbx_contract_column *col)
{
	char p[SBX_JSON_PATH_MAX], q[SBX_JSON_PATH_MAX];
	const json_t *m;

	sbx_json_path_key(p, parent, name);
	col->name = sbx_xstrdup(name);
	if (sbx_json_object(c, p, v) < 0 || sbx_json_check_keys(c, p, v, column_keys) < 0)
		return -1;
	if ((m = json_object_get(v, "type"))) {
		sbx_json_path_key(q, p, "type");
		if (parse_type(c, q, m, &col->type) < 0)
			return -1;
	}
	for (int i = 0; i < 2; i++) {
		const char *k = i ? "max" : "min";

		if (!(m = json_object_get(v, k)))
			continue;
		sbx_json_path_key(q, p, k);
		if (col->type == SBX_COL_DATE) {
			if (parse_date_bound(c, q, m, i ? &col->max_date : &col->min_date) < 0)
				return -1;
		} else if (col->type == SBX_COL_INTEGER || col->type == SBX_COL_NUMBER) {
			if (parse_number(c, q, m, false, i ? &col->max : &col->min) < 0)
				return -1;
		} else {
			return sbx_json_error(c, q, "needs \"type\" integer, number or date");
		}
		*(i ? &col->has_max : &col->has_min) = true;
	}
	if (col->has_min && col->has_max &&
	    (col->type == SBX_COL_DATE ? strcmp(col->min_date, col->max_date) > 0 :
					 col->min > col->max)) {
		sbx_json_path_key(q, p, "max");
		return sbx_json_error(c, q, "must not be less than min");
	}
	if ((m = json_object_get(v, "pattern"))) {
		sbx_json_path_key(q, p, "pattern");
		if (parse_regex(c, q, m, SBX_REGEX_WHOLE, &col->pattern) < 0)
			return -1;
	}
	if ((m = json_object_get(v, "unique"))) {
		sbx_json_path_key(q, p, "unique");
		if (sbx_json_bool(c, q, m, &col->unique) < 0)
			return -1;
	}
	if ((m = json_object_get(v, "not_null"))) {
		sbx_json_path_key(q, p, "not_null");
		if (sbx_json_bool(c, q, m, &col->not_null) < 0)
			return -1;
	}
	if ((m = json_object_get(v, "sum"))) {
		const json_t *e, *t;

		sbx_json_path_key(q, p, "sum");
		if (col->type != SBX_COL_INTEGER && col->type != SBX_COL_NUMBER)
			return sbx_json_error(c, q, "needs \"type\" integer or number");
		if (sbx_json_object(c, q, m) < 0 || sbx_json_check_keys(c, q, m, sum_keys) < 0 ||
		    !(e = sbx_json_required(c, q, m, "equals")))
			return -1;
		{
			char r[SBX_JSON_PATH_MAX];

			sbx_json_path_key(r, q, "equals");
			if (parse_number(c, r, e, false, &col->sum_equals) < 0)
				return -1;
			if ((t = json_object_get(m, "tolerance"))) {
				sbx_json_path_key(r, q, "tolerance");
				if (parse_number(c, r, t, true, &col->sum_tolerance) < 0)
					return -1;
			}
		}
		col->has_sum = true;
	}
	return 0;
}

static int parse_columns(const struct sbx_jctx *c, const char *parent, const json_t *v,
			 struct sbx_contract *k)
{
	char p[SBX_JSON_PATH_MAX];
	const char *name;
	json_t *m;
	size_t uniq = 0;

	sbx_json_path_key(p, parent, "columns");
	if (sbx_json_object(c, p, v) < 0)
		return -1;
	if (json_object_size(v) == 0 || json_object_size(v) > SBX_CONTRACT_MAX_COLUMNS)
		return sbx_json_expected(c, p, v, "an object of 1 to 64 columns by name");
	k->cols = sbx_xcalloc(json_object_size(v), sizeof(*k->cols));
	json_object_foreach((json_t *)v, name, m) {
		struct sbx_contract_column *col = &k->cols[k->ncols++];

		if (parse_column(c, p, name, m, col) < 0)
			return -1;
		if (col->unique && ++uniq > SBX_CONTRACT_MAX_UNIQUE) {
			char q[SBX_JSON_PATH_MAX], r[SBX_JSON_PATH_MAX];

			sbx_json_path_key(q, p, name);
			sbx_json_path_key(r, q, "unique");
			return sbx_json_error(c, r, "at most %d unique columns an output",
					      SBX_CONTRACT_MAX_UNIQUE);
		}
	}
	return 0;
}

static int parse_header(const struct sbx_jctx *c, const char *parent, const json_t *v,
			struct sbx_contract *k)
{
	char p[SBX_JSON_PATH_MAX];

	sbx_json_path_key(p, parent, "header");
	if (sbx_json_array(c, p, v, SBX_CONTRACT_MAX_HEADER) < 0 ||
	    sbx_json_strv(c, p, v, SBX_CONTRACT_MAX_HEADER, 1024, NULL, NULL, false, &k->header) < 0)
		return -1;
	if (json_array_size(v) == 0)
		return sbx_json_expected(c, p, v, "a non-empty array of column names");
	k->nheader = json_array_size(v);
	return 0;
}

/* A check @key present in @v that the type does not have: an error. */
static int not_for_type(const struct sbx_jctx *c, const char *parent, const json_t *v,
			const char *key, bool applies, const char *which)
{
	char p[SBX_JSON_PATH_MAX];

	if (applies || !json_object_get(v, key))
		return 0;
	sbx_json_path_key(p, parent, key);
	return sbx_json_error(c, p, "applies to %s outputs only", which);
}

static int parse_entry(const struct sbx_jctx *c, const char *path, const json_t *v,
		       struct sbx_contract *k)
{
	char p[SBX_JSON_PATH_MAX], q[SBX_JSON_PATH_MAX];
	const char *base = strrchr(path, '/'), *by_name;
	const json_t *m;

	base = base ? base + 1 : path;
	sbx_json_path_key(p, "outputs", path);
	k->path = sbx_xstrdup(path);
	k->required = true;
	if (sbx_json_object(c, p, v) < 0 || sbx_json_check_keys(c, p, v, entry_keys) < 0)
		return -1;
	by_name = sbx_media_type_for_name(base);
	if (!by_name)
		return sbx_json_error(c, p, "expected a path whose extension names a media type sbx "
					    "validates (.csv, .png, .json, ...)");
	k->media_type = by_name;
	if ((m = json_object_get(v, "media_type"))) {
		const char *t = json_is_string(m) ? known_type(json_string_value(m)) : NULL;

		sbx_json_path_key(q, p, "media_type");
		/* .md is text/plain where only that is allowed (collect.c). */
		if (!t || (strcmp(t, by_name) != 0 &&
			   !(strcmp(by_name, "text/markdown") == 0 && strcmp(t, "text/plain") == 0))) {
			char want[128];

			snprintf(want, sizeof(want), "%s, the type of the path's extension", by_name);
			return sbx_json_expected(c, q, m, want);
		}
		k->media_type = t;
	}
	if ((m = json_object_get(v, "required"))) {
		sbx_json_path_key(q, p, "required");
		if (sbx_json_bool(c, q, m, &k->required) < 0)
			return -1;
	}
	if ((m = json_object_get(v, "hold"))) {
		sbx_json_path_key(q, p, "hold");
		if (sbx_json_bool(c, q, m, &k->hold) < 0)
			return -1;
		/* A held output waits for `sbx promote`, so the run itself never
		 * promotes it: it cannot also be what success requires. */
		if (k->hold && json_object_get(v, "required")) {
			if (k->required)
				return sbx_json_expected(c, q, m, "false when \"required\" is true "
							 "(a held output is not promoted by the run)");
		} else if (k->hold) {
			k->required = false;
		}
	}
	if (not_for_type(c, p, v, "rows", is_csv(k->media_type), "text/csv and TSV") < 0 ||
	    not_for_type(c, p, v, "header", is_csv(k->media_type), "text/csv and TSV") < 0 ||
	    not_for_type(c, p, v, "columns", is_csv(k->media_type), "text/csv and TSV") < 0 ||
	    not_for_type(c, p, v, "width", is_image(k->media_type), "image/png and image/jpeg") < 0 ||
	    not_for_type(c, p, v, "height", is_image(k->media_type), "image/png and image/jpeg") < 0 ||
	    not_for_type(c, p, v, "lines", is_text(k->media_type),
			 "text/plain, text/markdown, text/html and application/x-ndjson") < 0 ||
	    not_for_type(c, p, v, "pattern", is_text(k->media_type),
			 "text/plain, text/markdown, text/html and application/x-ndjson") < 0 ||
	    not_for_type(c, p, v, "schema", !strcmp(k->media_type, "application/json"),
			 "application/json") < 0)
		return -1;
	if (((m = json_object_get(v, "bytes")) && parse_range(c, p, "bytes", m, &k->bytes) < 0) ||
	    ((m = json_object_get(v, "rows")) && parse_range(c, p, "rows", m, &k->rows) < 0) ||
	    ((m = json_object_get(v, "width")) && parse_range(c, p, "width", m, &k->width) < 0) ||
	    ((m = json_object_get(v, "height")) && parse_range(c, p, "height", m, &k->height) < 0) ||
	    ((m = json_object_get(v, "lines")) && parse_range(c, p, "lines", m, &k->lines) < 0) ||
	    ((m = json_object_get(v, "header")) && parse_header(c, p, m, k) < 0) ||
	    ((m = json_object_get(v, "columns")) && parse_columns(c, p, m, k) < 0))
		return -1;
	if ((m = json_object_get(v, "pattern"))) {
		sbx_json_path_key(q, p, "pattern");
		if (parse_regex(c, q, m, SBX_REGEX_SEARCH, &k->pattern) < 0)
			return -1;
	}
	if ((m = json_object_get(v, "schema"))) {
		char why[512];
		int r;

		sbx_json_path_key(q, p, "schema");
		r = sbx_jschema_compile(m, &k->schema, why, sizeof(why));
		if (r == -ENOMEM)
			return sbx_error_set(c->err, SBX_EXIT_SOFTWARE, ENOMEM, "%s: %s: compiling the schema",
					     c->source, q);
		if (r < 0)
			return sbx_json_error(c, q, "%s", why);
	}
	return 0;
}

int sbx_contracts_parse(const json_t *outputs, const char *source, struct sbx_contracts *out,
			struct sbx_error *err)
{
	struct sbx_jctx c = { .source = source, .code = SBX_EXIT_INVALID, .err = err };
	const char *path;
	json_t *v;

	memset(out, 0, sizeof(*out));
	if (!outputs)
		return 0;
	if (sbx_json_object(&c, "outputs", outputs) < 0)
		return -1;
	if (json_object_size(outputs) > SBX_CONTRACT_MAX_OUTPUTS)
		return sbx_json_error(&c, "outputs", "at most %d outputs", SBX_CONTRACT_MAX_OUTPUTS);
	out->v = sbx_xcalloc(json_object_size(outputs) + 1, sizeof(*out->v));
	json_object_foreach((json_t *)outputs, path, v) {
		if (parse_entry(&c, path, v, &out->v[out->n++]) < 0)
			return -1;
	}
	return 0;
}

int sbx_contracts_admit(const struct sbx_contracts *cs, const char *source, const char *profile,
			char *const *profile_types, char ***allowed, struct sbx_error *err)
{
	struct sbx_jctx c = { .source = source, .code = SBX_EXIT_REFUSED, .err = err };

	for (size_t i = 0; i < cs->n; i++) {
		const char *t = cs->v[i].media_type;
		char p[SBX_JSON_PATH_MAX];
		bool ok = false;
		size_t n = 0;

		for (char *const *a = profile_types; a && *a; a++)
			ok |= strcmp(*a, t) == 0;
		if (!ok) {
			sbx_json_path_key(p, "outputs", cs->v[i].path);
			return sbx_json_error(&c, p, "profile \"%s\" does not allow output type %s",
					      profile, t);
		}
		ok = false;
		for (n = 0; *allowed && (*allowed)[n]; n++)
			ok |= strcmp((*allowed)[n], t) == 0;
		if (ok)
			continue;
		*allowed = sbx_xrealloc(*allowed, (n + 2) * sizeof(char *));
		(*allowed)[n] = sbx_xstrdup(t);
		(*allowed)[n + 1] = NULL;
	}
	return 0;
}

/* --- checking ---------------------------------------------------------------- */

/* Manifest text: valid UTF-8 (cut before a bad byte), no C0, DEL or C1
 * control characters (each becomes '?'). */
static void clean_into(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src);
	if (!sbx_utf8_valid(dst, strlen(dst))) {
		/* A cut multi-byte character at the end, or worse. */
		size_t n = strlen(dst);
		while (n > 0 && !sbx_utf8_valid(dst, n))
			dst[--n] = '\0';
	}
	for (unsigned char *p = (unsigned char *)dst; *p; p++) {
		if (*p < 0x20 || *p == 0x7f)
			*p = '?';
		/* C1 controls (U+0080..U+009F), which some terminals obey. */
		if (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f)
			p[0] = p[1] = '?';
	}
}

void sbx_contract_fail(struct sbx_contract_result *res, uint64_t row, const char *check,
		       const char *fmt, ...)
{
	struct sbx_contract_failure *f;
	char buf[sizeof(f->detail)];
	va_list ap;

	res->ok = false;
	res->count++;
	if (res->n == SBX_CONTRACT_MAX_FAILURES)
		return;
	f = &res->fail[res->n++];
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	clean_into(f->check, sizeof(f->check), check);
	clean_into(f->detail, sizeof(f->detail), buf);
	f->row = row;
}

static void check_range(struct sbx_contract_result *res, const char *check,
			const struct sbx_contract_range *r, uint64_t v, const char *unit)
{
	if (r->has_min && v < r->min)
		sbx_contract_fail(res, 0, check, "%llu %s, expected at least %llu",
				  (unsigned long long)v, unit, (unsigned long long)r->min);
	if (r->has_max && v > r->max)
		sbx_contract_fail(res, 0, check, "%llu %s, expected at most %llu",
				  (unsigned long long)v, unit, (unsigned long long)r->max);
}

static int on_schema_failure(void *arg, const char *doc_path, const char *keyword,
			     const char *detail)
{
	char check[64];

	snprintf(check, sizeof(check), "schema.%s", keyword);
	sbx_contract_fail(arg, 0, check, "%s: %s", *doc_path ? doc_path : "(document)", detail);
	return 0;
}

/* The JSON Schema subset (jschema.c) over the whole document, which the
 * validator bounds at SBX_JSCHEMA_MAX_DOC bytes. */
static int check_schema(const struct sbx_contract *k, int fd, uint64_t size,
			struct sbx_contract_result *res)
{
	_cleanup_free_ char *doc = NULL;
	size_t got = 0;
	int r;

	if (size > SBX_JSCHEMA_MAX_DOC) {
		sbx_contract_fail(res, 0, "schema", "larger than %u bytes: not validated",
				  SBX_JSCHEMA_MAX_DOC);
		return 0;
	}
	doc = sbx_xmalloc(size ? size : 1);
	while (got < size) {
		ssize_t n = pread(fd, doc + got, size - got, (off_t)got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			sbx_contract_fail(res, 0, "read", "read error");
			return -1;
		}
		got += (size_t)n;
	}
	r = sbx_jschema_validate(k->schema, doc, size, on_schema_failure, res);
	if (r == -ENOMEM)
		sbx_contract_fail(res, 0, "schema", "out of memory while validating");
	else if (r < 0)
		sbx_contract_fail(res, 0, "schema", "not JSON within the schema validator's bounds");
	return 0;
}

int sbx_contract_check(const struct sbx_contract *k, int fd, uint64_t size,
		       const char *media_type, uint64_t width, uint64_t height,
		       struct sbx_contract_result *res)
{
	memset(res, 0, sizeof(*res));
	res->ok = true;
	if (!media_type || (strcmp(media_type, k->media_type) != 0)) {
		sbx_contract_fail(res, 0, "media_type", "content is %s, expected %s",
				  media_type ? media_type : "unknown", k->media_type);
		return 0;
	}
	check_range(res, "bytes", &k->bytes, size, "bytes");
	if (is_image(media_type)) {
		check_range(res, "width", &k->width, width, "pixels wide");
		check_range(res, "height", &k->height, height, "pixels high");
	}
	if (is_csv(media_type) && (k->header || k->cols || k->rows.has_min || k->rows.has_max))
		return sbx_contract_check_csv(k, fd, size,
					      strcmp(media_type, "text/csv") != 0, res);
	if (is_text(media_type) && (k->pattern || k->lines.has_min || k->lines.has_max))
		return sbx_contract_check_text(k, fd, size, res);
	if (k->schema)
		return check_schema(k, fd, size, res);
	return 0;
}

int sbx_contracts_check(const struct sbx_contracts *cs, struct sbx_collection *c,
			struct sbx_error *err)
{
	for (size_t i = 0; i < cs->n; i++) {
		const struct sbx_contract *k = &cs->v[i];

		for (size_t j = 0; j < c->n; j++) {
			struct sbx_artifact *a = &c->items[j];
			_cleanup_close_ int fd = -1;
			struct sbx_contract_result *res;

			if (!a->path || strcmp(a->path, k->path) != 0)
				continue;
			/* Rejected before (its reason says why) or not copied. */
			if (a->status != SBX_ARTIFACT_PROMOTED || !a->qname[0])
				break;
			fd = openat(c->quarantine_dirfd, a->qname, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
			if (fd < 0)
				return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno,
						     "outputs: %s: quarantine copy", a->qname);
			res = sbx_xmalloc(sizeof(*res));
			sbx_contract_check(k, fd, a->size, a->media_type, a->width, a->height, res);
			free(a->contract);
			a->contract = res;
			if (res->ok && k->hold)
				a->hold = true;
			if (!res->ok) {
				collect_set_rejected(a, "output contract: %s: %s%s", res->fail[0].check,
						     res->fail[0].detail,
						     res->count > 1 ? " (and more)" : "");
				collect_drop_quarantined(c, a);
			}
			break;
		}
	}
	return 0;
}

bool sbx_contracts_hold(const struct sbx_contracts *cs)
{
	for (size_t i = 0; i < cs->n; i++)
		if (cs->v[i].hold)
			return true;
	return false;
}

void sbx_contracts_free(struct sbx_contracts *cs)
{
	for (size_t i = 0; cs && i < cs->n; i++) {
		struct sbx_contract *k = &cs->v[i];

		free(k->path);
		sbx_strv_free(k->header);
		for (size_t j = 0; j < k->ncols; j++) {
			free(k->cols[j].name);
			free(k->cols[j].min_date);
			free(k->cols[j].max_date);
			sbx_regex_free(k->cols[j].pattern);
		}
		free(k->cols);
		sbx_regex_free(k->pattern);
		sbx_jschema_free(k->schema);
	}
	if (cs) {
		free(cs->v);
		memset(cs, 0, sizeof(*cs));
	}
}
