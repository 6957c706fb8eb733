/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * template.c - naming a profile's template and talking to it (template.h,
 * the wire format in template-proto.h).
 *
 * The digest is what keeps a template honest: a run is cloned only from
 * a template whose digest equals the one the broker computes now from
 * the profile, its prepared state, the sbx-template binary, the
 * interpreter and the config keys; the template refuses a request for
 * another digest (ESTALE), so a stale template is never used, whatever
 * the socket's name says.
 */
#include "config.h"

#include <errno.h>
#include <jansson.h>
#include <string.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "digest.h"
#include "json.h"
#include "template-proto.h"
#include "template.h"
#include "util.h"

int sbx_file_ident_get(const char *path, struct sbx_file_ident *out)
{
	struct stat st;

	memset(out, 0, sizeof(*out));
	if (stat(path, &st) < 0)
		return -1;
	out->dev = (uint64_t)st.st_dev;
	out->ino = (uint64_t)st.st_ino;
	out->size = (uint64_t)st.st_size;
	out->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	out->path = path;
	return 0;
}

/* One line of the digest's input, with its NUL: each field ends where
 * the next begins, so no two inputs spell the same bytes. */
#define hash_line(h, err, ...)                                                 \
	({                                                                     \
		_cleanup_free_ char *_s = sbx_xasprintf(__VA_ARGS__);         \
		sbx_sha256_update((h), _s, strlen(_s) + 1, (err));             \
	})

static int hash_file(struct sbx_sha256 *h, const char *what, const struct sbx_file_ident *f,
		     struct sbx_error *err)
{
	if (!f->path)
		return hash_line(h, err, "%s absent", what);
	return hash_line(h, err, "%s %llu %llu %llu %lld %s", what, (unsigned long long)f->dev,
			 (unsigned long long)f->ino, (unsigned long long)f->size,
			 (long long)f->mtime_ns, f->path);
}

int sbx_template_digest(const struct sbx_template_ident *id, char out[17], struct sbx_error *err)
{
	struct sbx_sha256 h;
	_cleanup_json_ json_t *root = NULL;
	_cleanup_free_ char *canon = NULL;
	char hex[SBX_SHA256_HEX_LEN + 1];
	json_error_t jerr;
	int r;

	/* The catalog loader parsed these bytes already; sorted keys and no
	 * whitespace make one spelling of the profile (a float such as
	 * cpu_cores is printed by jansson the same way each time). */
	root = json_loadb(id->profile->raw, id->profile->raw_len, 0, &jerr);
	if (!root)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, 0, "%s: %s", id->profile->file,
				     jerr.text);
	canon = json_dumps(root, JSON_COMPACT | JSON_SORT_KEYS);
	if (!canon)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, ENOMEM, "%s", id->profile->file);
	if (sbx_sha256_init(&h, err) < 0)
		return -1;
	r = hash_line(&h, err, "sbx-template-digest 1") < 0 ||
	    hash_line(&h, err, "profile %s %s", id->profile->name, canon) < 0 ||
	    hash_line(&h, err, "prepared %s", id->prepared_sha256 ? id->prepared_sha256 : "-") < 0 ||
	    hash_file(&h, "binary", &id->binary, err) < 0 ||
	    hash_file(&h, "interpreter", &id->interpreter, err) < 0 ||
	    hash_line(&h, err, "config %llu %llu %llu", (unsigned long long)id->idle_seconds,
		      (unsigned long long)id->max_runs, (unsigned long long)id->max_seconds) < 0 ||
	    sbx_sha256_final_hex(&h, hex, err) < 0;
	sbx_sha256_release(&h);
	if (r)
		return -1;
	memcpy(out, hex, SBX_TEMPLATE_DIGEST_LEN);
	out[SBX_TEMPLATE_DIGEST_LEN] = '\0';
	return 0;
}

void sbx_template_catalog_key(const char *dir, char out[9])
{
	char hex[SBX_SHA256_HEX_LEN + 1];
	struct sbx_error err = { 0 };

	if (sbx_sha256_buf(dir, strlen(dir), hex, &err) < 0)
		strcpy(hex, "00000000");
	memcpy(out, hex, 8);
	out[8] = '\0';
}

char *sbx_template_socket_path(const char *state_dir, const char *catalog_key,
			       const char *profile, const char *digest)
{
	return sbx_xasprintf("%s/templates/%s-%s-%s.sock", state_dir, catalog_key, profile, digest);
}

/* How long a STATUS or STOP may take to be answered. */
#define QUERY_MS 3000

int sbx_template_query(const char *sock_path, bool stop, struct sbx_template_info *info,
		       struct sbx_error *err)
{
	struct sbx_template_request req = {
		.magic = SBX_TEMPLATE_MAGIC,
		.version = SBX_TEMPLATE_VERSION,
		.kind = stop ? SBX_TEMPLATE_STOP : SBX_TEMPLATE_STATUS,
	};
	struct sbx_template_reply rep;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct ucred cred;
	socklen_t clen = sizeof(cred);
	_cleanup_close_ int fd = -1;
	ssize_t n;

	/* The template answers only a request of its own digest, which its
	 * socket's name carries: "...-<digest>.sock". */
	size_t len = strlen(sock_path);

	if (len < SBX_TEMPLATE_DIGEST_LEN + 6 ||
	    strcmp(sock_path + len - 5, ".sock") != 0 ||
	    sock_path[len - 5 - SBX_TEMPLATE_DIGEST_LEN - 1] != '-') {
		errno = EINVAL;
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, EINVAL, "%s: not a template's socket",
				     sock_path);
	}
	memcpy(req.digest, sock_path + len - 5 - SBX_TEMPLATE_DIGEST_LEN, SBX_TEMPLATE_DIGEST_LEN);
	if (strlen(sock_path) >= sizeof(sa.sun_path)) {
		errno = ENAMETOOLONG;
		return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, errno, "%s", sock_path);
	}
	strcpy(sa.sun_path, sock_path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, errno, "%s", sock_path);
	/* Only a template of our own uid is one of ours (it checks the same
	 * of us): a socket another user put there is not asked anything. */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) < 0)
		return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, errno, "%s", sock_path);
	if (cred.uid != geteuid()) {
		errno = EPERM;
		return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, EPERM,
				     "%s: the process listening is not the caller's", sock_path);
	}
	if (send(fd, &req, sizeof(req), MSG_NOSIGNAL) != (ssize_t)sizeof(req))
		return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, errno, "%s", sock_path);
	/* STOP is answered with the STATUS it stopped at.  A template busy
	 * importing answers late: a bounded wait. */
	{
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int r;

		do
			r = poll(&p, 1, QUERY_MS);
		while (r < 0 && errno == EINTR);
		if (r <= 0) {
			errno = r == 0 ? ETIMEDOUT : errno;
			return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, errno, "%s", sock_path);
		}
	}
	n = recv(fd, &rep, sizeof(rep), MSG_TRUNC);
	if (n != (ssize_t)sizeof(rep) || rep.kind != SBX_TEMPLATE_STATUS_REPLY) {
		errno = EPROTO;
		return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, EPROTO,
				     "%s: the template did not answer STATUS", sock_path);
	}
	if (info) {
		/* SO_PEERCRED names who listened: the broker that started the
		 * template, not the template.  The template says its pid; an
		 * older one did not, and the record the broker wrote beside
		 * the socket has it too. */
		_cleanup_free_ char *rec_path = sbx_xasprintf("%.*s.json", (int)(len - 5), sock_path);
		_cleanup_json_ json_t *rec = json_load_file(rec_path, 0, NULL);
		json_int_t pid = rec ? json_integer_value(json_object_get(rec, "pid")) : 0;

		memset(info, 0, sizeof(*info));
		info->pid = rep.pid > 0 ? (pid_t)rep.pid : pid > 0 && pid <= INT32_MAX ? (pid_t)pid : 0;
		info->started = rep.started;
		info->last_used = rep.last_used;
		info->runs = rep.runs;
		info->active = rep.active;
		info->max_runs = rep.max_runs;
		memcpy(info->digest, rep.digest, sizeof(info->digest));
		info->digest[sizeof(info->digest) - 1] = '\0';
		memcpy(info->interpreter, rep.msg, sizeof(info->interpreter));
		info->interpreter[sizeof(info->interpreter) - 1] = '\0';
	}
	return 0;
}
