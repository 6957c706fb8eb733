/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * spec-blob.c - the sandbox's description as one flat block of memory,
 * the way it travels from the broker to sbx-init.
 *
 * The broker packs the struct sbx_spec and everything it points to (the
 * symlinks, the /etc files, the code, the seccomp program, argv, envp)
 * into a sealed memfd; sbx-init maps a private copy and turns the offsets
 * back into pointers, checking that each one lies inside the block.  The
 * block never leaves the host and is written by sbx itself, but the init
 * still trusts nothing it cannot check: a bad offset is a refusal, not a
 * wild pointer.
 *
 * In the block, every pointer field holds an offset from the block's
 * start (the bind paths too: the struct is small, the strings follow it); 0 (the header's place, never data) stands for NULL, and string
 * vectors are arrays of offsets that end with 0.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "spec.h"

#define BLOB_MAGIC 0x73627873u /* "sbxs" */

struct blob_header {
	uint32_t magic;
	uint32_t spec_size; /* sizeof(struct sbx_spec) of the packer */
	uint64_t size;      /* of the whole block */
};

struct packer {
	char *buf;
	size_t len, cap;
};

static size_t put(struct packer *p, const void *data, size_t len, size_t align)
{
	size_t off = (p->len + align - 1) & ~(align - 1);

	if (off + len > p->cap) {
		size_t cap = p->cap ? p->cap : 16384;
		while (cap < off + len)
			cap *= 2;
		p->buf = sbx_xrealloc(p->buf, cap);
		p->cap = cap;
	}
	memset(p->buf + p->len, 0, off - p->len);
	if (len)
		memcpy(p->buf + off, data, len);
	p->len = off + len;
	return off;
}

static uintptr_t put_str(struct packer *p, const char *s)
{
	return s ? put(p, s, strlen(s) + 1, 1) : 0;
}

static uintptr_t put_strv(struct packer *p, char *const *v)
{
	size_t n = sbx_strv_length(v);
	_cleanup_free_ uintptr_t *offs = sbx_xcalloc(n + 1, sizeof(*offs));

	for (size_t i = 0; i < n; i++)
		offs[i] = put_str(p, v[i]);
	return put(p, offs, (n + 1) * sizeof(*offs), sizeof(uintptr_t));
}

int sbx_spec_pack(const struct sbx_spec *spec, int *memfd, struct sbx_error *err)
{
	struct packer p = { 0 };
	struct blob_header h = { .magic = BLOB_MAGIC, .spec_size = sizeof(struct sbx_spec) };
	struct sbx_spec s = *spec;
	_cleanup_free_ struct sbx_symlink *links = NULL;
	_cleanup_close_ int fd = -1;
	size_t spec_off;

	put(&p, &h, sizeof(h), 8);
	spec_off = put(&p, &s, sizeof(s), 8); /* filled in again below */

	for (size_t i = 0; i < s.n_binds; i++) {
		s.binds[i].src = (const char *)put_str(&p, spec->binds[i].src);
		s.binds[i].dst = (const char *)put_str(&p, spec->binds[i].dst);
	}
	links = sbx_xcalloc(s.n_symlinks + 1, sizeof(*links));
	for (size_t i = 0; i < s.n_symlinks; i++) {
		links[i].path = (char *)put_str(&p, spec->symlinks[i].path);
		links[i].target = (char *)put_str(&p, spec->symlinks[i].target);
	}
	s.symlinks = (const struct sbx_symlink *)put(&p, links, s.n_symlinks * sizeof(*links),
						     sizeof(uintptr_t));
	for (size_t i = 0; i < s.n_etc; i++)
		s.etc[i].data = (const char *)put(&p, spec->etc[i].data, spec->etc[i].len, 1);
	s.code = (const char *)put(&p, spec->code, spec->code_len, 1);
	s.seccomp.filter = (struct sock_filter *)put(
		&p, spec->seccomp.filter, spec->seccomp.len * sizeof(struct sock_filter), 8);
	s.argv = (char *const *)put_strv(&p, spec->argv);
	s.envp = (char *const *)put_strv(&p, spec->envp);
	memcpy(p.buf + spec_off, &s, sizeof(s));
	h.size = p.len;
	memcpy(p.buf, &h, sizeof(h));

	/* Sealed: once handed over, nobody (sbx included) can change what
	 * the init reads. */
	fd = memfd_create("sbx-spec", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0 || sbx_write_all(fd, p.buf, p.len) < 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0) {
		free(p.buf);
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "passing the sandbox's description");
	}
	free(p.buf);
	*memfd = TAKE_FD(fd);
	return 0;
}

/* The pointer for offset @off of an object of @len bytes, or NULL if it
 * does not lie inside the block. */
static void *at(char *base, size_t size, uintptr_t off, size_t len)
{
	if (off < sizeof(struct blob_header) || off > size || len > size - off)
		return NULL;
	return base + off;
}

static const char *str_at(char *base, size_t size, uintptr_t off)
{
	char *s = at(base, size, off, 1);

	return s && memchr(s, '\0', size - off) ? s : NULL;
}

static char *const *strv_at(char *base, size_t size, uintptr_t off)
{
	uintptr_t *v = at(base, size, off, sizeof(uintptr_t));

	if (!v || off % sizeof(uintptr_t))
		return NULL;
	for (size_t i = 0;; i++) {
		if (!at(base, size, off + i * sizeof(uintptr_t), sizeof(uintptr_t)))
			return NULL;
		if (!v[i])
			return (char *const *)v;
		if (!str_at(base, size, v[i]))
			return NULL;
		v[i] = (uintptr_t)(base + v[i]);
	}
}

struct sbx_spec *sbx_spec_unpack(void *blob, size_t size)
{
	char *base = blob;
	struct blob_header *h = blob;
	struct sbx_spec *s;
	struct sbx_symlink *links;

	if (size < sizeof(*h) + sizeof(*s) || h->magic != BLOB_MAGIC ||
	    h->spec_size != sizeof(*s) || h->size != size)
		return NULL;
	s = at(base, size, sizeof(*h), sizeof(*s));
	if (!s || s->n_binds > SBX_MAX_MOUNTS || s->n_etc > ARRAY_SIZE(s->etc) ||
	    s->n_masks > SBX_MAX_MASKS)
		return NULL;
	for (size_t i = 0; i < s->n_masks; i++)
		if (s->masks[i].after_bind >= s->n_binds ||
		    !memchr(s->masks[i].path, '\0', sizeof(s->masks[i].path)))
			return NULL;

	for (size_t i = 0; i < s->n_binds; i++) {
		s->binds[i].src = str_at(base, size, (uintptr_t)s->binds[i].src);
		s->binds[i].dst = str_at(base, size, (uintptr_t)s->binds[i].dst);
		if (!s->binds[i].src || !s->binds[i].dst)
			return NULL;
	}
	if (s->n_symlinks > size / sizeof(*links))
		return NULL;
	/* Inside the block is not enough: an array is read only where its
	 * type's alignment allows (packed at sizeof(uintptr_t), 8 for the
	 * filter), never at an odd offset. */
	links = at(base, size, (uintptr_t)s->symlinks, s->n_symlinks * sizeof(*links));
	if ((!links && s->n_symlinks) || (uintptr_t)s->symlinks % _Alignof(struct sbx_symlink))
		return NULL;
	for (size_t i = 0; i < s->n_symlinks; i++) {
		links[i].path = (char *)str_at(base, size, (uintptr_t)links[i].path);
		links[i].target = (char *)str_at(base, size, (uintptr_t)links[i].target);
		if (!links[i].path || !links[i].target)
			return NULL;
	}
	s->symlinks = links;
	for (size_t i = 0; i < s->n_etc; i++) {
		s->etc[i].data = at(base, size, (uintptr_t)s->etc[i].data, s->etc[i].len);
		if (!s->etc[i].data && s->etc[i].len)
			return NULL;
	}
	s->code = at(base, size, (uintptr_t)s->code, s->code_len);
	if (!s->code && s->code_len)
		return NULL;
	if (s->seccomp.len == 0 || s->seccomp.len > BPF_MAXINSNS)
		return NULL;
	if ((uintptr_t)s->seccomp.filter % _Alignof(struct sock_filter))
		return NULL;
	s->seccomp.filter = at(base, size, (uintptr_t)s->seccomp.filter,
			       s->seccomp.len * sizeof(struct sock_filter));
	s->argv = strv_at(base, size, (uintptr_t)s->argv);
	s->envp = strv_at(base, size, (uintptr_t)s->envp);
	if (!s->seccomp.filter || !s->argv || !s->argv[0] || !s->envp)
		return NULL;
	return s;
}

struct sbx_spec *sbx_spec_map(int memfd)
{
	struct stat st;
	void *blob;

	/* A private copy, writable so that the offsets can become pointers
	 * in place, populated in one call (a page fault each costs more). */
	if (fstat(memfd, &st) < 0 || st.st_size <= 0)
		return NULL;
	blob = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_POPULATE,
		    memfd, 0);
	if (blob == MAP_FAILED)
		return NULL;
	return sbx_spec_unpack(blob, (size_t)st.st_size);
}
