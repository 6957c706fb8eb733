/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * spawn-spec.c - what the sandbox will be, decided before any of it
 * exists: the spec block the init gets (its binds in mount order, the
 * masked site trees, /etc's few files, the prepared tree and seed, the
 * workspace sizes, the payload's argv), built from the admitted plan
 * (sbx_spawn_prepare), and whether the profile's interpreter and binds
 * exist on this host (sbx_profile_host_check).  The clone and the
 * exchange with the init are sandbox.c's.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "budgets.h"
#include "cpus.h"
#include "json.h"
#include "sandbox.h"

/* root names uid and gid 0 for the programs that look them up (tarfile,
 * shutil.make_archive(owner="root")); no process or file inside is ever
 * uid 0, which is not mapped (sbx-policy(5)). */
static const char etc_passwd[] = "root:x:0:0:root:/nonexistent:/usr/sbin/nologin\n"
				 "sandbox:x:1000:1000:sandbox:/work:/bin/sh\n"
				 "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n";
static const char etc_group[] = "root:x:0:\nsandbox:x:1000:\nnogroup:x:65534:\n";
static const char etc_hosts[] = "127.0.0.1\tlocalhost sbx\n::1\tlocalhost ip6-localhost\n";
static const char etc_nsswitch[] = "passwd: files\ngroup: files\nhosts: files\n";
/* No resolver: with the network disabled there is nothing to ask, and an
 * egress profile resolves names in the broker's proxy, never inside. */
static const char etc_resolv[] = "# no DNS inside the sandbox\n";


static int add_etc(struct sbx_spec *spec, const char *path, const char *data, size_t len)
{
	struct sbx_spec_file *f = &spec->etc[spec->n_etc++];
	snprintf(f->path, sizeof(f->path), "%s", path);
	f->data = data;
	f->len = len;
	return 0;
}

static int bind_conflicts_with_etc(const char *dst)
{
	static const char *const generated[] = { "/etc/passwd", "/etc/group", "/etc/hosts",
						 "/etc/nsswitch.conf", "/etc/resolv.conf" };
	for (size_t i = 0; i < ARRAY_SIZE(generated); i++)
		if (!strcmp(dst, generated[i]))
			return 1;
	return 0;
}

/* "{code}" becomes the code file's path, "{args}" the job's arguments. */
static char **expand_argv(const struct sbx_profile *p, const char *code_path, char *const *args)
{
	size_t n = 0, nargs = sbx_strv_length(args), i = 0;
	char **argv;

	n = sbx_strv_length(p->argv) + nargs + 1;
	argv = sbx_xcalloc(n, sizeof(char *));
	for (char **a = p->argv; *a; a++) {
		if (!strcmp(*a, "{args}")) {
			for (size_t k = 0; k < nargs; k++)
				argv[i++] = sbx_xstrdup(args[k]);
		} else if (!strcmp(*a, "{code}")) {
			argv[i++] = sbx_xstrdup(code_path);
		} else {
			argv[i++] = sbx_xstrdup(*a);
		}
	}
	argv[i] = NULL;
	return argv;
}

static size_t path_depth(const char *path)
{
	size_t n = 0;

	for (; *path; path++)
		n += *path == '/';
	return n;
}

/* Parents before children, whatever the profile's order: a bind inside
 * another (/usr/local/x inside /usr) must be mounted after it, or the
 * outer bind hides it.  Stable, so that the profile's order otherwise
 * holds; destinations are unique (catalog-profile.c). */
static void order_binds(struct sbx_spec *spec)
{
	for (size_t i = 1; i < spec->n_binds; i++) {
		struct sbx_spec_bind b = spec->binds[i];
		size_t j = i, d = path_depth(b.dst);

		for (; j > 0 && path_depth(spec->binds[j - 1].dst) > d; j--)
			spec->binds[j] = spec->binds[j - 1];
		spec->binds[j] = b;
	}
}

/*
 * The host's site trees: what the administrator installed by hand rather
 * than from the distribution (pip, make install, vendor toolchains), which
 * a profile that binds /usr for the interpreter did not choose.  Where a
 * bind carries one, it is covered by an empty read-only tmpfs; a profile
 * that wants some of it names it (or a subtree) in binds, and that bind
 * is mounted on top (order_binds puts it after the outer one).
 */
const char *const sbx_site_trees[] = { "/usr/local", NULL };

bool sbx_bind_carries(const char *src, const char *tree)
{
	size_t len = strcmp(src, "/") ? strlen(src) : 0;

	return strncmp(tree, src, len) == 0 && tree[len] == '/';
}

static int mask_site_trees(struct sbx_spec *spec, struct sbx_error *err)
{
	for (size_t t = 0; sbx_site_trees[t]; t++) {
		const char *tree = sbx_site_trees[t];
		struct stat st;

		/* Only a real directory: a symlink is carried as a link to
		 * whatever it names, bound or not. */
		if (lstat(tree, &st) < 0 || !S_ISDIR(st.st_mode))
			continue;
		for (size_t i = 0; i < spec->n_binds; i++) {
			const char *src = spec->binds[i].src;
			size_t len = strcmp(src, "/") ? strlen(src) : 0;
			struct sbx_spec_mask *m;

			if (!sbx_bind_carries(src, tree))
				continue;
			if (spec->n_masks == SBX_MAX_MASKS)
				return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, 0,
						     "binds: too many binds carry %s", tree);
			m = &spec->masks[spec->n_masks++];
			m->after_bind = (uint32_t)i;
			if ((size_t)snprintf(m->path, sizeof(m->path), "%s%s", spec->binds[i].dst,
					     tree + len) >= sizeof(m->path))
				return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, 0,
						     "binds: path too long under %s", spec->binds[i].dst);
		}
	}
	return 0;
}

/* The interpreter's path inside the sandbox, as a host path: the
 * profile's symlinks followed (/bin -> usr/bin), then the bind that
 * covers it, longest destination first.  NULL when no bind covers it
 * (nothing to check on the host). */
static char *interpreter_host_path(const struct sbx_profile *p)
{
	_cleanup_free_ char *path = sbx_xstrdup(p->argv[0]);
	const struct sbx_bind *best = NULL;
	size_t best_len = 0;

	for (int hops = 0; hops < 8; hops++) {
		bool followed = false;

		for (size_t i = 0; i < p->n_symlinks && !followed; i++) {
			const char *lp = p->symlinks[i].path, *t = p->symlinks[i].target;
			size_t n = strlen(lp);
			_cleanup_free_ char *dir = NULL;
			char *next;

			if (strncmp(path, lp, n) != 0 || (path[n] != '/' && path[n] != '\0'))
				continue;
			dir = sbx_xstrndup(lp, strrchr(lp, '/') - lp);
			next = t[0] == '/' ? sbx_xasprintf("%s%s", t, path + n) :
					     sbx_xasprintf("%s/%s%s", dir, t, path + n);
			free(path);
			path = next;
			followed = true;
		}
		if (!followed)
			break;
	}
	for (size_t i = 0; i < p->n_binds; i++) {
		const char *dst = p->binds[i].dst ? p->binds[i].dst : p->binds[i].src;
		size_t n = strcmp(dst, "/") == 0 ? 0 : strlen(dst);

		if (strncmp(path, dst, n) == 0 && (path[n] == '/' || path[n] == '\0') &&
		    (!best || n >= best_len)) {
			best = &p->binds[i];
			best_len = n;
		}
	}
	if (!best)
		return NULL;
	return sbx_xasprintf("%s%s", best->src, path + best_len);
}

int sbx_profile_host_check(const struct sbx_profile *p, struct sbx_error *err)
{
	_cleanup_free_ char *host = NULL;
	struct stat st;

	for (size_t i = 0; i < p->n_binds; i++) {
		if (p->binds[i].optional || stat(p->binds[i].src, &st) == 0)
			continue;
		sbx_error_set(err, SBX_EXIT_UNAVAILABLE, errno, "%s: binds: %s", p->file,
			      p->binds[i].src);
		sbx_error_hint(err, "the profile needs %s on this host; install it or fix the catalog",
			       p->binds[i].src);
		return -1;
	}
	/* A missing interpreter would only show as a failed execve inside,
	 * after the sandbox is built: say it here, as a host matter. */
	host = interpreter_host_path(p);
	if (!host)
		return 0;
	if (stat(host, &st) < 0) {
		sbx_error_set(err, SBX_EXIT_UNAVAILABLE, errno, "%s: argv[0]: %s", p->file, p->argv[0]);
		sbx_error_hint(err, "the profile runs %s, which is not on this host%s%s%s; install "
			       "the package that provides it, or remove the profile from the catalog",
			       p->argv[0], strcmp(host, p->argv[0]) ? " (" : "",
			       strcmp(host, p->argv[0]) ? host : "", strcmp(host, p->argv[0]) ? ")" : "");
		return -1;
	}
	if (!S_ISREG(st.st_mode) || !(st.st_mode & 0111)) {
		sbx_error_set(err, SBX_EXIT_UNAVAILABLE, 0, "%s: argv[0]: %s is not an executable file",
			      p->file, p->argv[0]);
		sbx_error_hint(err, "the profile runs %s; install the package that provides it, or "
			       "fix the catalog", p->argv[0]);
		return -1;
	}
	return 0;
}

/* The profile's prepared tree, read-only at its mount point like any bind,
 * and where its seed is copied from and to (seed.c of the init). */
static int add_prepared(struct sbx_spec *spec, const struct sbx_plan *plan, struct sbx_error *err)
{
	const struct sbx_prepare *pp = plan->profile->prepare;

	if (spec->n_binds >= SBX_MAX_MOUNTS || strlen(plan->prepared_tree) >= SBX_SPEC_PATH_MAX)
		return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, 0, "%s: prepare: too many binds or "
				     "too long a path", plan->profile->file);
	spec->binds[spec->n_binds++] = (struct sbx_spec_bind){
		.src = plan->prepared_tree, .dst = pp->mount, .is_dir = true };
	if (pp->seed_src) {
		snprintf(spec->seed_src, sizeof(spec->seed_src), "%s/%s", pp->mount, pp->seed_src);
		snprintf(spec->seed_dst, sizeof(spec->seed_dst), "%s", pp->seed_dst);
	}
	return 0;
}

int sbx_spawn_prepare(struct sbx_spawn *sp, const struct sbx_plan *plan, const struct sbx_job *job,
		      struct sbx_error *err)
{
	const struct sbx_profile *p = plan->profile;
	struct sbx_spec *spec = &sp->spec;
	uint64_t ws = plan->limits.v[SBX_LIMIT_WORKSPACE_MIB];
	uint64_t out_bytes = plan->limits.v[SBX_LIMIT_OUTPUT_BYTES];
	uint64_t out_files = plan->limits.v[SBX_LIMIT_OUTPUT_FILES];
	uint64_t out_size;
	int in_owner;

	memset(spec, 0, sizeof(*spec));
	if (p->n_binds > SBX_MAX_MOUNTS)
		return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, 0, "%s: too many binds", p->file);
	for (size_t i = 0; i < p->n_binds; i++) {
		const struct sbx_bind *b = &p->binds[i];
		struct sbx_spec_bind *sb = &spec->binds[spec->n_binds];
		const char *dst = b->dst ? b->dst : b->src;
		struct stat st;

		if (stat(b->src, &st) < 0) {
			if (b->optional && errno == ENOENT)
				continue;
			sbx_error_set(err, SBX_EXIT_UNAVAILABLE, errno, "%s: binds: %s", p->file, b->src);
			sbx_error_hint(err, "the profile needs %s on this host; install it or fix the catalog",
				       b->src);
			return -1;
		}
		/* A directory or a regular file (what a symlink names): a
		 * device, socket or fifo of the host is nothing to read. */
		if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
			return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, 0,
					     "%s: binds: %s is neither a directory nor a file",
					     p->file, b->src);
		if (bind_conflicts_with_etc(dst))
			return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, 0,
					     "%s: binds: %s is generated by sbx", p->file, dst);
		if (strlen(b->src) >= SBX_SPEC_PATH_MAX || strlen(dst) >= SBX_SPEC_PATH_MAX)
			return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, 0, "%s: binds: path too long",
					     p->file);
		sb->src = b->src; /* the catalog's, alive for the whole run */
		sb->dst = dst;
		sb->is_dir = S_ISDIR(st.st_mode);
		spec->n_binds++;
	}
	if (plan->prepared_tree && add_prepared(spec, plan, err) < 0)
		return -1;
	if (sbx_profile_host_check(p, err) < 0)
		return -1;
	order_binds(spec);
	if (mask_site_trees(spec, err) < 0)
		return -1;
	spec->symlinks = p->symlinks;
	spec->n_symlinks = p->n_symlinks;

	add_etc(spec, "/etc/passwd", etc_passwd, sizeof(etc_passwd) - 1);
	add_etc(spec, "/etc/group", etc_group, sizeof(etc_group) - 1);
	add_etc(spec, "/etc/hosts", etc_hosts, sizeof(etc_hosts) - 1);
	add_etc(spec, "/etc/nsswitch.conf", etc_nsswitch, sizeof(etc_nsswitch) - 1);
	add_etc(spec, "/etc/resolv.conf", etc_resolv, sizeof(etc_resolv) - 1);

	if (sp->host_id != (uid_t)-1) {
		/* Root's run: an id of this run's own (rootids.c). */
		spec->outer_uid = sp->host_id;
		spec->outer_gid = (gid_t)sp->host_id;
	} else if (sp->sub_uid != (uid_t)-1) {
		/* An ordinary user's run with subordinate ids (subids.c). */
		spec->outer_uid = sp->sub_uid;
		spec->outer_gid = sp->sub_gid;
		spec->clear_groups = true;
	} else {
		/* An unprivileged caller without subordinate ids, or root of a
		 * user namespace that does not map root's ids: the sandbox
		 * user is the caller itself, the one id it may map without
		 * newuidmap. */
		spec->outer_uid = getuid();
		spec->outer_gid = getgid();
	}
	/* /work/in belongs to whoever the broker writes the inputs as: the
	 * sandbox user, except with subordinate ids, where the broker is
	 * the caller, the namespace's root (a file the payload reads as
	 * "other", 0644, on a read-only mount). */
	in_owner = sp->sub_uid != (uid_t)-1 ? 0 : SBX_SANDBOX_UID;

	/* tmpfs sizes: the workspace limit for each scratch mount (their pages
	 * are charged to the run's memory cgroup as well).  The output root's
	 * size is page-granular, so it gets a page of slack per allowed file;
	 * the collector then enforces output_bytes exactly.  nr_inodes counts
	 * the root directory too. */
	snprintf(spec->workspace_opts, sizeof(spec->workspace_opts),
		 "mode=1777,uid=%d,gid=%d,size=%llum,nr_inodes=%llu", SBX_SANDBOX_UID, SBX_SANDBOX_GID,
		 (unsigned long long)ws, (unsigned long long)(ws * 64 + 1024));
	snprintf(spec->in_opts, sizeof(spec->in_opts), "mode=0755,uid=%d,gid=%d,size=%llum",
		 in_owner, in_owner, (unsigned long long)ws);
	out_size = out_bytes + out_files * 4096 + 4096;
	snprintf(spec->out_opts, sizeof(spec->out_opts),
		 "mode=0755,uid=%d,gid=%d,size=%llu,nr_inodes=%llu", SBX_SANDBOX_UID,
		 SBX_SANDBOX_GID, (unsigned long long)out_size, (unsigned long long)out_files + 1);

	snprintf(spec->code_path, sizeof(spec->code_path), "/work/%s", p->code_file);
	spec->code = sp->code;
	spec->code_len = sp->code_len;

	/* The tmpfs caps limit what is stored; RLIMIT_FSIZE limits a file's
	 * apparent size, which a sparse file (mostly holes, costing nothing)
	 * may take far past the workspace.  So it only stops a runaway offset:
	 * 1 TiB, or the larger write budget where that is more. */
	spec->rlimit_fsize = UINT64_C(1) << 40;
	if ((ws << 20) > spec->rlimit_fsize)
		spec->rlimit_fsize = ws << 20;
	if (out_bytes > spec->rlimit_fsize)
		spec->rlimit_fsize = out_bytes;
	spec->rlimit_nofile = SBX_PAYLOAD_NOFILE;
	/* nproc counts the same tasks as the pids cgroup (everything in the
	 * sandbox runs as its user) but is checked earlier in fork, against
	 * a count that already holds every fork in flight: forks that the
	 * cgroup is about to refuse still count there.  Each of at most
	 * pids tasks has at most one fork in flight, so twice pids (plus the
	 * new one) is never reached before pids.max: the cgroup is the limit
	 * that refuses the fork and records it in pids.events, and nproc
	 * stays a second line.  (One above pids.max let a fork bomb's racing
	 * forks be refused by nproc, unrecorded, and the run end "failed".) */
	spec->rlimit_nproc = 2 * plan->limits.v[SBX_LIMIT_PIDS] + 1;
	spec->quotas = p->quotas;
	spec->workspace_exec = p->workspace_exec;
	spec->n_cpus = sbx_cpus_for_run(plan->limits.v[SBX_LIMIT_CPU_MILLICORES]);

	sp->argv = plan->argv ? sbx_strv_copy(plan->argv) : expand_argv(p, spec->code_path, job->args);
	spec->argv = sp->argv;
	sp->envp = sbx_cpus_env(plan->env, p->thread_env, spec->n_cpus);
	spec->envp = sp->envp;

	spec->proxy_listener = plan->network && plan->network->kind == SBX_NET_EGRESS;

	if (sbx_seccomp_compile_cached(plan->seccomp, sp->state_dir, &spec->seccomp, err) < 0)
		return -1;

	return sbx_spec_pack(spec, &sp->spec_fd, err);
}
