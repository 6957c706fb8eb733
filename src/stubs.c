/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * stubs.c - subcommands whose capability has not landed yet.  Each exits
 * 70 with "not implemented yet": never a fake success.  A module that
 * implements one removes it from here.
 */
#include "config.h"

#include "cli.h"
#include "error.h"

static int not_yet(const char *what)
{
	sbx_warn("%s: not implemented yet", what);
	return SBX_EXIT_SOFTWARE;
}

int sbx_cmd_run(const struct sbx_run_opts *o)
{
	return not_yet("run");
}

int sbx_cmd_check(const struct sbx_common_opts *o)
{
	return not_yet("check");
}

int sbx_cmd_verify(const struct sbx_common_opts *o, const char *manifest, const char *pubkey,
		   const char *artifacts)
{
	return not_yet("verify");
}

int sbx_cmd_keygen(const struct sbx_common_opts *o, const char *out)
{
	return not_yet("keygen");
}
