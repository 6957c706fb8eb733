/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * serve-zip.c - an application/zip output: each member checked as an
 * output of its own (serve.h).
 *
 * Agents hand back a .zip of CSVs as often as the CSVs themselves, and
 * whoever unpacks it meets every member as a file: so a member passes
 * only what the same file would pass in /work/out.  In order:
 *   1. the container, as an archive input is checked (zip-read.h: caps,
 *      ratio, names, no encryption, duplicates, traversal or links), with
 *      the run's limits: no more members than what is left of
 *      output_files (and SBX_VERDICT_MAX_MEMBERS, what one answer can
 *      list), no more inflated bytes than what is left of output_bytes,
 *      both decided from the central directory before anything inflates;
 *   2. each member is inflated into a memfd of its declared size (the
 *      reader holds it to that size and its CRC), hashed on the way;
 *   3. a member that is itself an archive or compressed (ZIP, gzip, tar,
 *      7z, xz, bzip2, zstd, RAR, by magic or by name) is refused: what it
 *      holds would escape every check here;
 *   4. then the rules of any output (serve.c): pickles refused, the type
 *      from the content and the extension, allowed by the job, accepted by
 *      its validator, active content refused where the profile says so.
 * The first member refused refuses the archive, with its reason code and
 * a reason that names it; the answer lists the members checked up to it.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <nettle/sha2.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <unistd.h>

#include "serve.h"
#include "util.h"
#include "validate.h"
#include "zip-read.h"

/* Names of archives, whatever their content (a .tar of text has no magic
 * before offset 257; a truncated .gz is still meant to be one). */
static const char *const nested_ext[] = {
	"zip", "gz", "tgz", "tar", "7z", "xz", "txz", "bz2", "tbz2", "zst", "tzst",
	"rar", "jar", "whl", "lz", "lzma", "z", "cab", "apk", "war", "ear",
};

static const char *nested(const unsigned char *head, size_t n, const char *base)
{
	const char *dot = strrchr(base, '.');
	const char *what = sbx_media_archive(head, n);

	if (what)
		return what;
	for (size_t i = 0; dot && dot != base && i < ARRAY_SIZE(nested_ext); i++)
		if (strcasecmp(dot + 1, nested_ext[i]) == 0)
			return "an archive by its name";
	return NULL;
}

struct into_memfd {
	int fd;
	uint64_t at;
	struct sha256_ctx sha;
};

static int sink(void *ud, const unsigned char *p, size_t n, struct sbx_media_report *rep)
{
	struct into_memfd *m = ud;

	sha256_update(&m->sha, n, p);
	while (n > 0) {
		ssize_t k = pwrite(m->fd, p, n, (off_t)m->at);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return sbx_media_fail_code(rep, SBX_RC_TOO_LARGE,
						   "zip: no memory to hold a member: %s",
						   strerror(k < 0 ? errno : EIO));
		p += k;
		n -= (size_t)k;
		m->at += (uint64_t)k;
	}
	return 0;
}

/* A refused member: listed with its reason, and the archive refused with
 * the same code and a reason that names it. */
static int refuse(struct sbx_verdict_member *x, struct sbx_media_report *rep, const char *code,
		  const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int refuse(struct sbx_verdict_member *x, struct sbx_media_report *rep, const char *code,
		  const char *fmt, ...)
{
	va_list ap;

	size_t n;

	va_start(ap, fmt);
	vsnprintf(x->reason, sizeof(x->reason), fmt, ap);
	va_end(ap);
	/* Cut where it was cut, but never inside a character: the broker
	 * refuses an answer that is not UTF-8. */
	n = strlen(x->reason);
	while (n > 0 && !sbx_utf8_valid(x->reason, n))
		n--;
	x->reason[n] = '\0';
	if (!n)
		snprintf(x->reason, sizeof(x->reason), "rejected");
	x->ok = false;
	x->reason_code = code;
	x->flags = 0;
	x->formula_cells = false;
	return sbx_media_fail_code(rep, code, "zip: member \"%s\": %s", x->path, x->reason);
}

/* One member, inflated into a memfd, then checked as an output. */
static int check_member(struct sbx_validator *val, const struct sbx_zip *z,
			const struct sbx_zip_entry *e, struct sbx_verdict_member *x,
			struct sbx_verdict *v, struct sbx_media_report *rep)
{
	_cleanup_close_ int fd = -1;
	struct into_memfd m = { .fd = -1 };
	unsigned char head[SBX_MEDIA_HEAD], digest[SHA256_DIGEST_SIZE];
	struct sbx_verdict one;
	const char *base = strrchr(e->name, '/'), *what;
	ssize_t n;

	base = base ? base + 1 : e->name;
	snprintf(x->path, sizeof(x->path), "%s", e->name);
	x->size = e->usize;
	fd = memfd_create("sbx-zip-member", MFD_CLOEXEC);
	if (fd < 0)
		return refuse(x, rep, SBX_RC_IO_ERROR, "cannot hold it: %s", strerror(errno));
	m.fd = fd;
	sha256_init(&m.sha);
	if (sbx_zip_read(z, e, sink, &m, "zip", rep) < 0) {
		char why[sizeof(rep->reason)];

		/* The member's own reason, without the container's prefix. */
		snprintf(why, sizeof(why), "%s", rep->reason);
		return refuse(x, rep, rep->code ? rep->code : SBX_RC_INVALID_CONTENT, "%s", why);
	}
	sha256_digest(&m.sha, sizeof(digest), digest);
	for (size_t i = 0; i < sizeof(digest); i++)
		snprintf(x->sha256 + 2 * i, 3, "%02x", digest[i]);
	n = pread(fd, head, sizeof(head), 0);
	if (n < 0)
		return refuse(x, rep, SBX_RC_IO_ERROR, "read error: %s", strerror(errno));
	what = nested(head, (size_t)n, base);
	if (what)
		return refuse(x, rep, SBX_RC_NESTED_ARCHIVE,
			      "%s inside the archive: nested archives are refused; put its files in "
			      "this one, or next to it in /work/out", what);
	/* The rules of any output, on the member's bytes. */
	sbx_validator_check_file(val, fd, e->name, e->usize, &one);
	x->media_type = one.media_type;
	if (!one.ok)
		return refuse(x, rep, one.reason_code ? one.reason_code : SBX_RC_INVALID_CONTENT,
			      "%s", one.reason);
	x->ok = true;
	x->flags = one.flags;
	x->formula_cells = one.formula_cells;
	/* What a member carries, the archive carries. */
	v->flags |= one.flags;
	v->formula_cells = v->formula_cells || one.formula_cells;
	return 0;
}

int sbx_validator_check_zip(struct sbx_validator *val, int fd, uint64_t size,
			    struct sbx_verdict *v, struct sbx_media_report *rep)
{
	struct sbx_zip *z = NULL;
	struct sbx_zip_limits lim;
	uint64_t max_files, max_bytes, files = 0;
	int r = 0;

	memset(rep, 0, sizeof(*rep));
	sbx_validator_output_caps(val, &max_files, &max_bytes);
	sbx_zip_limits_default(&lim);
	/* Every member is a file the run handed back: the caps are what is
	 * left of the run's, and the answer's. */
	if (max_bytes < lim.max_total_bytes)
		lim.max_total_bytes = max_bytes;
	if (lim.max_entry_bytes > lim.max_total_bytes)
		lim.max_entry_bytes = lim.max_total_bytes;
	lim.max_path = SBX_VERDICT_MAX_MEMBER_PATH;
	if (sbx_zip_open(fd, size, &lim, "zip", &z, rep) < 0) {
		return -1;
	}
	for (size_t i = 0; i < z->n; i++)
		files += !z->v[i].is_dir;
	if (files > max_files || files > SBX_VERDICT_MAX_MEMBERS) {
		r = sbx_media_fail_code(rep, SBX_RC_OVER_COUNT,
					"zip: %" PRIu64 " members: more than %" PRIu64
					" (what is left of output_files, at most %u)",
					files, max_files < SBX_VERDICT_MAX_MEMBERS ? max_files :
										   (uint64_t)SBX_VERDICT_MAX_MEMBERS,
					SBX_VERDICT_MAX_MEMBERS);
		goto out;
	}
	v->has_members = true;
	for (size_t i = 0; i < z->n && r == 0; i++) {
		if (z->v[i].is_dir)
			continue;
		r = check_member(val, z, &z->v[i], &v->members[v->n_members++], v, rep);
	}
out:
	if (r < 0) {
		v->flags = 0;
		v->formula_cells = false;
	}
	sbx_zip_free(z);
	return r;
}
