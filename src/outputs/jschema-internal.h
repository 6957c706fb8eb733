/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * jschema-internal.h - what the two halves of the JSON Schema subset share:
 * the compiled tree (jschema.c builds it from the job's schema, in the
 * broker and in the validator) and the JSON Pointer builder that both use
 * for messages.  The validating half (jschema-validate.c) reads the
 * payload's output and runs only in the confined validator,
 * src/helpers/validate.  Not for other modules.
 */
#ifndef SBX_JSCHEMA_INTERNAL_H
#define SBX_JSCHEMA_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "jschema.h"

enum {
	T_NULL = 1u << 0,
	T_BOOLEAN = 1u << 1,
	T_OBJECT = 1u << 2,
	T_ARRAY = 1u << 3,
	T_NUMBER = 1u << 4,
	T_STRING = 1u << 5,
	T_INTEGER = 1u << 6,
};

struct jschema_type_name {
	const char *name;
	unsigned bit;
};
extern const struct jschema_type_name jschema_type_names[7];

struct node;

struct prop {
	const char *name; /* points into the schema copy */
	struct node *schema;
};

struct node {
	bool never;	/* the schema `false` */
	unsigned types; /* 0: any type */
	struct prop *props;
	size_t nprops;	/* sorted by name */
	const char **required;
	size_t nrequired;
	bool no_additional;	/* additionalProperties: false */
	struct node *additional; /* additionalProperties as a schema */
	struct node *items;
	const json_t *enum_values; /* an array, in the schema copy */
	const json_t *const_value;
	const json_t *minimum, *maximum, *exclusive_minimum, *exclusive_maximum;
	int64_t min_length, max_length, min_items, max_items; /* -1: absent */
	struct sbx_regex *pattern;
	const char *pattern_src;
};

struct sbx_jschema {
	json_t *copy; /* the schema; nodes point into it */
	struct node *root;
};

/* A JSON Pointer being built: pushes append "/token", pops cut back.
 * Longer pointers are cut with "/..." (messages stay one short line). */
struct ptr {
	char buf[SBX_JSCHEMA_MAX_POINTER + 8];
	size_t len;
	bool cut;
};

/* Append "/@tok" (escaped, controls as '?'); returns the mark to pop to. */
size_t jschema_ptr_push(struct ptr *p, const char *tok);
size_t jschema_ptr_push_index(struct ptr *p, size_t i);
void jschema_ptr_pop(struct ptr *p, size_t mark);

#endif
