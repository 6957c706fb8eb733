/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * contract.c - output contracts: the parser (65 for a malformed one) and
 * the type admission (77), in the broker before the run and again in the
 * validator, which checks them.
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
 * checking itself reads the payload's output, so it is not here: it runs
 * in the confined validator (src/helpers/validate/contract-check.c,
 * contract-csv.c, contract-text.c).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collect-internal.h"
#include "collect.h"
#include "contract.h"
#include "jschema.h"
#include "json.h"
#include "regex.h"
#include "util.h"
#include "mediatype.h"

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
	"image/svg+xml", "text/html", "text/markdown",
	"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
	"application/vnd.openxmlformats-officedocument.wordprocessingml.document",
	"application/vnd.openxmlformats-officedocument.presentationml.presentation",
	"image/webp", "text/x-tex", "application/x-npy", "application/zip", NULL,
};

static const char *known_type(const char *s)
{
	for (size_t i = 0; known_types[i]; i++)
		if (strcmp(known_types[i], s) == 0)
			return known_types[i];
	return NULL;
}

/* --- dates (also what the CSV check applies to a cell) ----------------------- */

static bool digits(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

static unsigned num(const char *s, size_t n)
{
	unsigned v = 0;

	for (size_t i = 0; i < n; i++)
		v = v * 10 + (unsigned)(s[i] - '0');
	return v;
}

bool sbx_contract_date_valid(const char *s)
{
	static const unsigned mdays[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	size_t n = strlen(s);
	unsigned y, m, d, last;
	const char *t;

	if (n < 7 || !digits(s, 4) || s[4] != '-' || !digits(s + 5, 2))
		return false;
	y = num(s, 4), m = num(s + 5, 2);
	if (m < 1 || m > 12)
		return false;
	if (n == 7)
		return true; /* a calendar month, YYYY-MM */
	if (n < 10 || s[7] != '-' || !digits(s + 8, 2))
		return false;
	d = num(s + 8, 2);
	last = mdays[m - 1] + (m == 2 && y % 4 == 0 && (y % 100 != 0 || y % 400 == 0));
	if (d < 1 || d > last)
		return false;
	if (n == 10)
		return true;
	/* THH:MM[:SS[.frac]] then nothing, Z, or +HH:MM / -HH:MM. */
	t = s + 10;
	if (*t != 'T' || !digits(t + 1, 2) || t[3] != ':' || !digits(t + 4, 2) ||
	    num(t + 1, 2) > 23 || num(t + 4, 2) > 59)
		return false;
	t += 6;
	if (*t == ':') {
		if (!digits(t + 1, 2) || num(t + 1, 2) > 59)
			return false;
		t += 3;
		if (*t == '.') {
			if (t[1] < '0' || t[1] > '9')
				return false;
			for (t++; *t >= '0' && *t <= '9'; t++)
				;
		}
	}
	if (*t == 'Z')
		return t[1] == '\0';
	if (*t == '+' || *t == '-')
		return digits(t + 1, 2) && t[3] == ':' && digits(t + 4, 2) && t[6] == '\0' &&
		       num(t + 1, 2) <= 23 && num(t + 4, 2) <= 59;
	return *t == '\0';
}

bool sbx_contract_type_is_csv(const char *t)
{
	return !strcmp(t, "text/csv") || !strcmp(t, "text/tab-separated-values");
}

bool sbx_contract_type_is_image(const char *t)
{
	return !strcmp(t, "image/png") || !strcmp(t, "image/jpeg") || !strcmp(t, "image/webp");
}

bool sbx_contract_type_is_text(const char *t)
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

/*
 * @v (a number) as decimal text: an integer exactly, a real as the
 * shortest decimal that reads back as the same double, so that 0.3 is
 * "0.3", not 0.299999999999999988898.  jansson keeps no text of a real.
 */
static void number_text(const json_t *v, char *buf, size_t len)
{
	double d = json_number_value(v);

	if (json_is_integer(v)) {
		snprintf(buf, len, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		return;
	}
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, len, "%.*g", prec, d);
		if (strtod(buf, NULL) == d)
			return;
	}
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
			number_text(e, col->sum_equals_text, sizeof(col->sum_equals_text));
			snprintf(col->sum_tolerance_text, sizeof(col->sum_tolerance_text), "0");
			if ((t = json_object_get(m, "tolerance"))) {
				sbx_json_path_key(r, q, "tolerance");
				if (parse_number(c, r, t, true, &col->sum_tolerance) < 0)
					return -1;
				number_text(t, col->sum_tolerance_text,
					    sizeof(col->sum_tolerance_text));
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
	bool csv, image, text;

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
	csv = sbx_contract_type_is_csv(k->media_type);
	image = sbx_contract_type_is_image(k->media_type);
	text = sbx_contract_type_is_text(k->media_type);
	if (not_for_type(c, p, v, "rows", csv, "text/csv and TSV") < 0 ||
	    not_for_type(c, p, v, "header", csv, "text/csv and TSV") < 0 ||
	    not_for_type(c, p, v, "columns", csv, "text/csv and TSV") < 0 ||
	    not_for_type(c, p, v, "width", image, "image/png, image/jpeg and image/webp") < 0 ||
	    not_for_type(c, p, v, "height", image, "image/png, image/jpeg and image/webp") < 0 ||
	    not_for_type(c, p, v, "lines", text,
			 "text/plain, text/markdown, text/html and application/x-ndjson") < 0 ||
	    not_for_type(c, p, v, "pattern", text,
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
