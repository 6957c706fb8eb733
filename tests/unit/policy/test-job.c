/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-job.c - the job schema (SPEC §3), table-driven: every case names the
 * exit class it must produce and a piece of the message that must contain
 * the JSON path at fault.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "job.h"

/* Test JSON is written with ' for " to stay readable; none of the cases
 * needs a literal apostrophe. */
static char *dq(const char *s)
{
	char *r = sbx_xstrdup(s);
	for (char *p = r; *p; p++)
		if (*p == '\'')
			*p = '"';
	return r;
}

struct job_case {
	const char *name;
	const char *json;
	int code;            /* 0 = valid */
	const char *message; /* substring of the message (path and what) */
};

#define OK(n, j) { n, j, 0, NULL }
#define BAD(n, j, m) { n, j, SBX_EXIT_INVALID, m }
#define BASE "'runtime_profile':'shell','code':'echo hi'"
#define SHA64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define SHA64UP "0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef"

static const struct job_case cases[] = {
	OK("minimal", "{" BASE "}"),
	OK("spec example",
	   "{'input_handles':['upload_32'],'runtime_profile':'python-analysis',"
	   "'network_profile':'disabled','code':'import csv\\n','args':['--month','2026-10'],"
	   "'env':{'TZ':'UTC'},'limits':{'wall_seconds':45,'soft_seconds':30,"
	   "'grace_seconds':2,'memory_mib':768,'cpu_cores':1,'pids':64,"
	   "'output_bytes':12000000,'output_files':12,'workspace_mib':256},"
	   "'allowed_outputs':['text/csv','image/png'],'required_outputs':['totals.csv'],"
	   "'partial_outputs':'discard'}"),
	OK("code_handle instead of code", "{'runtime_profile':'shell','code_handle':'prog.sh'}"),
	OK("empty code", "{'runtime_profile':'shell','code':''}"),
	OK("half a core", "{" BASE ",'limits':{'cpu_cores':0.5}}"),
	OK("three decimals", "{" BASE ",'limits':{'cpu_cores':0.125}}"),
	OK("extract subset", "{" BASE ",'input_handles':['a.tar','b'],'extract':['a.tar']}"),
	OK("retain", "{" BASE ",'partial_outputs':'retain'}"),
	OK("hold", "{" BASE ",'partial_outputs':'hold'}"),
	OK("nested output", "{" BASE ",'required_outputs':['plots/a.png','x..y/.z']}"),
	OK("outputs kept for the contract parser", "{" BASE ",'outputs':{'t.csv':{'rows':{'min':1}},'a/b.png':{}}}"),
	OK("unicode code", "{'runtime_profile':'shell','code':'echo \\u00e9\\u2603'}"),
	OK("handle shapes", "{" BASE ",'input_handles':['a','A.b-c_d','9']}"),
	OK("empty arrays", "{" BASE ",'args':[],'env':{},'input_handles':[],'allowed_outputs':[]}"),
	OK("path-like profile is policy", "{'runtime_profile':'../x','code':''}"),

	BAD("not json", "{", "line 1 column 1:"),
	BAD("trailing garbage", "{" BASE "} x", "line 1 column"),
	BAD("top-level array", "[1]", "(top level): expected an object, got an array"),
	BAD("unknown key", "{" BASE ",'image':'ubuntu'}", "image: unknown key"),
	BAD("unknown key escaped", "{" BASE ",'a\\u001bb':1}", "[\"a\\x1bb\"]: unknown key"),
	BAD("duplicate key", "{" BASE ",'code':'x'}", "duplicate object key"),
	BAD("memory lots", "{" BASE ",'limits':{'memory_mib':'lots'}}",
	    "limits.memory_mib: expected a positive integer, got \"lots\""),
	BAD("memory zero", "{" BASE ",'limits':{'memory_mib':0}}",
	    "limits.memory_mib: expected a positive integer, got 0"),
	BAD("memory negative", "{" BASE ",'limits':{'memory_mib':-5}}",
	    "limits.memory_mib: expected a positive integer, got -5"),
	BAD("memory real", "{" BASE ",'limits':{'memory_mib':1.0}}",
	    "limits.memory_mib: expected a positive integer, got 1.0"),
	BAD("pids fraction", "{" BASE ",'limits':{'pids':1.5}}", "limits.pids: expected a positive"),
	BAD("memory above schema", "{" BASE ",'limits':{'memory_mib':2000000}}",
	    "limits.memory_mib: expected a positive integer of at most 1048576"),
	BAD("wall above schema", "{" BASE ",'limits':{'wall_seconds':86401}}",
	    "limits.wall_seconds: expected a positive integer of at most 86400"),
	BAD("limits unknown key", "{" BASE ",'limits':{'memory':1}}", "limits.memory: unknown key"),
	BAD("limits not object", "{" BASE ",'limits':[]}", "limits: expected an object, got an array"),
	BAD("cpu too fine", "{" BASE ",'limits':{'cpu_cores':0.0005}}",
	    "limits.cpu_cores: expected a positive number of cores with at most 3 decimals"),
	BAD("cpu four decimals", "{" BASE ",'limits':{'cpu_cores':1.2345}}", "limits.cpu_cores: expected"),
	BAD("cpu zero", "{" BASE ",'limits':{'cpu_cores':0}}", "limits.cpu_cores: expected"),
	BAD("cpu string", "{" BASE ",'limits':{'cpu_cores':'1'}}", "limits.cpu_cores: expected a positive number"),
	BAD("cpu negative", "{" BASE ",'limits':{'cpu_cores':-1}}", "limits.cpu_cores: expected"),
	BAD("soft equals wall", "{" BASE ",'limits':{'wall_seconds':30,'soft_seconds':30}}",
	    "limits.soft_seconds: must be less than limits.wall_seconds (30)"),
	BAD("handles not array", "{" BASE ",'input_handles':'a'}",
	    "input_handles: expected an array, got \"a\""),
	BAD("handle traversal", "{" BASE ",'input_handles':['ok','../etc']}",
	    "input_handles[1]: expected a handle name"),
	BAD("handle hidden", "{" BASE ",'input_handles':['.hidden']}", "input_handles[0]: expected a handle name"),
	BAD("handle slash", "{" BASE ",'input_handles':['a/b']}", "input_handles[0]: expected a handle name"),
	BAD("handle empty", "{" BASE ",'input_handles':['']}", "input_handles[0]: expected a handle name"),
	BAD("handle too long", "{" BASE ",'input_handles':['a1234567890123456789012345678901234567890123456789012345678901234']}",
	    "input_handles[0]: expected a string of at most 64 bytes"),
	BAD("handle duplicate", "{" BASE ",'input_handles':['a','a']}", "input_handles[1]: duplicate entry"),
	BAD("extract not listed", "{" BASE ",'input_handles':['a'],'extract':['b']}",
	    "extract[0]: \"b\" is not listed in input_handles"),
	/* Remote inputs: the shape only (admission decides the rest). */
	OK("fetch", "{" BASE ",'fetch_profile':'f','fetch':[{'url':'https://example.org/a.csv',"
		    "'as':'a.csv','max_bytes':10,'media_type':'text/csv','sha256':'" SHA64 "'}]}"),
	OK("fetch archive extracted", "{" BASE ",'fetch_profile':'f','extract':['t'],"
				      "'fetch':[{'url':'http://example.org/t.tgz','as':'t'}]}"),
	BAD("fetch without profile", "{" BASE ",'fetch':[{'url':'https://e.org/a','as':'a'}]}",
	    "fetch_profile: missing"),
	BAD("fetch bad scheme", "{" BASE ",'fetch_profile':'f','fetch':[{'url':'ftp://e.org/a','as':'a'}]}",
	    "fetch[0].url: expected an http:// or https:// URL"),
	BAD("fetch space", "{" BASE ",'fetch_profile':'f','fetch':[{'url':'https://e.org/a b','as':'a'}]}",
	    "fetch[0].url: expected an http:// or https:// URL"),
	BAD("fetch no host", "{" BASE ",'fetch_profile':'f','fetch':[{'url':'https:///etc/passwd','as':'a'}]}",
	    "fetch[0].url: expected an http:// or https:// URL"),
	BAD("fetch as traversal", "{" BASE ",'fetch_profile':'f','fetch':[{'url':'https://e.org/a','as':'../a'}]}",
	    "fetch[0].as: expected an input name"),
	BAD("fetch as is a handle", "{" BASE ",'input_handles':['a'],'fetch_profile':'f',"
					 "'fetch':[{'url':'https://e.org/a','as':'a'}]}",
	    "fetch[0].as: \"a\" is also one of input_handles"),
	BAD("fetch as twice", "{" BASE ",'fetch_profile':'f','fetch':[{'url':'https://e.org/a','as':'a'},"
				   "{'url':'https://e.org/b','as':'a'}]}",
	    "fetch[1].as: \"a\" is given twice"),
	BAD("fetch sha upper", "{" BASE ",'fetch_profile':'f','fetch':[{'url':'https://e.org/a','as':'a',"
				    "'sha256':'" SHA64UP "'}]}",
	    "fetch[0].sha256: expected 64 lowercase hex digits"),
	BAD("fetch unknown key", "{" BASE ",'fetch_profile':'f','fetch':[{'url':'https://e.org/a','as':'a',"
				      "'headers':{}}]}",
	    "fetch[0].headers: unknown key"),
	BAD("fetch max_bytes zero", "{" BASE ",'fetch_profile':'f','fetch':[{'url':'https://e.org/a','as':'a',"
					 "'max_bytes':0}]}",
	    "fetch[0].max_bytes: expected a positive integer"),
	BAD("code and code_handle", "{" BASE ",'code_handle':'x'}",
	    "code_handle: exactly one of \"code\" and \"code_handle\""),
	BAD("neither code", "{'runtime_profile':'shell'}", "code: missing required key"),
	BAD("code number", "{'runtime_profile':'shell','code':1}", "code: expected a string, got 1"),
	BAD("code_handle bad", "{'runtime_profile':'shell','code_handle':'../x'}",
	    "code_handle: expected a handle name"),
	BAD("profile missing", "{'code':''}", "runtime_profile: missing required key"),
	BAD("profile too long",
	    "{'runtime_profile':'a1234567890123456789012345678901234567890123456789012345678901234','code':''}",
	    "runtime_profile: expected a string of at most 64 bytes"),
	BAD("profile number", "{'runtime_profile':7,'code':''}", "runtime_profile: expected a string, got 7"),
	BAD("network null", "{" BASE ",'network_profile':null}", "network_profile: expected a string, got null"),
	BAD("args not array", "{" BASE ",'args':'--x'}", "args: expected an array"),
	BAD("args number", "{" BASE ",'args':['a','b',3]}", "args[2]: expected a string, got 3"),
	BAD("env not object", "{" BASE ",'env':['TZ']}", "env: expected an object"),
	BAD("env digit key", "{" BASE ",'env':{'1X':'a'}}", "env[\"1X\"]: expected a variable name"),
	BAD("env dash key", "{" BASE ",'env':{'A-B':'a'}}", "env[\"A-B\"]: expected a variable name"),
	BAD("env value number", "{" BASE ",'env':{'TZ':1}}", "env.TZ: expected a string, got 1"),
	BAD("env NUL", "{" BASE ",'env':{'TZ':'a\\u0000b'}}", "line 1 column"),
	BAD("args NUL", "{" BASE ",'args':['\\u0000']}", "NUL"),
	/* A well-formed media type sbx does not validate is policy (77 in
	 * test-policy), not schema: only the shape is checked here. */
	OK("output type unknown to sbx", "{" BASE ",'allowed_outputs':['text/csv','text/html']}"),
	OK("output type with suffix", "{" BASE ",'allowed_outputs':['application/vnd.a+json']}"),
	BAD("output type not a media type", "{" BASE ",'allowed_outputs':['text/csv','csv']}",
	    "allowed_outputs[1]: expected a media type (type/subtype), got \"csv\""),
	BAD("output type two slashes", "{" BASE ",'allowed_outputs':['text/csv/x']}",
	    "allowed_outputs[0]: expected a media type"),
	BAD("output type parameter", "{" BASE ",'allowed_outputs':['text/csv; charset=utf-8']}",
	    "allowed_outputs[0]: expected a media type"),
	BAD("output type empty subtype", "{" BASE ",'allowed_outputs':['text/']}",
	    "allowed_outputs[0]: expected a media type"),
	BAD("output type control", "{" BASE ",'allowed_outputs':['text/\\u001b[2J']}",
	    "allowed_outputs[0]: expected a media type (type/subtype), got \"text/\\x1b[2J\""),
	BAD("output type number", "{" BASE ",'allowed_outputs':[7]}",
	    "allowed_outputs[0]: expected a string, got 7"),
	BAD("output type duplicate", "{" BASE ",'allowed_outputs':['text/csv','text/csv']}",
	    "allowed_outputs[1]: duplicate entry"),
	BAD("output absolute", "{" BASE ",'required_outputs':['/etc/passwd']}",
	    "required_outputs[0]: expected a relative path"),
	BAD("output dotdot", "{" BASE ",'required_outputs':['a','../x']}", "required_outputs[1]: expected"),
	BAD("output empty component", "{" BASE ",'required_outputs':['a//b']}", "required_outputs[0]: expected"),
	BAD("output dot component", "{" BASE ",'required_outputs':['a/./b']}", "required_outputs[0]: expected"),
	BAD("output empty", "{" BASE ",'required_outputs':['']}", "required_outputs[0]: expected"),
	/* outputs: the shape only; the contracts are src/outputs' to parse. */
	BAD("outputs not an object", "{" BASE ",'outputs':['t.csv']}", "outputs: expected an object"),
	BAD("outputs path dotdot", "{" BASE ",'outputs':{'../t.csv':{}}}",
	    "outputs[\"../t.csv\"]: expected a relative path"),
	BAD("outputs absolute", "{" BASE ",'outputs':{'/t.csv':{}}}", "outputs[\"/t.csv\"]: expected a relative path"),
	BAD("outputs entry not an object", "{" BASE ",'outputs':{'t.csv':true}}",
	    "outputs[\"t.csv\"]: expected an object"),
	BAD("output trailing slash", "{" BASE ",'required_outputs':['a/']}", "required_outputs[0]: expected"),
	BAD("output control", "{" BASE ",'required_outputs':['a\\u0007b']}",
	    "required_outputs[0]: expected a relative path below /work/out without empty, \".\" or \"..\" components, got \"a\\x07b\""),
	BAD("partial unknown", "{" BASE ",'partial_outputs':'keep'}",
	    "partial_outputs: expected \"discard\", \"retain\" or \"hold\", got \"keep\""),
	BAD("partial hold upper case", "{" BASE ",'partial_outputs':'Hold'}",
	    "partial_outputs: expected \"discard\", \"retain\" or \"hold\", got \"Hold\""),
	BAD("partial bool", "{" BASE ",'partial_outputs':true}", "partial_outputs: expected \"discard\""),
	BAD("invalid utf-8", "{" BASE ",'args':['\xff']}", "line 1 column"),
	/* Found by fuzz-job: jansson cuts the token it quotes in the middle
	 * of a character; the message must stay UTF-8. */
	BAD("token cut in a character", "{'}uun\\u0\xd0\x9a\xc6\x8a", "invalid escape near '\\\"}uun\\\\u0\\xd0'"),
	/* C1 controls (CSI is U+009B) are escaped like C0 ones. */
	BAD("C1 control in a value", "{" BASE ",'partial_outputs':'\\u009b2J'}",
	    "partial_outputs: expected \"discard\", \"retain\" or \"hold\", got \"\\u009b2J\""),
	BAD("C1 control in a key", "{" BASE ",'\\u0085':1}", "[\"\\u0085\"]: unknown key"),
	/* Reals far outside long long: described, not cast (undefined). */
	BAD("wall huge real", "{" BASE ",'limits':{'wall_seconds':5.5e123}}",
	    "limits.wall_seconds: expected a positive integer, got 5.5e+123"),
	BAD("memory huge negative real", "{" BASE ",'limits':{'memory_mib':-1e300}}",
	    "limits.memory_mib: expected a positive integer, got -1e+300"),
	BAD("pids 2^63 real", "{" BASE ",'limits':{'pids':9223372036854775808.0}}",
	    "limits.pids: expected a positive integer, got 9.22337e+18"),
	/* Numbers jansson cannot hold fail while loading: the message
	 * still names the path, found again from the error's offset. */
	BAD("wall overflows a double", "{" BASE ",'limits':{'wall_seconds':1e400}}",
	    "line 1 column 74: limits.wall_seconds: real number overflow"),
	BAD("integer overflows", "{" BASE ",'limits':{'pids':99999999999999999999}}",
	    "limits.pids: too big integer"),
	BAD("overflow in an array", "{" BASE ",'args':['a','b',1e999]}", "args[2]: real number overflow"),
	BAD("overflow after a nested object",
	    "{" BASE ",'env':{'A':'x,{]'},'limits':{'pids':1,'cpu_cores':-1e400}}",
	    "limits.cpu_cores: real number overflow"),
	BAD("overflow at an escaped key", "{" BASE ",'env':{'a\\'\\u00e9':1e400}}",
	    "env[\"a\\\"\u00e9\"]: real number overflow"),
	BAD("overflow at the top level", "1e400", "line 1 column 5: (top level): real number overflow"),
	BAD("duplicate key names its path", "{" BASE ",'limits':{'pids':1,'pids':2}}",
	    "limits.pids: duplicate object key"),
	BAD("truncated names its path", "{" BASE ",'args':['a',", "args[1]: "),
};

static void check(const char *name, const char *json, size_t len, int code, const char *msg)
{
	struct sbx_error err = { 0 };
	struct sbx_job job;
	int r = sbx_job_parse(&job, "job.json", json, len, &err);

	if (code == 0 && r != 0)
		fail_msg("%s: expected valid, got %d: %s", name, err.code, err.msg);
	if (code != 0) {
		if (r == 0)
			fail_msg("%s: expected %d, parse succeeded", name, code);
		if (err.code != code)
			fail_msg("%s: expected %d, got %d: %s", name, code, err.code, err.msg);
		if (strncmp(err.msg, "job.json: ", 10) != 0 || !strstr(err.msg, msg))
			fail_msg("%s: message \"%s\" lacks \"%s\"", name, err.msg, msg);
		if (strchr(err.msg, '\n') || strchr(err.msg, '\x1b') ||
		    !sbx_utf8_valid(err.msg, strlen(err.msg)) || strstr(err.msg, "\xc2\x9b"))
			fail_msg("%s: message is not one clean line: %s", name, err.msg);
	}
	/* The digest of the raw bytes is there in both cases. */
	assert_string_equal(job.source, "job.json");
	sbx_job_free(&job);
}

static void test_table(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		_cleanup_free_ char *json = dq(cases[i].json);
		check(cases[i].name, json, strlen(json), cases[i].code, cases[i].message);
	}
}

/* Bounds that are easier to build than to write out. */
static void test_generated_bounds(void **state)
{
	_cleanup_free_ char *buf = sbx_xmalloc(SBX_JOB_MAX_BYTES + 64);
	size_t n;

	/* 257 args */
	n = (size_t)sprintf(buf, "{\"runtime_profile\":\"shell\",\"code\":\"\",\"args\":[");
	for (int i = 0; i < SBX_JOB_MAX_ARGS + 1; i++)
		n += (size_t)sprintf(buf + n, "%s\"a\"", i ? "," : "");
	strcpy(buf + n, "]}");
	check("too many args", buf, strlen(buf), SBX_EXIT_INVALID, "args: expected at most 256 entries, got 257");

	/* one arg of 4097 bytes */
	n = (size_t)sprintf(buf, "{\"runtime_profile\":\"shell\",\"code\":\"\",\"args\":[\"");
	memset(buf + n, 'x', SBX_JOB_MAX_ARG_LEN + 1);
	strcpy(buf + n + SBX_JOB_MAX_ARG_LEN + 1, "\"]}");
	check("long arg", buf, strlen(buf), SBX_EXIT_INVALID, "args[0]: expected a string of at most 4096 bytes");

	/* 65 env variables */
	n = (size_t)sprintf(buf, "{\"runtime_profile\":\"shell\",\"code\":\"\",\"env\":{");
	for (int i = 0; i < SBX_JOB_MAX_ENV + 1; i++)
		n += (size_t)sprintf(buf + n, "%s\"V%d\":\"\"", i ? "," : "", i);
	strcpy(buf + n, "}}");
	check("too many env", buf, strlen(buf), SBX_EXIT_INVALID, "env: expected at most 64 variables");

	/* an env value of 4097 bytes */
	n = (size_t)sprintf(buf, "{\"runtime_profile\":\"shell\",\"code\":\"\",\"env\":{\"TZ\":\"");
	memset(buf + n, 'x', SBX_JOB_MAX_ENV_VALUE + 1);
	strcpy(buf + n + SBX_JOB_MAX_ENV_VALUE + 1, "\"}}");
	check("long env value", buf, strlen(buf), SBX_EXIT_INVALID, "env.TZ: expected a string of at most 4096");

	/* 65 handles */
	n = (size_t)sprintf(buf, "{\"runtime_profile\":\"shell\",\"code\":\"\",\"input_handles\":[");
	for (int i = 0; i < SBX_JOB_MAX_HANDLES + 1; i++)
		n += (size_t)sprintf(buf + n, "%s\"h%d\"", i ? "," : "", i);
	strcpy(buf + n, "]}");
	check("too many handles", buf, strlen(buf), SBX_EXIT_INVALID, "input_handles: expected at most 64");

	/* a required output of 256 bytes */
	n = (size_t)sprintf(buf, "{\"runtime_profile\":\"shell\",\"code\":\"\",\"required_outputs\":[\"");
	memset(buf + n, 'x', 256);
	strcpy(buf + n + 256, "\"]}");
	check("long output path", buf, strlen(buf), SBX_EXIT_INVALID, "required_outputs[0]: expected a string of at most 255");

	/* more bytes than a job may have, refused before parsing */
	memset(buf, ' ', SBX_JOB_MAX_BYTES + 1);
	check("oversized", buf, SBX_JOB_MAX_BYTES + 1, SBX_EXIT_INVALID, "more than the 1048576 bytes allowed");
}

static void test_fields(void **state)
{
	_cleanup_free_ char *json = dq(cases[1].json);
	struct sbx_error err = { 0 };
	struct sbx_job job;

	assert_int_equal(sbx_job_parse(&job, "job.json", json, strlen(json), &err), 0);
	assert_string_equal(job.input_handles[0], "upload_32");
	assert_null(job.input_handles[1]);
	assert_null(job.extract[0]);
	assert_string_equal(job.runtime_profile, "python-analysis");
	assert_string_equal(job.network_profile, "disabled");
	assert_string_equal(job.code, "import csv\n");
	assert_int_equal(job.code_len, 11);
	assert_null(job.code_handle);
	assert_string_equal(job.args[1], "2026-10");
	assert_string_equal(job.env[0], "TZ=UTC");
	assert_true(sbx_limit_is_set(&job.limits, SBX_LIMIT_MEMORY_MIB));
	assert_int_equal(job.limits.v[SBX_LIMIT_MEMORY_MIB], 768);
	assert_int_equal(job.limits.v[SBX_LIMIT_CPU_MILLICORES], 1000);
	assert_int_equal(job.limits.v[SBX_LIMIT_OUTPUT_BYTES], 12000000);
	assert_string_equal(job.allowed_outputs[1], "image/png");
	assert_string_equal(job.required_outputs[0], "totals.csv");
	assert_int_equal(job.partial_outputs, SBX_PARTIAL_DISCARD);
	sbx_job_free(&job);

	/* Omitted pieces: empty lists, NULL allowed_outputs, nothing set. */
	json = (free(json), dq("{'runtime_profile':'shell','code_handle':'p','limits':{'cpu_cores':0.1}}"));
	assert_int_equal(sbx_job_parse(&job, "job.json", json, strlen(json), &err), 0);
	assert_non_null(job.input_handles);
	assert_null(job.input_handles[0]);
	assert_null(job.args[0]);
	assert_null(job.env[0]);
	assert_null(job.required_outputs[0]);
	assert_null(job.allowed_outputs);
	assert_null(job.network_profile);
	assert_null(job.code);
	assert_string_equal(job.code_handle, "p");
	assert_int_equal(job.limits.set, 1u << SBX_LIMIT_CPU_MILLICORES);
	assert_int_equal(job.limits.v[SBX_LIMIT_CPU_MILLICORES], 100);
	sbx_job_free(&job);
}

static void test_handle_names(void **state)
{
	static const struct {
		const char *s;
		bool ok;
	} t[] = {
		{ "a", true },     { "Z9", true },   { "a.b_c-d", true }, { "", false },
		{ ".a", false },   { "-a", false },  { "_a", false },     { "a/b", false },
		{ "a b", false },  { "a\n", false }, { "..", false },     { "\xc3\xa9", false },
	};
	char longest[66];

	for (size_t i = 0; i < ARRAY_SIZE(t); i++)
		if (sbx_handle_name_valid(t[i].s) != t[i].ok)
			fail_msg("handle \"%s\": expected %d", t[i].s, t[i].ok);
	memset(longest, 'a', 64);
	longest[64] = '\0';
	assert_true(sbx_handle_name_valid(longest));
	longest[64] = 'a';
	longest[65] = '\0';
	assert_false(sbx_handle_name_valid(longest));
}

static void test_load(void **state)
{
	char dir[] = "/tmp/sbx-test-job-XXXXXX";
	_cleanup_free_ char *path = NULL, *big = NULL;
	static const char body[] = "{\"runtime_profile\":\"shell\",\"code\":\"true\"}";
	/* sha256 of body, computed independently with sha256sum */
	static const char want[] = "e95a3f96945ff2f465dfae197836fe394ab081ef54750e728c314aa889546c71";
	struct sbx_error err = { 0 };
	struct sbx_job job;
	char hex[65];
	int fd, saved;

	assert_non_null(mkdtemp(dir));
	path = sbx_xasprintf("%s/job.json", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, body, strlen(body)), (ssize_t)strlen(body));
	close(fd);

	assert_int_equal(sbx_job_load(&job, path, &err), 0);
	assert_int_equal(sbx_job_digest(&job), 0);
	sbx_hex(job.sha256, 32, hex);
	assert_string_equal(hex, want);
	assert_string_equal(job.source, path);
	sbx_job_free(&job);

	/* "-" reads stdin, named <stdin> in messages. */
	fd = open(path, O_RDONLY | O_CLOEXEC);
	saved = dup(STDIN_FILENO);
	dup2(fd, STDIN_FILENO);
	close(fd);
	assert_int_equal(sbx_job_load(&job, "-", &err), 0);
	dup2(saved, STDIN_FILENO);
	close(saved);
	assert_string_equal(job.source, "<stdin>");
	assert_int_equal(sbx_job_digest(&job), 0);
	sbx_hex(job.sha256, 32, hex);
	assert_string_equal(hex, want);
	sbx_job_free(&job);

	/* Over the cap: refused by size before anything is parsed. */
	big = sbx_xasprintf("%s/big.json", dir);
	fd = open(big, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, SBX_JOB_MAX_BYTES + 1), 0);
	close(fd);
	assert_int_equal(sbx_job_load(&job, big, &err), -1);
	assert_int_equal(err.code, SBX_EXIT_INVALID);
	assert_non_null(strstr(err.msg, "more than the 1048576 allowed"));
	sbx_job_free(&job);

	/* Missing file and directory: 65 naming the path. */
	memset(&err, 0, sizeof(err));
	assert_int_equal(sbx_job_load(&job, dir, &err), -1);
	assert_int_equal(err.code, SBX_EXIT_INVALID);
	assert_non_null(strstr(err.msg, "not a regular file"));
	sbx_job_free(&job);
	memset(&err, 0, sizeof(err));
	unlink(path);
	assert_int_equal(sbx_job_load(&job, path, &err), -1);
	assert_int_equal(err.errnum, ENOENT);
	sbx_job_free(&job);

	unlink(big);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_generated_bounds),
		cmocka_unit_test(test_fields),
		cmocka_unit_test(test_handle_names),
		cmocka_unit_test(test_load),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
