/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * passwd.h - the login name of a uid from the text of /etc/passwd, without
 * NSS.  getpwuid() reads nsswitch.conf, sets up the NSS machinery and may
 * load modules (systemd's, LDAP's) before it reads the same file: ~0.15 ms
 * of every run's CPU for a name that is in the local file nearly always.
 * These parsers answer only when the answer is certainly getpwuid()'s;
 * every doubt is "ask NSS" (the caller then calls getpwuid()).
 */
#ifndef SBX_PASSWD_H
#define SBX_PASSWD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * sbx_nsswitch_passwd_files_first() - does the nsswitch.conf text
 * @conf[0..@len) make "files" the first source of the passwd database?
 * Only then is an entry found in /etc/passwd what getpwuid() returns.
 * False for no passwd line, more than one, or anything else first
 * ("compat", "systemd", "sss", ...).
 */
bool sbx_nsswitch_passwd_files_first(const char *conf, size_t len);

enum sbx_passwd_lookup {
	SBX_PASSWD_FOUND,     /* the first entry with the uid, well formed */
	SBX_PASSWD_ABSENT,    /* no line has the uid: ask NSS (LDAP, SSSD users) */
	SBX_PASSWD_UNSURE,    /* a line before or at the match is not plain
			       * name:pw:uid:gid:gecos:dir:shell (NIS "+"/"-"
			       * entries, stray spaces, a NUL): ask NSS */
};

/*
 * sbx_passwd_name() - the login name of @uid in the passwd text
 * @buf[0..@len), as glibc's files source finds it (the first line with
 * that uid; blank and "#" lines skipped), copied into @name (@name_len
 * bytes, NUL-terminated).  A name that does not fit is SBX_PASSWD_UNSURE.
 */
enum sbx_passwd_lookup sbx_passwd_name(const char *buf, size_t len, uint32_t uid, char *name,
				       size_t name_len);

#endif
