/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mediatype.h - the media types sbx knows, by name only: the extension
 * table, the canonical type strings and the names of the validators'
 * flags.  Nothing here reads a file's bytes (that is the confined
 * validator's work, src/helpers/validate), so the broker, the catalog and
 * the validator share it.
 *
 * Extensions (case-insensitive):
 *   .png -> image/png        .jpg .jpeg -> image/jpeg   .pdf -> application/pdf
 *   .csv -> text/csv         .tsv .tab -> text/tab-separated-values
 *   .json -> application/json  .ndjson .jsonl -> application/x-ndjson
 *   .txt .log -> text/plain  .md .markdown -> text/markdown
 *   .svg -> image/svg+xml    .html .htm -> text/html
 *   .parquet -> application/vnd.apache.parquet
 *   .xlsx .docx .pptx -> the Office Open XML types (spreadsheetml.sheet,
 *   wordprocessingml.document, presentationml.presentation)
 *   .webp -> image/webp      .tex -> text/x-tex     .npy -> application/x-npy
 */
#ifndef SBX_MEDIATYPE_H
#define SBX_MEDIATYPE_H

#include <stdbool.h>

/*
 * What a validator found suspicious but allowed: the manifest lists these
 * per artifact in "flags" (names from sbx_media_flag_name()).
 */
enum {
	/* JSON strings that decode to control characters (ESC, C1, DEL...) */
	SBX_MEDIA_FLAG_CONTROLS = 1u << 0,
	/* text/plain holds SGR colour sequences, ESC [ ... m */
	SBX_MEDIA_FLAG_COLORS = 1u << 1,
	/* image data or a PDF object holds another format's signature */
	SBX_MEDIA_FLAG_EMBEDDED = 1u << 2,
	/* a PDF names JavaScript, auto-actions, launches or embedded files */
	SBX_MEDIA_FLAG_PDF_ACTIVE = 1u << 3,
	/* text/html or text/markdown holds scripts, event handlers, script
	 * URIs or elements that load other resources */
	SBX_MEDIA_FLAG_ACTIVE = 1u << 4,
	/* text/x-tex links to URLs (\url, \href): a reader that follows
	 * them leaves the document */
	SBX_MEDIA_FLAG_LINKS = 1u << 5,
};
#define SBX_MEDIA_FLAG_COUNT 6

/* Manifest name of flag bit @i (0-based), or NULL. */
const char *sbx_media_flag_name(unsigned i);

/*
 * sbx_media_type_for_name() - media type that @name's extension stands for.
 * Return: a static type string, or NULL for an unknown extension.
 */
const char *sbx_media_type_for_name(const char *name);

/*
 * sbx_media_type_static() - the static string of the known type equal to
 * @type, so that a type read from elsewhere (a catalog, the validator's
 * answer) is kept as sbx's own string.
 * Return: the static string, or NULL when @type is not a known type.
 */
const char *sbx_media_type_static(const char *type);

/* Whether @type is in the NULL-terminated @list (NULL: an empty list). */
bool sbx_media_type_in(char *const *list, const char *type);

/*
 * sbx_media_type_expected() - the type a file named @name must have for a
 * job that allows @allowed: the extension's, except that a .md file is
 * text/plain where the job allows text/plain but not text/markdown (what
 * .md was before text/markdown existed).  The validator checks files by
 * this rule, and the broker checks its answers by the same.
 * Return: a static type string, or NULL for an unknown extension.
 */
const char *sbx_media_type_expected(const char *name, char *const *allowed);

/* How many types sbx knows. */
#define SBX_MEDIA_TYPE_COUNT 19

#endif
