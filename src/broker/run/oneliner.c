/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * oneliner.c - a job from the command line (`sbx run -p PROFILE ...`).
 *
 * Nothing here decides what a job may do.  The options are turned into
 * the JSON object a job file would hold, member for member, and only the
 * job parser and admission judge it: a --limit above the profile's
 * maximum, an unknown profile or a bad handle name fail exactly as they do
 * in a file, naming the same JSON path.  The only errors of this file's
 * own are those that cannot be put into JSON at all.
 *
 * The bytes are canonical (RFC 8785: keys sorted, no whitespace), so the
 * same options always make the same job_sha256, and `--print-job >
 * job.json; sbx run job.json` runs a job with that same digest.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "canonjson.h"
#include "inputs.h"
#include "job.h"
#include "json.h"
#include "oneliner.h"

/* A string member; the text must be UTF-8, as in a job file. */
static int put_string(json_t *obj, const char *key, const char *s, size_t len, const char *what,
		      struct sbx_error *err)
{
	json_t *v = json_stringn(s, len);

	if (!v)
		return sbx_error_set(err, SBX_EXIT_INVALID, 0, "%s: %s: not UTF-8 text",
				     SBX_ONELINER_SOURCE, what);
	json_object_set_new(obj, key, v);
	return 0;
}

static int put_list(json_t *obj, const char *key, const char *const *list, const char *what,
		    struct sbx_error *err)
{
	json_t *a;

	if (!list || !list[0])
		return 0;
	a = json_array();
	json_object_set_new(obj, key, a);
	for (size_t i = 0; list[i]; i++) {
		json_t *v = json_string(list[i]);
		if (!v)
			return sbx_error_set(err, SBX_EXIT_INVALID, 0, "%s: %s %zu: not UTF-8 text",
					     SBX_ONELINER_SOURCE, what, i + 1);
		json_array_append_new(a, v);
	}
	return 0;
}

/* -i NAME: the store handles; -i NAME=PATH and -i PATH are the caller's
 * local files, never a member of the job (inputs.h). */
static int put_handles(json_t *obj, const char *const *handles, struct sbx_error *err)
{
	size_t n = 0, k = 0;
	int r;

	for (size_t i = 0; handles && handles[i]; i++)
		n++;
	{
		_cleanup_free_ const char **store = sbx_xcalloc(n + 1, sizeof(*store));

		for (size_t i = 0; i < n; i++)
			if (!sbx_local_input_spec(handles[i]))
				store[k++] = handles[i];
		r = put_list(obj, "input_handles", store, "-i", err);
	}
	return r;
}

/*
 * --limit KEY=VALUE: VALUE as the number it spells (768, 0.5), else as a
 * string, which the parser then refuses with its own words ("expected a
 * positive integer, got \"lots\"").
 */
static int put_limits(json_t *obj, const char *const *limits, struct sbx_error *err)
{
	json_t *l;

	if (!limits || !limits[0])
		return 0;
	l = json_object();
	json_object_set_new(obj, "limits", l);
	for (size_t i = 0; limits[i]; i++) {
		const char *eq = strchr(limits[i], '=');
		_cleanup_free_ char *key = NULL;
		json_t *v;

		if (!eq || eq == limits[i])
			return sbx_error_set(err, SBX_EXIT_USAGE, 0,
					     "run: --limit: expected KEY=VALUE, got '%s'", limits[i]);
		key = sbx_xstrndup(limits[i], (size_t)(eq - limits[i]));
		if (json_object_get(l, key))
			return sbx_error_set(err, SBX_EXIT_USAGE, 0, "run: --limit: key \"%s\" given twice", key);
		v = json_loads(eq + 1, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, NULL);
		if (!json_is_number(v)) {
			json_decref(v);
			v = json_string(eq + 1);
		}
		if (!v || json_object_set_new(l, key, v) < 0)
			return sbx_error_set(err, SBX_EXIT_INVALID, 0, "%s: --limit %s: not UTF-8 text",
					     SBX_ONELINER_SOURCE, key);
	}
	return 0;
}

/* A number for a value that spells one (26.5, 3), else the text itself. */
static json_t *value_of(const char *s, size_t n)
{
	_cleanup_free_ char *t = sbx_xstrndup(s, n);
	json_t *v = json_loads(t, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, NULL);

	if (json_is_number(v) || json_is_boolean(v))
		return v;
	json_decref(v);
	return json_stringn(s, n);
}

/* RANGE: N (exactly), N.., ..M or N..M, as {"min", "max"}. */
static json_t *range_of(const char *s, size_t n)
{
	const char *dots = memmem(s, n, "..", 2);
	json_t *r = json_object();

	if (!dots) {
		json_object_set_new(r, "min", value_of(s, n));
		json_object_set_new(r, "max", value_of(s, n));
		return r;
	}
	if (dots > s)
		json_object_set_new(r, "min", value_of(s, (size_t)(dots - s)));
	if (dots + 2 < s + n)
		json_object_set_new(r, "max", value_of(dots + 2, (size_t)(s + n - dots - 2)));
	return r;
}

/*
 * One check of --require PATH:CHECK=VALUE... into the contract @k:
 * rows, bytes, lines, width, height take a RANGE; header a comma-separated
 * list; media_type a type; pattern a regular expression (the rest of the
 * option, ':' and all); COLUMN.type, .min, .max, .pattern (the rest),
 * .sum (X or X~TOLERANCE), .unique and .not_null (true without a value).
 * Returns how many bytes of @s it used, or 0 when it is not CHECK=VALUE.
 */
static size_t put_check(json_t *k, const char *s)
{
	static const char *const ranges[] = { "rows", "bytes", "lines", "width", "height" };
	size_t klen = strcspn(s, "=:"), vlen;
	const char *v = s[klen] == '=' ? s + klen + 1 : NULL;
	const char *dot = memchr(s, '.', klen);
	_cleanup_free_ char *key = sbx_xstrndup(s, klen);

	if (klen == 0)
		return 0;
	vlen = v ? strcspn(v, ":") : 0;
	/* A pattern ends the option: its ':' are its own. */
	if (v && (strcmp(key, "pattern") == 0 || (dot && strcmp(dot, ".pattern") == 0)))
		vlen = strlen(v);
	if (dot) {
		_cleanup_free_ char *col = sbx_xstrndup(s, (size_t)(dot - s));
		const char *what = key + (dot - s) + 1;
		json_t *cols = json_object_get(k, "columns"), *c;

		if (!cols)
			json_object_set_new(k, "columns", cols = json_object());
		if (!(c = json_object_get(cols, col)))
			json_object_set_new(cols, col, c = json_object());
		if (!v) {
			json_object_set_new(c, what, json_true());
			return klen;
		}
		/* A sum or a bound is of numbers unless .type says otherwise. */
		if (!json_object_get(c, "type") &&
		    (!strcmp(what, "sum") || !strcmp(what, "min") || !strcmp(what, "max")))
			json_object_set_new(c, "type", json_string("number"));
		if (strcmp(what, "sum") == 0) {
			const char *tilde = memchr(v, '~', vlen);
			json_t *sum = json_object();

			json_object_set_new(sum, "equals", value_of(v, tilde ? (size_t)(tilde - v) : vlen));
			if (tilde)
				json_object_set_new(sum, "tolerance",
						    value_of(tilde + 1, (size_t)(v + vlen - tilde - 1)));
			json_object_set_new(c, what, sum);
		} else if (strcmp(what, "type") == 0 || strcmp(what, "pattern") == 0) {
			json_object_set_new(c, what, json_stringn(v, vlen));
		} else {
			json_object_set_new(c, what, value_of(v, vlen));
		}
		return (size_t)(v - s) + vlen;
	}
	if (!v)
		return 0;
	for (size_t i = 0; i < ARRAY_SIZE(ranges); i++)
		if (strcmp(key, ranges[i]) == 0) {
			json_object_set_new(k, key, range_of(v, vlen));
			return (size_t)(v - s) + vlen;
		}
	if (strcmp(key, "header") == 0) {
		json_t *h = json_array();

		for (const char *p = v; p <= v + vlen;) {
			size_t n = strcspn(p, ",:");

			if (p + n > v + vlen)
				n = (size_t)(v + vlen - p);
			json_array_append_new(h, json_stringn(p, n));
			p += n + 1;
		}
		json_object_set_new(k, key, h);
	} else {
		bool text = strcmp(key, "pattern") == 0 || strcmp(key, "media_type") == 0;

		json_object_set_new(k, key, text ? json_stringn(v, vlen) : value_of(v, vlen));
	}
	return (size_t)(v - s) + vlen;
}

/*
 * --require PATH: a required output; --require PATH:CHECK=VALUE[:...]:
 * an output contract (outputs.PATH), its checks as put_check() reads them.
 * A PATH that holds ':' can only be required by a job file.
 */
static int put_require(json_t *j, const char *const *req, struct sbx_error *err)
{
	json_t *plain = json_array(), *outputs = json_object();

	for (size_t i = 0; req && req[i]; i++) {
		const char *colon = strchr(req[i], ':'), *p;
		_cleanup_free_ char *path = NULL;
		json_t *k;

		if (!colon) {
			json_t *v = json_string(req[i]);

			if (!v)
				goto not_utf8;
			json_array_append_new(plain, v);
			continue;
		}
		path = sbx_xstrndup(req[i], (size_t)(colon - req[i]));
		if (!sbx_utf8_valid(req[i], strlen(req[i])))
			goto not_utf8;
		if (!(k = json_object_get(outputs, path)))
			json_object_set_new(outputs, path, k = json_object());
		for (p = colon + 1;;) {
			size_t used = put_check(k, p);

			if (used == 0) {
				json_decref(plain);
				json_decref(outputs);
				return sbx_error_set(err, SBX_EXIT_USAGE, 0,
						     "run: --require: expected PATH[:CHECK=VALUE...], got '%s'",
						     req[i]);
			}
			p += used;
			if (!*p)
				break;
			p++; /* ':' */
		}
	}
	if (json_array_size(plain))
		json_object_set_new(j, "required_outputs", plain);
	else
		json_decref(plain);
	if (json_object_size(outputs))
		json_object_set_new(j, "outputs", outputs);
	else
		json_decref(outputs);
	return 0;
not_utf8:
	json_decref(plain);
	json_decref(outputs);
	return sbx_error_set(err, SBX_EXIT_INVALID, 0, "%s: --require: not UTF-8 text",
			     SBX_ONELINER_SOURCE);
}

/*
 * RFC 8785 for the one thing sbx_canonjson_dump() refuses, a real number
 * (cpu_cores 0.5): the shortest form that reads back as the same double,
 * as ECMAScript prints it for the values a job holds.
 */
static void emit_real(FILE *f, double d)
{
	char buf[40];

	if (d > -9007199254740992.0 && d < 9007199254740992.0 && d == (double)(int64_t)d) {
		fprintf(f, "%" PRId64, (int64_t)d);
		return;
	}
	for (int p = 1; p <= 17; p++) {
		snprintf(buf, sizeof(buf), "%.*g", p, d);
		if (strtod(buf, NULL) == d)
			break;
	}
	fputs(buf, f);
}

static int cmp_keys(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int emit(FILE *f, const json_t *v, struct sbx_error *err)
{
	_cleanup_free_ char *s = NULL;
	size_t len;

	if (json_is_real(v)) {
		emit_real(f, json_real_value(v));
		return 0;
	}
	if (json_is_array(v)) {
		fputc('[', f);
		for (size_t i = 0; i < json_array_size(v); i++) {
			if (i)
				fputc(',', f);
			if (emit(f, json_array_get(v, i), err) < 0)
				return -1;
		}
		fputc(']', f);
		return 0;
	}
	if (json_is_object(v)) {
		size_t n = json_object_size(v), i = 0;
		_cleanup_free_ const char **keys = sbx_xcalloc(n ? n : 1, sizeof(*keys));
		const char *k;
		json_t *m;

		json_object_foreach((json_t *)v, k, m)
			keys[i++] = k;
		/* Byte order is UTF-16 order for every key of a job (ASCII). */
		qsort(keys, n, sizeof(*keys), cmp_keys);
		fputc('{', f);
		for (i = 0; i < n; i++) {
			_cleanup_json_ json_t *key = json_string(keys[i]);

			if (i)
				fputc(',', f);
			if (emit(f, key, err) < 0)
				return -1;
			fputc(':', f);
			if (emit(f, json_object_get(v, keys[i]), err) < 0)
				return -1;
		}
		fputc('}', f);
		return 0;
	}
	if (sbx_canonjson_dump(v, &s, &len, err) < 0)
		return -1;
	fwrite(s, 1, len, f);
	return 0;
}

int sbx_oneliner_build(const struct sbx_oneliner *o, char **job, size_t *len,
		       struct sbx_error *err)
{
	_cleanup_json_ json_t *j = json_object();
	_cleanup_free_ char *file = NULL;
	char *buf = NULL;
	size_t n = 0;
	FILE *f;
	int r;

	if (put_string(j, "runtime_profile", o->profile, strlen(o->profile), "-p", err) < 0 ||
	    (o->network &&
	     put_string(j, "network_profile", o->network, strlen(o->network), "-n", err) < 0) ||
	    put_handles(j, o->handles, err) < 0 ||
	    put_limits(j, o->limits, err) < 0 ||
	    put_list(j, "allowed_outputs", o->allow, "--allow", err) < 0 ||
	    put_require(j, o->require, err) < 0 ||
	    put_list(j, "args", o->args, "argument", err) < 0)
		return -1;
	if (o->code) {
		if (put_string(j, "code", o->code, strlen(o->code), "-c", err) < 0)
			return -1;
	} else {
		/* The caller's file, read by the caller, with the cap of a
		 * job's code; an unreadable one is as a job file that cannot
		 * be read (65). */
		size_t flen = 0;

		if (sbx_json_read(o->file, SBX_JOB_MAX_CODE_BYTES, SBX_EXIT_INVALID, &file, &flen,
				  err) < 0)
			return -1;
		if (put_string(j, "code", file, flen, o->file, err) < 0)
			return -1;
	}

	f = open_memstream(&buf, &n);
	if (!f)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "one-line job: open_memstream");
	r = emit(f, j, err);
	if (fclose(f) != 0 && r == 0)
		r = sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "one-line job: writing");
	if (r < 0) {
		free(buf);
		return -1;
	}
	*job = buf;
	*len = n;
	return 0;
}

void sbx_oneliner_usage_print(const struct sbx_error *err)
{
	sbx_error_print(err);
	fputs("sbx: try 'sbx run --help'\n", stderr);
}

int sbx_oneliner_locals(const struct sbx_oneliner *o, struct sbx_local_inputs *li)
{
	struct sbx_error err = { 0 };

	if (sbx_local_inputs_parse(o->handles, li, &err) == 0)
		return 0;
	sbx_local_inputs_free(li);
	sbx_oneliner_usage_print(&err);
	return SBX_EXIT_USAGE;
}

int sbx_oneliner_prepare(const struct sbx_oneliner *o, struct sbx_oneliner_job *j)
{
	memset(j, 0, sizeof(*j));
	if (sbx_oneliner_build(o, &j->bytes, &j->len, &j->err) == 0 ||
	    j->err.code != SBX_EXIT_USAGE)
		return 0;
	sbx_oneliner_usage_print(&j->err);
	return SBX_EXIT_USAGE;
}

int sbx_oneliner_load(struct sbx_job *job, const struct sbx_oneliner_job *j,
		      struct sbx_error *err)
{
	if (!j->bytes) {
		memset(job, 0, sizeof(*job));
		job->source = sbx_xstrdup(SBX_ONELINER_SOURCE);
		*err = j->err;
		return -1;
	}
	return sbx_job_parse(job, SBX_ONELINER_SOURCE, j->bytes, j->len, err);
}

void sbx_oneliner_job_free(struct sbx_oneliner_job *j)
{
	free(j->bytes);
	j->bytes = NULL;
}
