/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rootids.c - pick and check root's per-run host id (see rootids.h).
 *
 * The files are read directly rather than through getpwuid(): NSS loads
 * modules and may ask a daemon or the network (systemd's module alone
 * costs ~0.6 ms here), which has no place on every run's path.  The local
 * databases are what an administrator edits when adding accounts, and the
 * default range is one no allocator uses.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rootids.h"

static const char hint_fmt[] =
	"set the host config key root_ids to a range that no user, group or subordinate id "
	"range (/etc/subuid, /etc/subgid) uses; the default is %u-%u";

static void hint(struct sbx_error *err)
{
	sbx_error_hint(err, hint_fmt, SBX_ROOT_IDS_FIRST_DEFAULT,
		       SBX_ROOT_IDS_FIRST_DEFAULT + SBX_ROOT_IDS_COUNT_DEFAULT - 1);
}

DEFINE_TRIVIAL_CLEANUP_FUNC(FILE *, fclose)

/* Field @n (0-based) of a ':'-separated line as a number; false if absent
 * or not a plain decimal below 2^32. */
static bool field_u32(const char *line, int n, uint32_t *out)
{
	const char *p = line;
	char *end;
	unsigned long long v;

	for (int i = 0; i < n; i++) {
		p = strchr(p, ':');
		if (!p)
			return false;
		p++;
	}
	if (*p < '0' || *p > '9')
		return false;
	errno = 0;
	v = strtoull(p, &end, 10);
	if (errno || (*end != ':' && *end != '\n' && *end != '\0') || v > UINT32_MAX)
		return false;
	*out = (uint32_t)v;
	return true;
}

/* The name (field 0) of @line, for the message. */
static void field_name(const char *line, char *buf, size_t len)
{
	size_t n = strcspn(line, ":\n");

	if (n >= len)
		n = len - 1;
	memcpy(buf, line, n);
	buf[n] = '\0';
}

enum kind { PASSWD, GROUP, SUBIDS };

/*
 * Look through @etc/@file for an id in [first, end).  Returns 0 when there
 * is none (or no such file), 1 with *@found and the entry's name when there
 * is, -1 when the file cannot be read.
 */
static int scan(const char *etc, const char *file, enum kind k, uint64_t first, uint64_t end,
		uint32_t *found, const char **what, char *name, size_t name_len)
{
	_cleanup_free_ char *path = sbx_xasprintf("%s/%s", etc, file);
	_cleanup_(fclosep) FILE *f = fopen(path, "re");
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;

	if (!f)
		return errno == ENOENT ? 0 : -1;
	while (getline(&line, &cap, f) > 0) {
		uint32_t a, b;

		if (line[0] == '#')
			continue;
		if (k == SUBIDS) {
			/* "owner:start:count": the owner may map all of it */
			if (field_u32(line, 1, &a) && field_u32(line, 2, &b) && b > 0 &&
			    a < end && (uint64_t)a + b > first) {
				*found = a > first ? a : (uint32_t)first;
				*what = strcmp(file, "subuid") == 0 ? "uid" : "gid";
				field_name(line, name, name_len);
				return 1;
			}
			continue;
		}
		/* passwd "name:x:uid:gid:..." (the primary gid is the
		 * user's too); group "name:x:gid:members" */
		for (int n = 2; n <= (k == PASSWD ? 3 : 2); n++)
			if (field_u32(line, n, &a) && a >= first && a < end) {
				*found = a;
				*what = k == PASSWD && n == 2 ? "uid" : "gid";
				field_name(line, name, name_len);
				return 1;
			}
	}
	return ferror(f) ? -1 : 0;
}

int sbx_root_ids_check(const char *etc, uint32_t first, uint32_t count, struct sbx_error *err)
{
	static const struct {
		const char *file;
		enum kind kind;
		const char *owner;
	} files[] = {
		{ "passwd", PASSWD, "user" },
		{ "group", GROUP, "group" },
		{ "subuid", SUBIDS, "subordinate uids of" },
		{ "subgid", SUBIDS, "subordinate gids of" },
	};
	uint64_t end = (uint64_t)first + count;

	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		const char *what = "id";
		char name[64];
		uint32_t id;
		int r = scan(etc, files[i].file, files[i].kind, first, end, &id, &what, name,
			     sizeof(name));

		if (r < 0) {
			sbx_error_set(err, SBX_EXIT_UNAVAILABLE, errno,
				      "root_ids: %s/%s: cannot read", etc, files[i].file);
			hint(err);
			return -1;
		}
		if (r > 0) {
			sbx_error_set(err, SBX_EXIT_UNAVAILABLE, 0,
				      "root_ids: host %s %u is taken: %s/%s has it (%s \"%s\")",
				      what, id, etc,
				      files[i].file, files[i].owner, name);
			hint(err);
			return -1;
		}
	}
	return 0;
}

int sbx_root_ids_pick(const char *etc, uint32_t first, uint32_t count, unsigned slot,
		      uint32_t *id, struct sbx_error *err)
{
	if (slot >= count) {
		sbx_error_set(err, SBX_EXIT_UNAVAILABLE, 0,
			      "root_ids: admission slot %u has no id: the range holds %u", slot,
			      count);
		sbx_error_hint(err, "raise root_ids.count in the host config to at least "
				    "max_concurrent, or lower max_concurrent");
		return -1;
	}
	/* The whole range, not just this slot's id: it costs the same one
	 * pass over each file, and a range that is only partly free would
	 * refuse some runs and not others, depending on the slot. */
	if (sbx_root_ids_check(etc, first, count, err) < 0)
		return -1;
	*id = first + slot;
	return 0;
}

/* Does /proc/self/@map map @id of our user namespace? */
static bool map_has(const char *map, uint32_t id)
{
	_cleanup_(fclosep) FILE *f = fopen(map, "re");
	unsigned long inside, outside, count;

	if (!f)
		return false;
	while (fscanf(f, "%lu %lu %lu", &inside, &outside, &count) == 3)
		if (id >= inside && id - inside < count)
			return true;
	return false;
}

bool sbx_root_ids_mapped(uint32_t id)
{
	return map_has("/proc/self/uid_map", id) && map_has("/proc/self/gid_map", id);
}

int sbx_root_ids_choose(uint32_t first, uint32_t count, unsigned slot, uid_t *id,
			struct sbx_error *err)
{
	uint32_t v;

	*id = (uid_t)-1;
	if (getuid() != 0)
		return 0;
	/* Root of a user namespace that does not map the id (a container
	 * with a single id, say) is an ordinary user as far as the host is
	 * concerned: it maps its own id, as an ordinary user does. */
	if (slot < count && !sbx_root_ids_mapped(first + slot))
		return 0;
	if (sbx_root_ids_pick("/etc", first, count, slot, &v, err) < 0)
		return -1;
	*id = (uid_t)v;
	return 0;
}
