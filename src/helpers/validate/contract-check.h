/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * contract-check.h - checking one output against its contract (contract.h
 * has the contract itself and its parser).  Reads the payload's bytes:
 * only the confined validator links it.
 */
#ifndef SBX_CONTRACT_CHECK_H
#define SBX_CONTRACT_CHECK_H

#include "contract.h"

/*
 * sbx_contract_check() - check the file at @fd (@size bytes, validated as
 * @media_type, with the image dimensions @width x @height where it has
 * them) against @k.  @res is filled in.
 * Return: 0, or -1 when the file cannot be read (a failure is recorded).
 */
int sbx_contract_check(const struct sbx_contract *k, int fd, uint64_t size,
		       const char *media_type, uint64_t width, uint64_t height,
		       struct sbx_contract_result *res);

/* For the checks (contract-*.c): record a failure, bounded. */
void sbx_contract_fail(struct sbx_contract_result *res, uint64_t row, const char *check,
		       const char *fmt, ...) __attribute__((format(printf, 4, 5)));
int sbx_contract_check_csv(const struct sbx_contract *k, int fd, uint64_t size, bool tsv,
			   struct sbx_contract_result *res);
int sbx_contract_check_text(const struct sbx_contract *k, int fd, uint64_t size,
			    struct sbx_contract_result *res);
/*
 * An exact decimal sum (contract-sum.c): SBX_SUM_FRAC digits after the
 * point, enough above it for 2^64 numbers of a double's range.  Zeroed is
 * 0.  Text is a number as sbx_contract_parse_number() accepts it.
 */
#define SBX_SUM_FRAC 351
#define SBX_SUM_LIMBS 76
struct sbx_contract_sum {
	int64_t limb[SBX_SUM_LIMBS]; /* 9 digits each, limb 0 from 10^-351 */
	uint32_t adds;               /* since the limbs were last carried */
};
void sbx_contract_sum_add_int(struct sbx_contract_sum *s, int64_t v);
void sbx_contract_sum_add_text(struct sbx_contract_sum *s, const char *text, bool negate);
/* -1, 0 or 1. */
int sbx_contract_sum_sign(struct sbx_contract_sum *s);
void sbx_contract_sum_abs(struct sbx_contract_sum *s);
/* "15.5", "-10.5", "1.0000000000000001...e+300": exact unless "..." */
void sbx_contract_sum_format(const struct sbx_contract_sum *s, char *buf, size_t len);

/* The value checks of one cell, for tests: 0 when @s (NUL-terminated) is one. */
int sbx_contract_parse_integer(const char *s, int64_t *out);
int sbx_contract_parse_number(const char *s, double *out);

#endif
