/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libexec.c - where sbx's helper programs are.
 *
 * The helpers are as trusted as sbx itself: the installed ones live in
 * $libexecdir/sbx, and a build tree's sbx finds its own beside it, so
 * `build/sbx run` works without `make install`.  SBX_LIBEXECDIR overrides
 * both (the tests use it); it is the caller's own environment choosing
 * the caller's own programs, like PATH.
 */
#include "config.h"

#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "libexec.h"
#include "util.h"

char *sbx_libexec_path(const char *name)
{
	const char *dir = getenv("SBX_LIBEXECDIR");
	char self[PATH_MAX];
	ssize_t n;

	if (dir && *dir)
		return sbx_xasprintf("%s/%s", dir, name);
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		char *slash, *beside;

		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash) {
			*slash = '\0';
			beside = sbx_xasprintf("%s/%s", self, name);
			if (access(beside, X_OK) == 0)
				return beside;
			free(beside);
		}
	}
	return sbx_xasprintf("%s/%s", LIBEXECDIR "/sbx", name);
}
