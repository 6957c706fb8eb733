/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * serve.c - what the confined validator does with each file (serve.h).
 *
 * The rules are the ones the broker applied itself before validation
 * moved here: a candidate is valid when
 *   1. its content starts with the magic of a known type or is text,
 *   2. its extension names the same type,
 *   3. the type is allowed for the job (the effective list the broker
 *      computed at admission, contracts' types included), and
 *   4. the type's validator accepts the whole file;
 * and then, when the job gives its path a contract, the contract is
 * checked on the same bytes.  The broker checks 2 and 3 again on the
 * answer: a validator that lies about a type can only lie within the
 * types the job allows for that name.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "contract-check.h"
#include "json.h"
#include "mediatype.h"
#include "serve.h"
#include "util.h"
#include "validate.h"
#include "zip-read.h"

struct sbx_validator {
	char **allowed;              /* NULL-terminated */
	char **refuse_active;        /* types whose active content is refused */
	struct sbx_contracts contracts;
	uint64_t output_files;       /* what is left of the run's, for a ZIP's */
	uint64_t output_bytes;       /* members (serve-zip.c) */
};

int sbx_validator_new(const char *req, size_t len, struct sbx_validator **out, char *why,
		      size_t why_len)
{
	_cleanup_json_ json_t *root = NULL;
	struct sbx_validator *val;
	struct sbx_error err = { 0 };
	const json_t *allowed, *outputs, *refuse, *files, *bytes;
	json_t *t;
	size_t i;

	*out = NULL;
	root = len <= SBX_VERDICT_MAX_REQUEST ?
		       json_loadb(req, len, JSON_REJECT_DUPLICATES, NULL) : NULL;
	allowed = json_object_get(root, "allowed");
	outputs = json_object_get(root, "outputs");
	refuse = json_object_get(root, "refuse_active");
	files = json_object_get(root, "output_files");
	bytes = json_object_get(root, "output_bytes");
	if (!json_is_object(root) ||
	    (files && (!json_is_integer(files) || json_integer_value(files) < 0)) ||
	    (bytes && (!json_is_integer(bytes) || json_integer_value(bytes) < 0)) ||
	    json_integer_value(json_object_get(root, "sbx_validate")) != SBX_VERDICT_VERSION ||
	    !json_is_array(allowed) || json_array_size(allowed) > SBX_MEDIA_TYPE_COUNT ||
	    !(json_is_null(outputs) || json_is_object(outputs)) ||
	    (refuse && (!json_is_array(refuse) || json_array_size(refuse) > 2))) {
		snprintf(why, why_len, "the request is not a version %d request", SBX_VERDICT_VERSION);
		return -1;
	}
	val = sbx_xcalloc(1, sizeof(*val));
	/* Without the run's caps (a fuzzer's request), the archive input's. */
	val->output_files = files ? (uint64_t)json_integer_value(files) : SBX_VERDICT_MAX_MEMBERS;
	val->output_bytes = bytes ? (uint64_t)json_integer_value(bytes) : SBX_ZIP_MAX_BYTES;
	val->allowed = sbx_xcalloc(json_array_size(allowed) + 1, sizeof(char *));
	json_array_foreach(allowed, i, t) {
		const char *type = sbx_media_type_static(json_string_value(t));

		if (!type) {
			snprintf(why, why_len, "the request allows an unknown type");
			sbx_validator_free(val);
			return -1;
		}
		val->allowed[i] = sbx_xstrdup(type);
	}
	val->refuse_active = sbx_xcalloc(json_array_size(refuse) + 1, sizeof(char *));
	json_array_foreach(refuse, i, t) {
		const char *type = sbx_media_type_static(json_string_value(t));

		if (!type) {
			snprintf(why, why_len, "the request refuses an unknown type");
			sbx_validator_free(val);
			return -1;
		}
		val->refuse_active[i] = sbx_xstrdup(type);
	}
	if (json_is_object(outputs) &&
	    sbx_contracts_parse(outputs, "job", &val->contracts, &err) < 0) {
		snprintf(why, why_len, "the request's contracts: %s", err.msg);
		sbx_validator_free(val);
		return -1;
	}
	*out = val;
	return 0;
}

void sbx_validator_output_caps(const struct sbx_validator *val, uint64_t *files, uint64_t *bytes)
{
	*files = val->output_files;
	*bytes = val->output_bytes;
}

void sbx_validator_free(struct sbx_validator *val)
{
	if (!val)
		return;
	sbx_strv_free(val->allowed);
	sbx_strv_free(val->refuse_active);
	sbx_contracts_free(&val->contracts);
	free(val);
}

/* A reason for the manifest: valid UTF-8 (cut before a bad byte), no
 * control characters, at most SBX_VERDICT_MAX_REASON bytes; and its code,
 * an SBX_RC_* of reasoncode.h. */
static void set_reason(struct sbx_verdict *v, const char *code, const char *fmt, ...)
	_printf_(3, 4);
static void set_reason(struct sbx_verdict *v, const char *code, const char *fmt, ...)
{
	char buf[SBX_VERDICT_MAX_REASON + 256];
	size_t n;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	for (unsigned char *p = (unsigned char *)buf; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			*p = '?';
	n = strlen(buf);
	if (n > SBX_VERDICT_MAX_REASON)
		n = SBX_VERDICT_MAX_REASON;
	while (n > 0 && !sbx_utf8_valid(buf, n))
		n--;
	buf[n] = '\0';
	/* C1 controls (U+0080..U+009F), which some terminals obey. */
	for (unsigned char *p = (unsigned char *)buf; *p; p++)
		if (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f)
			p[0] = p[1] = '?';
	snprintf(v->reason, sizeof(v->reason), "%s", n ? buf : "rejected");
	v->reason_code = code;
	v->ok = false;
}

/* "text/csv, image/png" of @allowed into @buf, cut with "..." when long:
 * the types the job allows, for a refusal that says what to write. */
static const char *allowed_list(char *const *allowed, char *buf, size_t len)
{
	size_t at = 0;

	buf[0] = '\0';
	for (size_t i = 0; allowed[i]; i++) {
		int k = snprintf(buf + at, len - at, "%s%s", i ? ", " : "", allowed[i]);

		if (k < 0 || (size_t)k >= len - at) {
			snprintf(buf + (at < len - 5 ? at : len - 5), 5, "%s", i ? ", ..." : "...");
			break;
		}
		at += (size_t)k;
	}
	return buf[0] ? buf : "none";
}

static const struct sbx_contract *contract_for(const struct sbx_validator *val, const char *path)
{
	for (size_t i = 0; i < val->contracts.n; i++)
		if (strcmp(val->contracts.v[i].path, path) == 0)
			return &val->contracts.v[i];
	return NULL;
}

/* The rules of any output, without the contract; @top: a file of
 * /work/out, not a ZIP's member (whose ZIPs are refused before this). */
static void check_file(struct sbx_validator *val, int fd, const char *path, uint64_t size,
		       struct sbx_verdict *v, bool top)
{
	unsigned char head[SBX_MEDIA_HEAD];
	struct sbx_media_report rep;
	const char *base = strrchr(path, '/'), *type, *by_name, *pickle;
	char list[320];
	ssize_t n;

	memset(v, 0, sizeof(*v));
	v->ok = true;
	base = base ? base + 1 : path;
	n = pread(fd, head, sizeof(head), 0);
	if (n < 0) {
		set_reason(v, SBX_RC_IO_ERROR, "read error: %s", strerror(errno));
		return;
	}
	type = sbx_media_detect(head, (size_t)n, base);
	by_name = sbx_media_type_expected(base, val->allowed);
	/* A .md where only text/plain is allowed is checked by text/plain's
	 * rules (mediatype.h). */
	if (type && by_name && strcmp(type, "text/markdown") == 0 &&
	    strcmp(by_name, "text/plain") == 0)
		type = by_name;
	v->media_type = sbx_media_type_static(type);
	pickle = sbx_media_code_as_data(head, (size_t)n, base);
	if (pickle) {
		/* Before the type rules: whatever the name or the profile, a
		 * pickle is refused with what to write instead. */
		set_reason(v, SBX_RC_CODE_AS_DATA, "pickle: %s: " SBX_MEDIA_PICKLE_REASON, pickle);
	} else if (!type) {
		/* The refusals that a different file would pass say which
		 * types would: the list the job allows. */
		set_reason(v, SBX_RC_UNKNOWN_TYPE,
			   "content is not a known media type: it looks like %s; allowed: %s",
			   sbx_media_describe(head, (size_t)n), allowed_list(val->allowed, list, sizeof(list)));
	} else if (!by_name) {
		set_reason(v, SBX_RC_UNKNOWN_EXTENSION,
			   "extension does not name a known media type (content is %s); allowed: %s",
			   type, allowed_list(val->allowed, list, sizeof(list)));
	} else if (strcmp(type, by_name) != 0) {
		set_reason(v, SBX_RC_TYPE_MISMATCH, "content is %s but the extension says %s", type,
			   by_name);
	} else if (!sbx_media_type_in(val->allowed, type)) {
		set_reason(v, SBX_RC_NOT_ALLOWED_TYPE, "media type %s is not in allowed_outputs; allowed: %s",
			   type, allowed_list(val->allowed, list, sizeof(list)));
	} else if (strcmp(type, "application/zip") == 0) {
		/* Its members, each as an output (serve-zip.c). */
		if (!top)
			set_reason(v, SBX_RC_NESTED_ARCHIVE, "a ZIP archive inside the archive");
		else if (sbx_validator_check_zip(val, fd, size, v, &rep) < 0)
			set_reason(v, rep.code ? rep.code : SBX_RC_INVALID_CONTENT, "%s",
				   rep.reason[0] ? rep.reason : "rejected by its validator");
	} else if (sbx_media_validate(type, fd, size, &rep) < 0) {
		set_reason(v, rep.code ? rep.code : SBX_RC_INVALID_CONTENT, "%s",
			   rep.reason[0] ? rep.reason : "rejected by its validator");
	} else if ((rep.flags & SBX_MEDIA_FLAG_ACTIVE) &&
		   sbx_media_type_in(val->refuse_active, type)) {
		/* The profile's refuse_active_content: the flag becomes a
		 * refusal, with what to write instead. */
		set_reason(v, SBX_RC_ACTIVE_CONTENT,
			   "active_content: %s with scripts, event handlers, style sheets, <meta> or "
			   "<link> elements, or resources loaded from elsewhere; the profile refuses "
			   "it: write it without them (pandas' to_html() tables pass), or as CSV, "
			   "Markdown or PNG",
			   type);
	} else {
		v->formula_cells = rep.formula_cells;
		v->flags = rep.flags;
		v->width = rep.width;
		v->height = rep.height;
	}
}

void sbx_validator_check_file(struct sbx_validator *val, int fd, const char *path, uint64_t size,
			      struct sbx_verdict *v)
{
	check_file(val, fd, path, size, v, false);
}

void sbx_validator_check(struct sbx_validator *val, int fd, const char *path, uint64_t size,
			 struct sbx_verdict *v)
{
	const struct sbx_contract *k;

	check_file(val, fd, path, size, v, true);
	if (!v->ok)
		return;
	k = contract_for(val, path);
	if (!k)
		return;
	v->has_contract = true;
	sbx_contract_check(k, fd, size, v->media_type, v->width, v->height, &v->contract);
	/* The manifest lists what the checks found; the broker rejects. */
}

/* --- the exchange with the broker ----------------------------------------------- */

const char *sbx_validator_misbehave;

/* What a compromised validator could do instead of answering (serve.h).
 * Returns when the misbehaviour is an answer of its own (sent). */
static void misbehave(int sock, struct sbx_verdict *v)
{
	const char *m = sbx_validator_misbehave;
	static char big[SBX_VERDICT_MAX_ANSWER + 64];

	sbx_validator_misbehave = NULL; /* the first item only */
	if (!strcmp(m, "spin"))
		for (volatile unsigned long i = 0;; i++)
			;
	if (!strcmp(m, "crash"))
		abort();
	if (!strcmp(m, "syscall"))
		(void)!open("/", O_RDONLY | O_CLOEXEC);
	if (!strcmp(m, "exit"))
		_exit(0);
	if (!strcmp(m, "garbage"))
		(void)!send(sock, "{\"v\":1,", 7, MSG_NOSIGNAL);
	if (!strcmp(m, "long")) {
		memset(big, ' ', sizeof(big));
		(void)!send(sock, big, sizeof(big), MSG_NOSIGNAL);
	}
	if (!strcmp(m, "other"))
		v->index++;
	if (!strcmp(m, "forge")) {
		*v = (struct sbx_verdict){ .index = v->index, .ok = true, .media_type = "image/png" };
	}
}

/* One item message and its fd; -1 for a bad message, 0 at the end. */
static int receive_item(int sock, char *buf, size_t len, int *fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = buf, .iov_len = len - 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			      .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;
	ssize_t n;

	*fd = -1;
	do
		n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		return (int)n;
	c = CMSG_FIRSTHDR(&msg);
	if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
	    c->cmsg_len == CMSG_LEN(sizeof(int)))
		memcpy(fd, CMSG_DATA(c), sizeof(int));
	if ((msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || *fd < 0) {
		if (*fd >= 0)
			close(*fd);
		errno = EPROTO;
		return -1;
	}
	buf[n] = '\0';
	return 1;
}

int sbx_validator_serve(struct sbx_validator *val, int sock, char *why, size_t why_len)
{
	char buf[SBX_VERDICT_MAX_ITEM + 1];

	for (;;) {
		_cleanup_json_ json_t *item = NULL;
		_cleanup_free_ char *answer = NULL;
		struct sbx_verdict v;
		const char *path;
		json_int_t idx, size;
		int fd, r;

		r = receive_item(sock, buf, sizeof(buf), &fd);
		if (r == 0)
			return 0;
		if (r < 0) {
			snprintf(why, why_len, "receiving an item: %s", strerror(errno));
			return -1;
		}
		item = json_loads(buf, JSON_REJECT_DUPLICATES, NULL);
		path = json_string_value(json_object_get(item, "path"));
		idx = json_integer_value(json_object_get(item, "i"));
		size = json_integer_value(json_object_get(item, "size"));
		if (!path || idx < 0 || size < 0 || !json_is_integer(json_object_get(item, "size"))) {
			close(fd);
			snprintf(why, why_len, "an item is not {i, path, size}");
			return -1;
		}
		sbx_validator_check(val, fd, path, (uint64_t)size, &v);
		close(fd);
		v.index = (size_t)idx;
		if (sbx_validator_misbehave)
			misbehave(sock, &v);
		answer = sbx_verdict_format(&v);
		if (send(sock, answer, strlen(answer), MSG_NOSIGNAL) < 0) {
			snprintf(why, why_len, "answering: %s", strerror(errno));
			return -1;
		}
	}
}
