/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sandbox.c - the broker's side of building a sandbox: with the spec
 * made from the plan (spawn-spec.c), clone the init into its namespaces,
 * write its identity maps, and exchange the setup messages with it.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/pidfd.h>
#include <linux/securebits.h>
#include <stdlib.h>
#include <sys/fsuid.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "budgets.h"
#include "container.h"
#include "cpus.h"
#include "json.h"
#include "libexec.h"
#include "netns.h"
#include "sandbox.h"
#include "subids.h"
#include "syscalls.h"
#include "userns.h"

static const char *const stage_names[_SBX_STAGE_MAX] = {
	[SBX_STAGE_EXEC_INIT] = "exec-init",
	[SBX_STAGE_NAMESPACES] = "namespaces",
	[SBX_STAGE_SYNC] = "sync",
	[SBX_STAGE_IDENTITY] = "identity",
	[SBX_STAGE_NET] = "network",
	[SBX_STAGE_MOUNT_PRIVATE] = "mount-private",
	[SBX_STAGE_ROOT] = "root",
	[SBX_STAGE_BINDS] = "binds",
	[SBX_STAGE_ETC] = "etc",
	[SBX_STAGE_DEV] = "dev",
	[SBX_STAGE_PROC] = "proc",
	[SBX_STAGE_WORK] = "work",
	[SBX_STAGE_INPUTS] = "inputs",
	[SBX_STAGE_PIVOT] = "pivot",
	[SBX_STAGE_READONLY] = "readonly",
	[SBX_STAGE_CREDENTIALS] = "credentials",
	[SBX_STAGE_SECCOMP] = "seccomp",
	[SBX_STAGE_LANDLOCK] = "landlock",
	[SBX_STAGE_FORK] = "fork",
	[SBX_STAGE_RLIMITS] = "rlimits",
	[SBX_STAGE_FDS] = "fds",
	[SBX_STAGE_EXEC] = "exec",
};

const char *sbx_stage_name(enum sbx_stage s)
{
	return (unsigned)s < _SBX_STAGE_MAX && stage_names[s] ? stage_names[s] : "unknown";
}

/*
 * A step of the user namespace's set-up failed with @e (the message is
 * set): the Hint names the host's restriction and its fix.  The host's
 * settings are read only here, on the failure path (userns.c).
 */
static int userns_refused(struct sbx_spawn *sp, enum sbx_userns_step step, int e,
			  struct sbx_error *err)
{
	sbx_userns_explain(step, e, &sp->userns);
	sbx_error_hint(err, "%s", sp->userns.hint);
	return -1;
}

/* sbx-init, the program the sandbox's first process runs (init.c). */
static int open_init(struct sbx_spawn *sp, struct sbx_error *err)
{
	_cleanup_free_ char *path = sbx_libexec_path("sbx-init");

	sp->init_fd = open(path, O_PATH | O_CLOEXEC);
	if (sp->init_fd < 0) {
		sbx_error_set(err, SBX_EXIT_UNAVAILABLE, errno, "the sandbox's init: %s", path);
		sbx_error_hint(err, "%s", SBX_LIBEXEC_HINT);
		return -1;
	}
	return 0;
}

static int write_proc(struct sbx_spawn *sp, const char *file, const char *data,
		      struct sbx_error *err)
{
	char path[64];
	_cleanup_close_ int fd = -1;
	int e = sbx_test_forced_errno(file);

	snprintf(path, sizeof(path), "/proc/%d/%s", sp->pid, file);
	if (!e) {
		fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd < 0 || sbx_write_all(fd, data, strlen(data)) < 0)
			e = errno;
	}
	if (e) {
		sbx_error_set(err, SBX_EXIT_UNAVAILABLE, e, "user namespace: writing %s", file);
		return userns_refused(sp, SBX_USERNS_MAPS, e, err);
	}
	return 0;
}

static int report_error(struct sbx_spawn *sp, const struct sbx_report *rep, struct sbx_error *err);

/* Has the init already failed, and said why?  Then that is the error. */
static bool init_failed(struct sbx_spawn *sp, struct sbx_error *err)
{
	struct sbx_report rep;
	int fd = -1;
	int fl = fcntl(sp->sock, F_GETFL);
	int n;

	if (fl < 0 || fcntl(sp->sock, F_SETFL, fl | O_NONBLOCK) < 0)
		return false;
	n = sbx_spawn_recv_report(sp->sock, &rep, &fd, 1);
	fcntl(sp->sock, F_SETFL, fl);
	if (fd >= 0)
		close(fd);
	if (n != (int)sizeof(rep) || rep.kind != SBX_REPORT_FAILED)
		return false;
	report_error(sp, &rep, err);
	return true;
}

/* The init's user namespace, by its pid, which cannot be reused while
 * the init is our unreaped child. */
static int open_userns(struct sbx_spawn *sp, struct sbx_error *err)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)sp->pid);
	sp->userns_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (sp->userns_fd < 0)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "opening %s", path);
	return 0;
}

/* @err is empty on entry: the caller stops at the first error. */
static int write_id_maps(struct sbx_spawn *sp, struct sbx_error *err)
{
	struct sbx_error why;
	char map[64];
	int r;

	if (sp->sub_uid != (uid_t)-1) {
		/* Ids the caller does not own itself: only shadow's setuid
		 * helpers may map them (subids.c).  The user namespace is
		 * opened now, while the init lives, for the opener that will
		 * read the payload's outputs (opener.h).  setgroups stays
		 * allowed, as newgidmap leaves it for a subordinate range:
		 * the init clears the groups, and the payload never holds
		 * CAP_SETGID (spec.clear_groups). */
		r = sbx_sub_ids_map_finish(&sp->maps, err);
		if (r == 0 && open_userns(sp, err) < 0)
			return -1;
		if (r == 0)
			return 0;
		goto failed;
	}
	/* setgroups must be denied before an unprivileged gid_map is accepted;
	 * for root too, so the payload can never drop a group to gain access. */
	r = write_proc(sp, "setgroups", "deny", err);
	snprintf(map, sizeof(map), "%d %u 1\n", SBX_SANDBOX_GID, (unsigned)sp->spec.outer_gid);
	if (r == 0)
		r = write_proc(sp, "gid_map", map, err);
	snprintf(map, sizeof(map), "%d %u 1\n", SBX_SANDBOX_UID, (unsigned)sp->spec.outer_uid);
	if (r == 0)
		r = write_proc(sp, "uid_map", map, err);
	if (r == 0)
		return 0;
failed:
	/* An init whose namespaces were refused may be gone before its maps
	 * are written, and then the write fails too: its report names the
	 * step that really failed.  (Only a failure report counts: a queued
	 * netlink socket is a live init's, and the run ends here anyway.) */
	why = (struct sbx_error){ 0 };
	if (init_failed(sp, &why))
		*err = why;
	return -1;
}

/* What the clone's first moments need, prepared by the broker: the child
 * shares the broker's memory and may not allocate or format anything. */
struct init_exec {
	int init_fd;
	int fds[4]; /* sock, stdout, stderr[, stdin]: inherited by sbx-init */
	size_t nfds;
	char num[4][16];
	char *argv[6];
};

/*
 * The first instructions of the sandbox's first process: it runs on a
 * stack of its own in the broker's memory (CLONE_VM) while the broker
 * waits for its execve (CLONE_VFORK), so no page of the broker is copied
 * or shared copy-on-write, and the broker's memory (its environment, the
 * signing key) never becomes the sandbox's.  Only system calls here: no
 * allocation, no libcap-ng (per-thread state in the broker's memory).
 *
 * The process holds every capability of the new user namespace, but an
 * execve by a uid that is not the namespace's root (the maps are not even
 * written yet) would drop them.  Raising them into the ambient set carries
 * them into sbx-init, which drops every set, ambient included, before the
 * payload starts.
 */
static int exec_init(void *arg)
{
	const struct init_exec *x = arg;
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct caps[_LINUX_CAPABILITY_U32S_3];
	/* Whatever fails here is the host, not sbx: an old kernel (ambient
	 * capabilities), or an sbx-init that cannot be executed. */
	struct sbx_report rep = { .kind = SBX_REPORT_FAILED, .stage = SBX_STAGE_EXEC_INIT,
				  .unavailable = true };
	static const char msg[] = "starting sbx-init";
	char *const envp[] = { NULL };

	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		goto fail;
	for (size_t i = 0; i < x->nfds; i++)
		if (fcntl(x->fds[i], F_SETFD, 0) < 0)
			goto fail;
	if (syscall(SYS_capget, &hdr, caps) < 0)
		goto fail;
	for (size_t i = 0; i < ARRAY_SIZE(caps); i++)
		caps[i].inheritable = caps[i].permitted;
	if (syscall(SYS_capset, &hdr, caps) < 0)
		goto fail;
	for (int cap = 0; cap <= CAP_LAST_CAP; cap++)
		if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, cap, 0, 0) < 0 && errno != EINVAL)
			goto fail;
	syscall(SYS_execveat, x->init_fd, "", x->argv, envp, AT_EMPTY_PATH);
fail:
	rep.err = errno;
	memcpy(rep.msg, msg, sizeof(msg));
	(void)!write(x->fds[0], &rep, sizeof(rep));
	return 127;
}

/*
 * Root's runs: the sandbox's user namespace is made by a process whose
 * ids are the run's own, so that the namespace's owner is the run's id,
 * not host root.
 *
 * Why: the kernel charges a namespace's inotify instances and watches
 * (and the other ucounts) to its owner's count in the parent namespace,
 * against the host's fs.inotify.max_user_instances (128 by default).
 * Owned by root, every run's instances (up to its kernel_quotas each)
 * came out of the budget that everything else root runs draws from; a
 * few concurrent runs could empty it.  Owned by the run's id, they come
 * out of that id's, which is the run's alone (rootids.c).
 *
 * How: for the clone only, the real and effective uid become the run's
 * id (the saved uid stays 0, to come back), with SECBIT_NO_SETUID_FIXUP
 * so that the capabilities stay: CLONE_INTO_CGROUP needs the right to
 * write the cgroup's cgroup.procs, which is root's.  The real uid too,
 * not only the effective one: an execve whose effective uid differs from
 * the real one is a set-uid execve to the kernel, which clears the
 * ambient capabilities that carry the namespace's capabilities into
 * sbx-init.  So the init starts with every id the run's (the gid stays
 * 0, with no capability outside its namespace; the init sets its own ids
 * once the maps are written), where before it started as root's, with
 * root's access by owner to the host's files until then.
 *
 * What owning the namespace gives: a process in the host's namespace
 * whose effective uid is the owner has every capability in the
 * namespace and those below it, without being in it.  The only such
 * processes are the run's own helpers: sbx-extract, which runs as the
 * id while the sandbox lives, and denies itself ptrace, setns, unshare,
 * kill, pidfd_* and process_vm_* (its seccomp filter) before it reads
 * an archive's first byte; and sbx-validate, which runs after the
 * sandbox is gone, in a user namespace of its own.  No process of
 * another run or user has the id (rootids.c checks the host's users and
 * subordinate ranges).  The payload itself is inside the namespace, where
 * owning it gives nothing.  The maps are still written by the broker as
 * root, with CAP_SETUID over the parent namespace.
 */
struct owner_ids {
	int securebits;
	int pdeathsig;
	uid_t fsuid;
};

/*
 * Whether the broker may hand its namespace to the run's id: only with
 * CAP_SYS_ADMIN in its own user namespace.  Writing the new namespace's
 * setgroups takes CAP_SYS_ADMIN over it, which a process has either as
 * its owner or through CAP_SYS_ADMIN in an ancestor namespace.  Host root
 * has it; root of a container usually does not (podman's and docker's
 * default capabilities leave it out), and there the namespace stays
 * container root's, whose budgets are the container's own.
 */
static bool may_give_namespace(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct caps[_LINUX_CAPABILITY_U32S_3];

	if (syscall(SYS_capget, &hdr, caps) < 0)
		return false;
	return caps[CAP_TO_INDEX(CAP_SYS_ADMIN)].effective & CAP_TO_MASK(CAP_SYS_ADMIN);
}

static int become_owner(struct sbx_spawn *sp, struct owner_ids *o, struct sbx_error *err)
{
	sp->owner_is_run = false;
	if (sp->host_id == (uid_t)-1 || geteuid() != 0 || !may_give_namespace())
		return 0;
	o->securebits = prctl(PR_GET_SECUREBITS);
	if (o->securebits < 0 || prctl(PR_GET_PDEATHSIG, &o->pdeathsig) < 0)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "prctl");
	if (prctl(PR_SET_SECUREBITS, o->securebits | SECBIT_NO_SETUID_FIXUP) < 0)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno,
				     "prctl(PR_SET_SECUREBITS, SECBIT_NO_SETUID_FIXUP)");
	o->fsuid = (uid_t)setfsuid((uid_t)-1);
	if (setresuid(sp->host_id, sp->host_id, (uid_t)-1) < 0) {
		int e = errno;
		prctl(PR_SET_SECUREBITS, o->securebits);
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, e, "setresuid to the run's id %u",
				     (unsigned)sp->host_id);
	}
	sp->owner_is_run = true;
	return 0;
}

/* Root again, as before: the saved uid is 0, and no capability was lost.
 * A change of ids clears the parent-death signal: set again. */
static void back_to_root(const struct sbx_spawn *sp, const struct owner_ids *o)
{
	if (!sp->owner_is_run)
		return;
	if (setresuid(0, 0, (uid_t)-1) < 0)
		abort(); /* cannot happen with the saved uid 0; never go on as another */
	setfsuid(o->fsuid);
	prctl(PR_SET_SECUREBITS, o->securebits);
	if (o->pdeathsig)
		prctl(PR_SET_PDEATHSIG, o->pdeathsig);
}

static void close_pipe(int p[2])
{
	if (p[0] >= 0)
		close(p[0]);
	if (p[1] >= 0)
		close(p[1]);
}

int sbx_spawn_start(struct sbx_spawn *sp, struct sbx_error *err)
{
	struct owner_ids owner;
	int sv[2], outp[2], errp[2], inp[2] = { -1, -1 };
	struct clone_args args = { 0 };
	struct init_exec x;
	/* The clone's stack: static, as one clone at a time runs on it and the
	 * broker waits meanwhile; unmapping a stack the child touched from
	 * the other CPU would cost a TLB shoot-down. */
	static char stack[64 * 1024] __attribute__((aligned(16)));
	int pidfd = -1;
	pid_t pid = -1;

	/* The profile's template, when the broker found one: a clone of an
	 * interpreter with its imports done.  Else (or if it cannot) cold. */
	if (sp->template_sock && sbx_spawn_start_template(sp) == 0) {
		/* Subordinate ids: as below, by pid. */
		if (sp->sub_uid != (uid_t)-1)
			return sbx_sub_ids_map_start(&sp->maps, sp->pid, SBX_SANDBOX_UID,
						     SBX_SANDBOX_GID, sp->sub_uid, sp->sub_gid, err);
		return 0;
	}
	if (open_init(sp, err) < 0)
		return -1;
	x = (struct init_exec){ .init_fd = sp->init_fd };
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "socketpair");
	if (pipe2(outp, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0 ||
	    (sp->want_stdin && pipe2(inp, O_CLOEXEC) < 0))
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "pipe");

	/* Root's supplementary groups would follow the payload (unmapped, but
	 * still checked by the host's permission tests); drop them. */
	if (getuid() == 0 && setgroups(0, NULL) < 0 && errno != EPERM)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "setgroups");
	/* EPERM: a user namespace with setgroups denied, where nobody can
	 * change the groups - the same position as an unprivileged caller. */

	x.fds[0] = sv[1];
	x.fds[1] = outp[1];
	x.fds[2] = errp[1];
	x.nfds = 3;
	/* --stdin: the read end of the payload's stdin pipe, never sbx's
	 * own stdin (a terminal must not reach the sandbox). */
	if (inp[0] >= 0)
		x.fds[x.nfds++] = inp[0];
	x.argv[0] = (char *)"sbx-init";
	for (size_t i = 0; i < x.nfds; i++) {
		snprintf(x.num[i], sizeof(x.num[i]), "%d", x.fds[i]);
		x.argv[i + 1] = x.num[i];
	}

	/* The user namespace (whose capabilities the init uses for the rest)
	 * and the pid namespace (the init must be its pid 1) come with the
	 * clone; the init makes the other five itself (init.c), in parallel
	 * with the caller.  It joins the run's cgroup before its go-ahead. */
	args.flags = CLONE_VM | CLONE_VFORK | CLONE_NEWUSER | CLONE_NEWPID | CLONE_PIDFD;
	args.pidfd = (uint64_t)(uintptr_t)&pidfd;
	args.exit_signal = SIGCHLD;
	args.stack = (uint64_t)(uintptr_t)stack;
	args.stack_size = sizeof(stack);
	/* On cgroup v2 the init is born in the run's cgroup: no write to
	 * cgroup.procs later, and so no wait for the RCU grace period that
	 * each first migration write costs (10-18 ms on a loaded host, more
	 * than the rest of a trivial run).  Whatever the kernel refuses here
	 * (a kernel before 5.7, a cgroup this caller may not clone into) is
	 * left to the attach, which says why with a Hint. */
	sp->in_cgroup = false;
	if (become_owner(sp, &owner, err) < 0) {
		close(sv[0]), close(sv[1]), close(outp[0]), close(outp[1]), close(errp[0]), close(errp[1]), close_pipe(inp);
		return -1;
	}
	if (sp->cgroup_fd >= 0 && !sbx_syscall_forced_enosys("clone_into_cgroup")) {
		args.flags |= CLONE_INTO_CGROUP;
		args.cgroup = (uint64_t)sp->cgroup_fd;
		pid = sbx_clone3_on_stack(&args, exec_init, &x);
		if (pid >= 0)
			sp->in_cgroup = true;
		args.flags &= ~(uint64_t)CLONE_INTO_CGROUP;
		args.cgroup = 0;
	}
	if (!sp->in_cgroup)
		pid = sbx_clone3_on_stack(&args, exec_init, &x);
	/* Here the child has exec'd sbx-init or exited: the stack is free. */
	if (pid < 0) {
		int e = errno;

		back_to_root(sp, &owner);
		sbx_error_set(err, SBX_EXIT_UNAVAILABLE, e, "creating the sandbox's namespaces");
		close(sv[0]), close(sv[1]), close(outp[0]), close(outp[1]), close(errp[0]), close(errp[1]), close_pipe(inp);
		return userns_refused(sp, SBX_USERNS_CLONE, e, err);
	}
	back_to_root(sp, &owner);
	/* Subordinate ids: the setuid map helpers work while the broker
	 * prepares the rest (write_id_maps() waits for them).  Started here,
	 * they fail before the run goes further. */
	if (sp->sub_uid != (uid_t)-1 &&
	    sbx_sub_ids_map_start(&sp->maps, pid, SBX_SANDBOX_UID, SBX_SANDBOX_GID, sp->sub_uid,
				  sp->sub_gid, err) < 0) {
		siginfo_t si;

		pidfd_send_signal(pidfd, SIGKILL, NULL, 0);
		waitid(P_PIDFD, (id_t)pidfd, &si, WEXITED);
		close(pidfd);
		close(sv[0]), close(sv[1]), close(outp[0]), close(outp[1]), close(errp[0]), close(errp[1]), close_pipe(inp);
		return -1;
	}
	close(sv[1]);
	close(outp[1]);
	close(errp[1]);
	if (inp[0] >= 0)
		close(inp[0]);
	sp->in_wr = inp[1];
	close(sp->init_fd);
	sp->init_fd = -1;
	sp->pid = pid;
	sp->pidfd = pidfd;
	sp->sock = sv[0];
	sp->out_rd = outp[0];
	sp->err_rd = errp[0];
	return 0;
}

/* Inside a container, the Hint names the container's setting to change
 * (container.c); false elsewhere. */
static bool container_hint(enum sbx_container_refusal what, struct sbx_error *err)
{
	char engine[64], hint[512];

	if (!sbx_container_engine(NULL, engine, sizeof(engine)))
		return false;
	sbx_container_hint(what, engine, hint, sizeof(hint));
	sbx_error_hint(err, "%s", hint);
	return true;
}

/* Turn a setup failure record into the error it stands for; with @sp, a
 * refused namespace is explained (userns.c). */
static int report_error(struct sbx_spawn *sp, const struct sbx_report *rep, struct sbx_error *err)
{
	char raw[sizeof(rep->msg) + 1], msg[sizeof(rep->msg) * 4 + 4];

	/* The record is bytes from another process: terminated here, and
	 * escaped like every message that quotes what sbx did not write. */
	memcpy(raw, rep->msg, sizeof(rep->msg));
	raw[sizeof(rep->msg)] = '\0';
	sbx_json_escape(raw, msg, sizeof(msg));
	sbx_error_set(err, rep->unavailable ? SBX_EXIT_UNAVAILABLE : SBX_EXIT_SOFTWARE, rep->err,
		      "sandbox setup: %s: %s", sbx_stage_name(rep->stage), msg);
	if (sp && rep->stage == SBX_STAGE_NAMESPACES)
		return userns_refused(sp, SBX_USERNS_NAMESPACES, rep->err, err);
	if (rep->unavailable && rep->stage == SBX_STAGE_PROC && rep->err == EPERM &&
	    container_hint(SBX_CONTAINER_PROC, err))
		return -1;
	if (rep->unavailable && rep->stage == SBX_STAGE_IDENTITY && rep->err == EPERM &&
	    container_hint(SBX_CONTAINER_NAMESPACES, err))
		return -1;
	/* The init's fds to the broker (its netlink socket, /work), refused
	 * for the count of fds in flight that its uid shares (budgets.c). */
	if (sbx_budget_nofile_hint(rep->err, err))
		return -1;
	if (rep->unavailable)
		sbx_error_hint(err, "this kernel or host configuration cannot provide the isolation the "
				    "profile requires; see `sbx check`");
	return -1;
}

int sbx_spawn_recv_report(int sock, struct sbx_report *rep, int *fds, size_t nfds)
{
	int n;

	memset(rep, 0, sizeof(*rep));
	n = (int)sbx_recv_fds(sock, rep, sizeof(*rep), fds, nfds);
	/* An init that died with a message of ours unread (the go-ahead)
	 * resets the socket, and the kernel reports that error before the
	 * records still queued - among them the init's report of why it
	 * died.  Reading the error clears it: read on. */
	if (n < 0 && errno == ECONNRESET)
		n = (int)sbx_recv_fds(sock, rep, sizeof(*rep), fds, nfds);
	return n;
}

/*
 * The init's first message: its NETLINK_ROUTE socket (see netns.c), or
 * the report of its namespaces' failure.  Bring lo up over it.
 */
static int lo_up(struct sbx_spawn *sp, struct sbx_error *err)
{
	struct sbx_report rep;
	int nl_fd = -1;
	int n = sbx_spawn_recv_report(sp->sock, &rep, &nl_fd, 1);
	int r;

	if (n == (int)sizeof(rep) && rep.kind == SBX_REPORT_FAILED) {
		if (nl_fd >= 0)
			close(nl_fd);
		return report_error(sp, &rep, err);
	}
	if (n != 1 || nl_fd < 0) {
		if (nl_fd >= 0)
			close(nl_fd);
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, n < 0 ? errno : 0,
				     "sandbox setup: the init ended before opening its netlink socket");
	}
	r = sbx_test_forced_errno("lo");
	if (r) {
		close(nl_fd);
		r = -r;
	} else {
		r = sbx_netns_lo_up(nl_fd);
	}
	/* Refused: the namespace's capabilities were taken (AppArmor's
	 * restriction does that) or a policy denies it - the host, not sbx. */
	if (r == -EPERM || r == -EACCES) {
		sbx_error_set(err, SBX_EXIT_UNAVAILABLE, -r, "sandbox setup: network: bringing up lo");
		return userns_refused(sp, SBX_USERNS_LO, -r, err);
	}
	if (r < 0)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, -r, "sandbox setup: network: bringing up lo");
	return 0;
}

static int init_gone(struct sbx_spawn *sp, int e, const char *what, struct sbx_error *err);

/*
 * lo up, then say so: the init waits for that before it binds the proxy
 * listener to 127.0.0.1 and hands over /work, so the payload never starts
 * with lo down.
 */
static int bring_up_lo(struct sbx_spawn *sp, struct sbx_error *err)
{
	char ack = 'L';

	if (lo_up(sp, err) < 0)
		return -1;
	if (write(sp->sock, &ack, 1) != 1)
		return init_gone(sp, errno, "sandbox setup: network: telling the init", err);
	return 0;
}

/*
 * A write to the init failed with @e: the init is gone.  It says why when
 * it got as far as reporting - after its netlink socket, which is queued
 * first when lo was not brought up yet (an init that fails before the
 * go-ahead, such as a refused sethostname, sent both).
 */
static int init_gone(struct sbx_spawn *sp, int e, const char *what, struct sbx_error *err)
{
	struct sbx_report rep;

	fcntl(sp->sock, F_SETFL, O_NONBLOCK);
	for (int i = 0; i < 2; i++) {
		int nl_fd = -1;
		int n = sbx_spawn_recv_report(sp->sock, &rep, &nl_fd, 1);

		if (nl_fd >= 0)
			close(nl_fd);
		if (n == (int)sizeof(rep) && rep.kind == SBX_REPORT_FAILED)
			return report_error(sp, &rep, err);
		if (n != 1)
			break;
	}
	sbx_error_set(err, SBX_EXIT_SOFTWARE, e, "%s", what);
	sbx_budget_nofile_hint(e, err); /* the go-ahead carries the spec's fd */
	return -1;
}

/* The go-ahead: one byte, with the sealed spec attached. */
static int send_go(struct sbx_spawn *sp)
{
	if (sbx_send_fds(sp->sock, "G", 1, &sp->spec_fd, 1) != 1)
		return -1;
	close(sp->spec_fd);
	sp->spec_fd = -1;
	return 0;
}

/*
 * vm.memfd_noexec 2 (no memfd can be executed) for a root's run's pid
 * namespace.  The kernel lets only a writer whose effective uid is host
 * root write it, and only for the writer's own pid namespace; the init
 * did it itself while it started as root's, and no longer can now that it
 * starts with the run's ids (become_owner()).  So the broker makes its
 * next child a member of the run's pid namespace (setns(CLONE_NEWPID)
 * moves only the children to come), starts one that shares its memory
 * and only writes the value (CLONE_VM | CLONE_VFORK: no copy of the
 * broker's pages, ~0.1 ms against ~20 ms for a fork and a second fork
 * inside), and takes its own pid namespace back for its children before
 * anything else.  Before the go-ahead: the payload does not exist yet,
 * and the init reads the value after the go-ahead.  Best effort, as the
 * init's own write was: the manifest reports the value the run has (a
 * kernel before 6.3 has none).
 */
static int write_memfd_noexec(void *unused)
{
	int fd = open("/proc/sys/vm/memfd_noexec", O_WRONLY | O_CLOEXEC);

	(void)unused;
	_exit(fd >= 0 && write(fd, "2", 1) == 1 ? 0 : 1);
}

static void raise_memfd_noexec(const struct sbx_spawn *sp)
{
	/* The child runs on this stack while the broker waits (CLONE_VFORK). */
	static char stack[16 * 1024] __attribute__((aligned(16)));
	_cleanup_close_ int own = -1, run_ns = -1;
	char path[64];
	pid_t c;

	if (!sp->owner_is_run)
		return;
	snprintf(path, sizeof(path), "/proc/%d/ns/pid", sp->pid);
	own = open("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC);
	run_ns = open(path, O_RDONLY | O_CLOEXEC);
	if (own < 0 || run_ns < 0 || setns(run_ns, CLONE_NEWPID) < 0)
		return;
	c = clone(write_memfd_noexec, stack + sizeof(stack), CLONE_VM | CLONE_VFORK | SIGCHLD,
		  NULL);
	/* Our own active pid namespace: always allowed.  Never go on with
	 * the next helper born in the run's namespace. */
	if (setns(own, CLONE_NEWPID) < 0)
		abort();
	while (c > 0 && waitpid(c, NULL, 0) < 0 && errno == EINTR)
		;
}

int sbx_spawn_release(struct sbx_spawn *sp, struct sbx_error *err)
{
	if (write_id_maps(sp, err) < 0)
		return -1;
	raise_memfd_noexec(sp);
	if (send_go(sp) < 0)
		return init_gone(sp, errno, "releasing the sandbox init", err);
	return bring_up_lo(sp, err);
}

int sbx_spawn_receive_work(struct sbx_spawn *sp, struct sbx_error *err)
{
	struct sbx_report rep;
	int fds[3] = { -1, -1, -1 };
	int n = sbx_spawn_recv_report(sp->sock, &rep, fds, 3);

	if (n == (int)sizeof(rep) && rep.kind == SBX_REPORT_FAILED) {
		for (int i = 0; i < 3; i++)
			if (fds[i] >= 0)
				close(fds[i]);
		return report_error(sp, &rep, err);
	}
	if (n != 1 || fds[0] < 0 || fds[1] < 0 || (sp->spec.proxy_listener != (fds[2] >= 0))) {
		for (int i = 0; i < 3; i++)
			if (fds[i] >= 0)
				close(fds[i]);
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, n < 0 ? errno : 0,
				     "sandbox setup: the init ended before handing over /work");
	}
	sp->in_fd = fds[0];
	sp->outroot_fd = fds[1];
	sp->proxy_fd = fds[2];
	return 0;
}

int sbx_spawn_continue(struct sbx_spawn *sp, struct sbx_error *err)
{
	char go = 'C';

	if (sp->in_fd >= 0) {
		close(sp->in_fd);
		sp->in_fd = -1;
	}
	if (write(sp->sock, &go, 1) != 1)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "continuing the sandbox setup");
	return 0;
}

int sbx_spawn_probe(struct sbx_userns_diagnosis *diag, struct sbx_error *err)
{
	struct sbx_spawn sp = SBX_SPAWN_INIT;
	int r = sbx_spawn_start(&sp, err);

	/* The steps of a run up to the go-ahead, which never comes: the
	 * init is killed and reaped below, having touched nothing. */
	if (r == 0) {
		/* The caller's own ids, the one mapping anyone may write:
		 * root's per-run ids are a matter of admission, not of the
		 * host's namespace restrictions. */
		sp.spec.outer_uid = getuid();
		sp.spec.outer_gid = getgid();
		r = write_id_maps(&sp, err);
	}
	if (r == 0)
		r = lo_up(&sp, err);
	*diag = sp.userns;
	sbx_spawn_free(&sp);
	return r;
}

int sbx_spawn_report_error(const struct sbx_report *rep, struct sbx_error *err)
{
	return report_error(NULL, rep, err);
}

void sbx_spawn_free(struct sbx_spawn *sp)
{
	struct sbx_error ignored = { 0 };

	/* Helpers that write maps of an init about to die: wait, never
	 * leave them behind (they are setuid: the broker may signal them,
	 * but they end on their own in a few ms). */
	sbx_sub_ids_map_finish(&sp->maps, &ignored);
	if (sp->pidfd >= 0 && sp->from_template) {
		/* The template's child: it reaps it (template-spawn.c). */
		sbx_spawn_template_reap(sp);
		close(sp->pidfd);
	} else if (sp->pidfd >= 0) {
		/* Never leave the init behind: kill and reap it. */
		siginfo_t si;
		pidfd_send_signal(sp->pidfd, SIGKILL, NULL, 0);
		waitid(P_PIDFD, (id_t)sp->pidfd, &si, WEXITED);
		close(sp->pidfd);
	}
	sp->pidfd = -1;
	if (sp->template_fd >= 0)
		close(sp->template_fd);
	sp->template_fd = -1;
	if (sp->sock >= 0)
		close(sp->sock);
	if (sp->out_rd >= 0)
		close(sp->out_rd);
	if (sp->err_rd >= 0)
		close(sp->err_rd);
	if (sp->in_wr >= 0)
		close(sp->in_wr);
	sp->in_wr = -1;
	if (sp->in_fd >= 0)
		close(sp->in_fd);
	if (sp->outroot_fd >= 0)
		close(sp->outroot_fd);
	if (sp->proxy_fd >= 0)
		close(sp->proxy_fd);
	if (sp->spec_fd >= 0)
		close(sp->spec_fd);
	if (sp->init_fd >= 0)
		close(sp->init_fd);
	if (sp->userns_fd >= 0)
		close(sp->userns_fd);
	sp->userns_fd = -1;
	sp->sock = sp->out_rd = sp->err_rd = sp->in_fd = sp->outroot_fd = sp->proxy_fd = -1;
	sp->spec_fd = sp->init_fd = -1;
	sbx_seccomp_free(&sp->spec.seccomp);
	sbx_strv_free(sp->argv);
	sbx_strv_free(sp->envp);
	sp->argv = sp->envp = NULL;
}
