/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * validation.c - the broker's side of validation (validation.h).
 *
 * The broker holds the signing key and is never sandboxed, so it reads
 * none of the payload's output bytes beyond copying and hashing them.
 * Every parser (media types, contracts, JSON Schema, patterns) runs in
 * sbx-validate, exec'd by helper.c into the run's cgroup, as the sandbox's
 * id when sbx is root, on the run's wall clock plus the profile's
 * validate_seconds, and confining itself further before it reads a byte
 * (src/helpers/validate/sbx-validate.c).
 *
 * The exchange is in order: up to WINDOW quarantined copies' fds handed
 * over ahead (the validator holds one at a time; the rest wait in the
 * socket), and each verdict must answer the oldest question still open.
 * Handing over one file at a time and waiting cost two cross-CPU wake-ups
 * a file: 64 small outputs took 15 ms more than validating in the broker
 * had; see docs/design.md for the figures.  While it waits the
 * broker also watches the validator's pidfd, its stderr, the caller's
 * cancellation and the deadline.  Whatever ends the exchange early (death,
 * the deadline, cancellation, an answer that does not parse) kills the
 * validator, and every candidate still without a verdict is rejected with
 * the reason: a file is promoted only on a verdict that says so.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/wait.h>

#include "budgets.h"
#include "cgroup.h"
#include "helper.h"
#include "json.h"
#include "validation.h"
#include "verdict.h"

struct session {
	const struct sbx_validation_ctl *ctl;
	struct sbx_validation_stats *st;
	struct sbx_helper h;
	int sock;
	int timer;
	struct sbx_helper_text errtext;
	char why[320];
};

/* The request (verdict.h) in a sealed memfd: fd 0 of the validator. */
static int make_request(const struct sbx_validation_ctl *ctl, struct sbx_error *err)
{
	_cleanup_json_ json_t *req = json_object(), *allowed = json_array(), *refuse = json_array();
	_cleanup_free_ char *text = NULL;
	_cleanup_close_ int fd = -1;

	for (char *const *t = ctl->allowed; t && *t; t++)
		json_array_append_new(allowed, json_string(*t));
	json_object_set_new(req, "sbx_validate", json_integer(SBX_VERDICT_VERSION));
	json_object_set(req, "allowed", allowed);
	for (char *const *t = ctl->refuse_active; t && *t; t++)
		json_array_append_new(refuse, json_string(*t));
	json_object_set(req, "refuse_active", refuse);
	json_object_set_new(req, "outputs", ctl->outputs ? json_deep_copy(ctl->outputs) : json_null());
	json_object_set_new(req, "output_files", json_integer((json_int_t)ctl->output_files));
	json_object_set_new(req, "output_bytes", json_integer((json_int_t)ctl->output_bytes));
	text = json_dumps(req, JSON_COMPACT);
	if (!text || strlen(text) > SBX_VERDICT_MAX_REQUEST)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, 0, "validation: the request is too large");
	fd = memfd_create("sbx-validate-request", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0 || sbx_write_all(fd, text, strlen(text)) < 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "validation: the request");
	return TAKE_FD(fd);
}

static int start(struct session *s, struct sbx_error *err)
{
	const struct sbx_validation_ctl *ctl = s->ctl;
	_cleanup_close_ int req = -1, theirs = -1;
	const char *test = getenv("SBX_TEST_VALIDATE");
	char mem[32], cpu[32];
	char *argv[] = { (char *)"sbx-validate", (char *)"--max-memory", mem,
			 (char *)"--max-cpu-seconds", cpu, NULL, NULL, NULL };
	uint64_t now = sbx_now_mono_ns();
	struct itimerspec its = { .it_value = {
		.tv_sec = (time_t)(ctl->deadline_ns / 1000000000ull),
		.tv_nsec = (long)(ctl->deadline_ns % 1000000000ull) } };
	int sv[2];

	/* CPU seconds: what is left of the clock, rounded up (a backstop
	 * behind the deadline, which the timer below enforces). */
	snprintf(mem, sizeof(mem), "%" PRIu64, (uint64_t)(ctl->memory_mib << 20));
	snprintf(cpu, sizeof(cpu), "%" PRIu64,
		 (uint64_t)(ctl->deadline_ns > now ? (ctl->deadline_ns - now) / 1000000000u + 1 : 1));
	/* The failure tests make the validator misbehave (serve.h): the
	 * caller's own environment, so nothing the payload controls. */
	if (test && *test) {
		argv[5] = (char *)"--misbehave";
		argv[6] = (char *)test;
	}
	req = make_request(ctl, err);
	if (req < 0)
		return -1;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "validation: socketpair");
	s->sock = sv[0];
	theirs = sv[1];
	s->timer = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (s->timer < 0 || timerfd_settime(s->timer, TFD_TIMER_ABSTIME, &its, NULL) < 0)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "validation: timerfd");
	return sbx_helper_start(&(struct sbx_helper_args){ .what = "validation",
							   .name = "sbx-validate", .argv = argv,
							   .fd0 = req, .fd1 = -1, .fd3 = theirs,
							   .uid = ctl->uid, .gid = ctl->gid,
							   .cg = ctl->cg },
				&s->h, err);
}

/* The validator is gone (or was killed): why, in words, after reaping it.
 * A validator that could not confine itself is the run's error (69). */
static int ended(struct session *s, struct sbx_error *err)
{
	siginfo_t si;
	char line[256];

	sbx_helper_capture(s->h.err_fd, &s->errtext);
	if (sbx_helper_wait(&s->h, &si) < 0)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "validation: waitid");
	snprintf(line, sizeof(line), "%s", s->errtext.buf);
	sbx_helper_clean_line(line);
	if (s->why[0])
		return 0; /* killed for a reason already said (a bad answer, the
			   * deadline, cancellation) */
	if (si.si_code == CLD_EXITED && si.si_status == SBX_EXIT_UNAVAILABLE) {
		sbx_error_set(err, SBX_EXIT_UNAVAILABLE, 0,
			      "validation: the output validator could not confine itself: %s",
			      line[0] ? line : "no reason given");
		sbx_error_hint(err, "sbx-validate makes user, mount and network namespaces of its "
				    "own: user namespaces must be allowed for this user "
				    "(sysctl user.max_user_namespaces > 0, and on Ubuntu "
				    "kernel.apparmor_restrict_unprivileged_userns=0 or an AppArmor "
				    "profile that allows them)");
		return -1;
	}
	if (si.si_code == CLD_EXITED)
		snprintf(s->why, sizeof(s->why), "the validator exited with status %d%s%s",
			 si.si_status, line[0] ? ": " : "", line);
	else if (si.si_status == SIGSYS)
		snprintf(s->why, sizeof(s->why),
			 "the validator made a system call its filter forbids, and was killed");
	else if (si.si_status == SIGXCPU)
		snprintf(s->why, sizeof(s->why), "the validator used up its CPU time");
	else {
		struct sbx_cgroup_stats cst = { 0 };

		if (si.si_status == SIGKILL && s->ctl->cg &&
		    sbx_cgroup_stats(s->ctl->cg, &cst, NULL) == 0 && cst.oom_kills > 0)
			snprintf(s->why, sizeof(s->why),
				 "the validator ran out of memory (memory_mib %" PRIu64 ")",
				 s->ctl->memory_mib);
		else
			snprintf(s->why, sizeof(s->why), "the validator was killed by signal %d",
				 si.si_status);
	}
	return 0;
}

/*
 * Wait for the answer to item @index.  Return: 1 with @v filled in, 0 when
 * there will be none (s->why says why; the validator is reaped), -1 with
 * @err set.
 */
static int answer(struct session *s, size_t index, struct sbx_verdict *v, struct sbx_error *err)
{
	static char buf[SBX_VERDICT_MAX_ANSWER + 1];

	for (;;) {
		struct pollfd pf[5] = {
			{ .fd = s->h.pidfd, .events = POLLIN },
			{ .fd = s->sock, .events = POLLIN },
			{ .fd = s->errtext.closed ? -1 : s->h.err_fd, .events = POLLIN },
			{ .fd = s->ctl->cancel_fd, .events = POLLIN },
			{ .fd = s->timer, .events = POLLIN },
		};
		ssize_t n;

		if (poll(pf, ARRAY_SIZE(pf), -1) < 0) {
			if (errno == EINTR)
				continue;
			return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "validation: poll");
		}
		if (pf[2].revents)
			sbx_helper_capture(s->h.err_fd, &s->errtext);
		if (pf[3].revents) {
			struct signalfd_siginfo ssi;

			if (read(s->ctl->cancel_fd, &ssi, sizeof(ssi)) == sizeof(ssi)) {
				s->st->cancelled = true;
				snprintf(s->why, sizeof(s->why), "cancelled by the caller");
				sbx_helper_kill(&s->h);
				return ended(s, err) < 0 ? -1 : 0;
			}
		}
		if (pf[4].revents) {
			s->st->timed_out = true;
			snprintf(s->why, sizeof(s->why),
				 "the validator ran out of time (wall_seconds plus validate_seconds, "
				 "%" PRIu64 " s)", s->ctl->allowance_s);
			sbx_helper_kill(&s->h);
			return ended(s, err) < 0 ? -1 : 0;
		}
		if (pf[1].revents & POLLIN) {
			/* MSG_TRUNC: the real length, so that an answer too
			 * long is seen as such rather than cut. */
			n = recv(s->sock, buf, sizeof(buf), MSG_DONTWAIT | MSG_TRUNC);
			if (n < 0 && (errno == EAGAIN || errno == EINTR))
				continue;
			if (n > 0) {
				if ((size_t)n >= sizeof(buf)) {
					snprintf(s->why, sizeof(s->why),
						 "bad answer from the validator: too long");
				} else if (sbx_verdict_parse(buf, (size_t)n, index, v, s->why,
							     sizeof(s->why)) == 0) {
					return 1;
				}
				sbx_helper_kill(&s->h);
				return ended(s, err) < 0 ? -1 : 0;
			}
		}
		if (pf[0].revents || (pf[1].revents & (POLLHUP | POLLERR))) {
			/* Gone without an answer. */
			return ended(s, err) < 0 ? -1 : 0;
		}
	}
}

/* Up to this many files are handed over before their verdicts are read:
 * the validator works through them while the broker waits, instead of
 * both waking each other once a file (two cross-CPU wake-ups each). */
#define WINDOW 16

/* One message with one fd, without blocking: 1 sent, 0 the socket is full
 * for now, -1 the validator is gone (or another error). */
static int send_item(int sock, const char *text, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { .iov_base = (void *)text, .iov_len = strlen(text) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			      .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	ssize_t n;

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	do
		n = sendmsg(sock, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS))
		return 0;
	return n == (ssize_t)iov.iov_len ? 1 : -1;
}

/*
 * Hand over item @i: 1 when sent, 2 when settled without the validator,
 * 0 when the socket is full for now, -2 when the validator is gone, -1
 * with @err set.
 */
static int hand_over(struct session *s, struct sbx_collection *c, size_t i, struct sbx_error *err)
{
	struct sbx_artifact *a = &c->items[i];
	_cleanup_json_ json_t *msg = json_pack("{s:I,s:s,s:I}", "i", (json_int_t)i, "path", a->path,
					       "size", (json_int_t)a->size);
	_cleanup_free_ char *text = json_dumps(msg, JSON_COMPACT);
	_cleanup_close_ int fd = -1;
	int r;

	if (!text || strlen(text) > SBX_VERDICT_MAX_ITEM) {
		/* A path this long is not one collect.c lets through. */
		sbx_collect_unvalidated(c, a, "its path is too long to hand over");
		return 2;
	}
	fd = sbx_collect_open_candidate(c, a, err);
	if (fd < 0)
		return -1;
	r = send_item(s->sock, text, fd);
	if (r < 0 && errno == ETOOMANYREFS) {
		/* Not the validator's end: the fds in flight of this uid, which
		 * a payload of the same uid may have taken (budgets.c). */
		sbx_error_set(err, SBX_EXIT_SOFTWARE, ETOOMANYREFS,
			      "validation: handing %s to the validator", a->path);
		sbx_budget_nofile_hint(ETOOMANYREFS, err);
		return -1;
	}
	if (r > 0)
		s->st->files++;
	return r < 0 ? -2 : r;
}

/* The verdict on item @i, taken: 1, or 0 / -1 as answer(). */
static int take(struct session *s, struct sbx_collection *c, size_t i, struct sbx_error *err)
{
	struct sbx_artifact *a = &c->items[i];
	const struct sbx_contract *k = NULL;
	struct sbx_verdict v;
	int r = answer(s, i, &v, err);

	if (r <= 0)
		return r;
	for (size_t j = 0; s->ctl->contracts && j < s->ctl->contracts->n; j++)
		if (strcmp(s->ctl->contracts->v[j].path, a->path) == 0)
			k = &s->ctl->contracts->v[j];
	sbx_collect_apply(c, a, &v, s->ctl->allowed, k);
	return 1;
}

/*
 * The exchange: a window of files handed over, their verdicts taken in
 * order.  Return: 1 when every file got its verdict, 0 when the validator
 * stopped answering (s->why says why; what it did not answer is still
 * pending), -1 with @err set.
 */
static int exchange(struct session *s, struct sbx_collection *c, struct sbx_error *err)
{
	size_t queue[WINDOW], head = 0, count = 0, next = 0;
	bool gone = false;
	int r;

	for (;;) {
		while (!gone && count < WINDOW) {
			/* (What is in flight is behind next: it only moves on.) */
			while (next < c->n && !sbx_collect_pending(&c->items[next]))
				next++;
			if (next == c->n)
				break;
			r = hand_over(s, c, next, err);
			if (r == -1)
				return -1;
			if (r == -2)
				gone = true;
			if (r <= 0)
				break;
			if (r == 1)
				queue[(head + count++) % WINDOW] = next;
			next++;
		}
		if (count == 0) {
			if (gone) {
				/* It died with no answer due: the pidfd says why. */
				return ended(s, err) < 0 ? -1 : 0;
			}
			if (next == c->n)
				return 1;
			/* A full socket with nothing in flight: it stopped
			 * reading.  (It cannot be: each item is read before its
			 * answer.)  Not worth waiting for. */
			snprintf(s->why, sizeof(s->why), "the validator stopped reading");
			sbx_helper_kill(&s->h);
			return ended(s, err) < 0 ? -1 : 0;
		}
		r = take(s, c, queue[head], err);
		if (r <= 0)
			return r;
		head = (head + 1) % WINDOW;
		count--;
	}
}

/* The exchange is over: let the validator exit (it does at the end of
 * its input), within the same deadline. */
static void finish(struct session *s, struct sbx_error *err)
{
	struct sbx_error ignored = { 0 };
	struct sbx_verdict v;

	shutdown(s->sock, SHUT_WR);
	if (answer(s, SIZE_MAX, &v, &ignored) > 0) {
		/* An answer nobody asked for: the exchange is over anyway. */
		sbx_helper_kill(&s->h);
		ended(s, &ignored);
	}
	(void)err;
}

int sbx_validation_run(struct sbx_collection *c, const struct sbx_validation_ctl *ctl,
		       struct sbx_validation_stats *st, struct sbx_error *err)
{
	struct session s = { .ctl = ctl, .st = st, .sock = -1, .timer = -1,
			     .h = { .pid = -1, .pidfd = -1, .err_fd = -1 } };
	uint64_t t0 = sbx_now_mono_ns();
	size_t pending = 0;
	int r = 0;

	memset(st, 0, sizeof(*st));
	for (size_t j = 0; j < c->n; j++)
		pending += sbx_collect_pending(&c->items[j]);
	if (!pending)
		return 0;
	if (start(&s, err) < 0) {
		r = -1;
		goto out;
	}
	r = exchange(&s, c, err);
	if (r > 0) {
		finish(&s, err);
		r = 0;
	} else if (r == 0) {
		/* No verdict for what is still pending: in flight or not sent. */
		for (size_t j = 0; j < c->n; j++)
			if (sbx_collect_pending(&c->items[j]))
				sbx_collect_unvalidated(c, &c->items[j], s.why);
	}
	sbx_helper_show(&s.errtext, "validation", "sbx-validate");
out:
	if (r < 0) {
		/* The run ends in an error: nothing it did not check is
		 * listed as if it had passed. */
		for (size_t j = 0; j < c->n; j++)
			if (sbx_collect_pending(&c->items[j]))
				sbx_collect_unvalidated(c, &c->items[j], err->msg);
	}
	sbx_helper_close(&s.h);
	closep(&s.sock);
	closep(&s.timer);
	st->ms = (sbx_now_mono_ns() - t0) / 1000000ull;
	return r;
}
