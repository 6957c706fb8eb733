/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fetch-run.c - a job's remote inputs into /work/in (fetch-run.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup.h"
#include "digest.h"
#include "fetch-cache.h"
#include "fetch-run.h"
#include "helper.h"
#include "reasoncode.h"
#include "store.h"

/* The status lines of 32 entries with 2 KiB URLs, and the last line. */
#define STATUS_MAX (96u * 1024)

enum stop { STOP_NONE, STOP_CANCEL, STOP_TIMEOUT };

/* What one entry became. */
struct got {
	bool done, cached;
	long status;
	uint64_t size;
	char sha256[SBX_SHA256_HEX_LEN + 1];
	char *final_url;
};

/* Switch the fsuid between sbx's own (the cache) and the id /work/in is
 * written as; setfs*id return the previous value. */
struct ids {
	uid_t write_uid, own_uid;
	gid_t write_gid, own_gid;
};

static void as_own(const struct ids *i)
{
	setfsuid(i->own_uid);
	setfsgid(i->own_gid);
}

static void as_writer(const struct ids *i)
{
	setfsgid(i->write_gid);
	setfsuid(i->write_uid);
}

static uint64_t entry_max(const struct sbx_fetchprofile *fp, const struct sbx_fetch_entry *e)
{
	return e->max_bytes ? e->max_bytes : fp->max_file_bytes;
}

/* Hash /work/in/@name as the payload will read it. */
static int hash_input(int in_dirfd, const char *name, char hex[SBX_SHA256_HEX_LEN + 1],
		      uint64_t *size, struct sbx_error *err)
{
	_cleanup_close_ int fd = openat(in_dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;

	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "fetch: /work/in/%s", name);
	return sbx_sha256_fd(fd, hex, size, err);
}

/* A pinned entry from the cache, if it is there and still right. */
static int from_cache(const struct sbx_fetch_entry *e, uint64_t max, int in_dirfd,
		      const struct sbx_fetch_ctl *ctl, const struct ids *ids, struct got *g,
		      struct sbx_error *err)
{
	_cleanup_close_ int fd = -1;
	uint64_t bytes = 0;

	as_own(ids);
	fd = sbx_fetch_cache_open(ctl->state_dir, e->sha256);
	as_writer(ids);
	if (fd < 0)
		return 0;
	if (sbx_store_copy(fd, in_dirfd, e->as, max, &bytes, err) < 0) {
		/* Larger than this entry may be: fetched (and refused) anew. */
		if (err->code != SBX_EXIT_REFUSED)
			return -1;
		*err = (struct sbx_error){ 0 };
		return 0;
	}
	if (hash_input(in_dirfd, e->as, g->sha256, &g->size, err) < 0)
		return -1;
	if (strcmp(g->sha256, e->sha256) != 0) {
		/* Changed in the cache: dropped, and fetched. */
		unlinkat(in_dirfd, e->as, 0);
		as_own(ids);
		sbx_fetch_cache_drop(ctl->state_dir, e->sha256);
		as_writer(ids);
		return 0;
	}
	g->done = g->cached = true;
	return 0;
}

/* The fetcher's argv: the profile's rules, the limits, then the entries
 * not served from the cache.  Strings it owns are kept in @keep. */
static char **build_argv(const struct sbx_fetchprofile *fp, const struct sbx_job *job,
			 const struct got *got, uint64_t room, const struct sbx_fetch_ctl *ctl,
			 char ***keep)
{
	size_t n = 0, cap = 32 + 2 * fp->net.n_allow + 2 * sbx_strv_length(fp->net.allow_cidrs) +
			    4 * job->n_fetch;
	char **argv = sbx_xcalloc(cap + 1, sizeof(char *));
	char **k = sbx_xcalloc(cap + 1, sizeof(char *));
	size_t nk = 0;
	uint64_t total = fp->net.max_bytes < room ? fp->net.max_bytes : room;

#define KEEP(s) (k[nk++] = (s))
	argv[n++] = (char *)"sbx-fetch";
	for (size_t i = 0; i < fp->net.n_allow; i++) {
		const struct sbx_egress_rule *r = &fp->net.allow[i];
		char *s = sbx_xasprintf("%s=", r->host);

		for (size_t p = 0; p < r->n_ports; p++) {
			char *t = sbx_xasprintf("%s%s%u", s, p ? "," : "", (unsigned)r->ports[p]);

			free(s);
			s = t;
		}
		argv[n++] = (char *)"--allow";
		argv[n++] = KEEP(s);
	}
	for (size_t i = 0; fp->net.allow_cidrs && fp->net.allow_cidrs[i]; i++) {
		argv[n++] = (char *)"--cidr";
		argv[n++] = fp->net.allow_cidrs[i];
	}
	if (fp->allow_http)
		argv[n++] = (char *)"--allow-http";
	if (fp->ca_file) {
		argv[n++] = (char *)"--ca-file";
		argv[n++] = fp->ca_file;
	}
	argv[n++] = (char *)"--timeout";
	argv[n++] = KEEP(sbx_xasprintf("%" PRIu64, fp->timeout_seconds));
	argv[n++] = (char *)"--max-redirects";
	argv[n++] = KEEP(sbx_xasprintf("%" PRIu64, fp->max_redirects));
	argv[n++] = (char *)"--max-total";
	argv[n++] = KEEP(sbx_xasprintf("%" PRIu64, total));
	if (ctl->memory_mib) {
		argv[n++] = (char *)"--max-memory";
		argv[n++] = KEEP(sbx_xasprintf("%" PRIu64, ctl->memory_mib << 20));
	}
	if (ctl->deadline_ns) {
		uint64_t now = sbx_now_mono_ns();
		uint64_t left = ctl->deadline_ns > now ? (ctl->deadline_ns - now) / 1000000000u + 1 : 1;

		argv[n++] = (char *)"--max-cpu-seconds";
		argv[n++] = KEEP(sbx_xasprintf("%" PRIu64, left));
	}
	for (size_t i = 0; i < job->n_fetch; i++) {
		const struct sbx_fetch_entry *e = &job->fetch[i];

		if (got[i].done)
			continue;
		argv[n++] = e->as;
		argv[n++] = KEEP(sbx_xasprintf("%" PRIu64, entry_max(fp, e)));
		argv[n++] = e->media_type ? e->media_type : (char *)"-";
		argv[n++] = e->url;
	}
#undef KEEP
	argv[n] = NULL;
	*keep = k;
	return argv;
}

/* Read what is there of @fd into @buf (at most STATUS_MAX; more is an
 * overflow, reported by the caller); false once closed. */
static bool drain(int fd, char *buf, size_t *len, bool *overflow)
{
	char scratch[4096];

	for (;;) {
		size_t room = STATUS_MAX - *len;
		ssize_t n = room ? read(fd, buf + *len, room) : read(fd, scratch, sizeof(scratch));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return true;
		if (n <= 0)
			return false;
		if (room)
			*len += (size_t)n;
		else
			*overflow = true;
	}
}

static bool all_digits(const char *s, size_t max)
{
	size_t n = 0;

	for (; s[n]; n++)
		if (s[n] < '0' || s[n] > '9')
			return false;
	return n > 0 && n <= max;
}

static bool hex64(const char *s)
{
	size_t n = 0;

	for (; s[n]; n++)
		if (!((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f')))
			return false;
	return n == 64;
}

static bool url_ok(const char *s)
{
	if (strncmp(s, "https://", 8) != 0 && strncmp(s, "http://", 7) != 0)
		return false;
	if (strlen(s) > SBX_JOB_MAX_URL_LEN)
		return false;
	for (; *s; s++)
		if ((unsigned char)*s <= 0x20 || (unsigned char)*s >= 0x7f)
			return false;
	return true;
}

/* "ok NAME STATUS SIZE SHA256 FINAL_URL" for @e, or false. */
static bool parse_ok(char *line, const struct sbx_fetch_entry *e, uint64_t max, struct got *g)
{
	char *f[6], *save = NULL;
	size_t n = 0;
	uint64_t v;

	for (char *t = strtok_r(line, " ", &save); t && n < 6; t = strtok_r(NULL, " ", &save))
		f[n++] = t;
	if (n != 6 || strtok_r(NULL, " ", &save) || strcmp(f[0], "ok") || strcmp(f[1], e->as) ||
	    !all_digits(f[2], 3) || !all_digits(f[3], 15) || !hex64(f[4]) || !url_ok(f[5]))
		return false;
	if (sbx_parse_u64(f[2], &v) < 0 || v < 200 || v > 299)
		return false;
	g->status = (long)v;
	if (sbx_parse_u64(f[3], &g->size) < 0 || g->size > max)
		return false;
	memcpy(g->sha256, f[4], 65);
	g->final_url = sbx_xstrdup(f[5]);
	return true;
}

/* Start the fetcher and wait for it: its status text into @buf. */
static int run_fetcher(char **argv, int in_dirfd, const struct sbx_fetch_ctl *ctl, char *buf,
		       size_t *len, siginfo_t *si, enum stop *stop, struct sbx_error *err)
{
	_cleanup_close_ int rd = -1, wr = -1, timer = -1, null = -1;
	struct sbx_helper h = { .pid = -1, .pidfd = -1, .err_fd = -1 };
	struct sbx_helper_text errc = { 0 };
	bool overflow = false, out_open = true;
	uid_t uid = (uid_t)-1;
	gid_t gid = (gid_t)-1;
	int pipefd[2];

	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "fetch: pipe");
	rd = pipefd[0];
	wr = pipefd[1];
	null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (null < 0)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "fetch: /dev/null");
	if (geteuid() == 0 && !ctl->own_id) {
		/* As the id /work/in is written as (the caller set it). */
		uid = (uid_t)setfsuid((uid_t)-1);
		gid = (gid_t)setfsgid((gid_t)-1);
	}
	if (sbx_helper_start(&(struct sbx_helper_args){ .what = "fetch", .name = "sbx-fetch",
							.argv = argv, .fd0 = null, .fd1 = wr,
							.fd3 = in_dirfd, .uid = uid, .gid = gid,
							.cg = ctl->cg },
			     &h, err) < 0)
		return -1;
	closep(&wr);
	if (ctl->deadline_ns) {
		struct itimerspec its = { .it_value = {
			.tv_sec = (time_t)(ctl->deadline_ns / 1000000000ull),
			.tv_nsec = (long)(ctl->deadline_ns % 1000000000ull) } };

		timer = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
		if (timer < 0 || timerfd_settime(timer, TFD_TIMER_ABSTIME, &its, NULL) < 0) {
			sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "fetch: timerfd");
			sbx_helper_close(&h);
			return -1;
		}
	}
	fcntl(rd, F_SETFL, O_NONBLOCK);
	for (bool exited = false; !exited;) {
		struct pollfd pf[5] = {
			{ .fd = h.pidfd, .events = POLLIN },
			{ .fd = out_open ? rd : -1, .events = POLLIN },
			{ .fd = errc.closed ? -1 : h.err_fd, .events = POLLIN },
			{ .fd = *stop == STOP_NONE ? ctl->cancel_fd : -1, .events = POLLIN },
			{ .fd = *stop == STOP_NONE ? timer : -1, .events = POLLIN },
		};

		if (poll(pf, ARRAY_SIZE(pf), -1) < 0) {
			if (errno == EINTR)
				continue;
			sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "fetch: poll");
			sbx_helper_close(&h);
			return -1;
		}
		if (pf[1].revents)
			out_open = drain(rd, buf, len, &overflow);
		if (pf[2].revents)
			sbx_helper_capture(h.err_fd, &errc);
		if (pf[3].revents) {
			struct signalfd_siginfo ssi;

			if (read(ctl->cancel_fd, &ssi, sizeof(ssi)) == sizeof(ssi)) {
				*stop = STOP_CANCEL;
				sbx_helper_kill(&h);
			}
		}
		if (pf[4].revents) {
			*stop = STOP_TIMEOUT;
			sbx_helper_kill(&h);
		}
		if (pf[0].revents) {
			if (out_open)
				drain(rd, buf, len, &overflow);
			sbx_helper_capture(h.err_fd, &errc);
			exited = true;
		}
	}
	if (sbx_helper_wait(&h, si) < 0) {
		sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "fetch: waitid");
		sbx_helper_close(&h);
		return -1;
	}
	sbx_helper_close(&h);
	sbx_helper_show(&errc, "fetch", "sbx-fetch");
	buf[*len] = '\0';
	if (overflow)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, 0, "fetch: the fetcher said too much");
	return 0;
}

/* The fetcher's last line, "refused CODE TEXT" or "failed CODE TEXT",
 * into @err and *@code; anything else is the fetcher's failure (70). */
static int final_line(char *line, int status, const char **code, struct sbx_error *err)
{
	bool refused = strncmp(line, "refused ", 8) == 0, failed = strncmp(line, "failed ", 7) == 0;
	char *rest = line + (refused ? 8 : failed ? 7 : 0), *sp;
	const char *c;

	sbx_helper_clean_line(line);
	if ((refused && status == SBX_EXIT_REFUSED) || (failed && status == SBX_EXIT_FAILED)) {
		sp = strchr(rest, ' ');
		if (sp) {
			*sp = '\0';
			c = sbx_fetch_reason_code_static(rest);
			if (c) {
				*code = c;
				return sbx_error_set(err, status, 0, "fetch: %s", sp + 1);
			}
		}
	}
	if (status == SBX_EXIT_UNAVAILABLE) {
		sbx_error_set(err, SBX_EXIT_UNAVAILABLE, 0, "fetch: %s",
			      strncmp(line, "error ", 6) == 0 ? line + 6 : line);
		sbx_error_hint(err, "the fetcher confines itself with Landlock and seccomp; this "
				    "kernel does not offer what it needs");
		return -1;
	}
	return sbx_error_set(err, SBX_EXIT_SOFTWARE, 0, "fetch: the fetcher failed (exit %d): %.300s",
			     status, line[0] ? line : "no status");
}

static int fetch_rest(const struct sbx_fetchprofile *fp, const struct sbx_job *job, int in_dirfd,
		      uint64_t room, const struct sbx_fetch_ctl *ctl, struct got *got,
		      const char **code, struct sbx_error *err)
{
	_cleanup_free_ char *buf = sbx_xmalloc(STATUS_MAX + 1);
	_cleanup_free_ char **argv = NULL;
	_cleanup_strv_free_ char **keep = NULL;
	enum stop stop = STOP_NONE;
	siginfo_t si = { 0 };
	size_t len = 0;
	char *line, *save = NULL;
	size_t i = 0;

	argv = build_argv(fp, job, got, room, ctl, &keep);
	if (run_fetcher(argv, in_dirfd, ctl, buf, &len, &si, &stop, err) < 0)
		return -1;
	if (stop == STOP_CANCEL)
		return sbx_error_set(err, SBX_EXIT_CANCELLED, 0,
				     "fetch: cancelled by the caller while fetching");
	if (stop == STOP_TIMEOUT)
		return sbx_error_set(err, SBX_EXIT_TIMEOUT, 0,
				     "fetch: wall_seconds %" PRIu64 " reached while fetching",
				     ctl->wall_seconds);
	if (si.si_code == CLD_KILLED || si.si_code == CLD_DUMPED) {
		struct sbx_cgroup_stats st = { 0 };

		if (si.si_status == SIGXCPU)
			return sbx_error_set(err, SBX_EXIT_TIMEOUT, 0,
					     "fetch: wall_seconds %" PRIu64
					     " reached while fetching (its CPU limit)",
					     ctl->wall_seconds);
		if (si.si_status == SIGKILL && ctl->cg && sbx_cgroup_stats(ctl->cg, &st, NULL) == 0 &&
		    st.oom_kills > 0)
			return sbx_error_set(err, SBX_EXIT_LIMIT, 0,
					     "fetch: memory: memory_mib %" PRIu64
					     " exceeded while fetching (OOM kill)",
					     ctl->memory_mib);
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, 0,
				     "fetch: the fetcher was killed by signal %d", si.si_status);
	}
	/* One "ok" line for each entry, in order, until the first that
	 * failed; then that one's line. */
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		while (i < job->n_fetch && got[i].done)
			i++;
		if (strncmp(line, "ok ", 3) != 0)
			return final_line(line, si.si_status, code, err);
		if (i >= job->n_fetch || !parse_ok(line, &job->fetch[i], entry_max(fp, &job->fetch[i]), &got[i]))
			return sbx_error_set(err, SBX_EXIT_SOFTWARE, 0,
					     "fetch: the fetcher's report does not fit the job");
		got[i].done = true;
	}
	while (i < job->n_fetch && got[i].done)
		i++;
	if (si.si_status != 0 || i != job->n_fetch)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, 0,
				     "fetch: the fetcher ended (exit %d) without a report for each input",
				     si.si_status);
	return 0;
}

static bool listed(char *const *v, const char *s)
{
	for (; v && *v; v++)
		if (strcmp(*v, s) == 0)
			return true;
	return false;
}

/*
 * A fetched archive (its name in the job's "extract"): the file is
 * unlinked and, through the fd still open, validated and extracted into
 * the directory of the same name by sbx-extract, like a store handle's.
 * Its uncompressed bytes take the archive's place in *@used.
 */
static int extract_fetched(const char *name, int in_dirfd, uint64_t room,
			   const struct sbx_fetch_ctl *ctl, uint64_t *used, uint64_t size,
			   struct sbx_error *err)
{
	_cleanup_close_ int fd = openat(in_dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	uint64_t bytes = 0, others = *used - size;

	if (fd < 0 || unlinkat(in_dirfd, name, 0) < 0)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "fetch: /work/in/%s", name);
	if (sbx_store_extract(fd, in_dirfd, name, room > others ? room - others : 0, ctl->extract,
			      &bytes, err) < 0) {
		sbx_error_prefix(err, "fetch: ");
		return -1;
	}
	*used = others + bytes;
	return 0;
}

int sbx_fetch_materialize(const struct sbx_fetchprofile *fp, const struct sbx_job *job,
			  int in_dirfd, uint64_t room, const struct sbx_fetch_ctl *ctl,
			  json_t *records, const char **code, uint64_t *used, struct sbx_error *err)
{
	_cleanup_free_ struct got *got = sbx_xcalloc(job->n_fetch + 1, sizeof(*got));
	struct ids ids;
	bool all_cached = true;
	int r = -1;

	*used = 0;
	*code = NULL;
	if (!job->n_fetch)
		return 0;
	ids.own_uid = geteuid();
	ids.own_gid = getegid();
	ids.write_uid = (uid_t)setfsuid((uid_t)-1);
	ids.write_gid = (gid_t)setfsgid((gid_t)-1);

	/* Pinned entries the cache has: no network for them. */
	for (size_t i = 0; i < job->n_fetch; i++) {
		const struct sbx_fetch_entry *e = &job->fetch[i];

		if (e->sha256 && ctl->cache_bytes &&
		    from_cache(e, entry_max(fp, e), in_dirfd, ctl, &ids, &got[i], err) < 0)
			goto out;
		if (got[i].done)
			*used += got[i].size;
		all_cached &= got[i].done;
	}
	if (!all_cached && fetch_rest(fp, job, in_dirfd, room > *used ? room - *used : 0, ctl, got,
				      code, err) < 0)
		goto out;

	/* The bytes the payload will read, hashed here: the fetcher's word
	 * is checked, the pin is checked, and only then cached. */
	for (size_t i = 0; i < job->n_fetch; i++) {
		const struct sbx_fetch_entry *e = &job->fetch[i];
		char hex[SBX_SHA256_HEX_LEN + 1];
		uint64_t size = 0;
		json_t *rec;

		if (got[i].cached)
			goto record;
		if (hash_input(in_dirfd, e->as, hex, &size, err) < 0)
			goto out;
		if (size != got[i].size || strcmp(hex, got[i].sha256) != 0) {
			sbx_error_set(err, SBX_EXIT_SOFTWARE, 0,
				      "fetch: %s: the fetcher's report does not match the file", e->as);
			goto out;
		}
		*used += size;
		if (e->sha256 && strcmp(e->sha256, hex) != 0) {
			unlinkat(in_dirfd, e->as, 0);
			*code = SBX_RC_FETCH_SHA256_MISMATCH;
			sbx_error_set(err, SBX_EXIT_REFUSED, 0,
				      "fetch[%zu]: %s: sha256 %s, not the pinned %s", i, e->url, hex,
				      e->sha256);
			goto out;
		}
		if (e->sha256 && ctl->cache_bytes) {
			_cleanup_close_ int fd = openat(in_dirfd, e->as, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

			as_own(&ids);
			if (fd >= 0)
				sbx_fetch_cache_put(ctl->state_dir, hex, fd, ctl->cache_bytes);
			as_writer(&ids);
		}
record:
		rec = json_pack("{s:s,s:s,s:s,s:I,s:s,s:b}", "name", e->as, "origin", "fetch", "url",
				e->url, "size", (json_int_t)got[i].size, "sha256", got[i].sha256,
				"cached", got[i].cached);
		if (!got[i].cached) {
			json_object_set_new(rec, "final_url", json_string(got[i].final_url));
			json_object_set_new(rec, "http_status", json_integer(got[i].status));
		}
		if (e->media_type)
			json_object_set_new(rec, "media_type", json_string(e->media_type));
		json_array_append_new(records, rec);
		if (listed(job->extract, e->as) && extract_fetched(e->as, in_dirfd, room, ctl, used,
								   got[i].size, err) < 0)
			goto out;
		if (listed(job->extract, e->as))
			json_object_set_new(rec, "extracted", json_true());
	}
	r = 0;
out:
	as_writer(&ids);
	for (size_t i = 0; i < job->n_fetch; i++)
		free(got[i].final_url);
	return r;
}
