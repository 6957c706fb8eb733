/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * job-fetch.c - a job's remote inputs, "fetch" and "fetch_profile"
 * (sbx-job(5), REMOTE INPUTS): their shape only.  What a URL's host may
 * be is decided by the confined fetcher under the fetch profile (the
 * broker never parses a URL beyond this shape); whether the profile may
 * be named and what sizes it allows is admission's (policy.c).
 */
#include "config.h"

#include <string.h>

#include "job.h"
#include "json.h"

static const char *const entry_keys[] = { "url", "as", "max_bytes", "media_type", "sha256", NULL };

/* http:// or https://, then at least a host byte; nothing outside the
 * printable ASCII range (no space, no control byte, no UTF-8): what the
 * fetcher, the manifest and a reader see is one unambiguous string. */
static bool url_shape(const char *s)
{
	size_t n;

	if (strncmp(s, "https://", 8) == 0)
		n = 8;
	else if (strncmp(s, "http://", 7) == 0)
		n = 7;
	else
		return false;
	if (!s[n] || s[n] == '/')
		return false;
	for (const char *p = s; *p; p++)
		if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f)
			return false;
	return true;
}

static bool sha256_shape(const char *s)
{
	size_t n = 0;

	for (; s[n]; n++)
		if (!((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f')))
			return false;
	return n == 64;
}

static bool media_shape(const char *s)
{
	const char *slash = strchr(s, '/');

	if (!slash || slash == s || !slash[1] || strchr(slash + 1, '/'))
		return false;
	for (const char *p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || strchr("/.+-", *p)))
			return false;
	return true;
}

static bool listed(char *const *v, const char *s)
{
	for (; v && *v; v++)
		if (strcmp(*v, s) == 0)
			return true;
	return false;
}

static int parse_entry(const struct sbx_jctx *c, const char *p, const json_t *e,
		       struct sbx_job *job, size_t i)
{
	struct sbx_fetch_entry *f = &job->fetch[i];
	char q[SBX_JSON_PATH_MAX];
	const json_t *v;

	if (sbx_json_check_keys(c, p, e, entry_keys) < 0)
		return -1;
	if (!(v = sbx_json_required(c, p, e, "url")))
		return -1;
	sbx_json_path_key(q, p, "url");
	if (sbx_json_string(c, q, v, SBX_JOB_MAX_URL_LEN, &f->url) < 0)
		return -1;
	if (!url_shape(f->url))
		return sbx_json_expected(c, q, v,
					 "an http:// or https:// URL of printable ASCII "
					 "(no spaces; percent-encode the rest)");
	if (!(v = sbx_json_required(c, p, e, "as")))
		return -1;
	sbx_json_path_key(q, p, "as");
	if (sbx_json_string(c, q, v, 64, &f->as) < 0)
		return -1;
	if (!sbx_handle_name_valid(f->as))
		return sbx_json_expected(c, q, v, "an input name (^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$)");
	if (listed(job->input_handles, f->as))
		return sbx_json_error(c, q, "\"%s\" is also one of input_handles", f->as);
	for (size_t k = 0; k < i; k++)
		if (strcmp(job->fetch[k].as, f->as) == 0)
			return sbx_json_error(c, q, "\"%s\" is given twice", f->as);
	if ((v = json_object_get(e, "max_bytes"))) {
		sbx_json_path_key(q, p, "max_bytes");
		if (sbx_json_uint(c, q, v, 1, UINT64_C(1) << 40, &f->max_bytes) < 0)
			return -1;
	}
	if ((v = json_object_get(e, "media_type"))) {
		sbx_json_path_key(q, p, "media_type");
		if (sbx_json_string(c, q, v, 127, &f->media_type) < 0)
			return -1;
		if (!media_shape(f->media_type))
			return sbx_json_expected(c, q, v, "a lowercase media type (type/subtype)");
	}
	if ((v = json_object_get(e, "sha256"))) {
		sbx_json_path_key(q, p, "sha256");
		if (sbx_json_string(c, q, v, 64, &f->sha256) < 0)
			return -1;
		if (!sha256_shape(f->sha256))
			return sbx_json_expected(c, q, v, "64 lowercase hex digits");
	}
	return 0;
}

int sbx_job_parse_fetch(const struct sbx_jctx *c, const json_t *root, struct sbx_job *job)
{
	const json_t *v = json_object_get(root, "fetch_profile"), *a;

	if (v && sbx_json_string(c, "fetch_profile", v, SBX_JOB_MAX_NAME_LEN, &job->fetch_profile) < 0)
		return -1;
	if (!(a = json_object_get(root, "fetch")))
		return 0;
	if (sbx_json_array(c, "fetch", a, SBX_JOB_MAX_FETCH) < 0)
		return -1;
	if (json_array_size(a) && !job->fetch_profile)
		return sbx_json_error(c, "fetch_profile",
				      "missing: a job with \"fetch\" names its fetch profile");
	job->fetch = sbx_xcalloc(json_array_size(a) + 1, sizeof(*job->fetch));
	for (size_t i = 0; i < json_array_size(a); i++) {
		char p[SBX_JSON_PATH_MAX];

		job->n_fetch = i + 1;
		sbx_json_path_index(p, "fetch", i);
		if (!json_is_object(json_array_get(a, i)))
			return sbx_json_expected(c, p, json_array_get(a, i), "an object");
		if (parse_entry(c, p, json_array_get(a, i), job, i) < 0)
			return -1;
	}
	return 0;
}

void sbx_job_free_fetch(struct sbx_job *job)
{
	for (size_t i = 0; i < job->n_fetch; i++) {
		free(job->fetch[i].url);
		free(job->fetch[i].as);
		free(job->fetch[i].media_type);
		free(job->fetch[i].sha256);
	}
	free(job->fetch);
	free(job->fetch_profile);
	job->fetch = NULL;
	job->n_fetch = 0;
	job->fetch_profile = NULL;
}
