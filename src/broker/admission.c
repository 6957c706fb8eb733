/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * admission.c - slots and memory reservations shared through the state
 * directory (see admission.h for the mechanism).
 *
 * Waking up: a holder keeps its slot file open read-write, so its release
 * (or its death) closes a written file and inotify reports IN_CLOSE_WRITE
 * on the slots directory.  Everyone else only ever opens slot files
 * read-only to probe them, which produces IN_CLOSE_NOWRITE, not watched:
 * waiters do not wake each other up in a loop.  A bounded poll timeout is
 * the backstop should an event be missed.
 */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/stat.h>

#include "admission.h"
#include "state-internal.h"

#define POLL_BACKSTOP_MS 500
/* Without inotify, a queued run looks this often (a look is one lock
 * attempt per slot). */
#define POLL_NO_INOTIFY_MS 50
#define HOST_RESERVE_MIN_MIB 512

struct sbx_admission {
	int fd;
	unsigned slot;
};

/* --- defaults ----------------------------------------------------------------- */

static bool meminfo_kib(const char *text, const char *key, uint64_t *out)
{
	size_t klen = strlen(key);
	const char *line = text;

	while (line && *line) {
		if (strncmp(line, key, klen) == 0 && line[klen] == ':') {
			const char *num = line + klen + 1;
			char *end;

			errno = 0;
			*out = strtoull(num, &end, 10);
			return errno == 0 && end != num;
		}
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return false;
}

int sbx_admission_budget_from_meminfo(const char *text, uint64_t *budget_mib)
{
	uint64_t total, avail, reserve;

	if (!meminfo_kib(text, "MemTotal", &total) || !meminfo_kib(text, "MemAvailable", &avail))
		return -1;
	total /= 1024;
	avail /= 1024;
	/* Leave the host room for itself: sbx, the page cache that keeps
	 * the interpreters warm, whatever else the machine does. */
	reserve = total / 10 > HOST_RESERVE_MIN_MIB ? total / 10 : HOST_RESERVE_MIN_MIB;
	*budget_mib = avail > reserve ? avail - reserve : 0;
	return 0;
}

int sbx_admission_limits_default(struct sbx_admission_limits *lim, uint64_t cfg_max_concurrent,
				 uint64_t cfg_memory_budget_mib, struct sbx_error *err)
{
	long ncpu;

	if (cfg_max_concurrent) {
		lim->max_concurrent = cfg_max_concurrent;
	} else {
		/* One run per CPU: jobs are mostly CPU-bound interpreters,
		 * and at least two so a slow run does not block the next. */
		ncpu = sysconf(_SC_NPROCESSORS_ONLN);
		lim->max_concurrent = ncpu > 2 ? (uint64_t)ncpu : 2;
	}
	if (lim->max_concurrent > SBX_ADMISSION_SLOTS_MAX)
		lim->max_concurrent = SBX_ADMISSION_SLOTS_MAX;

	if (cfg_memory_budget_mib) {
		lim->memory_budget_mib = cfg_memory_budget_mib;
	} else {
		char buf[8192];
		_cleanup_close_ int fd = open("/proc/meminfo", O_RDONLY | O_CLOEXEC);
		ssize_t n;

		if (fd < 0)
			return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "/proc/meminfo: cannot open");
		n = sbx_read_all(fd, buf, sizeof(buf) - 1);
		if (n < 0)
			return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "/proc/meminfo: cannot read");
		buf[n] = '\0';
		if (sbx_admission_budget_from_meminfo(buf, &lim->memory_budget_mib) < 0)
			return sbx_error_set(err, SBX_EXIT_SOFTWARE, 0,
					     "/proc/meminfo: MemTotal or MemAvailable missing");
	}
	return 0;
}

/* --- the census --------------------------------------------------------------- */

struct census {
	uint64_t active;
	uint64_t reserved_mib;
	int free_fd;        /* a free slot below max, locked (read-only fd) */
	unsigned free_slot;
};

bool sbx_admission_slot_name(const char *name, unsigned *n)
{
	unsigned v = 0;
	const char *p = name;

	if (*p < '0' || *p > '9' || (p[0] == '0' && p[1] != '.'))
		return false;
	for (; *p >= '0' && *p <= '9'; p++) {
		v = v * 10 + (unsigned)(*p - '0');
		if (v >= 100000)
			return false;
	}
	if (strcmp(p, ".lock") != 0)
		return false;
	*n = v;
	return true;
}

uint64_t sbx_admission_slot_mib(const char *text, size_t len)
{
	uint64_t v = 0;
	size_t i = 0;

	/* "<mib> <run_id>\n" as claim() writes it; strtoull would take
	 * "-1" as 2^64-1, a sign or spaces, and wrap past 2^64. */
	for (; i < len && text[i] >= '0' && text[i] <= '9'; i++) {
		unsigned d = (unsigned)(text[i] - '0');
		if (v > (UINT64_MAX - d) / 10)
			return UINT64_MAX;
		v = v * 10 + d;
	}
	if (i == 0 || (i < len && text[i] != ' ' && text[i] != '\n'))
		return UINT64_MAX;
	return v;
}

/* Probe slot @n: take it (returns its read-only fd, locked) when free;
 * else add it to the census and return -1.  @create makes the file. */
static int probe(int slots_fd, unsigned n, bool create, struct census *c)
{
	char name[32], buf[64];
	_cleanup_close_ int fd = -1;
	uint64_t mib;
	ssize_t r;

	snprintf(name, sizeof(name), "%u.lock", n);
	fd = openat(slots_fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | (create ? O_CREAT : 0),
		    0600);
	if (fd < 0)
		return -1;
	if (flock(fd, LOCK_EX | LOCK_NB) == 0)
		return TAKE_FD(fd);
	if (errno != EWOULDBLOCK)
		return -1;
	c->active++;
	/* A held slot whose content cannot be read reserves everything:
	 * admission fails closed, and the sum never wraps. */
	r = pread(fd, buf, sizeof(buf) - 1, 0);
	mib = sbx_admission_slot_mib(buf, r > 0 ? (size_t)r : 0);
	c->reserved_mib = mib > UINT64_MAX - c->reserved_mib ? UINT64_MAX : c->reserved_mib + mib;
	return -1;
}

/* Count held slots and their memory; keep the lowest free slot below
 * @max (so root's per-run ids, drawn from the slot, stay at the start of
 * their range whatever order the directory lists the files in). */
static int take_census(int slots_fd, uint64_t max, struct census *c, struct sbx_error *err)
{
	_cleanup_free_ bool *seen = sbx_xcalloc(max, sizeof(bool));
	DIR *d;
	struct dirent *de;
	int dfd;

	*c = (struct census){ .free_fd = -1 };
	dfd = openat(slots_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || !(d = fdopendir(dfd))) {
		if (dfd >= 0)
			close(dfd);
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "admission: slots: cannot read");
	}
	/* Every existing slot counts, also those above our max_concurrent
	 * (held by an sbx with another configuration). */
	while ((de = readdir(d))) {
		unsigned n;
		int fd;

		if (!sbx_admission_slot_name(de->d_name, &n))
			continue;
		if (n < max)
			seen[n] = true;
		fd = probe(slots_fd, n, false, c);
		if (fd < 0)
			continue;
		if (n < max && (c->free_fd < 0 || n < c->free_slot)) {
			if (c->free_fd >= 0)
				close(c->free_fd);
			c->free_fd = fd;
			c->free_slot = n;
		} else {
			close(fd);
		}
	}
	closedir(d);
	/* A number below that without a file yet: the lowest one wins. */
	for (unsigned n = 0; n < max && (c->free_fd < 0 || n < c->free_slot); n++) {
		int fd;

		if (seen[n] || (fd = probe(slots_fd, n, true, c)) < 0)
			continue;
		if (c->free_fd >= 0)
			close(c->free_fd);
		c->free_fd = fd;
		c->free_slot = n;
		break;
	}
	return 0;
}

/* Under admission.lock: hold @c's free slot read-write with @mib in it. */
static int claim(int slots_fd, struct census *c, uint64_t mib, const char *run_id,
		 struct sbx_error *err)
{
	char name[32], line[96];
	_cleanup_close_ int fd = -1;
	int len;

	snprintf(name, sizeof(name), "%u.lock", c->free_slot);
	fd = openat(slots_fd, name, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "admission: slots/%s: cannot open",
				     name);
	/* Swap the probe's lock for one on the read-write fd, whose close
	 * is what wakes waiters.  No one can take the slot in between:
	 * every taker holds admission.lock, as we do. */
	close(TAKE_FD(c->free_fd));
	if (flock(fd, LOCK_EX | LOCK_NB) < 0)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "admission: slots/%s: cannot lock",
				     name);
	len = snprintf(line, sizeof(line), "%" PRIu64 " %s\n", mib, run_id ? run_id : "-");
	if (ftruncate(fd, 0) < 0 || pwrite(fd, line, (size_t)len, 0) != len)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno,
				     "admission: slots/%s: cannot record the reservation", name);
	return TAKE_FD(fd);
}

static int no_capacity(const struct census *c, const struct sbx_admission_limits *lim,
		       struct sbx_error *err)
{
	return sbx_error_set(err, SBX_EXIT_CAPACITY, 0,
			     "admission: no capacity: %" PRIu64 " of %" PRIu64 " runs active, %" PRIu64
			     " of %" PRIu64 " MiB reserved",
			     c->active, lim->max_concurrent, c->reserved_mib, lim->memory_budget_mib);
}

bool sbx_admission_fits(uint64_t reserved_mib, uint64_t mib, uint64_t budget_mib)
{
	return mib <= budget_mib && reserved_mib <= budget_mib - mib;
}

/* One attempt under admission.lock.  1 reserved (fd in *@out), 0 full. */
static int try_reserve(const char *state_dir, int slots_fd, const struct sbx_admission_limits *lim,
		       uint64_t mib, const char *run_id, struct census *c, int *out,
		       struct sbx_error *err)
{
	_cleanup_close_ int adm_fd = -1;
	int fd;

	adm_fd = sbx_state_lock_file(state_dir, "admission.lock", LOCK_EX, err);
	if (adm_fd < 0)
		return -1;
	if (take_census(slots_fd, lim->max_concurrent, c, err) < 0)
		return -1;
	if (c->free_fd < 0 || c->active >= lim->max_concurrent ||
	    !sbx_admission_fits(c->reserved_mib, mib, lim->memory_budget_mib)) {
		if (c->free_fd >= 0)
			close(TAKE_FD(c->free_fd));
		return 0;
	}
	fd = claim(slots_fd, c, mib, run_id, err);
	if (fd < 0)
		return -1;
	*out = fd;
	return 1;
}

int sbx_admission_reserve(const char *state_dir, const struct sbx_admission_limits *lim,
			  uint64_t memory_mib, uint64_t queue_timeout_ms, const char *run_id,
			  void (*on_queued)(void *), void *userdata, struct sbx_admission **res,
			  struct sbx_error *err)
{
	return sbx_admission_reserve_cancellable(state_dir, lim, memory_mib, queue_timeout_ms,
						 run_id, -1, on_queued, userdata, res, err);
}

int sbx_admission_reserve_cancellable(const char *state_dir,
				      const struct sbx_admission_limits *lim, uint64_t memory_mib,
				      uint64_t queue_timeout_ms, const char *run_id, int cancel_fd,
				      void (*on_queued)(void *), void *userdata,
				      struct sbx_admission **res, struct sbx_error *err)
{
	_cleanup_free_ char *slots = sbx_xasprintf("%s/slots", state_dir);
	_cleanup_close_ int slots_fd = -1, ino_fd = -1;
	uint64_t deadline = sbx_now_mono_ns() + queue_timeout_ms * 1000000ull;
	bool queued = false;
	struct census c;
	int fd = -1, r;

	if (lim->max_concurrent == 0 || lim->max_concurrent > SBX_ADMISSION_SLOTS_MAX)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, 0,
				     "admission: max_concurrent must be 1..%d", SBX_ADMISSION_SLOTS_MAX);
	/* Waiting cannot help a job larger than the whole budget. */
	if (memory_mib > lim->memory_budget_mib)
		return sbx_error_set(err, SBX_EXIT_CAPACITY, 0,
				     "admission: no capacity: the job's %" PRIu64
				     " MiB exceed the whole memory budget of %" PRIu64 " MiB",
				     memory_mib, lim->memory_budget_mib);
	if (mkdir(slots, 0700) < 0 && errno != EEXIST)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "%s: cannot create", slots);
	slots_fd = open(slots, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (slots_fd < 0)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "%s: cannot open", slots);
	if (queue_timeout_ms) {
		/* Watch before the first look, so a release between the look
		 * and the wait is not missed.  The kernel counts inotify
		 * instances and watches per uid (fs.inotify.max_user_*), which
		 * payloads of the same uid draw from: without them, look every
		 * POLL_NO_INOTIFY_MS instead. */
		ino_fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
		if (ino_fd >= 0 && inotify_add_watch(ino_fd, slots, IN_CLOSE_WRITE) < 0) {
			int e = errno;
			closep(&ino_fd);
			errno = e;
		}
		if (ino_fd < 0 && errno != EMFILE && errno != ENFILE && errno != ENOSPC &&
		    errno != ENOMEM)
			return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "%s: inotify", slots);
	}

	for (;;) {
		uint64_t now;
		struct pollfd pfd[2];
		char evbuf[4096];
		int timeout;

		r = try_reserve(state_dir, slots_fd, lim, memory_mib, run_id, &c, &fd, err);
		if (r < 0)
			return -1;
		if (r > 0)
			break;
		now = sbx_now_mono_ns();
		if (!queue_timeout_ms || now >= deadline)
			return no_capacity(&c, lim, err);
		if (!queued && on_queued)
			on_queued(userdata);
		queued = true;
		timeout = (int)((deadline - now + 999999) / 1000000);
		if (timeout > (ino_fd >= 0 ? POLL_BACKSTOP_MS : POLL_NO_INOTIFY_MS))
			timeout = ino_fd >= 0 ? POLL_BACKSTOP_MS : POLL_NO_INOTIFY_MS;
		/* poll ignores a negative fd: no cancel_fd, no cancellation. */
		pfd[0] = (struct pollfd){ .fd = ino_fd, .events = POLLIN };
		pfd[1] = (struct pollfd){ .fd = cancel_fd, .events = POLLIN };
		if (poll(pfd, 2, timeout) < 0 && errno != EINTR)
			return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "admission: poll");
		if (pfd[1].revents & POLLIN)
			return sbx_error_set(err, SBX_EXIT_CANCELLED, 0, "admission: cancelled while queued");
		while (ino_fd >= 0 && read(ino_fd, evbuf, sizeof(evbuf)) > 0)
			;
	}
	*res = sbx_xmalloc(sizeof(**res));
	(*res)->fd = fd;
	(*res)->slot = c.free_slot;
	return 0;
}

unsigned sbx_admission_slot(const struct sbx_admission *res)
{
	return res->slot;
}

void sbx_admission_release(struct sbx_admission *res)
{
	if (!res)
		return;
	close(res->fd);
	free(res);
}
