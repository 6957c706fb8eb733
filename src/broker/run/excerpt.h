/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * excerpt.h - the part of a captured stream that the manifest quotes.
 *
 * What a person needs from a failed run is usually at the end of its
 * stderr (a traceback's last line is the exception), and the start says
 * what the program was doing.  So an excerpt is the first
 * SBX_EXCERPT_HEAD bytes and the last SBX_EXCERPT_TAIL bytes of the
 * capture, with one marker line between them saying how many bytes were
 * left out; a capture that fits in both is quoted whole.
 */
#ifndef SBX_EXCERPT_H
#define SBX_EXCERPT_H

#include <stdbool.h>
#include <stddef.h>

#define SBX_EXCERPT_HEAD 512
#define SBX_EXCERPT_TAIL 1536

/**
 * sbx_excerpt() - the excerpt of @len captured bytes at @buf, as text.
 * @left_out: set to the number of captured bytes the excerpt leaves out
 *            (0: the excerpt is the whole capture).
 *
 * The head ends and the tail starts on a UTF-8 character boundary, and
 * the tail at the start of a line when one starts in its first quarter,
 * so neither half begins or ends with a broken character or line piece.
 * The result went through sbx_canonjson_clean_text(): lines, tabs and
 * escape sequences kept, NUL, DEL and ill-formed UTF-8 as U+FFFD.  The
 * marker is "\n[sbx: N bytes left out]\n" (the leading newline only when
 * the head does not end a line).
 *
 * Return: a NUL-terminated string owned by the caller; never NULL.
 */
char *sbx_excerpt(const char *buf, size_t len, size_t *left_out);

#endif
