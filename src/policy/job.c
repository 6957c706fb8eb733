/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * job.c - the job file (SPEC §3): schema checks only.
 *
 * Everything here answers "is this a well-formed job?" and fails with 65
 * naming the JSON path.  Whether the job may run (profile exists, limits
 * within the profile, env keys allowed) is sbx_policy_admit()'s question.
 */
#include "config.h"

#include <inttypes.h>
#include <nettle/sha2.h>
#include <string.h>

#include "catalog.h"
#include "job.h"
#include "json.h"

static const char *const job_keys[] = {
	"input_handles", "extract", "runtime_profile", "network_profile", "code", "code_handle",
	"args", "env", "limits", "allowed_outputs", "required_outputs", "partial_outputs",
	"outputs", "on_rejected_output", "fetch", "fetch_profile", NULL,
};

static bool is_alnum(char ch)
{
	return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9');
}

bool sbx_handle_name_valid(const char *s)
{
	size_t n = 0;

	if (!s || !is_alnum(s[0]))
		return false;
	for (const char *p = s; *p; p++, n++)
		if (!is_alnum(*p) && *p != '_' && *p != '.' && *p != '-')
			return false;
	return n <= 64;
}

/* ^[A-Za-z_][A-Za-z0-9_]{0,127}$ */

/* One RFC 6838 restricted-name: an alphanumeric, then up to 126 of
 * [A-Za-z0-9!#$&^_.+-]; *@s moves past it. */
static bool media_name(const char **s)
{
	size_t n = 0;

	if (!is_alnum(**s))
		return false;
	for (; **s && (is_alnum(**s) || strchr("!#$&^_.+-", **s)); (*s)++)
		n++;
	return n <= 127;
}

/*
 * "type/subtype" without parameters.  Only the shape is schema: whether
 * sbx has a validator for the type, and whether the profile allows it, is
 * policy (a refusal, SPEC §3), so "text/html" passes here.
 */
static bool media_type_shape(const char *s)
{
	return media_name(&s) && *s++ == '/' && media_name(&s) && *s == '\0';
}

/*
 * An output path relative to /work/out: no leading '/', no empty, "." or
 * ".." components, no control characters, at most 255 bytes.  It is only
 * ever compared against what the collector found, never opened as a path
 * string, but a safe shape keeps messages and the manifest unambiguous.
 */
static bool output_path_valid(const char *s)
{
	size_t len = strlen(s);
	const char *p = s;

	if (len == 0 || len > SBX_JOB_MAX_PATH_LEN || sbx_has_control(s, len))
		return false;
	while (*p) {
		const char *slash = strchr(p, '/');
		size_t n = slash ? (size_t)(slash - p) : strlen(p);

		if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return false;
		if (!slash)
			break;
		p = slash + 1;
		if (!*p)
			return false; /* trailing '/' */
	}
	return true;
}

static int parse_handles(const struct sbx_jctx *c, const json_t *root, const char *key,
			 size_t max, char ***out)
{
	const json_t *v = json_object_get(root, key);

	if (!v) {
		*out = sbx_xcalloc(1, sizeof(char *));
		return 0;
	}
	return sbx_json_strv(c, key, v, max, SBX_JOB_MAX_NAME_LEN, sbx_handle_name_valid,
			     "a handle name matching [A-Za-z0-9][A-Za-z0-9_.-]{0,63}", true, out);
}

static int parse_env(const struct sbx_jctx *c, const json_t *v, char ***out)
{
	return sbx_json_env(c, "env", v, SBX_JOB_MAX_ENV, SBX_JOB_MAX_ENV_VALUE, out);
}

static int parse_limits(const struct sbx_jctx *c, const json_t *v, struct sbx_limits *out)
{
	if (!v) {
		memset(out, 0, sizeof(*out));
		return 0;
	}
	if (sbx_limits_parse(c, "limits", v, false, out) < 0)
		return -1;
	/* Only when both are explicit: a profile's default soft deadline at
	 * or above the job's wall is simply not used (policy.c). */
	if (sbx_limit_is_set(out, SBX_LIMIT_SOFT_SECONDS) &&
	    sbx_limit_is_set(out, SBX_LIMIT_WALL_SECONDS) &&
	    out->v[SBX_LIMIT_SOFT_SECONDS] >= out->v[SBX_LIMIT_WALL_SECONDS])
		return sbx_json_error(c, "limits.soft_seconds",
				      "must be less than limits.wall_seconds (%" PRIu64 "), got %" PRIu64,
				      out->v[SBX_LIMIT_WALL_SECONDS], out->v[SBX_LIMIT_SOFT_SECONDS]);
	return 0;
}

static int parse_code(const struct sbx_jctx *c, const json_t *root, struct sbx_job *job)
{
	const json_t *code = json_object_get(root, "code");
	const json_t *handle = json_object_get(root, "code_handle");

	if (code && handle)
		return sbx_json_error(c, "code_handle",
				      "exactly one of \"code\" and \"code_handle\" is allowed, got both");
	if (!code && !handle)
		return sbx_json_error(c, "code",
				      "missing required key (or \"code_handle\")");
	if (code) {
		if (sbx_json_string(c, "code", code, SBX_JOB_MAX_CODE_BYTES, &job->code) < 0)
			return -1;
		job->code_len = json_string_length(code);
		return 0;
	}
	if (sbx_json_string(c, "code_handle", handle, SBX_JOB_MAX_NAME_LEN, NULL) < 0)
		return -1;
	if (!sbx_handle_name_valid(json_string_value(handle)))
		return sbx_json_expected(c, "code_handle", handle,
					 "a handle name matching [A-Za-z0-9][A-Za-z0-9_.-]{0,63}");
	job->code_handle = sbx_xstrdup(json_string_value(handle));
	return 0;
}

/*
 * outputs: an object from output path to its contract.  Only the shape is
 * checked here (paths, objects, a bound); the contracts themselves are
 * parsed at admission by the outputs library (contract.h), which this
 * library may not include.  The object is kept as JSON for it.
 */
static int parse_outputs(const struct sbx_jctx *c, const json_t *v, struct sbx_job *job)
{
	const char *path;
	json_t *m;

	if (!v)
		return 0;
	if (sbx_json_object(c, "outputs", v) < 0)
		return -1;
	if (json_object_size(v) > SBX_JOB_MAX_REQUIRED)
		return sbx_json_error(c, "outputs", "at most %d outputs", SBX_JOB_MAX_REQUIRED);
	json_object_foreach((json_t *)v, path, m) {
		char p[SBX_JSON_PATH_MAX];

		sbx_json_path_key(p, "outputs", path);
		if (!output_path_valid(path))
			return sbx_json_error(c, p, "expected a relative path below /work/out without "
						    "empty, \".\" or \"..\" components");
		if (sbx_json_object(c, p, m) < 0)
			return -1;
	}
	job->outputs = json_incref((json_t *)v);
	return 0;
}

static int parse_partial(const struct sbx_jctx *c, const json_t *v, enum sbx_partial *out)
{
	*out = SBX_PARTIAL_DISCARD;
	if (!v)
		return 0;
	if (json_is_string(v) && strcmp(json_string_value(v), "discard") == 0)
		return 0;
	if (json_is_string(v) && strcmp(json_string_value(v), "retain") == 0) {
		*out = SBX_PARTIAL_RETAIN;
		return 0;
	}
	if (json_is_string(v) && strcmp(json_string_value(v), "hold") == 0) {
		*out = SBX_PARTIAL_HOLD;
		return 0;
	}
	return sbx_json_expected(c, "partial_outputs", v, "\"discard\", \"retain\" or \"hold\"");
}

static int parse_on_rejected(const struct sbx_jctx *c, const json_t *v, bool *fail)
{
	*fail = false;
	if (!v || (json_is_string(v) && strcmp(json_string_value(v), "keep") == 0))
		return 0;
	if (json_is_string(v) && strcmp(json_string_value(v), "fail") == 0) {
		*fail = true;
		return 0;
	}
	return sbx_json_expected(c, "on_rejected_output", v, "\"keep\" or \"fail\"");
}

static int check_extract(const struct sbx_jctx *c, const struct sbx_job *job)
{
	for (size_t i = 0; job->extract[i]; i++) {
		bool listed = false;
		for (size_t k = 0; job->input_handles[k]; k++)
			if (strcmp(job->extract[i], job->input_handles[k]) == 0)
				listed = true;
		/* A remote input may be an archive too (fetch-run.c). */
		for (size_t k = 0; k < job->n_fetch; k++)
			if (strcmp(job->extract[i], job->fetch[k].as) == 0)
				listed = true;
		if (!listed) {
			char p[SBX_JSON_PATH_MAX];
			char esc[80];

			sbx_json_path_index(p, "extract", i);
			sbx_json_escape(job->extract[i], esc, sizeof(esc));
			return sbx_json_error(c, p, "\"%s\" is not listed in input_handles or fetch",
					      esc);
		}
	}
	return 0;
}

static int parse_root(const struct sbx_jctx *c, const json_t *root, struct sbx_job *job)
{
	const json_t *v;

	if (sbx_json_check_keys(c, "", root, job_keys) < 0)
		return -1;
	if (parse_handles(c, root, "input_handles", SBX_JOB_MAX_HANDLES, &job->input_handles) < 0 ||
	    parse_handles(c, root, "extract", SBX_JOB_MAX_HANDLES, &job->extract) < 0)
		return -1;

	/* Profile names are checked for shape only here (a bounded string);
	 * whether one exists is policy: "../x" is simply not in the catalog
	 * and is refused (77) by sbx_policy_admit(). */
	v = sbx_json_required(c, "", root, "runtime_profile");
	if (!v || sbx_json_string(c, "runtime_profile", v, SBX_JOB_MAX_NAME_LEN,
				  &job->runtime_profile) < 0)
		return -1;
	v = json_object_get(root, "network_profile");
	if (v && sbx_json_string(c, "network_profile", v, SBX_JOB_MAX_NAME_LEN,
				 &job->network_profile) < 0)
		return -1;

	if (parse_code(c, root, job) < 0 || sbx_job_parse_fetch(c, root, job) < 0 ||
	    check_extract(c, job) < 0)
		return -1;

	v = json_object_get(root, "args");
	if (v) {
		if (sbx_json_strv(c, "args", v, SBX_JOB_MAX_ARGS, SBX_JOB_MAX_ARG_LEN, NULL, NULL,
				  false, &job->args) < 0)
			return -1;
	} else {
		job->args = sbx_xcalloc(1, sizeof(char *));
	}
	if (parse_env(c, json_object_get(root, "env"), &job->env) < 0 ||
	    parse_limits(c, json_object_get(root, "limits"), &job->limits) < 0)
		return -1;

	v = json_object_get(root, "allowed_outputs");
	if (v && sbx_json_strv(c, "allowed_outputs", v, SBX_JOB_MAX_OUTPUT_TYPES, 128,
			       media_type_shape, "a media type (type/subtype)", true,
			       &job->allowed_outputs) < 0)
		return -1;
	v = json_object_get(root, "required_outputs");
	if (v) {
		if (sbx_json_strv(c, "required_outputs", v, SBX_JOB_MAX_REQUIRED,
				  SBX_JOB_MAX_PATH_LEN, output_path_valid,
				  "a relative path below /work/out without empty, \".\" or \"..\" "
				  "components",
				  true, &job->required_outputs) < 0)
			return -1;
	} else {
		job->required_outputs = sbx_xcalloc(1, sizeof(char *));
	}
	if (parse_outputs(c, json_object_get(root, "outputs"), job) < 0)
		return -1;
	if (parse_on_rejected(c, json_object_get(root, "on_rejected_output"), &job->fail_on_rejected) < 0)
		return -1;
	return parse_partial(c, json_object_get(root, "partial_outputs"), &job->partial_outputs);
}

/* Everything the parse allocated, but not what identifies the job in a
 * manifest (source and digest): an invalid job still gets a record. */
static void free_fields(struct sbx_job *job)
{
	sbx_strv_free(job->input_handles);
	sbx_strv_free(job->extract);
	free(job->runtime_profile);
	free(job->network_profile);
	sbx_job_free_fetch(job);
	free(job->code);
	free(job->code_handle);
	sbx_strv_free(job->args);
	sbx_strv_free(job->env);
	sbx_strv_free(job->allowed_outputs);
	sbx_strv_free(job->required_outputs);
	json_decref(job->outputs);
	job->outputs = NULL;
	job->input_handles = job->extract = job->args = job->env = NULL;
	job->allowed_outputs = job->required_outputs = NULL;
	job->runtime_profile = job->network_profile = job->code = job->code_handle = NULL;
	job->code_len = 0;
	memset(&job->limits, 0, sizeof(job->limits));
	job->partial_outputs = SBX_PARTIAL_DISCARD;
	job->fail_on_rejected = false;
}

int sbx_job_parse(struct sbx_job *job, const char *source, const char *data, size_t len,
		  struct sbx_error *err)
{
	struct sbx_jctx c = { .source = source, .code = SBX_EXIT_INVALID, .err = err };
	_cleanup_json_ json_t *root = NULL;

	memset(job, 0, sizeof(*job));
	job->source = sbx_xstrdup(source);
	/* The digest is of the bytes as handed in, before any parsing, so the
	 * manifest names exactly what the caller submitted, valid or not.  It
	 * is computed when the manifest needs it (sbx_job_digest), not here:
	 * the first use of libcrypto costs milliseconds of provider set-up,
	 * which a run does off its critical path. */
	job->raw = sbx_xmalloc(len ? len : 1);
	memcpy(job->raw, data, len);
	job->raw_len = len;
	if (len > SBX_JOB_MAX_BYTES)
		return sbx_error_set(err, SBX_EXIT_INVALID, 0, "%s: more than the %u bytes allowed",
				     source, SBX_JOB_MAX_BYTES);
	root = sbx_json_parse(&c, data, len);
	if (!root)
		return -1;
	if (parse_root(&c, root, job) < 0) {
		free_fields(job);
		return -1;
	}
	return 0;
}

int sbx_job_load(struct sbx_job *job, const char *path, struct sbx_error *err)
{
	const char *source = strcmp(path, "-") == 0 ? "<stdin>" : path;
	_cleanup_free_ char *data = NULL;
	size_t len = 0;

	memset(job, 0, sizeof(*job));
	/* The cap is enforced while reading, before jansson sees a byte. */
	if (sbx_json_read(path, SBX_JOB_MAX_BYTES, SBX_EXIT_INVALID, &data, &len, err) < 0) {
		job->source = sbx_xstrdup(source);
		return -1;
	}
	return sbx_job_parse(job, source, data, len, err);
}

int sbx_job_digest(struct sbx_job *job)
{
	struct sha256_ctx ctx;

	if (job->digested)
		return 0;
	if (!job->raw)
		return -1;
	sha256_init(&ctx);
	sha256_update(&ctx, job->raw_len, (const uint8_t *)job->raw);
	sha256_digest(&ctx, SHA256_DIGEST_SIZE, job->sha256);
	job->digested = true;
	return 0;
}

void sbx_job_free(struct sbx_job *job)
{
	if (!job)
		return;
	free_fields(job);
	free(job->raw);
	free(job->source);
	memset(job, 0, sizeof(*job));
}
