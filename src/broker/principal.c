/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * principal.c - whose run it is: --principal, else the caller's login
 * name, which names its part of the input store (store.h).
 */
#include "config.h"

#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "passwd.h"
#include "run.h"
#include "store.h"

/* The whole of a small local file, NUL-terminated; NULL if it cannot be
 * read or is larger than @max. */
static char *read_small(const char *path, size_t max, size_t *len)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	struct stat st;
	char *buf;
	ssize_t n;

	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > max)
		return NULL;
	buf = sbx_xmalloc((size_t)st.st_size + 1);
	n = sbx_read_all(fd, buf, (size_t)st.st_size + 1);
	if (n < 0 || (size_t)n > (size_t)st.st_size) {
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	*len = (size_t)n;
	return buf;
}

/*
 * The caller's login name from /etc/passwd when nsswitch.conf consults
 * that file first, which is getpwuid()'s answer without the cost of NSS on
 * every run (passwd.h); NULL when it cannot be told that way, and the
 * caller asks getpwuid().
 */
static char *login_name_local(uid_t uid)
{
	_cleanup_free_ char *conf = NULL, *pw = NULL;
	char name[256];
	size_t conf_len, pw_len;

	conf = read_small("/etc/nsswitch.conf", 1u << 16, &conf_len);
	if (!conf || !sbx_nsswitch_passwd_files_first(conf, conf_len))
		return NULL;
	pw = read_small("/etc/passwd", 1u << 22, &pw_len);
	if (!pw || sbx_passwd_name(pw, pw_len, (uint32_t)uid, name, sizeof(name)) != SBX_PASSWD_FOUND)
		return NULL;
	return sbx_xstrdup(name);
}

int sbx_run_principal(const struct sbx_run_opts *o, char **out)
{
	if (o->principal) {
		*out = sbx_xstrdup(o->principal);
	} else if ((*out = login_name_local(getuid()))) {
		/* found without NSS */
	} else {
		struct passwd *pw = getpwuid(getuid());
		if (!pw) {
			sbx_warn("--principal: cannot find the login name of uid %u; name a principal",
				 (unsigned)getuid());
			return -1;
		}
		*out = sbx_xstrdup(pw->pw_name);
	}
	if (!sbx_principal_name_valid(*out)) {
		sbx_warn("--principal: \"%s\" is not a valid principal name (^[a-z_][a-z0-9_-]{0,31}$)",
			 *out);
		return -1;
	}
	return 0;
}

