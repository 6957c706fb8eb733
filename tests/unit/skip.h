/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * skip.h - skipping a unit test that this builder cannot run.
 *
 * SBX_TEST_SKIP("needs root: ...") ends the current test as skipped and
 * says why.  cmocka 1.1 prints a skip as "not ok N # SKIP"; the harness
 * (tests/tap-unit.sh) reports it as a TAP skip, or as a failure when
 * SBX_TEST_NO_SKIP=1 (CI runs as root and skips nothing).  Use it only
 * where the cause is the builder (not root, no delegated cgroup), never
 * to hide a broken feature.  Include after <cmocka.h>.
 */
#ifndef SBX_UNIT_SKIP_H
#define SBX_UNIT_SKIP_H

#define SBX_TEST_SKIP(fmt, ...)                                             \
	do {                                                                \
		print_message("# SKIP " fmt "\n", ##__VA_ARGS__);           \
		skip();                                                     \
	} while (0)

#endif
