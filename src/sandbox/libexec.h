/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libexec.h - where sbx's helper programs (sbx-init, sbx-extract) are.
 */
#ifndef SBX_LIBEXEC_H
#define SBX_LIBEXEC_H

/*
 * sbx_libexec_path() - the path of helper @name: in $SBX_LIBEXECDIR when
 * set, else beside the running sbx binary when it is there (a build
 * tree), else in the installed $libexecdir/sbx.  Never NULL; free it.
 */
char *sbx_libexec_path(const char *name);

/* What to do when a helper is not where sbx_libexec_path() looks. */
#define SBX_LIBEXEC_HINT                                                              \
	"sbx's helpers are installed with it (make install) in " LIBEXECDIR "/sbx, or found " \
	"beside the sbx binary; SBX_LIBEXECDIR names another directory"

#endif
