/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz-passwd.c - libFuzzer entry point for the passwd and nsswitch.conf
 * parsers (passwd.c).  Byte 0 picks the uid (0, 5 or 1000); the rest is
 * the text.  Properties: no read outside the text; whenever the parser
 * answers, glibc's own files parser (fgetpwent) on the same text gives the
 * same answer (the same first name, or none).
 */
#include "fuzz-util.h"

#include <pwd.h>

#include "passwd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint32_t uids[] = { 0, 5, 1000 };
	char name[64], *text;
	uint32_t uid;
	enum sbx_passwd_lookup r;
	FILE *f;
	struct passwd *pw;
	bool glibc_found = false;

	if (size < 1)
		return 0;
	uid = uids[data[0] % 3];
	/* An exact-size copy, so that ASan sees any read past the end. */
	text = sbx_xmalloc(size - 1 ? size - 1 : 1);
	memcpy(text, data + 1, size - 1);
	(void)sbx_nsswitch_passwd_files_first(text, size - 1);
	r = sbx_passwd_name(text, size - 1, uid, name, sizeof(name));
	fuzz_assert(r == SBX_PASSWD_FOUND || r == SBX_PASSWD_ABSENT || r == SBX_PASSWD_UNSURE);
	if (r != SBX_PASSWD_UNSURE && size > 1) {
		f = fmemopen(text, size - 1, "r");
		fuzz_assert(f);
		while ((pw = fgetpwent(f)))
			if (pw->pw_uid == uid) {
				glibc_found = true;
				if (r == SBX_PASSWD_FOUND)
					fuzz_assert(!strcmp(pw->pw_name, name));
				break;
			}
		fclose(f);
		fuzz_assert(glibc_found == (r == SBX_PASSWD_FOUND));
	}
	free(text);
	return 0;
}
