/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * template-proto.h - the wire contract between the broker and
 * sbx-template, the process that holds a profile's interpreter with its
 * imports done and clones each run's pid 1 from itself.
 *
 * One SOCK_SEQPACKET connection per request, on the socket the broker
 * bound and handed to sbx-template (--listen FD).  The template takes a
 * connection only from its own uid (SO_PEERCRED); it closes any other.
 * The broker sends one struct sbx_template_request:
 *
 *   SPAWN   with SCM_RIGHTS fds, in this order: the setup and report
 *           socket, the payload's stdout and stderr pipes, [its stdin
 *           (SBX_TEMPLATE_HAS_STDIN)], [the run's cgroup directory
 *           (SBX_TEMPLATE_HAS_CGROUP)].  Replies: CLONED (with the
 *           child's pidfd as SCM_RIGHTS) or ERROR; after CLONED the
 *           connection stays open for the run, and the template (the
 *           init's parent, which reaps it) sends EXITED with the init's
 *           wait status and closes.  If the broker's end closes first,
 *           the template SIGKILLs the init: the broker died, and the
 *           sandbox dies with it.
 *   STATUS  one STATUS reply.
 *   STOP    the template stops accepting, unlinks its socket's path,
 *           lets running runs finish, exits.  It does the same by itself
 *           when idle too long, after max runs or max seconds, and on
 *           SIGTERM.
 *
 * A request whose digest is not the template's gets ERROR with
 * err = ESTALE: the profile, its prepared state or the binary changed.
 * STATUS and STOP may name no digest (all zero bytes): they are then
 * answered whatever the template's (STATUS's reply carries it).
 * Every record is a fixed-size struct of fixed-width fields, read whole
 * (a short or long record is refused); strings are NUL-terminated
 * within their arrays.  Both sides are built from one tree, so the
 * layout is that of this header on this machine.
 */
#ifndef SBX_TEMPLATE_PROTO_H
#define SBX_TEMPLATE_PROTO_H

#include <stdint.h>

#define SBX_TEMPLATE_MAGIC 0x73627874u /* "sbxt" */
#define SBX_TEMPLATE_VERSION 1u

/* Length of the digest the names use (hex), and its array with the NUL. */
#define SBX_TEMPLATE_DIGEST_LEN 16
#define SBX_TEMPLATE_DIGEST_SIZE (SBX_TEMPLATE_DIGEST_LEN + 1)

enum sbx_template_kind {
	SBX_TEMPLATE_SPAWN = 1,
	SBX_TEMPLATE_STATUS,
	SBX_TEMPLATE_STOP,
};

/* SPAWN's flags. */
#define SBX_TEMPLATE_HAS_STDIN (1u << 0)  /* a 4th fd: the payload's stdin */
#define SBX_TEMPLATE_HAS_CGROUP (1u << 1) /* a last fd: the run's cgroup dir */
#define SBX_TEMPLATE_OWNER_ID (1u << 2)   /* root's runs: clone as owner_uid */
#define SBX_TEMPLATE_FLAGS_ALL                                                 \
	(SBX_TEMPLATE_HAS_STDIN | SBX_TEMPLATE_HAS_CGROUP | SBX_TEMPLATE_OWNER_ID)

/* Most fds a SPAWN carries: sock, out, err, stdin, cgroup. */
#define SBX_TEMPLATE_MAX_FDS 5

struct sbx_template_request {
	uint32_t magic;     /* SBX_TEMPLATE_MAGIC */
	uint32_t version;   /* SBX_TEMPLATE_VERSION */
	uint32_t kind;      /* enum sbx_template_kind */
	uint32_t flags;     /* SPAWN: SBX_TEMPLATE_HAS_STDIN | ... */
	/* Root's runs (SBX_TEMPLATE_OWNER_ID): the id that owns the run's
	 * user namespace, as sandbox.c's become_owner() does for cold runs. */
	uint32_t owner_uid;
	char digest[SBX_TEMPLATE_DIGEST_SIZE]; /* the template's (STATUS, STOP: or empty) */
};

/* Numbered apart from the requests' kinds, so that mixing the two up
 * fails plainly. */
enum sbx_template_reply_kind {
	SBX_TEMPLATE_CLONED = 101, /* pid, in_cgroup; the pidfd as SCM_RIGHTS */
	SBX_TEMPLATE_EXITED,     /* status: the init's wait status */
	SBX_TEMPLATE_STATUS_REPLY,
	SBX_TEMPLATE_ERROR,      /* err, msg */
};

struct sbx_template_reply {
	uint32_t kind;      /* enum sbx_template_reply_kind */
	int32_t err;        /* ERROR: errno */
	int32_t pid;        /* CLONED: the init's pid in the template's pid ns
			     * (which is the broker's); STATUS: the template's
			     * own (SO_PEERCRED names the process that called
			     * listen(): the broker that bound the socket) */
	int32_t status;     /* EXITED: the init's wait status */
	uint32_t in_cgroup; /* CLONED: CLONE_INTO_CGROUP put it in the cgroup */
	/* STATUS: */
	int64_t started;    /* CLOCK_REALTIME seconds */
	int64_t last_used;  /* CLOCK_REALTIME seconds of the last SPAWN, or
			     * started */
	uint32_t runs;      /* SPAWNs cloned so far */
	uint32_t active;    /* runs whose init has not ended */
	uint32_t max_runs;
	char digest[SBX_TEMPLATE_DIGEST_SIZE];
	char msg[200];      /* ERROR: one line; STATUS: the interpreter */
};

/* The layout both sides rely on; a change here is a new version. */
_Static_assert(sizeof(struct sbx_template_request) == 40, "template request layout");
_Static_assert(sizeof(struct sbx_template_reply) == 272, "template reply layout");

#endif
