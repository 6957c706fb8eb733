/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sbx-template - a profile's interpreter with its imports done, from which
 * each run's pid 1 is cloned (template.h; docs/design.md, "Templates").
 *
 * Started by the broker only (args.c gives the command line), detached,
 * in a cgroup of its own, with the profile's environment (its thread
 * variables at 1, so that no import starts a thread pool) and fds 0-2 on
 * /dev/null.  It:
 *
 *   1. starts the embedded interpreter with the profile's options as
 *      PyConfig settings, as `python3 -I` would start, and imports the
 *      profile's modules - trusted code from the profile's binds, run
 *      before any job exists,
 *   2. checks that it is one thread (/proc/self/task): a clone copies
 *      only the calling thread, and a lock some other thread held would
 *      stay locked forever in every run,
 *   3. writes "ok <pid>" (or "error <why>") to the ready fd and closes it,
 *   4. serves the broker's requests (serve.c) until stopped.
 *
 * No job code ever runs in this process: the payload runs in a child of
 * the run's pid 1, which is a copy of this one.
 */
#include "config.h"

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "template.h"

const struct sbx_template_args *sbx_template;
const char *sbx_template_reset_code;
char **sbx_template_start_env;

static int ready_fd = -1;

/* The interpreter's words, off the command line's memory, which the runs
 * write over (sbx_template_area_write()). */
static char **copy_words(char *const *v, size_t n)
{
	char **c = calloc(n + 1, sizeof(*c));

	for (size_t i = 0; c && i < n; i++)
		if (!(c[i] = strdup(v[i])))
			return NULL;
	return c;
}

/* One line on the ready fd, then it is closed: the broker reads one line. */
static void ready(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void ready(const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if ((size_t)n > sizeof(line) - 2)
		n = sizeof(line) - 2;
	/* One line: a message with a newline in it would end the answer. */
	for (int i = 0; i < n; i++)
		if (line[i] == '\n' || line[i] == '\r')
			line[i] = ' ';
	line[n++] = '\n';
	(void)!write(ready_fd, line, (size_t)n);
	close(ready_fd);
	ready_fd = -1;
}

_Noreturn static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
_Noreturn static void die(const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (ready_fd >= 0)
		ready("error %s", msg);
	fprintf(stderr, "sbx-template: %s\n", msg);
	_exit(70);
}

/*
 * What the caller of the broker ignored or handled is not the template's,
 * nor its runs': every disposition to its default, as a fresh exec'd
 * python starts (the broker's spawner resets them too; this makes it so
 * whatever spawned it).  Python then installs its own (SIGINT, and
 * SIGPIPE and SIGXFSZ ignored), which its table records and the payload
 * restores (payload.c).
 */
static void default_signals(void)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	sigset_t none;

	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			sigaction(sig, &dfl, NULL); /* glibc refuses its own two: fine */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

static void read_reset(int fd)
{
	char *buf = malloc(SBX_TEMPLATE_RESET_MAX + 1);
	size_t n = 0;
	ssize_t r;

	if (!buf)
		die("reset code: out of memory");
	while ((r = read(fd, buf + n, SBX_TEMPLATE_RESET_MAX + 1 - n)) != 0) {
		if (r < 0) {
			if (errno == EINTR)
				continue;
			die("reading the reset code: %s", strerror(errno));
		}
		n += (size_t)r;
		if (n > SBX_TEMPLATE_RESET_MAX)
			die("the reset code is over %d bytes", SBX_TEMPLATE_RESET_MAX);
	}
	close(fd);
	buf[n] = '\0';
	if (strlen(buf) != n)
		die("the reset code holds a NUL byte");
	sbx_template_reset_code = buf;
}

static void start_interpreter(const struct sbx_template_args *a)
{
	PyConfig config;
	PyStatus st;

	struct sbx_template_pyconfig want;

	PyConfig_InitPythonConfig(&config);
	/* The options the profile's argv gives the interpreter (args.c). */
	sbx_template_pyconfig(&a->py, &want);
	config.isolated = want.isolated;
	config.use_environment = want.use_environment;
	config.user_site_directory = want.user_site_directory;
	config.safe_path = want.safe_path;
	config.write_bytecode = want.write_bytecode;
	config.site_import = want.site_import;
	config.buffered_stdio = want.buffered_stdio;
	/* Our own command line is not the interpreter's. */
	config.parse_argv = 0;
	/* sys.executable, sys.prefix and the module path as the interpreter
	 * itself would compute them from its own path. */
	st = PyConfig_SetBytesString(&config, &config.program_name, a->argv[0]);
	if (!PyStatus_Exception(st))
		st = PyConfig_SetBytesString(&config, &config.executable, a->argv[0]);
	if (!PyStatus_Exception(st))
		st = Py_InitializeFromConfig(&config);
	PyConfig_Clear(&config);
	if (PyStatus_Exception(st))
		die("starting the interpreter %s: %s", a->argv[0],
		    st.err_msg ? st.err_msg : "failed");
}

/* Threads in this process: /proc/self/task's entries. */
static int count_threads(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/*
 * The sandbox covers some host trees the interpreter's site module adds
 * (--hide: /usr/local's site-packages under a bind of /usr): take their
 * directories out of sys.path before any import, so that a module the
 * host installed by hand there is not the one the runs get.  What a .pth
 * file there did at start cannot be undone (sbx(1), TEMPLATES).
 */
static int hide_trees(const struct sbx_template_args *a)
{
	PyObject *sys_path = PySys_GetObject("path"), *cache = PySys_GetObject("path_importer_cache");

	if (!sys_path || !PyList_Check(sys_path))
		return 0;
	for (Py_ssize_t i = PyList_GET_SIZE(sys_path); i-- > 0;) {
		PyObject *item = PyList_GET_ITEM(sys_path, i);
		const char *p = PyUnicode_Check(item) ? PyUnicode_AsUTF8(item) : NULL;

		if (!p)
			continue;
		for (size_t h = 0; h < a->n_hide; h++) {
			size_t n = strlen(a->hide[h]);

			while (n > 1 && a->hide[h][n - 1] == '/')
				n--;
			if (strncmp(p, a->hide[h], n) || (p[n] != '/' && p[n] != '\0'))
				continue;
			if (cache && PyDict_Check(cache) && PyDict_GetItem(cache, item) &&
			    PyDict_DelItem(cache, item) < 0)
				return -1;
			if (PySequence_DelItem(sys_path, i) < 0)
				return -1;
			break;
		}
	}
	return 0;
}

/*
 * Leave the template's cgroups and remove them: its runs have ended (the
 * serve loop returns once the last one has), so nothing else is in them.
 * Each move is to the parent in that hierarchy ("0": the writer itself),
 * which the caller may write as it made the child.  Best effort: where
 * the kernel refuses (cgroup v2 keeps processes out of a parent with
 * controllers enabled for its children), the directory stays for sbx gc,
 * which finds the template gone.
 */
static void leave_cgroups(const struct sbx_template_args *a)
{
	for (size_t i = 0; i < a->n_cgroups; i++) {
		char procs[4200];
		int fd;

		snprintf(procs, sizeof(procs), "%s/../cgroup.procs", a->cgroups[i]);
		fd = open(procs, O_WRONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (write(fd, "0", 1) == 1)
			(void)rmdir(a->cgroups[i]);
		close(fd);
	}
}

int main(int argc, char **argv, char **envp)
{
	static struct sbx_template_args a;
	char why[512];
	int threads, status;

	if (sbx_template_parse_args(argc, argv, &a, why, sizeof(why)) < 0) {
		fprintf(stderr, "sbx-template: %s\nHint: sbx-template is started by sbx only\n", why);
		/* Tell the broker too, if the ready fd is known. */
		if (a.ready_fd >= 0) {
			ready_fd = a.ready_fd;
			ready("error %s", why);
		}
		return 64;
	}
	sbx_template = &a;
	ready_fd = a.ready_fd;
	sbx_template_argv_area = sbx_template_area_of(argv);
	sbx_template_env_area = sbx_template_area_of(envp);
	if (!(a.argv = copy_words(a.argv, a.argc)))
		die("out of memory");
	{
		size_t n = 0;

		while (envp && envp[n])
			n++;
		if (!(sbx_template_start_env = copy_words(envp, n)))
			die("out of memory");
	}
	/* The broker's fds must not reach the interpreter's children (none
	 * is started, but an import might) nor the runs (clone.c closes
	 * what is not a run's anyway). */
	if (fcntl(a.listen_fd, F_SETFD, FD_CLOEXEC) < 0 || fcntl(a.ready_fd, F_SETFD, FD_CLOEXEC) < 0)
		die("--listen or --ready is not an open fd");
	if (a.reset_fd >= 0)
		read_reset(a.reset_fd);
	/* Root's supplementary groups would follow every run's pid 1 (as
	 * sandbox.c says for cold runs: unmapped, but still checked by the
	 * host's permission tests); drop them.  EPERM: a user namespace with
	 * setgroups denied, where nobody can change them. */
	if (getuid() == 0 && setgroups(0, NULL) < 0 && errno != EPERM)
		die("setgroups: %s", strerror(errno));
	default_signals();

	start_interpreter(&a);
	if (hide_trees(&a) < 0) {
		char text[300];

		sbx_template_exception_text(text, sizeof(text));
		die("hiding the covered trees from sys.path: %s", text);
	}
	for (size_t i = 0; i < a.n_imports; i++) {
		PyObject *m = PyImport_ImportModule(a.imports[i]);

		if (!m) {
			char text[300];

			sbx_template_exception_text(text, sizeof(text));
			die("import %s: %s", a.imports[i], text);
		}
		Py_DECREF(m);
	}
	/*
	 * The profile's warm-up (sbx-policy(5) template.warm): trusted code
	 * that does once what every run would do first - matplotlib's first
	 * figure loads the backend, the fonts and the renderer's tables - so
	 * that those pages are the template's, shared, rather than each
	 * run's own copy and CPU.  In a namespace of its own; what it leaves
	 * in the modules is what every run starts from, which is why it is
	 * the profile's code and never a job's.
	 */
	if (a.warm) {
		PyObject *g = PyDict_New(), *r = NULL;

		if (g && PyDict_SetItemString(g, "__builtins__", PyEval_GetBuiltins()) == 0)
			r = PyRun_String(a.warm, Py_file_input, g, g);
		if (!r) {
			char text[300];

			sbx_template_exception_text(text, sizeof(text));
			die("the warm-up code: %s", text);
		}
		Py_DECREF(r);
		Py_DECREF(g);
	}
	if (sbx_template_payload_prepare() < 0) {
		char text[300];

		sbx_template_exception_text(text, sizeof(text));
		die("preparing the payload's start: %s", text);
	}
	/* Anything the imports printed goes to /dev/null now, not into the
	 * first run's buffers (a run's stdio starts empty).  Then every
	 * object so far is moved out of the collector's sight (gc.freeze(),
	 * made for servers that fork): a collection in a run would otherwise
	 * walk, and so copy, the template's whole heap. */
	if (PyRun_SimpleString("import sys, gc\nsys.stdout.flush()\nsys.stderr.flush()\n"
			       "gc.collect()\ngc.freeze()\n") < 0)
		die("flushing stdio");

	threads = count_threads();
	if (threads != 1)
		die(threads < 0 ? "cannot read /proc/self/task"
				: "%d threads after the imports: a clone copies one (are the thread variables 1?)",
		    threads);
	ready("ok %ld", (long)getpid());
	status = sbx_template_serve(&a);
	/* What the imports registered to do at exit (matplotlib removes the
	 * temporary config dir it made on the host when the prepared one is
	 * read-only), without tearing the interpreter down. */
	if (PyRun_SimpleString("import atexit\natexit._run_exitfuncs()\n") < 0)
		status = status ? status : 70;
	fflush(NULL);
	leave_cgroups(&a);
	_exit(status);
}
