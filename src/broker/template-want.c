/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * template-want.c - what a run does when its profile has a template
 * (sbx(1) TEMPLATES): use the one answering, or run cold and have one
 * started for the runs after it.
 *
 * A run never waits for a template.  Importing a profile's modules takes
 * about as long as a cold run (and far longer on a slow machine), so a
 * first run that waited would be slower than no template at all.  It
 * starts cold at once; the start happens beside it, in a process of its
 * own: `sbx template start` for the profile, exec'd (so none of this
 * broker's memory, key or job crosses) from a double fork (so nobody
 * waits for it), with the run's --config and catalog.  It holds the
 * profile's lock until the template answers or is gone; runs that find
 * the lock taken start cold without a second start.
 *
 * A start that failed leaves its reason (<...>.failed, template-life.c).
 * Runs report it as their fallback and do not try again for
 * SBX_TEMPLATE_RETRY_SECONDS, so a profile whose imports are broken costs
 * one failed start every five minutes, not one per run; `sbx template
 * start` retries at once.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "json.h"
#include "template-life.h"
#include "util.h"

extern char **environ;

/* A failed start younger than SBX_TEMPLATE_RETRY_SECONDS: true, with its
 * reason in @why. */
static bool failed_recently(const struct sbx_template_place *pl, char *why, size_t why_len)
{
	_cleanup_free_ char *path = sbx_template_failed_path(pl);
	_cleanup_json_ json_t *rec = json_load_file(path, 0, NULL);
	const char *reason = rec ? json_string_value(json_object_get(rec, "why")) : NULL;
	const json_t *at = rec ? json_object_get(rec, "at") : NULL;
	long long age;

	if (!reason || !json_is_integer(at))
		return false;
	age = (long long)time(NULL) - (long long)json_integer_value(at);
	if (age < 0 || age >= SBX_TEMPLATE_RETRY_SECONDS)
		return false;
	snprintf(why, why_len, "the template's start failed %llds ago (%s)", age, reason);
	return true;
}

/* `sbx template start --profile NAME --policy DIR [--config FILE]`,
 * detached: 0 once it is forked.  What goes wrong after that lands in
 * the .failed record.  The paths are passed as the run has them, in the
 * run's working directory: the template's socket is named for the
 * catalog directory's path as given (sbx_template_catalog_key()), so a
 * canonical form of it would name another. */
static int launch(const struct sbx_common_opts *o, const struct sbx_catalog *cat,
		  const struct sbx_profile *pr, char *why, size_t why_len)
{
	char *argv[10];
	size_t k = 0;
	int null_fd, status;
	pid_t mid;

	argv[k++] = "sbx";
	argv[k++] = "template";
	argv[k++] = "start";
	argv[k++] = "--profile";
	argv[k++] = (char *)pr->name;
	argv[k++] = "--policy";
	argv[k++] = cat->dir;
	if (o->config) {
		argv[k++] = "--config";
		argv[k++] = (char *)o->config;
	}
	argv[k] = NULL;
	null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null_fd < 0) {
		snprintf(why, why_len, "cannot start a template: /dev/null: %s", strerror(errno));
		return -1;
	}
	mid = fork();
	if (mid < 0) {
		close(null_fd);
		snprintf(why, why_len, "cannot start a template: fork: %s", strerror(errno));
		return -1;
	}
	if (mid == 0) {
		sigset_t none;

		/* Only system calls from here: the broker may have threads. */
		setsid();
		if (fork() != 0)
			_exit(0);
		sigemptyset(&none);
		if (sigprocmask(SIG_SETMASK, &none, NULL) < 0 || dup2(null_fd, 0) < 0 || dup2(null_fd, 1) < 0 || dup2(null_fd, 2) < 0)
			_exit(1);
		syscall(SYS_close_range, 3, ~0u, 0);
		/* This very sbx, even if its file was replaced since. */
		execve("/proc/self/exe", argv, environ);
		_exit(127);
	}
	close(null_fd);
	while (waitpid(mid, &status, 0) < 0 && errno == EINTR)
		;
	return 0;
}

int sbx_template_want(const struct sbx_common_opts *o, const struct sbx_catalog *cat,
		      const struct sbx_profile *pr, const struct sbx_template_place *pl,
		      char *why, size_t why_len)
{
	_cleanup_free_ char *lock_path = sbx_template_lock_path(pl, pr->name);
	_cleanup_close_ int lock_fd = -1;
	struct sbx_error err = { 0 };

	if (mkdir(pl->dir, 0700) < 0 && errno != EEXIST) {
		snprintf(why, why_len, "%s: %s", pl->dir, strerror(errno));
		return -1;
	}
	lock_fd = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (lock_fd < 0) {
		snprintf(why, why_len, "%s: %s", lock_path, strerror(errno));
		return -1;
	}
	/* Shared: runs do not hold each other up, only a starter's
	 * exclusive lock says no. */
	if (flock(lock_fd, LOCK_SH | LOCK_NB) < 0) {
		snprintf(why, why_len, "the template is starting (runs do not wait for it)");
		return -1;
	}
	if (access(pl->sock_path, F_OK) == 0 && sbx_template_query(pl->sock_path, false, NULL, &err) == 0)
		return 0;
	if (failed_recently(pl, why, why_len))
		return -1;
	if (launch(o, cat, pr, why, why_len) < 0)
		return -1;
	snprintf(why, why_len, "no template was running: one is starting for the runs after this one");
	return -1;
}
