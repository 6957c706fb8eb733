/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * contract.h - output contracts: what the job says makes an output useful,
 * checked after the media checks (sbx-job(5), "OUTPUT CONTRACTS").
 *
 * The job's `outputs` object maps an output path to its contract.  The
 * job parser (src/policy) keeps the object as JSON after checking that it
 * is an object of objects with valid paths; the contract is parsed here,
 * at admission, so that a malformed one is 65 and one on a type the
 * profile does not allow is 77 before anything runs.  Checking reads the
 * quarantined copy once, in bounded memory and time: the CSV is streamed
 * and only the columns the contract names are looked at, patterns go
 * through regex.h's bounded PCRE2, `unique` keeps at most
 * SBX_CONTRACT_UNIQUE_MAX_ROWS hashes a column.
 */
#ifndef SBX_CONTRACT_H
#define SBX_CONTRACT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

struct sbx_collection;
struct sbx_regex;
struct sbx_jschema;

/* Bounds of a contract (more is an invalid job, 65). */
#define SBX_CONTRACT_MAX_OUTPUTS 64
#define SBX_CONTRACT_MAX_COLUMNS 64   /* named in "columns" */
#define SBX_CONTRACT_MAX_HEADER 1024  /* names in "header" */
#define SBX_CONTRACT_MAX_UNIQUE 4     /* "unique" columns of one output */
/* Checking. */
#define SBX_CONTRACT_MAX_FAILURES 20  /* listed in the manifest; all are counted */
#define SBX_CONTRACT_MAX_CELL 65536   /* bytes of a checked cell */
#define SBX_CONTRACT_MAX_LINE 65536   /* bytes of a line a text pattern sees */
/* Rows whose values `unique` remembers (8 bytes each, in a table at most
 * half full: 16 MiB a column); a longer column fails the check. */
#define SBX_CONTRACT_UNIQUE_MAX_ROWS (1u << 20)
/* The pattern matches of one output share sbx_regex_budget(its size)
 * units of work (regex.h), on top of each match's own limits; past it a
 * match fails. */

struct sbx_contract_range {
	bool has_min, has_max;
	uint64_t min, max;
};

enum sbx_contract_type {
	SBX_COL_ANY,     /* no "type": any text */
	SBX_COL_STRING,
	SBX_COL_INTEGER, /* [+-]?[0-9]+ within int64 */
	SBX_COL_NUMBER,  /* decimal, optional exponent, finite (no NaN, no inf) */
	SBX_COL_DATE,    /* ISO 8601 calendar date YYYY-MM-DD or month YYYY-MM,
			  * optionally THH:MM[:SS[.frac]] and Z or +HH:MM */
};

struct sbx_contract_column {
	char *name;
	enum sbx_contract_type type;
	bool has_min, has_max;  /* integer, number: min/max; date: min_date/max_date */
	double min, max;
	char *min_date, *max_date;
	struct sbx_regex *pattern; /* the whole cell must match */
	bool unique, not_null;
	bool has_sum;
	double sum_equals, sum_tolerance;
	/* the same as decimal text, for the exact comparison: an integer as
	 * written, any other number as the shortest decimal that reads back
	 * as the same double (what was written, up to 15 digits) */
	char sum_equals_text[32], sum_tolerance_text[32];
};

struct sbx_contract {
	char *path;             /* relative to /work/out */
	const char *media_type; /* static: given, or the extension's */
	bool required;          /* unless "required": false */
	bool hold;              /* "hold": true; then required defaults to false */
	struct sbx_contract_range bytes, rows, width, height, lines;
	char **header;          /* exact first record, or NULL */
	size_t nheader;
	struct sbx_contract_column *cols;
	size_t ncols;
	struct sbx_regex *pattern; /* text: must match in some line */
	struct sbx_jschema *schema;
};

struct sbx_contracts {
	struct sbx_contract *v;
	size_t n;
};

struct sbx_contract_failure {
	char check[160];  /* "columns.total.sum", "rows", "width" */
	char detail[256]; /* one line, UTF-8 without controls */
	uint64_t row;     /* data row (1: the first after the header); 0: none */
};

struct sbx_contract_result {
	bool ok;
	uint64_t count;   /* failures found; the first MAX_FAILURES are listed */
	size_t n;
	struct sbx_contract_failure fail[SBX_CONTRACT_MAX_FAILURES];
};

/*
 * sbx_contracts_parse() - parse the job's `outputs` object (NULL: none).
 * @source: the job's name for messages.
 * Return: 0, or -1 with @err SBX_EXIT_INVALID and "<source>: <JSON path>:
 * expected ..." (e.g. outputs["totals.csv"].columns.total.sum.tolerance).
 * Release @out with sbx_contracts_free(), also after an error.
 */
int sbx_contracts_parse(const json_t *outputs, const char *source, struct sbx_contracts *out,
			struct sbx_error *err);

/*
 * sbx_contracts_admit() - every contract's media type must be one the
 * profile allows (@profile_types): else SBX_EXIT_REFUSED naming the path.
 * A contract's type that the job's effective list @allowed lacks is added
 * to it: an entry allows its output.
 */
int sbx_contracts_admit(const struct sbx_contracts *cs, const char *source, const char *profile,
			char *const *profile_types, char ***allowed, struct sbx_error *err);

/* Whether any contract asks for its output to be held ("hold": true). */
bool sbx_contracts_hold(const struct sbx_contracts *cs);

void sbx_contracts_free(struct sbx_contracts *cs);

/* Which checks a media type's contract may hold: CSV and TSV (header,
 * columns, rows), images (width, height), text (lines, pattern). */
bool sbx_contract_type_is_csv(const char *t);
bool sbx_contract_type_is_image(const char *t);
bool sbx_contract_type_is_text(const char *t);

/* An ISO 8601 date as "type": "date" accepts (sbx-job(5)); @s NUL-terminated. */
bool sbx_contract_date_valid(const char *s);

#endif
