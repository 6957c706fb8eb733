#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# tap-unit.sh PROGRAM - the test harness's LOG_COMPILER: runs one test.
#
# Scripts (*.sh) speak TAP themselves and run as they are.  For a cmocka
# unit test (CMOCKA_MESSAGE_OUTPUT=TAP) two things of cmocka 1.1 are
# mended on the way to the TAP driver:
#  - fail_msg() and print_error() write the failing check's text to
#    stderr, where the driver would put it at the top of the log, away from
#    the "not ok" it explains: stderr is merged in order and every line
#    that is not TAP becomes a "# " diagnostic;
#  - skip() prints "not ok N # SKIP", which the driver counts as a failure:
#    it becomes "ok N # SKIP", unless SBX_TEST_NO_SKIP=1, where a skip is a
#    failure.
# The program's exit status is kept.
set -u
case $1 in
*.sh) exec "$@" ;;
esac
if [ "${SBX_TEST_NO_SKIP:-0}" = 1 ]; then
	skip='s/^\(not ok [0-9]*\) # SKIP/\1 - skipped, and SBX_TEST_NO_SKIP=1 forbids skipping:/'
else
	skip='s/^not ok \([0-9]*\) # SKIP/ok \1 # SKIP/'
fi
CMOCKA_MESSAGE_OUTPUT=TAP; export CMOCKA_MESSAGE_OUTPUT
exec 4>&1
rc=$( { { "$@" 2>&1; echo $? >&3; } |
	sed -u -e "$skip" -e '/^\(ok\|not ok\|1\.\.\|#\|Bail out!\)/!s/^/# /' >&4; } 3>&1)
exit "$rc"
