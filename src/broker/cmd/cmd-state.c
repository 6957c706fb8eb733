/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd-state.c - `sbx gc` and `sbx cancel RUN_ID`: find the state directory
 * through the host configuration, then hand over to state.c / gc.c.
 */
#include "config.h"

#include <stdio.h>

#include "cli.h"
#include "cmd-json.h"
#include "fetch-cache.h"
#include "hold.h"
#include "hostconfig.h"
#include "results.h"
#include "state.h"
#include "template-life.h"

static int state_dir_from_config(const struct sbx_common_opts *o, char **dir,
				 struct sbx_error *err)
{
	struct sbx_hostconfig cfg = { 0 };
	int r;

	if (sbx_hostconfig_load(&cfg, o->config, err) < 0)
		return -1;
	r = sbx_state_dir(cfg.state_dir, dir, err);
	sbx_hostconfig_free(&cfg);
	return r;
}

int sbx_cmd_gc(const struct sbx_common_opts *o)
{
	struct sbx_error err = { 0 };
	struct sbx_hostconfig cfg = { 0 };
	_cleanup_free_ char *dir = NULL;
	unsigned reaped = 0, holds = 0, results = 0, cached = 0, templates = 0;
	int r;

	if (sbx_hostconfig_load(&cfg, o->config, &err) < 0) {
		sbx_error_print(&err);
		if (o->json)
			sbx_cmd_json_print(sbx_cmd_json_error(NULL, &err));
		return err.code;
	}
	/* Holds by age only (hold.c): they outlive their runs' entries. */
	r = sbx_state_dir(cfg.state_dir, &dir, &err) < 0 || sbx_state_gc(dir, &reaped, &err) < 0 ||
	    sbx_hold_gc(&cfg, &holds, &err) < 0 ||
	    /* Results by age and count: they outlive their runs too. */
	    sbx_results_gc(&cfg, dir, &results, &err) < 0 ||
	    /* Pinned remote inputs, least recently used first. */
	    sbx_fetch_cache_prune(dir, cfg.fetch_cache_bytes, &cached, &err) < 0 ||
	    /* Templates that exited: their records, sockets, cgroups. */
	    sbx_template_gc(dir, &templates) < 0;
	sbx_hostconfig_free(&cfg);
	if (r) {
		sbx_error_print(&err);
		if (o->json)
			sbx_cmd_json_print(sbx_cmd_json_error(NULL, &err));
		return err.code;
	}
	if (o->verbosity >= 0)
		fprintf(stderr, "sbx: gc: reaped %u run%s, removed %u expired hold%s, pruned %u run "
			"result%s, pruned %u cached input%s, cleaned up %u exited template%s\n",
			reaped, reaped == 1 ? "" : "s", holds, holds == 1 ? "" : "s", results,
			results == 1 ? "" : "s", cached, cached == 1 ? "" : "s", templates,
			templates == 1 ? "" : "s");
	if (o->json)
		return sbx_cmd_json_print(json_pack("{s:b, s:I, s:I, s:I, s:I, s:I}", "ok", 1, "runs_reaped",
						    (json_int_t)reaped, "holds_removed",
						    (json_int_t)holds, "results_pruned", (json_int_t)results,
						    "fetch_cache_pruned", (json_int_t)cached, "templates_removed",
						    (json_int_t)templates));
	return SBX_EXIT_OK;
}

int sbx_cmd_cancel(const struct sbx_common_opts *o, const char *run_id)
{
	struct sbx_error err = { 0 };
	_cleanup_free_ char *dir = NULL;

	/* A malformed id is a usage error before any configuration is read. */
	if (!sbx_run_id_valid(run_id)) {
		sbx_error_set(&err, SBX_EXIT_USAGE, 0,
			      "cancel: malformed run id (expected 32 lowercase hex digits)");
		sbx_error_hint(&err, "a run id is the run_id of a run's manifest; "
				     "'sbx ps' lists the live runs you may cancel");
	} else if (state_dir_from_config(o, &dir, &err) == 0) {
		sbx_state_cancel(dir, run_id, &err);
	}
	if (err.code) {
		sbx_error_print(&err);
		if (o->json)
			sbx_cmd_json_print(sbx_cmd_json_error(
				json_pack("{s:s?}", "run_id", sbx_run_id_valid(run_id) ? run_id : NULL),
				&err));
		return err.code;
	}
	if (o->verbosity > 0)
		fprintf(stderr, "sbx: cancel: %s: signalled\n", run_id);
	if (o->json)
		return sbx_cmd_json_print(json_pack("{s:b, s:s, s:s}", "ok", 1, "run_id", run_id,
						    "signal", "SIGTERM"));
	return SBX_EXIT_OK;
}
