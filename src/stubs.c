/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * stubs.c - subcommands whose capability has not landed yet.  Each exits
 * 70 with "not implemented yet": never a fake success.  A module that
 * implements one removes it from here.
 */
#include "config.h"

#include "cli.h"
#include "error.h"

/* Unused once every subcommand has landed; kept for the next one. */
static _unused_ int not_yet(const char *what)
{
	sbx_warn("%s: not implemented yet", what);
	return SBX_EXIT_SOFTWARE;
}


