/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * events.c - the JSON Lines event writer (see events.h).
 */
#include "config.h"

#include <fcntl.h>
#include <string.h>

#include "events.h"

struct sbx_events {
	int fd;        /* -1 when disabled */
	bool owns_fd;  /* false for stderr */
	bool warned;
	uint64_t t0_ns;
	char *run_id;
};

int sbx_events_open(const char *spec, const char *run_id, struct sbx_events **out,
		    struct sbx_error *err)
{
	struct sbx_events *ev;
	int fd = -1;

	if (spec && strcmp(spec, "-") != 0) {
		fd = open(spec, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOCTTY, 0644);
		if (fd < 0)
			return sbx_error_set(err, SBX_EXIT_USAGE, errno, "--events: %s: cannot open",
					     spec);
	}
	ev = sbx_xcalloc(1, sizeof(*ev));
	ev->t0_ns = sbx_now_mono_ns();
	ev->run_id = sbx_xstrdup(run_id);
	ev->fd = spec ? (fd >= 0 ? fd : STDERR_FILENO) : -1;
	ev->owns_fd = fd >= 0;
	*out = ev;
	return 0;
}

bool sbx_events_enabled(const struct sbx_events *ev)
{
	return ev && ev->fd >= 0;
}

uint64_t sbx_events_t_ms(const struct sbx_events *ev)
{
	return ev ? (sbx_now_mono_ns() - ev->t0_ns) / 1000000ull : 0;
}

void sbx_events_emit(struct sbx_events *ev, const char *event, json_t *extra)
{
	json_t *line;
	const char *key;
	json_t *value;
	_cleanup_free_ char *buf = NULL;
	char *text;
	size_t len;

	if (!sbx_events_enabled(ev)) {
		json_decref(extra);
		return;
	}
	/* Fixed members first, in this order, so lines read and grep well. */
	line = json_object();
	json_object_set_new(line, "run_id", json_string(ev->run_id));
	json_object_set_new(line, "t_ms", json_integer((json_int_t)sbx_events_t_ms(ev)));
	json_object_set_new(line, "event", json_string(event));
	if (json_is_object(extra)) {
		json_object_foreach(extra, key, value) {
			if (strcmp(key, "run_id") && strcmp(key, "t_ms") && strcmp(key, "event"))
				json_object_set(line, key, value);
		}
	}
	json_decref(extra);
	text = json_dumps(line, JSON_COMPACT);
	json_decref(line);
	if (!text)
		return;
	/* One write(2) for the whole line, newline included: with O_APPEND
	 * the kernel places it whole at the end of the file. */
	buf = sbx_xasprintf("%s\n", text);
	free(text);
	len = strlen(buf);
	if (write(ev->fd, buf, len) != (ssize_t)len && !ev->warned) {
		ev->warned = true;
		sbx_warn("--events: cannot write an event line: %s", strerror(errno ? errno : EIO));
	}
}

void sbx_events_close(struct sbx_events *ev)
{
	if (!ev)
		return;
	if (ev->owns_fd)
		close(ev->fd);
	free(ev->run_id);
	free(ev);
}
