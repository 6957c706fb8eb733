/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz-spec-blob.c - libFuzzer entry point for the spec block reader
 * (sbx-init's side of spec-blob.c).  A spec is built from the input and
 * packed as the broker would; then the rest of the input flips bytes of
 * the block (or, with byte 0 even, the input is the block itself), and
 * the block is unpacked.  Properties: an unmodified block unpacks to what
 * was packed; whatever unpacks points only inside the block, at strings
 * that end inside it.
 */
#include "fuzz-util.h"

#include <sys/stat.h>

#include "sandbox.h"

static bool inside(const char *base, size_t size, const void *p, size_t len)
{
	const char *c = p;

	return c >= base && c <= base + size && len <= (size_t)(base + size - c);
}

static bool str_inside(const char *base, size_t size, const char *s)
{
	return inside(base, size, s, 1) && memchr(s, '\0', (size_t)(base + size - s));
}

static void check_unpacked(const char *base, size_t size, const struct sbx_spec *s)
{
	fuzz_assert((const char *)s == base + 16);
	fuzz_assert(s->n_binds <= SBX_MAX_MOUNTS && s->n_etc <= ARRAY_SIZE(s->etc));
	for (size_t i = 0; i < s->n_binds; i++)
		fuzz_assert(str_inside(base, size, s->binds[i].src) &&
			    str_inside(base, size, s->binds[i].dst));
	fuzz_assert(!s->n_symlinks ||
		    inside(base, size, s->symlinks, s->n_symlinks * sizeof(*s->symlinks)));
	for (size_t i = 0; i < s->n_symlinks; i++)
		fuzz_assert(str_inside(base, size, s->symlinks[i].path) &&
			    str_inside(base, size, s->symlinks[i].target));
	for (size_t i = 0; i < s->n_etc; i++)
		fuzz_assert(!s->etc[i].len || inside(base, size, s->etc[i].data, s->etc[i].len));
	fuzz_assert(!s->code_len || inside(base, size, s->code, s->code_len));
	fuzz_assert(s->seccomp.len > 0 &&
		    inside(base, size, s->seccomp.filter, s->seccomp.len * sizeof(*s->seccomp.filter)));
	for (char *const *v = s->argv;; v++) {
		fuzz_assert(inside(base, size, v, sizeof(*v)));
		if (!*v)
			break;
		fuzz_assert(str_inside(base, size, *v));
	}
	for (char *const *v = s->envp;; v++) {
		fuzz_assert(inside(base, size, v, sizeof(*v)));
		if (!*v)
			break;
		fuzz_assert(str_inside(base, size, *v));
	}
}

/* Next NUL-free piece of the input, at most 40 bytes, as a string. */
static char *piece(const uint8_t **p, const uint8_t *end)
{
	size_t n = 0;

	while (*p + n < end && n < 40 && (*p)[n])
		n++;
	char *s = fuzz_strndup(*p, n);
	*p += n < (size_t)(end - *p) ? n + 1 : n;
	return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct sock_filter filter[4] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0),
		BPF_STMT(BPF_RET | BPF_K, 0x7fff0000),
	};
	const uint8_t *p = data + 4, *end = data + size;
	struct sbx_spec spec;
	struct sbx_symlink links[3];
	char *strs[32] = { 0 }, *argv[4] = { 0 }, *envp[3] = { 0 };
	struct sbx_error err = { 0 };
	size_t ns = 0, bsize;
	char *blob;
	int fd = -1;
	struct stat st;
	bool flipped = false;
	struct sbx_spec *s;

	if (size < 4)
		return 0;
	if (!(data[0] & 1)) {
		/* The raw block, in an aligned buffer as mmap gives it. */
		blob = sbx_xmalloc(size ? size : 1);
		memcpy(blob, data, size);
		s = sbx_spec_unpack(blob, size);
		if (s)
			check_unpacked(blob, size, s);
		free(blob);
		return 0;
	}

	memset(&spec, 0, sizeof(spec));
	spec.n_binds = data[1] % 4;
	for (size_t i = 0; i < spec.n_binds; i++) {
		spec.binds[i].src = strs[ns++] = piece(&p, end);
		spec.binds[i].dst = strs[ns++] = piece(&p, end);
	}
	spec.n_symlinks = data[2] % 4;
	for (size_t i = 0; i < spec.n_symlinks; i++) {
		links[i].path = strs[ns++] = piece(&p, end);
		links[i].target = strs[ns++] = piece(&p, end);
	}
	spec.symlinks = links;
	spec.n_etc = data[3] % 3;
	for (size_t i = 0; i < spec.n_etc; i++) {
		spec.etc[i].data = strs[ns++] = piece(&p, end);
		spec.etc[i].len = strlen(spec.etc[i].data);
	}
	spec.code = strs[ns++] = piece(&p, end);
	spec.code_len = strlen(spec.code);
	spec.seccomp.filter = filter;
	spec.seccomp.len = 1 + data[1] / 64;
	for (size_t i = 0; i < 1 + (size_t)data[2] % 3; i++)
		argv[i] = strs[ns++] = piece(&p, end);
	for (size_t i = 0; i < (size_t)data[3] % 3; i++)
		envp[i] = strs[ns++] = piece(&p, end);
	spec.argv = argv;
	spec.envp = envp;

	if (sbx_spec_pack(&spec, &fd, &err) < 0 || fstat(fd, &st) < 0)
		abort();
	bsize = (size_t)st.st_size;
	blob = sbx_xmalloc(bsize);
	if (pread(fd, blob, bsize, 0) != (ssize_t)bsize)
		abort();
	close(fd);

	/* The rest: (offset, xor) pairs applied to the block. */
	for (; p + 3 <= end; p += 3) {
		size_t off = ((size_t)p[0] << 8 | p[1]) % bsize;
		if (p[2]) {
			blob[off] ^= (char)p[2];
			flipped = true;
		}
	}
	s = sbx_spec_unpack(blob, bsize);
	if (!flipped) {
		fuzz_assert(s);
		fuzz_assert(s->n_binds == spec.n_binds && s->n_symlinks == spec.n_symlinks &&
			    s->n_etc == spec.n_etc && s->code_len == spec.code_len &&
			    memcmp(s->code, spec.code, spec.code_len) == 0);
		for (size_t i = 0; i < spec.n_binds; i++)
			fuzz_assert(strcmp(s->binds[i].src, spec.binds[i].src) == 0 &&
				    strcmp(s->binds[i].dst, spec.binds[i].dst) == 0);
		for (size_t i = 0; argv[i]; i++)
			fuzz_assert(strcmp(s->argv[i], argv[i]) == 0);
	}
	if (s)
		check_unpacked(blob, bsize, s);
	free(blob);
	for (size_t i = 0; i < ns; i++)
		free(strs[i]);
	return 0;
}
