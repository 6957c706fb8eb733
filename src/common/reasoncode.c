/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * reasoncode.c - the table of artifact reason codes (reasoncode.h).
 */
#include "config.h"

#include <string.h>

#include "reasoncode.h"

const struct sbx_reason_code sbx_reason_codes[] = {
	{ SBX_RC_UNKNOWN_TYPE, "the content is no media type sbx knows" },
	{ SBX_RC_UNKNOWN_EXTENSION, "the extension names no media type sbx knows" },
	{ SBX_RC_TYPE_MISMATCH, "the content is one type, the extension names another" },
	{ SBX_RC_NOT_ALLOWED_TYPE, "the type is not in the job's allowed_outputs" },
	{ SBX_RC_INVALID_CONTENT, "the type's validator refused the content" },
	{ SBX_RC_ACTIVE_CONTENT, "the file runs or fetches something when opened" },
	{ SBX_RC_POLYGLOT, "the file is also another format a reader would open" },
	{ SBX_RC_CODE_AS_DATA, "a Python pickle (.pkl, .joblib, .npz, an object array): it runs code when loaded" },
	{ SBX_RC_NESTED_ARCHIVE, "an archive or compressed file inside an application/zip" },
	{ SBX_RC_TOO_LARGE, "over a size or dimension bound" },
	{ SBX_RC_CONTRACT_FAILED, "the job's output contract for the path failed" },
	{ SBX_RC_SYMLINK, "a symbolic link" },
	{ SBX_RC_HARD_LINK, "a file with more than one link" },
	{ SBX_RC_SPECIAL_FILE, "a fifo, socket, device or other non-regular file" },
	{ SBX_RC_BAD_NAME, "the name has control characters, is not UTF-8 or is too long" },
	{ SBX_RC_RESERVED_NAME, "the name is sbx's own (.sbx)" },
	{ SBX_RC_TOO_DEEP, "directories nested too deep" },
	{ SBX_RC_OVER_COUNT, "more files than output_files, or the walk's cap" },
	{ SBX_RC_CHANGED, "the file changed or vanished while it was collected" },
	{ SBX_RC_NOT_VALIDATED, "the validator gave no usable answer" },
	{ SBX_RC_IO_ERROR, "sbx could not read, hold or deliver the file" },
	{ SBX_RC_RUN_INCOMPLETE, "valid, discarded because the run did not complete" },
	{ NULL, NULL },
};

const char *sbx_reason_code_static(const char *name)
{
	if (!name)
		return NULL;
	for (const struct sbx_reason_code *c = sbx_reason_codes; c->name; c++)
		if (strcmp(c->name, name) == 0)
			return c->name;
	return NULL;
}

const struct sbx_reason_code sbx_fetch_reason_codes[] = {
	{ SBX_RC_FETCH_HOST_NOT_ALLOWED, "a URL's host and port are not on the fetch profile's allowlist" },
	{ SBX_RC_FETCH_SCHEME_REFUSED, "the URL's scheme is not one of the fetch profile's schemes" },
	{ SBX_RC_FETCH_ADDRESS_REFUSED, "the host resolves to a refused address (private, loopback, link-local, metadata, ...)" },
	{ SBX_RC_FETCH_REDIRECT_REFUSED, "a redirect's target was refused, or there were more than max_redirects" },
	{ SBX_RC_FETCH_TOO_LARGE, "the body is larger than the entry's max_bytes, max_file_bytes or the profile's max_bytes" },
	{ SBX_RC_FETCH_TIMEOUT, "no complete answer within the fetch profile's timeout_seconds" },
	{ SBX_RC_FETCH_ENCODING_REFUSED, "the response had a Content-Encoding other than identity" },
	{ SBX_RC_FETCH_MEDIA_TYPE, "the response's Content-Type is not the entry's media_type" },
	{ SBX_RC_FETCH_SHA256_MISMATCH, "the bytes do not have the entry's pinned sha256" },
	{ SBX_RC_FETCH_HTTP_STATUS, "the server answered with a status other than 2xx or a redirect" },
	{ SBX_RC_FETCH_FAILED, "the fetch failed: name resolution, connection, TLS verification" },
	{ NULL, NULL },
};

const char *sbx_fetch_reason_code_static(const char *name)
{
	if (!name)
		return NULL;
	for (const struct sbx_reason_code *c = sbx_fetch_reason_codes; c->name; c++)
		if (strcmp(c->name, name) == 0)
			return c->name;
	return NULL;
}
