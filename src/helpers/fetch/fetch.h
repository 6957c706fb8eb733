/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fetch.h - one remote input got with libcurl, every hop checked
 * (fetch.c); the confined helper sbx-fetch (sbx-fetch.c) calls it.
 *
 * A transfer is a loop of single requests: the URL parsed by libcurl's
 * own URL parser, its scheme and host:port checked against the fetch
 * profile, the name resolved once here and every address checked against
 * the refused ranges (netcheck.c, the egress proxy's rules), then the
 * request pinned to the checked address (CURLOPT_RESOLVE), so that a name
 * rebound between the check and the connect cannot move it.  A redirect
 * is not followed by libcurl: its target goes round the loop as a new
 * request, checked again.  No content decoding: any Content-Encoding but
 * identity is refused.
 */
#ifndef SBX_FETCH_H
#define SBX_FETCH_H

#include <stdbool.h>
#include <stdint.h>

#include "catalog.h"

struct sbx_fetch_rules {
	struct sbx_netprofile net;  /* allow, allow_cidrs (netcheck.h) */
	bool allow_http;
	uint64_t timeout_seconds;
	uint64_t max_redirects;
	const char *ca_file;        /* NULL: the system's CA store */
};

/* What one fetch ended as.  @code is a reason code of reasoncode.h (NULL
 * on success); @refused tells 77 (policy) from 1 (the remote end). */
struct sbx_fetch_result {
	const char *code;
	bool refused;
	char text[512];
	long status;                /* the final response's HTTP status */
	char final_url[2049];
	uint64_t size;
	char sha256[65];
};

/*
 * sbx_fetch_one() - get @url into @fd (a new empty regular file), at most
 * @max_bytes bytes; @media_type (may be NULL) must be the response's
 * Content-Type.  Return: 0, or -1 with @res->code and @res->text set
 * (@fd then holds whatever arrived; the caller removes it).
 */
int sbx_fetch_one(const struct sbx_fetch_rules *rules, const char *url, int fd, uint64_t max_bytes,
		  const char *media_type, struct sbx_fetch_result *res);

#endif
