/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * container.h - whether sbx runs inside a container, and the container
 * setting to blame when a step of the sandbox's set-up is refused there.
 *
 * Inside an OCI container the engine, not the host, decides three things
 * sbx needs: its seccomp profile may refuse new namespaces, its masked
 * /proc makes the kernel refuse a fresh /proc in a new user namespace,
 * and its cgroup file system is read-only unless delegated.  Each shows
 * as a bare EPERM or EROFS; only knowing that it is a container lets the
 * Hint name the engine's setting.  Read only on failure paths.
 */
#ifndef SBX_CONTAINER_H
#define SBX_CONTAINER_H

#include <stdbool.h>
#include <stddef.h>

/*
 * sbx_container_engine() - the container sbx runs in, as engines announce
 * it: container=NAME in pid 1's environment (systemd's container
 * interface; podman, LXC and systemd-nspawn set it), else
 * /run/.containerenv (podman, buildah, CRI-O: "podman"), else /.dockerenv
 * ("docker").  @root stands for "/" (tests; NULL for the real one).
 * Writes the name to @buf and returns true, or returns false outside a
 * container (or where pid 1's environment is not readable and no marker
 * file exists).
 */
bool sbx_container_engine(const char *root, char *buf, size_t len);

/* What was refused, for sbx_container_hint(). */
enum sbx_container_refusal {
	SBX_CONTAINER_NAMESPACES, /* a seccomp filter refused new namespaces */
	SBX_CONTAINER_PROC,       /* a fresh /proc in the sandbox's pid namespace */
	SBX_CONTAINER_CGROUP,     /* the cgroup file system is not writable */
};

/* The Hint for @what refused inside the container @engine: the setting of
 * podman, docker and Kubernetes that allows it (docs/container.md). */
void sbx_container_hint(enum sbx_container_refusal what, const char *engine, char *buf,
			size_t len);

#endif
