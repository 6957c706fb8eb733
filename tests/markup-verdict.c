/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * markup-verdict.c - sbx's verdict on files, for tests/markup-diff.py:
 * `markup-verdict TYPE FILE...` runs the media validator of TYPE
 * (image/svg+xml, text/html, text/markdown) over each FILE and prints one
 * line a file:
 *
 *	rejected<TAB>FILE<TAB>REASON
 *	promoted<TAB>FILE<TAB>active_content or -
 *
 * The validators are the library's own entry points, the ones
 * sbx-validate calls; nothing here decides anything.
 */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "validate.h"

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: markup-verdict TYPE FILE...\n");
		return 2;
	}
	for (int i = 2; i < argc; i++) {
		struct sbx_media_report rep;
		struct stat st;
		int fd = open(argv[i], O_RDONLY | O_CLOEXEC);

		if (fd < 0 || fstat(fd, &st) < 0) {
			perror(argv[i]);
			return 2;
		}
		memset(&rep, 0, sizeof(rep));
		if (sbx_media_validate(argv[1], fd, (uint64_t)st.st_size, &rep) < 0)
			printf("rejected\t%s\t%s\n", argv[i], rep.reason);
		else
			printf("promoted\t%s\t%s\n", argv[i],
			       rep.flags & SBX_MEDIA_FLAG_ACTIVE ? "active_content" : "-");
		close(fd);
	}
	return fflush(stdout) == 0 ? 0 : 2;
}
