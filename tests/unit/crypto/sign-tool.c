/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sign-tool - sign a JSON object the way `sbx run` signs its manifest, for
 * the interop test (tests/e2e/verify-interop.sh).
 *
 * Usage: sign-tool KEY IN.json   writes the signed manifest line to stdout.
 */
#include "config.h"

#include <jansson.h>
#include <stdio.h>

#include "sign.h"

int main(int argc, char **argv)
{
	struct sbx_error err = { 0 };
	struct sbx_key *key = NULL;
	json_error_t jerr;
	json_t *m;
	char *line = NULL;
	size_t len = 0;
	int rc = 1;

	if (argc != 3) {
		fprintf(stderr, "usage: sign-tool KEY IN.json\n");
		return 64;
	}
	m = json_load_file(argv[2], JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &jerr);
	if (!m) {
		fprintf(stderr, "sign-tool: %s: %s\n", argv[2], jerr.text);
		return 1;
	}
	if (sbx_sign_load_key(argv[1], &key, &err) == 0 &&
	    sbx_manifest_finish(m, key, &line, &len, &err) == 0 &&
	    fwrite(line, 1, len, stdout) == len && fflush(stdout) == 0)
		rc = 0;
	else
		sbx_error_print(&err);
	free(line);
	sbx_key_free(key);
	json_decref(m);
	return rc;
}
