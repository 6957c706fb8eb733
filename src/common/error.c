/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

static const struct {
	const char *name;
	int exit;
} statuses[] = {
	[SBX_STATUS_SUCCEEDED] = { "succeeded", SBX_EXIT_OK },
	[SBX_STATUS_FAILED] = { "failed", SBX_EXIT_FAILED },
	[SBX_STATUS_INVALID] = { "invalid", SBX_EXIT_INVALID },
	[SBX_STATUS_REFUSED] = { "refused", SBX_EXIT_REFUSED },
	[SBX_STATUS_REJECTED_CAPACITY] = { "rejected_capacity", SBX_EXIT_CAPACITY },
	[SBX_STATUS_TIMED_OUT] = { "timed_out", SBX_EXIT_TIMEOUT },
	[SBX_STATUS_CANCELLED] = { "cancelled", SBX_EXIT_CANCELLED },
	[SBX_STATUS_LIMIT_EXCEEDED] = { "limit_exceeded", SBX_EXIT_LIMIT },
	[SBX_STATUS_ISOLATION_UNAVAILABLE] = { "isolation_unavailable", SBX_EXIT_UNAVAILABLE },
	[SBX_STATUS_ERROR] = { "error", SBX_EXIT_SOFTWARE },
};

const char *sbx_status_name(enum sbx_status s)
{
	return (size_t)s < ARRAY_SIZE(statuses) ? statuses[s].name : "error";
}

int sbx_status_exit(enum sbx_status s)
{
	return (size_t)s < ARRAY_SIZE(statuses) ? statuses[s].exit : SBX_EXIT_SOFTWARE;
}

enum sbx_status sbx_status_from_exit(int code)
{
	for (size_t i = 0; i < ARRAY_SIZE(statuses); i++)
		if (statuses[i].exit == code)
			return (enum sbx_status)i;
	return SBX_STATUS_ERROR;
}

/* After a truncating snprintf into @s: drop a UTF-8 sequence cut short at
 * the end, so a long message stays valid UTF-8. */
static void trim_cut_char(char *s)
{
	size_t n = strlen(s), start = n;

	while (start > 0 && n - start < 4 && ((unsigned char)s[start - 1] & 0xc0) == 0x80)
		start--;
	if (start > 0 && (unsigned char)s[start - 1] >= 0xc0) {
		unsigned char lead = (unsigned char)s[start - 1];
		size_t want = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2;

		if (n - (start - 1) < want)
			s[start - 1] = '\0';
	}
}

int sbx_error_set(struct sbx_error *err, int code, int errnum, const char *fmt, ...)
{
	va_list ap;

	if (!err || err->code)
		return -1;
	err->code = code ? code : SBX_EXIT_SOFTWARE;
	err->errnum = errnum;
	err->hint[0] = '\0';
	err->file[0] = err->path[0] = '\0';
	err->has_path = false;
	va_start(ap, fmt);
	if (vsnprintf(err->msg, sizeof(err->msg), fmt, ap) >= (int)sizeof(err->msg))
		trim_cut_char(err->msg);
	va_end(ap);
	return -1;
}

/* Which host config file this process read, for hints that name a key
 * of it (set once the config is loaded; see sbx_error_config_note()). */
static char config_note[384];

void sbx_error_config_note(const char *note)
{
	snprintf(config_note, sizeof(config_note), "%s", note ? note : "");
}

void sbx_hint_add_config(char *hint, size_t size)
{
	size_t n = strlen(hint);

	/* "the host config key X", "in the host config", "the host
	 * configuration's": a key is no use to someone who cannot tell which
	 * file holds it. */
	if (!config_note[0] || !strstr(hint, "host config") || strstr(hint, config_note))
		return;
	snprintf(hint + n, size - n, " (%s)", config_note);
}

void sbx_error_hint(struct sbx_error *err, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return;
	va_start(ap, fmt);
	vsnprintf(err->hint, sizeof(err->hint), fmt, ap);
	va_end(ap);
	sbx_hint_add_config(err->hint, sizeof(err->hint));
}

void sbx_error_prefix(struct sbx_error *err, const char *fmt, ...)
{
	char prefix[512], old[sizeof(err->msg)];
	va_list ap;

	if (!err || !err->code)
		return;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	memcpy(old, err->msg, sizeof(old));
	if (snprintf(err->msg, sizeof(err->msg), "%s%s", prefix, old) >= (int)sizeof(err->msg))
		trim_cut_char(err->msg);
}

const char *sbx_error_text(const struct sbx_error *err, char *buf, size_t len)
{
	if (err->errnum)
		snprintf(buf, len, "%s: %s", err->msg, strerror(err->errnum));
	else
		snprintf(buf, len, "%s", err->msg);
	return buf;
}

void sbx_error_locate(struct sbx_error *err, const char *file, const char *path)
{
	if (!err || !err->code)
		return;
	snprintf(err->file, sizeof(err->file), "%s", file ? file : "");
	snprintf(err->path, sizeof(err->path), "%s", path ? path : "");
	err->has_path = path != NULL;
}

static bool json_errors;

void sbx_error_json(bool on)
{
	json_errors = on;
}

bool sbx_error_json_on(void)
{
	return json_errors;
}

/*
 * Append @s to @out (of @size, NUL-terminated) as a JSON string of at most
 * @budget bytes (cut short there), or null for NULL: quotes, backslashes and controls escaped,
 * a byte that does not start valid UTF-8 written as U+FFFD.  By hand: the
 * static programs that link src/common have no JSON library.
 */
static void put_json_text(char *out, size_t size, const char *s, size_t budget)
{
	size_t at = strlen(out), end = at + budget < size - 2 ? at + budget : size - 2;

#define PUT(...) (at += (size_t)snprintf(out + at, at < size ? size - at : 0, __VA_ARGS__))
	if (!s) {
		PUT("null");
		return;
	}
	PUT("\"");
	for (const unsigned char *p = (const unsigned char *)s; *p && at + 8 < end; p++) {
		size_t k = *p < 0x80 ? 1 : (*p & 0xe0) == 0xc0 ? 2 : (*p & 0xf0) == 0xe0 ? 3 :
			   (*p & 0xf8) == 0xf0 ? 4 : 0;

		if (*p == '"' || *p == '\\')
			PUT("\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f)
			PUT("\\u%04x", *p);
		else if (k == 1)
			PUT("%c", *p);
		else if (k && strnlen((const char *)p, k) == k && sbx_utf8_valid((const char *)p, k))
			PUT("%.*s", (int)k, (const char *)p), p += k - 1;
		else
			PUT("\\ufffd");
	}
	PUT("\"");
#undef PUT
}

void sbx_error_print_json(int code, const char *msg, const char *hint, const char *file,
			  const char *path)
{
	/* Room for each field escaped, and the keys. */
	char line[4096 + 2048 + 2 * 768 + 128] = "{\"error\":";

	put_json_text(line, sizeof(line), msg, 4096);
	strcat(line, ",\"hint\":");
	put_json_text(line, sizeof(line), hint, 2048);
	snprintf(line + strlen(line), 32, ",\"exit\":%d,\"file\":", code);
	put_json_text(line, sizeof(line), file, 768);
	strcat(line, ",\"path\":");
	put_json_text(line, sizeof(line), path, 768);
	/* One write of one line: nothing else of sbx's goes between. */
	fprintf(stderr, "%s}\n", line);
}

void sbx_error_print(const struct sbx_error *err)
{
	char buf[sizeof(err->msg) + 128];

	if (json_errors && (err->code == SBX_EXIT_USAGE || err->code == SBX_EXIT_INVALID)) {
		sbx_error_print_json(err->code, sbx_error_text(err, buf, sizeof(buf)),
				     err->hint[0] ? err->hint : NULL, err->file[0] ? err->file : NULL,
				     err->has_path ? err->path : NULL);
		return;
	}

	fprintf(stderr, "sbx: %s\n", sbx_error_text(err, buf, sizeof(buf)));
	if (err->hint[0])
		fprintf(stderr, "sbx: Hint: %s\n", err->hint);
}

void sbx_warn(const char *fmt, ...)
{
	va_list ap;

	fputs("sbx: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}
