/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz-ps.c - libFuzzer entry point for what `sbx ps` reads of a run's
 * entry: its state.json and the stage record in its lock file.  Root's
 * `sbx ps` reads entries in directories other users write, so every byte
 * is hostile.  Input: one flag byte (bit 0: the lock is held), one length
 * byte, that many bytes of stage record, then state.json.  Properties: an
 * entry that parses names the run and owner asked for, its state is one of
 * the documented words ("stale" when the lock is free), and the table and
 * JSON made of it hold no control character but the line ends.
 */
#include "fuzz-util.h"

#include "ps.h"

static const char run_id[] = "01a231b8682cea951b1832b1bd93a971";
static const char *const states[] = { "queued", "materializing", "running", "terminating",
				      "collecting", "cleaning", "starting", "unknown", "stale" };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sbx_ps_entry e;
	struct sbx_error err = { 0 };
	size_t lock_n;
	bool live, known = false;
	char *table, *json;

	if (size < 2)
		return 0;
	live = data[0] & 1;
	lock_n = data[1];
	if (lock_n > size - 2)
		lock_n = size - 2;
	if (sbx_ps_entry_parse(run_id, 0, (const char *)data + 2 + lock_n, size - 2 - lock_n,
			       (const char *)data + 2, lock_n, live, &e, &err) < 0) {
		fuzz_check_error(&err, SBX_EXIT_SOFTWARE);
		return 0;
	}
	fuzz_assert(strcmp(e.run_id, run_id) == 0 && e.uid == 0);
	for (size_t i = 0; i < sizeof(states) / sizeof(states[0]); i++)
		known = known || strcmp(e.state, states[i]) == 0;
	fuzz_assert(known && (live || strcmp(e.state, "stale") == 0));

	struct sbx_ps_list l = { .v = &e, .n = 1 };
	table = sbx_ps_table(&l, e.started_ms + 1000);
	fuzz_assert(table);
	for (const unsigned char *p = (const unsigned char *)table; *p; p++)
		fuzz_assert(*p == '\n' || (*p >= 0x20 && *p != 0x7f));
	json_t *j = sbx_ps_json(&l, e.started_ms + 1000);
	fuzz_assert(j && json_array_size(j) == 1);
	json = json_dumps(j, JSON_COMPACT);
	fuzz_assert(json);
	free(json);
	json_decref(j);
	free(table);
	free(e.user);
	free(e.principal);
	free(e.profile);
	return 0;
}
