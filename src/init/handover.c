/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * handover.c - the init's side of the setup socket, apart from its
 * reports: what it hands the broker (a netlink socket of the new network
 * namespace, the directory fds of /work/in and /work/out, the proxy's
 * listener) and what it waits for from it (the go-ahead with the spec,
 * the word that lo is up, the word that the inputs are in).
 *
 * Its own file because these exchanges are the init's half of a protocol
 * whose other half is the broker's (sandbox.c, with netns.c for lo): the
 * order of the messages, on the init's side, is in one place.  A broker that
 * gives up or dies ends the init here with _exit(127) and no report.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "init-internal.h"
#include "spec.h"

/*
 * Pass a NETLINK_ROUTE socket of the new namespace to the broker, which
 * brings lo up over it (netns.c) right after the go-ahead, while this
 * process builds the root: the netlink round trips are off the start-up's
 * critical path.  The socket
 * is opened with this process's capabilities in the namespace, which the
 * kernel checks along with the broker's.
 */
void send_netlink(int sock)
{
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);

	if (fd < 0)
		fail(SBX_STAGE_NET, "netlink socket");
	if (sbx_send_fds(sock, "N", 1, &fd, 1) != 1)
		fail(SBX_STAGE_NET, "passing the netlink socket to the broker");
	close(fd);
}

/*
 * Wait for the broker's go-ahead: the uid/gid maps are written, the init
 * is in the run's cgroup, and the message carries the sealed memfd of the
 * sandbox's description, which the broker packed while this program
 * started.
 */
const struct sbx_spec *wait_for_go(int sock)
{
	const struct sbx_spec *spec;
	char go;
	int fd;
	ssize_t n = sbx_recv_fds(sock, &go, 1, &fd, 1);

	if (n != 1)
		_exit(127); /* the broker gave up, or died */
	if (fd < 0) {
		errno = EPROTO;
		fail(SBX_STAGE_SYNC, "the broker's go-ahead came without the sandbox's description");
	}
	spec = sbx_spec_map(fd);
	if (!spec)
		fail(SBX_STAGE_SYNC, "the sandbox's description is unreadable or malformed");
	close(fd);
	return spec;
}

/* Has the broker closed its end of @sock (it died)? */
bool broker_gone(int sock)
{
	struct pollfd p = { .fd = sock, .events = POLLRDHUP };

	return poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLRDHUP | POLLERR));
}

static int proxy_listen_fd = -1;

void setup_net(const struct sbx_spec *spec, int sock)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(SBX_PROXY_PORT),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	char byte;
	ssize_t n;

	/* The broker's word that lo is up (127.0.0.1 exists only then). */
	do
		n = read(sock, &byte, 1);
	while (n < 0 && errno == EINTR);
	if (n != 1)
		_exit(127); /* the broker could not bring lo up, or died */
	if (!spec->proxy_listener)
		return;
	/* An egress profile: the payload's only way out is this listener.
	 * It belongs to the sandbox's namespace (the only one the payload can
	 * reach) but is served by the broker, which gets it with the /work
	 * fds and accepts on it from outside; nothing is relayed in here.
	 * No SO_REUSEADDR or SO_REUSEPORT: nothing else may bind the port. */
	proxy_listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (proxy_listen_fd < 0 || bind(proxy_listen_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(proxy_listen_fd, 128) < 0)
		fail(SBX_STAGE_NET, "proxy listener on 127.0.0.1:%d", SBX_PROXY_PORT);
}

/*
 * Hand directory fds of /work/in and /work/out to the broker.  The broker
 * materializes the inputs through the first (it holds the store fds and
 * runs the archive helper) and collects outputs through the second after
 * the payload ends, without ever resolving a path inside the sandbox.
 * Then wait for its go-ahead: the inputs are complete.
 */
void hand_over_work(int sock)
{
	int fds[3] = { -1, -1, proxy_listen_fd };
	size_t nfds = proxy_listen_fd >= 0 ? 3 : 2;
	char byte;
	ssize_t n;

	fds[0] = open(NEWROOT "/work/in", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	fds[1] = open(NEWROOT "/work/out", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fds[0] < 0 || fds[1] < 0)
		fail(SBX_STAGE_INPUTS, "opening /work/in and /work/out");
	if (sbx_send_fds(sock, "W", 1, fds, nfds) != 1)
		fail(SBX_STAGE_INPUTS, "handing /work to the broker");
	close(fds[0]);
	close(fds[1]);
	/* The listener is the broker's alone from here on. */
	if (proxy_listen_fd >= 0)
		close(proxy_listen_fd);
	proxy_listen_fd = -1;
	do
		n = read(sock, &byte, 1);
	while (n < 0 && errno == EINTR);
	if (n != 1)
		_exit(127); /* the broker gave up (refused input, or died) */
}
