/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz-init-report.c - libFuzzer entry point for the records sbx-init
 * sends the broker: the input goes over a SOCK_SEQPACKET pair as one
 * message and is read with sbx_spawn_recv_report(), as the broker reads
 * the init's socket; a failure record becomes the error it stands for.
 * Properties: whatever the bytes, the error is 69 or 70 and one clean
 * line naming a stage, and a Hint only for 69.
 */
#include "fuzz-util.h"

#include <sys/socket.h>

#include "sandbox.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int sv[2] = { -1, -1 };
	struct sbx_report rep;
	struct sbx_error err = { 0 };
	int n;

	if (sv[0] < 0 && socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		abort();
	if (size == 0 || size > 4096)
		return 0;
	if (send(sv[1], data, size, 0) != (ssize_t)size)
		abort();
	n = sbx_spawn_recv_report(sv[0], &rep, NULL, 0);
	fuzz_assert(n == (int)(size < sizeof(rep) ? size : sizeof(rep)));
	if (n != (int)sizeof(rep) || rep.kind != SBX_REPORT_FAILED)
		return 0;
	fuzz_assert(sbx_spawn_report_error(&rep, &err) == -1);
	fuzz_assert(err.code == SBX_EXIT_UNAVAILABLE || err.code == SBX_EXIT_SOFTWARE);
	fuzz_assert(fuzz_clean_line(err.msg) && strncmp(err.msg, "sandbox setup: ", 15) == 0);
	fuzz_assert(!err.hint[0] || err.code == SBX_EXIT_UNAVAILABLE);
	return 0;
}
