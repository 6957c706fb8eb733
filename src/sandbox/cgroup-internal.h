/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cgroup-internal.h - what the files of the cgroup code share beyond the
 * backend interface of cgroup.h; included only from src/sandbox/cgroup*.c.
 */
#ifndef SBX_CGROUP_INTERNAL_H
#define SBX_CGROUP_INTERNAL_H

/**
 * cgroup_read_path() - read the file at @path whole (capped at
 * SBX_CGROUP_FILE_MAX) into a new NUL-terminated string
 * @path: a path string: only for the kernel's own texts (mountinfo,
 *        /proc/self/cgroup, /proc/cmdline), never a cgroup directory
 * @out: the text, to be freed by the caller
 *
 * Return: 0, or -1 with errno set (EFBIG over the cap); sets no error.
 */
int cgroup_read_path(const char *path, char **out);

#endif
