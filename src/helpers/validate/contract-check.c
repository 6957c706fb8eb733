/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * contract-check.c - checking an output against its contract (the parser
 * is src/outputs/contract.c): the dispatcher by media type, the failure
 * list, and the JSON Schema check.  The CSV checks are in contract-csv.c,
 * the text checks in contract-text.c.  It reads the payload's output, so
 * it runs only in the confined validator.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "contract-check.h"
#include "jschema.h"
#include "util.h"

/* --- checking ---------------------------------------------------------------- */

/* Manifest text: valid UTF-8 (cut before a bad byte), no C0, DEL or C1
 * control characters (each becomes '?'). */
static void clean_into(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src);
	if (!sbx_utf8_valid(dst, strlen(dst))) {
		/* A cut multi-byte character at the end, or worse. */
		size_t n = strlen(dst);
		while (n > 0 && !sbx_utf8_valid(dst, n))
			dst[--n] = '\0';
	}
	for (unsigned char *p = (unsigned char *)dst; *p; p++) {
		if (*p < 0x20 || *p == 0x7f)
			*p = '?';
		/* C1 controls (U+0080..U+009F), which some terminals obey. */
		if (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f)
			p[0] = p[1] = '?';
	}
}

void sbx_contract_fail(struct sbx_contract_result *res, uint64_t row, const char *check,
		       const char *fmt, ...)
{
	struct sbx_contract_failure *f;
	char buf[sizeof(f->detail)];
	va_list ap;

	res->ok = false;
	res->count++;
	if (res->n == SBX_CONTRACT_MAX_FAILURES)
		return;
	f = &res->fail[res->n++];
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	clean_into(f->check, sizeof(f->check), check);
	clean_into(f->detail, sizeof(f->detail), buf);
	f->row = row;
}

static void check_range(struct sbx_contract_result *res, const char *check,
			const struct sbx_contract_range *r, uint64_t v, const char *unit)
{
	if (r->has_min && v < r->min)
		sbx_contract_fail(res, 0, check, "%llu %s, expected at least %llu",
				  (unsigned long long)v, unit, (unsigned long long)r->min);
	if (r->has_max && v > r->max)
		sbx_contract_fail(res, 0, check, "%llu %s, expected at most %llu",
				  (unsigned long long)v, unit, (unsigned long long)r->max);
}

static int on_schema_failure(void *arg, const char *doc_path, const char *keyword,
			     const char *detail)
{
	char check[64];

	snprintf(check, sizeof(check), "schema.%s", keyword);
	sbx_contract_fail(arg, 0, check, "%s: %s", *doc_path ? doc_path : "(document)", detail);
	return 0;
}

/* The JSON Schema subset (jschema.c) over the whole document, which the
 * validator bounds at SBX_JSCHEMA_MAX_DOC bytes. */
static int check_schema(const struct sbx_contract *k, int fd, uint64_t size,
			struct sbx_contract_result *res)
{
	_cleanup_free_ char *doc = NULL;
	size_t got = 0;
	int r;

	if (size > SBX_JSCHEMA_MAX_DOC) {
		sbx_contract_fail(res, 0, "schema", "larger than %u bytes: not validated",
				  SBX_JSCHEMA_MAX_DOC);
		return 0;
	}
	doc = sbx_xmalloc(size ? size : 1);
	while (got < size) {
		ssize_t n = pread(fd, doc + got, size - got, (off_t)got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			sbx_contract_fail(res, 0, "read", "read error");
			return -1;
		}
		got += (size_t)n;
	}
	r = sbx_jschema_validate(k->schema, doc, size, on_schema_failure, res);
	if (r == -ENOMEM)
		sbx_contract_fail(res, 0, "schema", "out of memory while validating");
	else if (r < 0)
		sbx_contract_fail(res, 0, "schema", "not JSON within the schema validator's bounds");
	return 0;
}

int sbx_contract_check(const struct sbx_contract *k, int fd, uint64_t size,
		       const char *media_type, uint64_t width, uint64_t height,
		       struct sbx_contract_result *res)
{
	memset(res, 0, sizeof(*res));
	res->ok = true;
	if (!media_type || (strcmp(media_type, k->media_type) != 0)) {
		sbx_contract_fail(res, 0, "media_type", "content is %s, expected %s",
				  media_type ? media_type : "unknown", k->media_type);
		return 0;
	}
	check_range(res, "bytes", &k->bytes, size, "bytes");
	if (sbx_contract_type_is_image(media_type)) {
		check_range(res, "width", &k->width, width, "pixels wide");
		check_range(res, "height", &k->height, height, "pixels high");
	}
	if (sbx_contract_type_is_csv(media_type) && (k->header || k->cols || k->rows.has_min || k->rows.has_max))
		return sbx_contract_check_csv(k, fd, size,
					      strcmp(media_type, "text/csv") != 0, res);
	if (sbx_contract_type_is_text(media_type) && (k->pattern || k->lines.has_min || k->lines.has_max))
		return sbx_contract_check_text(k, fd, size, res);
	if (k->schema)
		return check_schema(k, fd, size, res);
	return 0;
}
