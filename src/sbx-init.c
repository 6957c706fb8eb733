/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sbx-init - the sandbox's pid 1 (init.c), a program of its own.
 *
 * The broker's clone executes it straight away (sandbox.c), so the
 * sandbox's first process shares nothing with the broker: no copy of its
 * memory, no copy-on-write page the broker pays for on every write while
 * the sandbox runs.  It is small and linked statically, so starting it
 * costs a few page faults rather than a dynamic link of sbx's libraries.
 *
 * Usage (by sbx only): sbx-init SPEC-FD SOCK-FD STDOUT-FD STDERR-FD
 * SPEC-FD is the sealed memfd of the packed spec (spec-blob.c); SOCK-FD the
 * setup and report socket; the other two the payload's capture pipes.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox.h"

static int fd_arg(const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || end == s || v < 0 || v > 1 << 20)
		return -1;
	return (int)v;
}

int main(int argc, char **argv)
{
	int fds[4];
	struct stat st;
	struct sbx_spec *spec;
	void *blob;

	if (argc != 5) {
		fputs("sbx-init: started by sbx only\n", stderr);
		return 64;
	}
	for (int i = 0; i < 4; i++)
		if ((fds[i] = fd_arg(argv[i + 1])) < 0 || fcntl(fds[i], F_SETFD, FD_CLOEXEC) < 0) {
			fputs("sbx-init: started by sbx only\n", stderr);
			return 64;
		}
	/* A private copy, made writable so the offsets can become pointers
	 * in place; populated in one go (a page fault each costs more). */
	if (fstat(fds[0], &st) < 0 || st.st_size <= 0 ||
	    (blob = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_POPULATE,
			 fds[0], 0)) == MAP_FAILED) {
		sbx_init_fail(fds[1], SBX_STAGE_SYNC, "reading the sandbox's description");
	}
	close(fds[0]);
	spec = sbx_spec_unpack(blob, (size_t)st.st_size);
	if (!spec) {
		errno = EINVAL;
		sbx_init_fail(fds[1], SBX_STAGE_SYNC, "the sandbox's description is malformed");
	}
	sbx_init_main(spec, fds[1], fds[2], fds[3]);
}
