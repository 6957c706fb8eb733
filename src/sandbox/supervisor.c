/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * supervisor.c - wait for the payload without sleeping or busy polling.
 *
 * One poll(2) waits on: the init's pidfd (readable when it has exited),
 * the report socket (started / exited / a setup failure), the payload's
 * stdout and stderr pipes, a signalfd (SIGINT, SIGTERM, SIGHUP to sbx:
 * cancellation) and three timerfds (soft deadline, hard deadline, end of
 * the grace period), plus an optional periodic tick for a live status
 * line, and the egress proxy's fds when there is one.  An attached run
 * adds sbx's stdout and stderr (written when they can take bytes), and
 * --stdin adds sbx's stdin and the payload's stdin pipe (relay.h).  poll, not epoll:
 * the kernel counts epoll watches per uid (fs.epoll.max_user_watches),
 * and a payload of the same uid (an unprivileged caller's) could use
 * them all up; poll has no such budget, and with about ten fds costs
 * the same.  Timeout and cancellation share one termination path:
 * SIGTERM to the init, which forwards it to every process in the sandbox,
 * then SIGKILL when the grace period ends.  The first reason recorded is
 * the one reported.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <nettle/sha2.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/wait.h>

#include "supervisor.h"

/* The sources, in the order a wake-up handles them; SRC_NET counts them
 * (the proxy's fds follow them in the wait). */
enum { SRC_PIDFD, SRC_SOCK, SRC_OUT, SRC_ERR, SRC_SIGNAL, SRC_SOFT, SRC_HARD, SRC_GRACE, SRC_TICK,
       SRC_MIRROR_OUT, SRC_MIRROR_ERR, SRC_STDIN, SRC_STDIN_PIPE, SRC_NET };

/* A timer that fires after @ms, then every @interval_ms (0: once). */
static int arm_timer(uint64_t ms, uint64_t interval_ms)
{
	struct itimerspec its = { 0 };
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);

	if (fd < 0)
		return -1;
	its.it_value.tv_sec = (time_t)(ms / 1000);
	its.it_value.tv_nsec = (long)(ms % 1000) * 1000000L;
	if (its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0)
		its.it_value.tv_nsec = 1;
	its.it_interval.tv_sec = (time_t)(interval_ms / 1000);
	its.it_interval.tv_nsec = (long)(interval_ms % 1000) * 1000000L;
	if (timerfd_settime(fd, 0, &its, NULL) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}


static void stream_init(struct sbx_stream *s, size_t cap)
{
	memset(s, 0, sizeof(*s));
	s->cap = cap;
	s->buf = sbx_xmalloc(cap ? cap : 1);
	s->md = sbx_xmalloc(sizeof(struct sha256_ctx));
	sha256_init(s->md);
}

static void stream_finish(struct sbx_stream *s)
{
	uint8_t d[SHA256_DIGEST_SIZE];

	if (!s->md)
		return;
	sha256_digest(s->md, sizeof(d), d);
	free(s->md);
	s->md = NULL;
	sbx_hex(d, 32, s->sha256);
}

/* Read what is available; returns 0 at EOF (or error), 1 otherwise.
 * With a relay @m, no more than it has room for: the rest waits in the
 * pipe (and the payload with it) until the reader of @m catches up, or,
 * when @final (the payload is gone), until @m is written out. */
static int drain(int fd, struct sbx_stream *s, struct sbx_relay *m, bool final)
{
	char buf[65536];

	for (;;) {
		size_t want = sizeof(buf), keep;
		ssize_t n;

		if (sbx_relay_active(m)) {
			if (!sbx_relay_room(m)) {
				if (!final)
					return 1;
				sbx_relay_finish(m);
			}
			if (sbx_relay_room(m) < want)
				want = sbx_relay_room(m);
		}
		n = read(fd, buf, want);

		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 1 : 0;
		if (n == 0)
			return 0;
		s->bytes += (uint64_t)n;
		keep = s->cap - s->len < (size_t)n ? s->cap - s->len : (size_t)n;
		if (keep < (size_t)n)
			s->truncated = true;
		if (keep) {
			memcpy(s->buf + s->len, buf, keep);
			if (s->md)
				sha256_update(s->md, keep, (const uint8_t *)buf);
			s->len += keep;
		}
		if (sbx_relay_active(m))
			sbx_relay_put(m, buf, (size_t)n);
	}
}

/* --stdin: take what sbx's stdin has, as much as the relay holds. */
static void read_stdin(int fd, struct sbx_relay *r, bool *eof)
{
	char buf[65536];
	size_t want = sbx_relay_room(r) < sizeof(buf) ? sbx_relay_room(r) : sizeof(buf);
	ssize_t n = read(fd, buf, want);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	/* An error reading sbx's own stdin ends it as EOF would; the tally
	 * says the bytes that were passed. */
	if (n <= 0) {
		*eof = true;
		return;
	}
	sbx_relay_put(r, buf, (size_t)n);
}

/* Pass pending stdin bytes into the payload's pipe, counted and hashed as
 * they go in. */
static void write_stdin(struct sbx_relay *r, struct sbx_stdin_tally *t)
{
	const char *p = r->buf + r->off;
	size_t w = sbx_relay_write(r);

	if (w && t->md)
		sha256_update(t->md, w, (const uint8_t *)p);
	t->bytes += w;
}

static void close_stdin_pipe(struct sbx_spawn *sp, struct sbx_stdin_tally *t, bool complete)
{
	if (sp->in_wr < 0)
		return;
	close(sp->in_wr);
	sp->in_wr = -1;
	t->complete = complete;
}

static void emit(const struct sbx_supervise_opts *o, const char *name, const char *detail)
{
	if (o->event)
		o->event(o->ud, name, detail);
}

static void terminate(struct sbx_spawn *sp, const struct sbx_supervise_opts *o,
		      struct sbx_outcome *out, enum sbx_termination why, int *fds, int *grace_fd)
{
	if (out->term != SBX_TERM_NONE)
		return;
	out->term = why;
	emit(o, "terminating",
	     why == SBX_TERM_TIMEOUT ? "timed_out" : why == SBX_TERM_CANCEL ? "cancelled" : "limit");
	/* The init forwards SIGTERM to every process of the namespace. */
	pidfd_send_signal(sp->pidfd, SIGTERM, NULL, 0);
	*grace_fd = arm_timer(o->grace_ms, 0);
	fds[SRC_GRACE] = *grace_fd;
}

static void kill_now(struct sbx_spawn *sp, const struct sbx_supervise_opts *o,
		     struct sbx_outcome *out)
{
	out->killed = true;
	if (o->kill_all)
		o->kill_all(o->ud);
	/* The init's death takes the whole pid namespace with it. */
	pidfd_send_signal(sp->pidfd, SIGKILL, NULL, 0);
}

/* The init's reading of vm.memfd_noexec: 0 to 2, anything else "none"
 * (the manifest never shows a value the kernel does not have). */
static int memfd_noexec_of(const struct sbx_report *rep)
{
	return rep->memfd_noexec >= 0 && rep->memfd_noexec <= 2 ? rep->memfd_noexec : -1;
}

int sbx_supervise(struct sbx_spawn *sp, const struct sbx_supervise_opts *o, struct sbx_outcome *out,
		  struct sbx_error *err)
{
	_cleanup_close_ int soft_fd = -1, hard_fd = -1, grace_fd = -1, tick_fd = -1;
	bool init_gone = false, out_open = true, err_open = true, sock_open = true, in_eof = false;
	struct sbx_relay mir[2], in;
	/* The fd of each source, -1 once it is done with (or absent). */
	int fds[SRC_NET];
	int r = 0;

	memset(out, 0, sizeof(*out));
	stream_init(&out->out, o->stream_cap);
	stream_init(&out->err, o->stream_cap);
	out->t_started_ns = sbx_now_mono_ns();

	hard_fd = arm_timer(o->wall_ms, 0);
	if (o->soft_ms && o->soft_ms < o->wall_ms)
		soft_fd = arm_timer(o->soft_ms, 0);
	if (hard_fd < 0 || (o->soft_ms && o->soft_ms < o->wall_ms && soft_fd < 0))
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "timerfd");
	sbx_relay_init(&mir[0], o->mirror ? o->mirror_fd[0] : -1);
	sbx_relay_init(&mir[1], o->mirror ? o->mirror_fd[1] : -1);
	sbx_relay_init(&in, o->pump_stdin && sp->in_wr >= 0 ? sp->in_wr : -1);
	if (sbx_relay_active(&in)) {
		out->in.used = true;
		out->in.md = sbx_xmalloc(sizeof(struct sha256_ctx));
		sha256_init(out->in.md);
		/* Ours alone: a payload that stops reading makes a write
		 * return EAGAIN, never block the loop. */
		fcntl(sp->in_wr, F_SETFL, O_NONBLOCK);
	}
	fcntl(sp->out_rd, F_SETFL, O_NONBLOCK);
	fcntl(sp->err_rd, F_SETFL, O_NONBLOCK);
	/* The tick is cosmetic: without a timer there is just no redraw. */
	if (o->tick && o->tick_ms)
		tick_fd = arm_timer(o->tick_ms, o->tick_ms);
	fds[SRC_PIDFD] = sp->pidfd;
	fds[SRC_SOCK] = sp->sock;
	fds[SRC_OUT] = sp->out_rd;
	fds[SRC_ERR] = sp->err_rd;
	fds[SRC_SIGNAL] = o->signal_fd;
	fds[SRC_SOFT] = soft_fd;
	fds[SRC_HARD] = hard_fd;
	fds[SRC_GRACE] = -1;
	fds[SRC_TICK] = tick_fd;
	fds[SRC_MIRROR_OUT] = fds[SRC_MIRROR_ERR] = fds[SRC_STDIN] = fds[SRC_STDIN_PIPE] = -1;

	/* Run until the init is gone and both pipes are at EOF (every writer
	 * lived inside the namespace, so EOF follows the init's death). */
	while (!init_gone || out_open || err_open || sock_open) {
		struct pollfd pfd[SRC_NET + SBX_SUPERVISE_NET_MAX];
		int src[SRC_NET];
		size_t n = 0, n_net = 0;

		/* The relays' fds, as their buffers stand now. */
		fds[SRC_MIRROR_OUT] = sbx_relay_pending(&mir[0]) ? mir[0].to : -1;
		fds[SRC_MIRROR_ERR] = sbx_relay_pending(&mir[1]) ? mir[1].to : -1;
		fds[SRC_STDIN_PIPE] = sp->in_wr >= 0 && sbx_relay_pending(&in) ? sp->in_wr : -1;
		fds[SRC_STDIN] = sp->in_wr >= 0 && !in_eof && sbx_relay_room(&in) ? o->stdin_fd : -1;
		for (int s = 0; s < SRC_NET; s++) {
			bool write_side = s == SRC_MIRROR_OUT || s == SRC_MIRROR_ERR || s == SRC_STDIN_PIPE;

			if (fds[s] < 0)
				continue;
			/* A full relay: the payload's pipe waits for its reader. */
			if ((s == SRC_OUT && sbx_relay_active(&mir[0]) && !sbx_relay_room(&mir[0])) ||
			    (s == SRC_ERR && sbx_relay_active(&mir[1]) && !sbx_relay_room(&mir[1])))
				continue;
			pfd[n] = (struct pollfd){ .fd = fds[s], .events = write_side ? POLLOUT : POLLIN };
			src[n++] = s;
		}
		if (o->net_ready)
			n_net = o->net_fds(o->ud, pfd + n, SBX_SUPERVISE_NET_MAX);
		if (poll(pfd, (nfds_t)(n + n_net), -1) < 0) {
			if (errno == EINTR)
				continue;
			r = sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "poll");
			break;
		}
		for (size_t i = 0; i < n; i++) {
			uint64_t ticks;

			if (!pfd[i].revents || fds[src[i]] != pfd[i].fd)
				continue; /* not ready, or done with in this pass */
			switch (src[i]) {
			case SRC_OUT:
				if (!drain(sp->out_rd, &out->out, &mir[0], false)) {
					fds[SRC_OUT] = -1;
					out_open = false;
				}
				break;
			case SRC_ERR:
				if (!drain(sp->err_rd, &out->err, &mir[1], false)) {
					fds[SRC_ERR] = -1;
					err_open = false;
				}
				break;
			case SRC_MIRROR_OUT:
				sbx_relay_write(&mir[0]);
				/* Nobody reads sbx's stdout any more: the payload's
				 * stdout goes the same way, as in a shell pipeline. */
				if (mir[0].broken && mir[0].error == EPIPE && out_open) {
					drain(sp->out_rd, &out->out, NULL, false);
					close(sp->out_rd);
					sp->out_rd = -1;
					fds[SRC_OUT] = -1;
					out_open = false;
				}
				break;
			case SRC_MIRROR_ERR:
				sbx_relay_write(&mir[1]);
				break;
			case SRC_STDIN:
				read_stdin(o->stdin_fd, &in, &in_eof);
				break;
			case SRC_STDIN_PIPE:
				write_stdin(&in, &out->in);
				/* The payload closed its stdin (or is gone): the rest
				 * of sbx's stdin is not read. */
				if (in.broken)
					close_stdin_pipe(sp, &out->in, false);
				break;
			case SRC_SOCK: {
				struct sbx_report rep;
				int k = sbx_spawn_recv_report(sp->sock, &rep, NULL, 0);

				if (k <= 0) {
					fds[SRC_SOCK] = -1;
					sock_open = false;
				} else if (k == (int)sizeof(rep) && rep.kind == SBX_REPORT_STARTED) {
					out->started = true;
					out->t_exec_ns = sbx_now_mono_ns();
					out->landlock_abi = rep.status;
					out->memfd_noexec = memfd_noexec_of(&rep);
					emit(o, "started", NULL);
				} else if (k == (int)sizeof(rep) && rep.kind == SBX_REPORT_EXITED) {
					out->exited = true;
					out->wait_status = rep.status;
					out->t_end_ns = sbx_now_mono_ns();
					emit(o, "exited", NULL);
				} else if (k == (int)sizeof(rep) && rep.kind == SBX_REPORT_FAILED) {
					r = sbx_spawn_report_error(&rep, err);
				}
				break;
			}
			case SRC_PIDFD: {
				siginfo_t si = { 0 };
				int ws;

				/* A template's init is not ours to wait for: the
				 * pidfd is readable once it is gone, and the
				 * template says how it ended (template-spawn.c). */
				if (sp->from_template) {
					sbx_spawn_template_exited(sp, &ws);
					out->template_lost = sp->template_lost;
					si.si_pid = sp->pid;
					si.si_code = WIFSIGNALED(ws) ? CLD_KILLED : CLD_EXITED;
					si.si_status = WIFSIGNALED(ws) ? WTERMSIG(ws) : WEXITSTATUS(ws);
				}
				if ((sp->from_template ||
				     waitid(P_PIDFD, (id_t)sp->pidfd, &si, WEXITED | WNOHANG) == 0) &&
				    si.si_pid != 0) {
					init_gone = true;
					out->init_sigkilled = si.si_code == CLD_KILLED &&
							      si.si_status == SIGKILL;
					fds[SRC_PIDFD] = -1;
					close(sp->pidfd);
					sp->pidfd = -1;
					if (!out->t_end_ns)
						out->t_end_ns = sbx_now_mono_ns();
				}
				break;
			}
			case SRC_SIGNAL: {
				struct signalfd_siginfo ssi;
				if (read(o->signal_fd, &ssi, sizeof(ssi)) == sizeof(ssi) && !init_gone) {
					if (out->term == SBX_TERM_CANCEL && !out->killed)
						kill_now(sp, o, out); /* asked twice */
					else
						terminate(sp, o, out, SBX_TERM_CANCEL, fds, &grace_fd);
				}
				break;
			}
			case SRC_SOFT:
				(void)!read(soft_fd, &ticks, sizeof(ticks));
				fds[SRC_SOFT] = -1;
				if (!init_gone && !out->exited) {
					out->soft_fired = true;
					emit(o, "soft_timeout", NULL);
				}
				break;
			case SRC_HARD:
				(void)!read(hard_fd, &ticks, sizeof(ticks));
				fds[SRC_HARD] = -1;
				/* A payload that already exited is not timed out:
				 * the init is only finishing its clean-up. */
				if (!init_gone && !out->exited)
					terminate(sp, o, out, SBX_TERM_TIMEOUT, fds, &grace_fd);
				break;
			case SRC_TICK:
				(void)!read(tick_fd, &ticks, sizeof(ticks));
				o->tick(o->ud);
				break;
			case SRC_GRACE:
				(void)!read(grace_fd, &ticks, sizeof(ticks));
				fds[SRC_GRACE] = -1;
				if (!init_gone)
					kill_now(sp, o, out);
				break;
			}
		}
		if (n_net)
			o->net_ready(o->ud, pfd + n, n_net);
		/* All of sbx's stdin has been passed on: the payload's EOF. */
		if (in_eof && sp->in_wr >= 0 && !sbx_relay_pending(&in))
			close_stdin_pipe(sp, &out->in, !in.broken);
		/* Nothing can read the payload's stdin once the init is gone. */
		if (init_gone)
			close_stdin_pipe(sp, &out->in, false);
		/* A payload's leftover child could keep a pipe open only while
		 * the namespace lives; once the init is gone nothing can write. */
		if (init_gone && (out_open || err_open)) {
			if (out_open)
				drain(sp->out_rd, &out->out, &mir[0], true);
			if (err_open)
				drain(sp->err_rd, &out->err, &mir[1], true);
			out_open = err_open = false;
		}
		if (init_gone && sock_open) {
			struct sbx_report rep;
			int k;
			fcntl(sp->sock, F_SETFL, O_NONBLOCK);
			while ((k = sbx_spawn_recv_report(sp->sock, &rep, NULL, 0)) > 0) {
				if (k != (int)sizeof(rep))
					continue;
				/* The same events as in the loop: a fast payload's
				 * reports can still be queued when the init's exit
				 * is seen first. */
				if (rep.kind == SBX_REPORT_EXITED && !out->exited) {
					out->exited = true;
					out->wait_status = rep.status;
					emit(o, "exited", NULL);
				} else if (rep.kind == SBX_REPORT_STARTED && !out->started) {
					out->started = true;
					out->t_exec_ns = sbx_now_mono_ns();
					out->landlock_abi = rep.status;
					out->memfd_noexec = memfd_noexec_of(&rep);
					emit(o, "started", NULL);
				} else if (rep.kind == SBX_REPORT_FAILED) {
					r = sbx_spawn_report_error(&rep, err);
				}
			}
			sock_open = false;
		}
	}
	/* The payload's last words, passed on before the summary follows. */
	sbx_relay_finish(&mir[0]);
	sbx_relay_finish(&mir[1]);
	sbx_relay_free(&mir[0]);
	sbx_relay_free(&mir[1]);
	sbx_relay_free(&in);
	close_stdin_pipe(sp, &out->in, false);
	stream_finish(&out->out);
	stream_finish(&out->err);
	if (out->in.md) {
		uint8_t d[SHA256_DIGEST_SIZE];

		sha256_digest(out->in.md, sizeof(d), d);
		free(out->in.md);
		out->in.md = NULL;
		sbx_hex(d, 32, out->in.sha256);
	}
	return r;
}

void sbx_outcome_free(struct sbx_outcome *out)
{
	free(out->out.buf);
	free(out->err.buf);
	free(out->out.md);
	free(out->err.md);
	free(out->in.md);
	memset(out, 0, sizeof(*out));
}
