/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * payload.c - the payload's process on the template's path: the spawn
 * hook of src/init (init.h), which pid 1 calls once the sandbox is
 * sealed.
 *
 * pid 1 forks (glibc's fork(), so that the child's cached thread id is
 * its own; clone.c says why) and waits on a pipe: the child closes it
 * when the job's code is about to run, or writes why it could not - the
 * same moment and the same failure report as an execve on the cold path
 * (SBX_STAGE_FDS, SBX_STAGE_EXEC).  The child, a copy of the template's
 * interpreter with the imports done, then makes itself what a fresh
 * `python3 [options] /work/main.py args...` would be at its first line:
 *
 *   - session, stdio from the run's pipes, no other fd, /work, no signal
 *     blocked (sbx_init_payload_process(), the cold path's own code);
 *     a job whose environment would have started the interpreter
 *     otherwise (the locale variables; PYTHON* without -I or -E) gets it
 *     exec'd here instead, as on the cold path (needs_exec());
 *     dumpable again, as an execve would make it;
 *   - the interpreter's fork hooks (PyOS_AfterFork_Child): locks renewed,
 *     `random` reseeded by its own hook;
 *   - the run's environment (clearenv, then spec->envp), and the
 *     interpreter's copies of it (posix.environ, os.environ) rebuilt;
 *   - sys.stdin, sys.stdout and sys.stderr made anew over fds 0-2, as the
 *     interpreter makes them at start (a pipe, not the template's
 *     /dev/null: not seekable, so not the same objects);
 *   - signal dispositions as the interpreter's table says (SIGINT to
 *     default_int_handler, SIGPIPE and SIGXFSZ ignored, the rest default);
 *   - sys.argv, sys.orig_argv, sys.path[0] as for a script, and no site
 *     directory on sys.path that the sandbox lacks;
 *   - every RNG the imports seeded, reseeded from the kernel: random,
 *     numpy's legacy global RandomState, multiprocessing's authkey; and
 *     matplotlib's cached config and cache directories forgotten (they
 *     are the template's host paths; the run's MPLCONFIGDIR is /tmp/mpl);
 *   - the removals of host temporary directories the imports registered
 *     with atexit dropped (the template does them when it ends);
 *   - the profile's `reset` code, trusted, run in a namespace of its own;
 *   - a new __main__ module (a fresh globals dict) in sys.modules.
 *
 * What cannot be renewed is shared by every run of one template: the
 * str hash secret (the dicts built by the imports depend on it) and the
 * address space layout.  The template's lifetime bounds that (sbx(1)).
 *
 * The job's code then runs as `python3` runs a script, with the same exit
 * status: 0, 1 after an uncaught exception (traceback on stderr),
 * SystemExit's code, death by SIGINT after an uncaught
 * KeyboardInterrupt; threads are joined, atexit handlers run, the job's
 * objects finalized and stdio flushed on the way (finish()).
 */
#include "config.h"

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "init-internal.h"
#include "init.h"
#include "spec.h"
#include "template.h"

/*
 * The payload's start, in Python, compiled once in the template
 * (sbx_template_payload_prepare()) and called in every payload's process.
 * It uses only modules the interpreter has loaded at start or the
 * template imported, and imports what it needs lazily from sys.modules,
 * so that a run pays no import of its own.
 */
static const char start_source[] =
	"def start(script, args, orig_argv, environ, reset, unbuffered):\n"
	"    import sys, posix, _signal, io, builtins\n"
	"    # The environment: the C library's is the run's already.\n"
	"    posix.environ.clear()\n"
	"    posix.environ.update(environ)\n"
	"    os = sys.modules.get('os')\n"
	"    if os is not None and os.environ._data is not posix.environ:\n"
	"        os.environ._data.clear()\n"
	"        os.environ._data.update(environ)\n"
	"    # The job's TZ, as the time module reads it at import.\n"
	"    if 'time' in sys.modules:\n"
	"        sys.modules['time'].tzset()\n"
	"    # stdio as the interpreter makes it at start (create_stdio).\n"
	"    def stream(fd, name, write, old, errors):\n"
	"        buffering = 0 if unbuffered and write else -1\n"
	"        buf = io.open(fd, 'wb' if write else 'rb', buffering, closefd=False)\n"
	"        raw = buf.raw if buffering else buf\n"
	"        raw.name = name\n"
	"        line = not unbuffered and (raw.isatty() or fd == 2)\n"
	"        s = io.TextIOWrapper(buf, old.encoding, errors, '\\n', line, unbuffered)\n"
	"        s.mode = 'w' if write else 'r'\n"
	"        return s\n"
	"    sys.stdin = sys.__stdin__ = stream(0, '<stdin>', False, sys.__stdin__, sys.__stdin__.errors)\n"
	"    sys.stdout = sys.__stdout__ = stream(1, '<stdout>', True, sys.__stdout__, sys.__stdout__.errors)\n"
	"    sys.stderr = sys.__stderr__ = stream(2, '<stderr>', True, sys.__stderr__, 'backslashreplace')\n"
	"    # Dispositions: the C ones are all default (pid 1 made them so);\n"
	"    # the interpreter's table says what a fresh start installs.\n"
	"    for sig in _signal.valid_signals():\n"
	"        try:\n"
	"            h = _signal.getsignal(sig)\n"
	"        except (OSError, ValueError):\n"
	"            continue\n"
	"        if h is not None and h is not _signal.SIG_DFL:\n"
	"            _signal.signal(sig, h)\n"
	"    sys.argv = [script] + args\n"
	"    sys.orig_argv = orig_argv\n"
	"    # The site directories the sandbox lacks are not on a cold run's\n"
	"    # path (site adds only those that exist).\n"
	"    site = sys.modules.get('site')\n"
	"    if site is not None and os is not None:\n"
	"        sp = set(site.getsitepackages())\n"
	"        sys.path[:] = [p for p in sys.path if p not in sp or os.path.isdir(p)]\n"
	"    if not sys.flags.safe_path and os is not None:\n"
	"        sys.path.insert(0, os.path.dirname(os.path.realpath(script)))\n"
	"    # Every RNG the imports seeded, from the kernel's entropy.\n"
	"    m = sys.modules\n"
	"    if 'random' in m:\n"
	"        m['random'].seed()\n"
	"    if 'numpy.random' in m:\n"
	"        m['numpy.random'].seed()\n"
	"    if 'multiprocessing.process' in m:\n"
	"        m['multiprocessing.process'].current_process().authkey = posix.urandom(32)\n"
	"    # matplotlib caches where its config and cache are, at first use.\n"
	"    mpl = m.get('matplotlib')\n"
	"    for f in (getattr(mpl, 'get_configdir', None), getattr(mpl, 'get_cachedir', None)):\n"
	"        code = getattr(f, '__code__', None)\n"
	"        if code is None or not f.__closure__:\n"
	"            continue\n"
	"        cells = dict(zip(code.co_freevars, f.__closure__))\n"
	"        if 'called' in cells and 'ret' in cells:\n"
	"            cells['called'].cell_contents = False\n"
	"            cells['ret'].cell_contents = None\n"
	"    # What the imports asked to remove at exit is the template's, on\n"
	"    # the host (matplotlib's temporary config dir when the prepared one\n"
	"    # is read-only): not in this sandbox, and removed by the template.\n"
	"    if 'shutil' in m and 'atexit' in m:\n"
	"        m['atexit'].unregister(m['shutil'].rmtree)\n"
	"    if reset is not None:\n"
	"        exec(compile(reset, '<profile reset>', 'exec'),\n"
	"             {'__name__': '__sbx_reset__', '__builtins__': builtins})\n"
	"    # A new __main__, as the interpreter makes it for a script.\n"
	"    main = type(sys)('__main__')\n"
	"    d = main.__dict__\n"
	"    d['__annotations__'] = {}\n"
	"    d['__builtins__'] = builtins\n"
	"    d['__file__'] = script\n"
	"    d['__cached__'] = None\n"
	"    machinery = m.get('importlib._bootstrap_external')\n"
	"    if machinery is not None:\n"
	"        d['__loader__'] = machinery.SourceFileLoader('__main__', script)\n"
	"    m['__main__'] = main\n"
	"    return d\n"
	"\n"
	"def exit_code(value):\n"
	"    # SystemExit's status, as the interpreter computes it.\n"
	"    code = getattr(value, 'code', value)\n"
	"    if code is None:\n"
	"        return 0\n"
	"    if isinstance(code, int):\n"
	"        return code\n"
	"    import sys\n"
	"    try:\n"
	"        sys.stderr.write(str(code) + '\\n')\n"
	"    except Exception:\n"
	"        pass\n"
	"    return 1\n"
	"\n"
	"def finish(main, status):\n"
	"    # What Py_FinalizeEx does that a job can see, in its order: the\n"
	"    # threads it left joined, atexit, its objects finalized, stdio.\n"
	"    import sys, gc, atexit\n"
	"    t = sys.modules.get('threading')\n"
	"    if t is not None:\n"
	"        t._shutdown()\n"
	"    atexit._run_exitfuncs()\n"
	"    for k in list(main):\n"
	"        if k != '__builtins__':\n"
	"            main[k] = None\n"
	"    main.clear()\n"
	"    gc.collect()\n"
	"    for s in (sys.stdout, sys.stderr):\n"
	"        try:\n"
	"            if s is not None and not s.closed:\n"
	"                s.flush()\n"
	"        except Exception:\n"
	"            status = 120\n"
	"    return status\n";

static PyObject *start_fn, *exit_code_fn, *finish_fn;

int sbx_template_payload_prepare(void)
{
	PyObject *ns = PyDict_New(), *r;

	if (!ns)
		return -1;
	if (PyDict_SetItemString(ns, "__builtins__", PyEval_GetBuiltins()) < 0) {
		Py_DECREF(ns);
		return -1;
	}
	r = PyRun_String(start_source, Py_file_input, ns, ns);
	if (!r) {
		Py_DECREF(ns);
		return -1;
	}
	Py_DECREF(r);
	start_fn = PyDict_GetItemString(ns, "start");
	exit_code_fn = PyDict_GetItemString(ns, "exit_code");
	finish_fn = PyDict_GetItemString(ns, "finish");
	Py_XINCREF(start_fn);
	Py_XINCREF(exit_code_fn);
	Py_XINCREF(finish_fn);
	Py_DECREF(ns);
	if (!start_fn || !exit_code_fn || !finish_fn) {
		PyErr_SetString(PyExc_RuntimeError, "no start function");
		return -1;
	}
	return 0;
}

/* What the payload's process sends pid 1 when it cannot start the job. */
struct start_failure {
	int32_t stage;
	int32_t err;
	char msg[200];
};

_Noreturn static void start_failed(int fd, enum sbx_stage stage, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
_Noreturn static void start_failed(int fd, enum sbx_stage stage, int err, const char *fmt, ...)
{
	struct start_failure f = { .stage = (int32_t)stage, .err = err };
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(f.msg, sizeof(f.msg), fmt, ap);
	va_end(ap);
	(void)!write(fd, &f, sizeof(f));
	_exit(127);
}

static PyObject *fs_list(char *const *v, size_t n)
{
	PyObject *l = PyList_New((Py_ssize_t)n);

	for (size_t i = 0; l && i < n; i++) {
		PyObject *s = PyUnicode_DecodeFSDefault(v[i]);

		if (!s) {
			Py_DECREF(l);
			return NULL;
		}
		PyList_SET_ITEM(l, (Py_ssize_t)i, s);
	}
	return l;
}

/* The run's environment as posix.environ holds it: bytes to bytes, the
 * name up to the first '='. */
static PyObject *environ_dict(char *const *envp)
{
	PyObject *d = PyDict_New();

	for (size_t i = 0; d && envp && envp[i]; i++) {
		const char *eq = strchr(envp[i], '=');
		PyObject *k, *v;
		int r = -1;

		if (!eq || eq == envp[i])
			continue;
		k = PyBytes_FromStringAndSize(envp[i], eq - envp[i]);
		v = PyBytes_FromString(eq + 1);
		if (k && v && !PyDict_Contains(d, k))
			r = PyDict_SetItem(d, k, v);
		else if (k && v)
			r = 0; /* the first one wins, as in posix.environ */
		Py_XDECREF(k);
		Py_XDECREF(v);
		if (r < 0) {
			Py_DECREF(d);
			return NULL;
		}
	}
	return d;
}

void sbx_template_exception_text(char *buf, size_t len)
{
	PyObject *type, *value, *tb, *s = NULL;
	const char *text = NULL;

	PyErr_Fetch(&type, &value, &tb);
	PyErr_NormalizeException(&type, &value, &tb);
	if (value)
		s = PyObject_Str(value);
	if (s)
		text = PyUnicode_AsUTF8(s);
	snprintf(buf, len, "%s: %s", type ? ((PyTypeObject *)type)->tp_name : "error",
		 text ? text : "?");
	PyErr_Clear();
	Py_XDECREF(s);
	Py_XDECREF(type);
	Py_XDECREF(value);
	Py_XDECREF(tb);
}

/*
 * The end of the payload, as python3's own end looks from outside: the
 * job's threads joined, atexit handlers run, its objects finalized (an
 * unclosed file is flushed), stdio flushed (status 120 if stdout cannot
 * be), the status.  What is not done is tearing the interpreter down: a
 * full Py_FinalizeEx() frees every object the imports made, and in this
 * copy-on-write child that writes (so copies) nearly every page of the
 * template's heap - about 300 ms for numpy, pandas and matplotlib, most
 * of what the template saves.  Objects the job hung on other modules are
 * not finalized (sbx(1), TEMPLATES).
 */
_Noreturn static void finish(PyObject *globals, int status)
{
	PyObject *r = PyObject_CallFunction(finish_fn, "Oi", globals, status);

	if (!r) {
		PyErr_Print();
		status = 120;
	} else {
		status = (int)PyLong_AsLong(r);
		Py_DECREF(r);
	}
	fflush(NULL);
	_exit(status & 0xff);
}

/* Run the job's code in @globals, and end as python3 would. */
_Noreturn static void run_script(const char *script, PyObject *globals)
{
	FILE *fp = fopen(script, "rb");
	PyObject *r, *type, *value, *tb;

	if (!fp) {
		/* python3's own words and status for a script it cannot open. */
		fprintf(stderr, "%s: can't open file '%s': [Errno %d] %s\n",
			sbx_template->argv[0], script, errno, strerror(errno));
		finish(globals, 2);
	}
	r = PyRun_FileExFlags(fp, script, Py_file_input, globals, globals, 1, NULL);
	if (r) {
		Py_DECREF(r);
		finish(globals, 0);
	}
	if (PyErr_ExceptionMatches(PyExc_SystemExit)) {
		int status;

		PyErr_Fetch(&type, &value, &tb);
		PyErr_NormalizeException(&type, &value, &tb);
		r = PyObject_CallFunctionObjArgs(exit_code_fn, value ? value : Py_None, NULL);
		status = r && PyLong_Check(r) ? (int)PyLong_AsLong(r) : 1;
		PyErr_Clear();
		Py_XDECREF(r);
		Py_XDECREF(type);
		Py_XDECREF(value);
		Py_XDECREF(tb);
		finish(globals, status);
	}
	if (PyErr_ExceptionMatches(PyExc_KeyboardInterrupt)) {
		PyObject *f;

		/* python3 prints it, ends, and dies of SIGINT, so that its
		 * caller sees the signal. */
		PyErr_Print();
		f = PyObject_CallFunction(finish_fn, "Oi", globals, 0);
		Py_XDECREF(f);
		fflush(NULL);
		signal(SIGINT, SIG_DFL);
		kill(getpid(), SIGINT);
		_exit(130);
	}
	/* Anything else: the traceback on stderr (sys.excepthook), status 1. */
	PyErr_Print();
	finish(globals, 1);
}

/* The value of @name in @env, or NULL. */
static const char *env_get(char *const *env, const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; env && env[i]; i++)
		if (!strncmp(env[i], name, n) && env[i][n] == '=')
			return env[i] + n + 1;
	return NULL;
}

static bool env_same(char *const *a, char *const *b, const char *name)
{
	const char *x = env_get(a, name), *y = env_get(b, name);

	return x == y || (x && y && !strcmp(x, y));
}

/*
 * Would the interpreter have started otherwise with the run's
 * environment?  It fixes at start the locale (LC_ALL, LC_CTYPE, LANG:
 * the encodings, UTF-8 mode, sys.flags) and, unless -I or -E, what the
 * PYTHON* variables set.  A job that changes them gets what a cold run
 * would: the interpreter exec'd afresh (needs_exec()).
 */
static bool needs_exec(char *const *envp)
{
	static const char *const locale[] = { "LC_ALL", "LC_CTYPE", "LANG" };
	char *const *t = sbx_template_start_env;

	for (size_t i = 0; i < sizeof(locale) / sizeof(locale[0]); i++)
		if (!env_same(t, envp, locale[i]))
			return true;
	if (sbx_template->py.isolated || sbx_template->py.ignore_env)
		return false;
	/* Every PYTHON* variable of either side, the same in both. */
	for (int side = 0; side < 2; side++)
		for (char *const *e = side ? envp : t; e && *e; e++) {
			char name[64];
			const char *eq = strchr(*e, '=');

			if (strncmp(*e, "PYTHON", 6) || !eq || (size_t)(eq - *e) >= sizeof(name))
				continue;
			memcpy(name, *e, (size_t)(eq - *e));
			name[eq - *e] = '\0';
			if (!env_same(t, envp, name))
				return true;
		}
	return false;
}

_Noreturn static void payload(const struct sbx_spec *spec, int out_fd, int err_fd, int in_fd,
			      int report)
{
	const struct sbx_template_args *a = sbx_template;
	size_t argc = 0, k = a->argc;
	PyObject *args = NULL, *orig = NULL, *env = NULL, *script = NULL, *reset = NULL;
	PyObject *globals;
	char text[180];

	if (sbx_init_payload_process(in_fd, out_fd, err_fd, report) < 0)
		start_failed(report, SBX_STAGE_FDS, errno,
			     "setting up the payload's session, fds and directory");
	/* An execve would make the payload dumpable again (pid 1 is not):
	 * it may read its own /proc entries, as on the cold path. */
	if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) < 0)
		start_failed(report, SBX_STAGE_EXEC, errno, "PR_SET_DUMPABLE");

	/* The run's argv must be the template's interpreter words, then the
	 * code and its arguments: the broker chose this template for it. */
	while (spec->argv[argc])
		argc++;
	if (argc < k + 1)
		start_failed(report, SBX_STAGE_EXEC, EINVAL, "the run's argv has no code file");
	for (size_t i = 0; i < k; i++)
		if (strcmp(spec->argv[i], a->argv[i]))
			start_failed(report, SBX_STAGE_EXEC, EINVAL,
				     "the run's argv[%zu] '%s' is not the template's '%s'", i,
				     spec->argv[i], a->argv[i]);

	/* A job whose environment changes how the interpreter starts gets
	 * it exec'd, as sbx-init execs it (the report pipe closes on exec). */
	if (needs_exec(spec->envp)) {
		execve(spec->argv[0], spec->argv, spec->envp);
		start_failed(report, SBX_STAGE_EXEC, errno, "execve %s", spec->argv[0]);
	}

	/* What the exec of the interpreter would show in /proc. */
	{
		const char *base = strrchr(spec->argv[0], '/');

		sbx_template_show(spec->argv, spec->envp);
		prctl(PR_SET_NAME, base ? base + 1 : spec->argv[0], 0, 0, 0);
	}
	if (clearenv() != 0)
		start_failed(report, SBX_STAGE_EXEC, errno, "clearenv");
	for (size_t i = 0; spec->envp && spec->envp[i]; i++)
		if (strchr(spec->envp[i], '=') && putenv(spec->envp[i]) != 0)
			start_failed(report, SBX_STAGE_EXEC, errno, "putenv");

	/* The interpreter again, in this thread: its locks renewed and its
	 * thread state this process's (its own after-fork hooks run here). */
	PyOS_AfterFork_Child();

	args = fs_list(spec->argv + k + 1, argc - k - 1);
	orig = fs_list(spec->argv, argc);
	env = environ_dict(spec->envp);
	script = PyUnicode_DecodeFSDefault(spec->argv[k]);
	if (sbx_template_reset_code)
		reset = PyUnicode_FromString(sbx_template_reset_code);
	else
		reset = Py_NewRef(Py_None);
	if (!args || !orig || !env || !script || !reset) {
		sbx_template_exception_text(text, sizeof(text));
		start_failed(report, SBX_STAGE_EXEC, ENOMEM,
			     "starting the job in the template's interpreter: %s", text);
	}
	globals = PyObject_CallFunction(start_fn, "OOOOOO", script, args, orig, env, reset,
					a->py.unbuffered ? Py_True : Py_False);
	if (!globals) {
		sbx_template_exception_text(text, sizeof(text));
		/* No errno: the message is the exception (a profile's reset
		 * code that raised, say). */
		start_failed(report, SBX_STAGE_EXEC, 0, "starting the job in the template's interpreter: %s",
			     text);
	}
	Py_DECREF(args);
	Py_DECREF(orig);
	Py_DECREF(env);
	Py_DECREF(script);
	Py_DECREF(reset);
	/* Started: pid 1 reads EOF and reports the payload started. */
	close(report);
	run_script(spec->argv[k], globals);
}

pid_t sbx_template_spawn_payload(const struct sbx_spec *spec, int out_fd, int err_fd, int in_fd)
{
	struct start_failure f;
	int p[2];
	ssize_t n;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		fail(SBX_STAGE_FORK, "pipe for the payload's start");
	pid = fork();
	if (pid < 0)
		fail(SBX_STAGE_FORK, "fork for the payload");
	if (pid == 0) {
		close(p[0]);
		payload(spec, out_fd, err_fd, in_fd, p[1]);
	}
	close(p[1]);
	/* pid 1 blocks the signals it reaps with, so no EINTR here. */
	n = read(p[0], &f, sizeof(f));
	close(p[0]);
	if (n == 0)
		return pid;
	/* The child has exited (or will): reap it so no zombie is mistaken
	 * for the payload. */
	waitpid(pid, NULL, 0);
	if (n != (ssize_t)sizeof(f)) {
		errno = n < 0 ? errno : EPROTO;
		fail(SBX_STAGE_EXEC, "starting the payload in the template's interpreter");
	}
	f.msg[sizeof(f.msg) - 1] = '\0';
	errno = f.err;
	fail(f.stage == SBX_STAGE_FDS ? SBX_STAGE_FDS : SBX_STAGE_EXEC, "%s", f.msg);
}
