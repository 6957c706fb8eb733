/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mediatype.c - the media types sbx knows, by name (mediatype.h).
 */
#include "config.h"

#include <string.h>
#include <strings.h>

#include "mediatype.h"
#include "util.h"

static const char *const types[SBX_MEDIA_TYPE_COUNT] = {
	"text/csv", "text/plain", "application/json", "image/png", "image/jpeg", "application/pdf",
	"image/svg+xml", "text/tab-separated-values", "application/x-ndjson", "text/markdown",
	"text/html", "application/vnd.apache.parquet",
	"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
	"application/vnd.openxmlformats-officedocument.wordprocessingml.document",
	"application/vnd.openxmlformats-officedocument.presentationml.presentation",
	"image/webp", "text/x-tex", "application/x-npy", "application/zip",
};

static const struct {
	const char *ext;
	const char *type;
} extensions[] = {
	{ "png", "image/png" },   { "jpg", "image/jpeg" },	 { "jpeg", "image/jpeg" },
	{ "pdf", "application/pdf" }, { "csv", "text/csv" },	 { "json", "application/json" },
	{ "txt", "text/plain" },  { "log", "text/plain" },	 { "md", "text/markdown" },
	{ "markdown", "text/markdown" }, { "svg", "image/svg+xml" }, { "tsv", "text/tab-separated-values" },
	{ "tab", "text/tab-separated-values" }, { "ndjson", "application/x-ndjson" },
	{ "jsonl", "application/x-ndjson" }, { "html", "text/html" }, { "htm", "text/html" },
	{ "parquet", "application/vnd.apache.parquet" },
	{ "xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet" },
	{ "docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document" },
	{ "pptx", "application/vnd.openxmlformats-officedocument.presentationml.presentation" },
	{ "webp", "image/webp" },
	{ "tex", "text/x-tex" }, { "npy", "application/x-npy" },
	{ "zip", "application/zip" },
};

const char *sbx_media_type_static(const char *type)
{
	for (size_t i = 0; type && i < ARRAY_SIZE(types); i++)
		if (strcmp(types[i], type) == 0)
			return types[i];
	return NULL;
}

const char *sbx_media_type_for_name(const char *name)
{
	const char *dot = name ? strrchr(name, '.') : NULL;

	/* ".png" alone is a hidden file without an extension. */
	if (!dot || dot == name || strchr(dot, '/'))
		return NULL;
	for (size_t i = 0; i < ARRAY_SIZE(extensions); i++)
		if (strcasecmp(dot + 1, extensions[i].ext) == 0)
			return sbx_media_type_static(extensions[i].type);
	return NULL;
}

bool sbx_media_type_in(char *const *list, const char *type)
{
	for (; list && *list && type; list++)
		if (strcmp(*list, type) == 0)
			return true;
	return false;
}

const char *sbx_media_type_expected(const char *name, char *const *allowed)
{
	const char *t = sbx_media_type_for_name(name);

	if (t && strcmp(t, "text/markdown") == 0 && !sbx_media_type_in(allowed, t) &&
	    sbx_media_type_in(allowed, "text/plain"))
		return sbx_media_type_static("text/plain");
	return t;
}

const char *sbx_media_flag_name(unsigned i)
{
	static const char *const names[SBX_MEDIA_FLAG_COUNT] = {
		"terminal_controls",
		"terminal_colors",
		"embedded_signature",
		"pdf_active_content",
		"active_content",
		"links",
	};

	return i < SBX_MEDIA_FLAG_COUNT ? names[i] : NULL;
}
