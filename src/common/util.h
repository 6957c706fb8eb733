/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * util.h - helpers that know nothing of sbx and touch no OS state beyond
 * memory and the file descriptors they are handed.
 *
 * Cleanup attributes follow systemd's shape: a variable declared with
 * _cleanup_free_ (or _cleanup_close_, ...) is released when it leaves scope;
 * TAKE_PTR/TAKE_FD move ownership out of such a variable.
 */
#ifndef SBX_UTIL_H
#define SBX_UTIL_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define _unused_ __attribute__((unused))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define _noreturn_ __attribute__((noreturn))

static inline void freep(void *p)
{
	free(*(void **)p);
}

static inline void closep(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;
		close(*fd);
		errno = saved;
		/* Called early too: a second call (the cleanup at the end of
		 * the scope) must not close a number reused meanwhile. */
		*fd = -1;
	}
}

void sbx_strv_free(char **v);
static inline void strv_freep(char ***v)
{
	sbx_strv_free(*v);
}

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)
#define _cleanup_strv_free_ _cleanup_(strv_freep)

#define DEFINE_TRIVIAL_CLEANUP_FUNC(type, func)          \
	static inline void func##p(type *p)              \
	{                                                \
		if (*p)                                  \
			func(*p);                        \
	}

#define TAKE_PTR(p)                           \
	({                                    \
		__typeof__(p) _ptr_ = (p);    \
		(p) = NULL;                   \
		_ptr_;                        \
	})
#define TAKE_FD(fd)                   \
	({                            \
		int _fd_ = (fd);      \
		(fd) = -1;            \
		_fd_;                 \
	})

/* Allocation that cannot fail: sbx has nothing useful to do on OOM. */
void *sbx_xmalloc(size_t n);
void *sbx_xcalloc(size_t n, size_t size);
void *sbx_xrealloc(void *p, size_t n);
char *sbx_xstrdup(const char *s);
char *sbx_xstrndup(const char *s, size_t n);
char *sbx_xasprintf(const char *fmt, ...) _printf_(1, 2);

size_t sbx_strv_length(char *const *v);
char **sbx_strv_copy(char *const *v);

/* Lowercase hex of @len bytes into @out, which holds 2*len+1 bytes. */
void sbx_hex(const unsigned char *in, size_t len, char *out);

/* True when the @len bytes at @s are valid UTF-8 (no overlongs, no
 * surrogates, nothing above U+10FFFF). */
bool sbx_utf8_valid(const char *s, size_t len);

/* A decimal number, digits only (no sign, no space), within uint64_t:
 * 0 with *@out set, or -1.  For the helpers' command-line limits. */
int sbx_parse_u64(const char *s, uint64_t *out);

/* The value of hex digit @c (0-9, a-f, A-F), or -1. */
int sbx_hex_digit(unsigned char c);

/* True when @s contains a C0 control character or DEL. */
bool sbx_has_control(const char *s, size_t len);

/* ^[A-Za-z_][A-Za-z0-9_]{0,127}$: an environment variable name. */
bool sbx_env_name_valid(const char *s);

/* An absolute path without empty, "." or ".." components or control
 * characters, at most @max bytes; "/" itself only when @allow_root. */
bool sbx_path_normal_absolute(const char *s, size_t max, bool allow_root);

/* Full read/write that retries on EINTR and short transfers.  Return the
 * byte count (read may return less at EOF) or -1 with errno set. */
ssize_t sbx_read_all(int fd, void *buf, size_t len);
ssize_t sbx_write_all(int fd, const void *buf, size_t len);

/* Passing fds over a unix socket (SCM_RIGHTS), at most SBX_MAX_PASSED_FDS
 * at a time.  sbx_send_fds sends @len bytes of @buf with @fds attached (the
 * caller keeps its copies): returns what sendmsg returns.  sbx_recv_fds
 * receives one message into @buf and up to @nfds fds (close-on-exec; -1
 * where none came, extra ones closed): returns what recvmsg returns, after
 * retrying EINTR. */
#define SBX_MAX_PASSED_FDS 4
ssize_t sbx_send_fds(int sock, const void *buf, size_t len, const int *fds, size_t nfds);
ssize_t sbx_recv_fds(int sock, void *buf, size_t len, int *fds, size_t nfds);

/* Monotonic and real-time clocks in milliseconds / nanoseconds. */
uint64_t sbx_now_mono_ns(void);
uint64_t sbx_now_real_ms(void);

/* RFC 3339 UTC with milliseconds, e.g. 2026-11-30T02:10:27.123Z. */
void sbx_format_rfc3339_ms(uint64_t epoch_ms, char out[32]);

#endif
