/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * seccomp-cache.c - keep each compiled seccomp program in the state dir,
 * so that a run loads it instead of compiling the policy again.
 *
 * libseccomp takes ~0.3 ms to turn the default policy into BPF, on the
 * broker's path to the go-ahead, in every run, and gives the same program
 * every time for the same inputs.  Those inputs are: the policy's bytes,
 * this build of sbx (its GNU build id: the catalog parser and the rule
 * translation), the libseccomp in use (its version and its file: a
 * distribution update keeps the version and changes the file), the kernel
 * (libseccomp's API level depends on it) and the architecture (the build
 * id covers it).  The cache file holds all of them, and a program is used
 * only when every byte of them equals this run's: its name is a plain
 * 64-bit hash of them, only to find it, never to trust it.  No OpenSSL:
 * `sbx run` keeps OpenSSL's set-up off the start-up path (digest.h).
 *
 * Trust: the cache is as trusted as the state dir it is in (the caller's
 * own 0700 directory, which also holds the admission slots and the run
 * state: whoever can write there can already interfere with this
 * caller's runs); a file that is not the caller's own regular file,
 * writable by group or others, or of the wrong shape is ignored and
 * replaced.  The kernel checks the program again when it is loaded.
 * Anything going wrong with the cache only costs the compile: a run never
 * fails because of it.
 *
 * An entry also stands for the parse: this build wrote it only after
 * parsing, accepting and compiling exactly those policy bytes, so sbx run
 * loads a policy with an entry as bytes (sbx_seccomp_cache_known, the
 * catalog's hook) and parses it here only on a miss.
 */
#include "config.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "sandbox.h"

#define CACHE_MAGIC "sbx-seccomp-cache-1\n"
#define CACHE_MAX_INSNS 4096 /* BPF_MAXINSNS */
#define CACHE_MAX_FILES 16   /* more than this: a miss removes the others */

struct header {
	char magic[sizeof(CACHE_MAGIC) - 1];
	uint32_t key_len;
	uint32_t insns;
};

struct ident {
	char build_id[2 * 64 + 1];
	char libseccomp[192];
};

static void note_build_id(const struct dl_phdr_info *info, char *out, size_t len)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const char *p, *end;

		if (ph->p_type != PT_NOTE)
			continue;
		p = (const char *)(info->dlpi_addr + ph->p_vaddr);
		end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
			const char *name = p + sizeof(*n);
			const unsigned char *desc =
				(const unsigned char *)name + ((n->n_namesz + 3) & ~3u);

			if ((const char *)desc + n->n_descsz > end)
				break;
			if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
			    memcmp(name, "GNU", 4) == 0 && n->n_descsz > 0 &&
			    2 * n->n_descsz < len) {
				sbx_hex(desc, n->n_descsz, out);
				return;
			}
			p = (const char *)desc + ((n->n_descsz + 3) & ~3u);
		}
	}
}

static int find_objects(struct dl_phdr_info *info, size_t size, void *ud)
{
	struct ident *id = ud;
	struct stat st;

	(void)size;
	/* The first object is the program itself. */
	if (!id->build_id[0] && (!info->dlpi_name || !info->dlpi_name[0]))
		note_build_id(info, id->build_id, sizeof(id->build_id));
	if (info->dlpi_name && strstr(info->dlpi_name, "/libseccomp.so") &&
	    stat(info->dlpi_name, &st) == 0)
		snprintf(id->libseccomp, sizeof(id->libseccomp), "%s %llu:%llu %lld %lld.%09ld",
			 info->dlpi_name, (unsigned long long)st.st_dev,
			 (unsigned long long)st.st_ino, (long long)st.st_size,
			 (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
	return 0;
}

/* Everything the program depends on, the policy's bytes last; NULL when
 * this build has no build id (then there is no cache). */
char *sbx_seccomp_cache_key(const struct sbx_seccomp_policy *pol, size_t *len)
{
	const struct scmp_version *v = seccomp_version();
	struct ident id = { 0 };
	struct utsname u;
	char *head, *key;
	size_t hlen;

	dl_iterate_phdr(find_objects, &id);
	if (!id.build_id[0] || uname(&u) < 0)
		return NULL;
	head = sbx_xasprintf("build %s\nlibseccomp %u.%u.%u %s\napi %u\nkernel %s %s %s\n"
			     "policy %zu\n",
			     id.build_id, v->major, v->minor, v->micro,
			     id.libseccomp[0] ? id.libseccomp : "(linked in)", seccomp_api_get(),
			     u.sysname, u.release, u.version, pol->raw_len);
	hlen = strlen(head);
	key = sbx_xmalloc(hlen + pol->raw_len);
	memcpy(key, head, hlen);
	if (pol->raw_len)
		memcpy(key + hlen, pol->raw, pol->raw_len);
	free(head);
	*len = hlen + pol->raw_len;
	return key;
}

static uint64_t fnv1a(const char *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)p[i]) * 0x100000001b3ull;
	return h;
}

/* The cache directory under @state_dir, made if missing; -1 if it is not
 * the caller's own private directory. */
static int open_cache_dir(const char *state_dir)
{
	_cleanup_free_ char *path = sbx_xasprintf("%s/seccomp", state_dir);
	struct stat st;
	int fd;

	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return -1;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 077)) {
		close(fd);
		return -1;
	}
	return fd;
}

static int load(int dirfd, const char *name, const char *key, size_t key_len,
		struct sock_fprog *prog)
{
	_cleanup_close_ int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	_cleanup_free_ char *buf = NULL;
	struct header h;
	struct stat st;
	size_t size;

	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 022))
		return -1;
	if (sbx_read_all(fd, &h, sizeof(h)) != (ssize_t)sizeof(h) ||
	    memcmp(h.magic, CACHE_MAGIC, sizeof(h.magic)) != 0 || h.key_len != key_len ||
	    h.insns == 0 || h.insns > CACHE_MAX_INSNS)
		return -1;
	size = key_len + (size_t)h.insns * sizeof(struct sock_filter);
	if ((uint64_t)st.st_size != sizeof(h) + size)
		return -1;
	buf = sbx_xmalloc(size);
	if (sbx_read_all(fd, buf, size) != (ssize_t)size || memcmp(buf, key, key_len) != 0)
		return -1;
	prog->len = (unsigned short)h.insns;
	prog->filter = sbx_xmalloc(size - key_len);
	memcpy(prog->filter, buf + key_len, size - key_len);
	return 0;
}

/* Too many entries (builds come and go): a miss clears the others. */
static void prune(int dirfd, const char *keep)
{
	struct dirent *de;
	DIR *d;
	int fd, n = 0;

	fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	if (n > CACHE_MAX_FILES) {
		rewinddir(d);
		while ((de = readdir(d)))
			if (de->d_name[0] != '.' && strcmp(de->d_name, keep) != 0)
				unlinkat(dirfd, de->d_name, 0);
	}
	closedir(d);
}

/* Written aside and renamed over, so that a reader sees a whole file or
 * none; failures are only a lost cache entry. */
static void store(int dirfd, const char *name, const char *key, size_t key_len,
		  const struct sock_fprog *prog)
{
	char tmp[96];
	struct header h = { .key_len = (uint32_t)key_len, .insns = prog->len };
	size_t blen = (size_t)prog->len * sizeof(struct sock_filter);
	int fd, ok;

	memcpy(h.magic, CACHE_MAGIC, sizeof(h.magic));
	snprintf(tmp, sizeof(tmp), ".%s.%ld", name, (long)getpid());
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	ok = sbx_write_all(fd, &h, sizeof(h)) == (ssize_t)sizeof(h) &&
	     sbx_write_all(fd, key, key_len) == (ssize_t)key_len &&
	     sbx_write_all(fd, prog->filter, blen) == (ssize_t)blen;
	if (close(fd) < 0)
		ok = 0;
	if (!ok || renameat(dirfd, tmp, dirfd, name) < 0)
		unlinkat(dirfd, tmp, 0);
}

bool sbx_seccomp_cache_known(const char *state_dir, const char *raw, size_t len)
{
	const struct sbx_seccomp_policy pol = { .raw = (char *)raw, .raw_len = len };
	_cleanup_free_ char *key = NULL, *path = NULL;
	_cleanup_close_ int dirfd = -1;
	struct sock_fprog prog = { 0 };
	size_t key_len = 0;
	struct stat st;
	char name[40];
	bool hit;

	if (!state_dir || !(key = sbx_seccomp_cache_key(&pol, &key_len)))
		return false;
	path = sbx_xasprintf("%s/seccomp", state_dir);
	dirfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dirfd < 0 || fstat(dirfd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 077))
		return false;
	snprintf(name, sizeof(name), "%016llx.bpf", (unsigned long long)fnv1a(key, key_len));
	hit = load(dirfd, name, key, key_len, &prog) == 0;
	free(prog.filter);
	return hit;
}

/* A policy loaded as bytes (rules_pending) is parsed only on a miss. */
static int compile(const struct sbx_seccomp_policy *pol, struct sock_fprog *prog,
		   struct sbx_error *err)
{
	struct sbx_seccomp_policy parsed;
	int r;

	if (!pol->rules_pending)
		return sbx_seccomp_compile(pol, prog, err);
	if (sbx_catalog_seccomp_parse(pol, &parsed, err) < 0)
		return -1;
	r = sbx_seccomp_compile(&parsed, prog, err);
	sbx_catalog_seccomp_free(&parsed);
	return r;
}

int sbx_seccomp_compile_cached(const struct sbx_seccomp_policy *pol, const char *state_dir,
			       struct sock_fprog *prog, struct sbx_error *err)
{
	_cleanup_free_ char *key = NULL;
	_cleanup_close_ int dirfd = -1;
	size_t key_len = 0;
	char name[40];

	if (state_dir)
		key = sbx_seccomp_cache_key(pol, &key_len);
	if (key)
		dirfd = open_cache_dir(state_dir);
	if (dirfd < 0)
		return compile(pol, prog, err);
	snprintf(name, sizeof(name), "%016llx.bpf", (unsigned long long)fnv1a(key, key_len));
	if (load(dirfd, name, key, key_len, prog) == 0)
		return 0;
	if (compile(pol, prog, err) < 0)
		return -1;
	prune(dirfd, name);
	store(dirfd, name, key, key_len, prog);
	return 0;
}
