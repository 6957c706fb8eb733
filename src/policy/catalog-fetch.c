/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * catalog-fetch.c - parse one fetch profile, DIR/fetch/NAME.json (format
 * in sbx-policy(5), FETCH PROFILES): which hosts and ports sbx's confined
 * fetcher may get a job's remote inputs from, over which schemes, with
 * which byte limits, timeout and redirect count.
 *
 * The allowlist and allow_cidrs are parsed by the egress profile's parser
 * (catalog-network.c) into the same struct, so that the fetcher judges a
 * host and every address it resolves to with the proxy's own rules
 * (netcheck.c), never a second copy of them.
 */
#include "config.h"

#include <string.h>

#include "catalog-internal.h"

static const char *const fetch_keys[] = {
	"description",	   "kind",	      "allow",		 "schemes",
	"allow_cidrs",	   "max_bytes",	      "max_file_bytes",	 "timeout_seconds",
	"max_redirects",   "ca_file",	      NULL,
};

static bool scheme_valid(const char *s)
{
	return strcmp(s, "https") == 0 || strcmp(s, "http") == 0;
}

int parse_fetch(const struct sbx_jctx *c, const json_t *root, struct sbx_fetchprofile *fp)
{
	struct sbx_netprofile *np = &fp->net;
	_cleanup_strv_free_ char **schemes = NULL;
	const json_t *v;

	if (sbx_json_check_keys(c, "", root, fetch_keys) < 0)
		return -1;
	if (!(v = sbx_json_required(c, "", root, "description")) ||
	    sbx_json_string(c, "description", v, 1024, &np->description) < 0)
		return -1;
	if (!(v = sbx_json_required(c, "", root, "kind")))
		return -1;
	if (!json_is_string(v) || strcmp(json_string_value(v), "fetch") != 0)
		return sbx_json_expected(c, "kind", v, "\"fetch\"");
	np->kind = SBX_NET_EGRESS;
	if (parse_allowlist(c, root, np) < 0)
		return -1;
	if (!np->max_bytes)
		np->max_bytes = SBX_FETCH_MAX_BYTES_DEFAULT;
	/* https always; plain http only where the operator lists it. */
	if ((v = json_object_get(root, "schemes"))) {
		if (sbx_json_strv(c, "schemes", v, 2, 8, scheme_valid, "\"https\" or \"http\"", true,
				  &schemes) < 0)
			return -1;
		if (!schemes[0])
			return sbx_json_error(c, "schemes", "expected at least one scheme");
		bool https = false;

		for (size_t i = 0; schemes[i]; i++) {
			fp->allow_http |= strcmp(schemes[i], "http") == 0;
			https |= strcmp(schemes[i], "https") == 0;
		}
		/* https is always offered: a list without it reads as if
		 * it were not, which is not what sbx does. */
		if (!https)
			return sbx_json_error(c, "schemes",
					      "expected \"https\" among them (http is only ever "
					      "allowed beside it)");
	}
	fp->max_file_bytes = np->max_bytes;
	if ((v = json_object_get(root, "max_file_bytes")) &&
	    sbx_json_uint(c, "max_file_bytes", v, 1, np->max_bytes, &fp->max_file_bytes) < 0)
		return -1;
	fp->timeout_seconds = SBX_FETCH_TIMEOUT_DEFAULT;
	if ((v = json_object_get(root, "timeout_seconds")) &&
	    sbx_json_uint(c, "timeout_seconds", v, 1, 3600, &fp->timeout_seconds) < 0)
		return -1;
	fp->max_redirects = SBX_FETCH_REDIRECTS_DEFAULT;
	if ((v = json_object_get(root, "max_redirects"))) {
		if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > 20)
			return sbx_json_expected(c, "max_redirects", v, "an integer from 0 to 20");
		fp->max_redirects = (uint64_t)json_integer_value(v);
	}
	if ((v = json_object_get(root, "ca_file"))) {
		if (sbx_json_string(c, "ca_file", v, 4096, &fp->ca_file) < 0)
			return -1;
		if (fp->ca_file[0] != '/')
			return sbx_json_expected(c, "ca_file", v, "an absolute path");
	}
	return 0;
}

void fetch_free(struct sbx_fetchprofile *fp)
{
	free(fp->name);
	free(fp->file);
	free(fp->raw);
	free(fp->ca_file);
	/* The allowlist's strings; name, file and raw are the entry's. */
	fp->net.name = fp->net.file = fp->net.raw = NULL;
	network_free(&fp->net);
}
