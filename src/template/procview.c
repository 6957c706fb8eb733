/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * procview.c - what /proc shows of a run's processes as their command
 * line and environment (template.h says why they write over it).  No
 * Python here: unit-tested on its own.
 */
#include "config.h"

#include <fcntl.h>
#include <linux/prctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "template.h"

struct sbx_template_area sbx_template_argv_area, sbx_template_env_area;

void sbx_template_area_write(const struct sbx_template_area *area, char *const *words)
{
	size_t at = 0;

	if (!area->start || area->len == 0)
		return;
	for (size_t i = 0; words && words[i] && at < area->len - 1; i++) {
		size_t n = strlen(words[i]) + 1;

		if (n > area->len - 1 - at)
			n = area->len - 1 - at;
		memcpy(area->start + at, words[i], n);
		at += n;
	}
	memset(area->start + at, 0, area->len - at);
}

/* The area @v's strings occupy, as exec laid them out (one after the
 * other); none if they are not contiguous. */
struct sbx_template_area sbx_template_area_of(char *const *v)
{
	struct sbx_template_area a = { 0 };
	char *end;

	if (!v || !v[0])
		return a;
	end = v[0];
	for (size_t i = 0; v[i]; i++) {
		if (v[i] != end)
			return (struct sbx_template_area){ 0 };
		end = v[i] + strlen(v[i]) + 1;
	}
	a.start = v[0];
	a.len = (size_t)(end - v[0]);
	return a;
}

/* @words laid out as exec lays them out, in a buffer of their own. */
static char *laid_out(char *const *words, size_t *len)
{
	size_t n = 0, at = 0;
	char *buf;

	for (size_t i = 0; words && words[i]; i++)
		n += strlen(words[i]) + 1;
	buf = malloc(n ? n : 1);
	if (!buf)
		return NULL;
	for (size_t i = 0; words && words[i]; i++) {
		size_t k = strlen(words[i]) + 1;

		memcpy(buf + at, words[i], k);
		at += k;
	}
	*len = n;
	return buf;
}

/* The fields of /proc/self/stat from start_code (26th) to env_end (51st). */
static int read_stat(unsigned long long v[26])
{
	char buf[2048], *p;
	ssize_t n;
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* After the command name, which may hold spaces and parentheses. */
	p = strrchr(buf, ')');
	if (!p)
		return -1;
	p++;
	/* Field 3 (state) is the first after it; skip to field 26. */
	for (int f = 3; f < 26; f++) {
		p = strchr(p + 1, ' ');
		if (!p)
			return -1;
	}
	for (int i = 0; i < 26; i++) {
		char *end;

		v[i] = strtoull(p, &end, 10);
		if (end == p)
			return -1;
		p = end;
	}
	return 0;
}

int sbx_template_show(char *const *argv, char *const *envp)
{
	unsigned long long v[26]; /* stat fields 26..51 */
	struct prctl_mm_map map;
	size_t alen, elen;
	char *a, *e;

	/* Exactly: point the kernel at new copies (PR_SET_MM_MAP, which
	 * needs no capability unless it changes the executable).  The
	 * copies are never freed: the kernel reads them for as long as the
	 * process lives. */
	a = laid_out(argv, &alen);
	e = laid_out(envp, &elen);
	if (a && e && alen && read_stat(v) == 0) {
		map = (struct prctl_mm_map){
			.start_code = v[0],  /* field 26 */
			.end_code = v[1],
			.start_stack = v[2],
			.start_data = v[19], /* field 45 */
			.end_data = v[20],
			.start_brk = v[21],
			.brk = (uint64_t)(uintptr_t)sbrk(0),
			.arg_start = (uint64_t)(uintptr_t)a,
			.arg_end = (uint64_t)(uintptr_t)(a + alen),
			.env_start = (uint64_t)(uintptr_t)e,
			.env_end = (uint64_t)(uintptr_t)(e + elen),
			.exe_fd = (uint32_t)-1,
		};
		if (prctl(PR_SET_MM, PR_SET_MM_MAP, (unsigned long)&map, sizeof(map), 0) == 0)
			return 0;
	}
	free(a);
	free(e);
	/* A kernel without checkpoint/restore: over the old areas, cut to
	 * their size, NUL-filled. */
	sbx_template_area_write(&sbx_template_argv_area, argv);
	sbx_template_area_write(&sbx_template_env_area, envp);
	return -1;
}
