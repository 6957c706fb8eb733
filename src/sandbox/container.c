/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * container.c - is this a container, and which of its settings refused
 * the sandbox (container.h).
 */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"
#include "container.h"

static char *in_root(const char *root, const char *path)
{
	return sbx_xasprintf("%s%s", root ? root : "", path);
}

/* container=VALUE among pid 1's NUL-separated environment strings. */
static bool from_environ(const char *root, char *buf, size_t len)
{
	_cleanup_free_ char *path = in_root(root, "/proc/1/environ");
	char env[16384];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	n = sbx_read_all(fd, env, sizeof(env) - 1);
	close(fd);
	if (n <= 0)
		return false;
	env[n] = '\0';
	for (char *s = env; s < env + n; s += strlen(s) + 1) {
		if (strncmp(s, "container=", 10) == 0 && s[10]) {
			snprintf(buf, len, "%s", s + 10);
			return true;
		}
	}
	return false;
}

static bool exists(const char *root, const char *path)
{
	_cleanup_free_ char *p = in_root(root, path);
	struct stat st;

	return lstat(p, &st) == 0;
}

bool sbx_container_engine(const char *root, char *buf, size_t len)
{
	if (from_environ(root, buf, len))
		return true;
	if (exists(root, "/run/.containerenv")) {
		snprintf(buf, len, "podman");
		return true;
	}
	if (exists(root, "/.dockerenv")) {
		snprintf(buf, len, "docker");
		return true;
	}
	return false;
}

void sbx_container_hint(enum sbx_container_refusal what, const char *engine, char *buf,
			size_t len)
{
	switch (what) {
	case SBX_CONTAINER_NAMESPACES:
		/* podman's default profile (containers-common) allows clone3 and
		 * unshare of new namespaces but sethostname only with
		 * CAP_SYS_ADMIN; docker's and containerd's refuse all three. */
		snprintf(buf, len,
			 "sbx runs in a container (%s) whose seccomp profile refuses what the sandbox "
			 "needs (clone3 and unshare of new namespaces, sethostname in its own UTS "
			 "namespace): give the container podman's default profile with sethostname and "
			 "setdomainname allowed, which deploy/container/seccomp-profile prints (podman or "
			 "docker run --security-opt seccomp=FILE; Kubernetes: a Localhost "
			 "seccompProfile) - not seccomp=unconfined, never --privileged "
			 "(docs/container.md)",
			 engine);
		return;
	case SBX_CONTAINER_PROC:
		snprintf(buf, len,
			 "sbx runs in a container (%s) whose /proc has masked or read-only paths, and "
			 "the kernel refuses a fresh /proc in a new user namespace while part of /proc "
			 "is hidden: run it with an unmasked /proc (podman run --security-opt "
			 "unmask=/proc/*; docker run --security-opt systempaths=unconfined; Kubernetes: "
			 "securityContext.procMount: Unmasked) (docs/container.md)",
			 engine);
		return;
	case SBX_CONTAINER_CGROUP:
		snprintf(buf, len,
			 "sbx runs in a container (%s) whose cgroup file system is read-only: give it "
			 "its own cgroup namespace mounted read-write (podman run --cgroupns=private "
			 "--security-opt unmask=/sys/fs/cgroup; docker: --cgroupns=private and "
			 "--security-opt systempaths=unconfined) - never --privileged (docs/container.md)",
			 engine);
		return;
	}
	snprintf(buf, len, "see docs/container.md");
}
