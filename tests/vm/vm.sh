#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# vm.sh - run sbx's cgroup v2 scenarios on a real kernel, in a VM.
#
# This host may have cgroup v1; production hosts have v2 under systemd.  So
# the v2 suite boots Debian's own kernel (fetched with `apt-get download`,
# never installed on the host) with qemu, over the host's root shared
# read-only by 9p under an in-memory overlay, with systemd as pid 1 - the
# delegation users really get.  The guest runs tests/vm/guest.sh, which
# runs the scenarios and writes one TAP stream to a second, writable share;
# this script prints it as its own TAP output.
#
# Under TCG (no usable KVM) a guest is slow and can stall: every boot is
# bounded, a stall is recognized on the console (soft lockup, RCU stall,
# panic, or no progress for a while), and a stalled boot is retried once.
# A guest keeps about one host core busy, so the scenarios are split
# between two guests that run side by side, one vCPU each on a two-core
# host; their results are printed one guest after the other.
# A missing qemu or kernel package is a failure, not a skip.
#
# Environment: SBX_SRCDIR, SBX_BUILDDIR (set by `make check`);
# SBX_VM_DIR (work directory, default $SBX_BUILDDIR/vm), SBX_VM_SCENARIOS
# (space-separated scenario names, default all), SBX_VM_GUESTS (how many
# guests share them out, default 2; 1 on a one-core host), SBX_VM_TIMEOUT (seconds
# per boot, default 3000), SBX_VM_STALL (seconds without progress, default
# 240), SBX_VM_KERNEL (a kernel package name, default the newest
# linux-image-<version>-amd64 that linux-image-amd64 depends on),
# SBX_VM_DEB (the container scenario's sbx .deb; default: one built here
# from `make dist` without its tests).
set -u

: "${SBX_SRCDIR:?}" "${SBX_BUILDDIR:?}"
src=$(cd "$SBX_SRCDIR" && pwd)
bld=$(cd "$SBX_BUILDDIR" && pwd)
vmdir=${SBX_VM_DIR:-$bld/vm}
timeout=${SBX_VM_TIMEOUT:-3000}
stall=${SBX_VM_STALL:-240}
# The default list; guest.sh runs the list it is given.
scenarios=${SBX_VM_SCENARIOS:-root-cgroup scope service host parent container template}

bail() { echo "Bail out! $*"; exit 1; }
note() { echo "# $*"; }

for c in qemu-system-x86_64 busybox dpkg-deb apt-get; do
	command -v "$c" >/dev/null 2>&1 || bail "required tool '$c' is missing (tools/install-deps test installs it)"
done
[ "$(id -u)" -eq 0 ] || bail "the VM suite runs as root (the guest's tests create users and cgroups)"
[ -x "$bld/sbx" ] && [ -x "$bld/sbx-init" ] || bail "$bld/sbx is not built"
[ -x "$bld/tests/probe/sbx-probe" ] || bail "$bld/tests/probe/sbx-probe is not built"
mkdir -p "$vmdir" || bail "cannot create $vmdir"

# --- the kernel: Debian's package, unpacked, never installed -------------
kernel_pkg() {
	if [ -n "${SBX_VM_KERNEL:-}" ]; then echo "$SBX_VM_KERNEL"; return; fi
	apt-cache depends linux-image-amd64 2>/dev/null |
		sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*-amd64\)$/\1/p' | head -n1
}
pkg=$(kernel_pkg)
[ -n "$pkg" ] || bail "cannot tell which kernel package linux-image-amd64 names (apt-get update?)"
kdir="$vmdir/$pkg"
if [ ! -f "$kdir/.unpacked" ]; then
	rm -rf "$kdir" && mkdir -p "$kdir" || bail "cannot create $kdir"
	# apt's download sandbox user cannot write a root-only directory.
	chmod 0755 "$kdir"
	( cd "$kdir" && apt-get download -q "$pkg" >download.log 2>&1 ) ||
		bail "apt-get download $pkg failed: $(tail -n 2 "$kdir/download.log")"
	dpkg-deb -x "$kdir"/*.deb "$kdir/root" || bail "cannot unpack $pkg"
	rm -f "$kdir"/*.deb
	touch "$kdir/.unpacked"
fi
vmlinuz=$(ls "$kdir"/root/boot/vmlinuz-* 2>/dev/null | head -n1)
kver=${vmlinuz##*/vmlinuz-}
[ -f "$vmlinuz" ] || bail "no vmlinuz in $pkg"
mods="$kdir/root/lib/modules/$kver/kernel"

# --- the container scenario's image, built here, never in the guest ------
# The guest is many times slower: the .deb and the image's root file system
# (deploy/container/build-image, mmdebstrap) are made on this host and the
# guest reads them over the shared root.  Reused while the .deb, the
# Containerfile and the build script are the same.
ctrdir=
case " $scenarios " in *" container "*)
	for c in podman crun mmdebstrap dpkg-buildpackage python3; do
		command -v "$c" >/dev/null 2>&1 || bail "the container scenario needs '$c' (tools/install-deps test installs it)"
	done
	ctrdir="$vmdir/container"
	# The rootless user's uid and the first of its 65536 subordinate ids.
	ctr_ids="2990 300000"
	mkdir -p "$ctrdir" || bail "cannot create $ctrdir"
	deb=${SBX_VM_DEB:-}
	if [ -z "$deb" ]; then
		rm -rf "$ctrdir/deb" && mkdir -p "$ctrdir/deb" || bail "cannot create $ctrdir/deb"
		( cd "$bld" && make -s dist >"$ctrdir/deb/dist.log" 2>&1 ) ||
			bail "make dist failed: $(tail -n 3 "$ctrdir/deb/dist.log")"
		tar -xzf "$(ls -t "$bld"/sbx-*.tar.gz | head -n1)" -C "$ctrdir/deb" || bail "cannot unpack the tarball"
		( cd "$ctrdir"/deb/sbx-*/ && DEB_BUILD_OPTIONS="nocheck parallel=$(nproc)" \
			dpkg-buildpackage -us -uc -b >"$ctrdir/deb/build.log" 2>&1 ) ||
			bail "the .deb did not build: $(tail -n 3 "$ctrdir/deb/build.log")"
		deb=$(ls "$ctrdir"/deb/sbx_*_"$(dpkg --print-architecture)".deb)
	fi
	key=$(cat "$deb" "$src/deploy/container/Containerfile" "$src/deploy/container/build-image" \
		"$src/deploy/container/sbx.json" | sha256sum | cut -d' ' -f1)
	if [ "$(cat "$ctrdir/image/key" 2>/dev/null)" != "$key" ]; then
		t0=$(date +%s)
		rm -rf "$ctrdir/image"
		"$src/deploy/container/build-image" --deb "$deb" --out "$ctrdir/image" --rootfs-only ||
			bail "the container image's root file system did not build"
		# The image itself, from the Containerfile, into a store of its
		# own that the guest reads as an additional image store: a
		# podman build or import under TCG takes minutes.  overlay: the
		# guest's containers then use the layers in place, where vfs
		# would copy the whole image per container.
		rm -rf "$ctrdir/store"
		podman --root "$ctrdir/store" --runroot "$ctrdir/store-run" --storage-driver overlay \
			build --pull=never --network=none -q -t localhost/sbx:vm \
			-f "$ctrdir/image/Containerfile" "$ctrdir/image" >"$ctrdir/image/podman-build.log" 2>&1 ||
			bail "podman build failed: $(tail -n 3 "$ctrdir/image/podman-build.log")"
		rm -rf "$ctrdir/store-run" "$ctrdir/store-user"
		echo "$key" > "$ctrdir/image/key"
		note "container image: rootfs.tar and the image built in $(( $(date +%s) - t0 ))s"
	fi
	chmod -R a+rX "$ctrdir/image" "$ctrdir/store"
	# The rootless user's additional image store: a copy of that store
	# with every layer's owners moved into the user's ids (uid 0 to the
	# user, k to subordinate id SUB+k-1), so that in the user's namespace
	# it reads as a store of the user's own.  The guest makes the user
	# with these ids.  A `podman load` of the image in the guest instead
	# takes about 2 minutes under TCG; this copy takes seconds here.
	if [ ! -f "$ctrdir/store-user/.shifted" ]; then
		rm -rf "$ctrdir/store-user"
		cp -a "$ctrdir/store" "$ctrdir/store-user" || bail "cannot copy the image store"
		python3 - "$ctrdir/store-user/overlay" $ctr_ids <<'E' || bail "cannot move the user store's owners"
import os, stat, sys
top, uid, sub = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def shift(i):
    if i == 0:
        return uid
    if i > 65536:
        sys.exit("id %d outside the user's 65536 subordinate ids" % i)
    return sub + i - 1
seen = set()
def one(p):
    st = os.lstat(p)
    if (st.st_dev, st.st_ino) in seen:
        return
    seen.add((st.st_dev, st.st_ino))
    caps = None
    if stat.S_ISREG(st.st_mode):
        try:
            caps = os.getxattr(p, "security.capability", follow_symlinks=False)
        except OSError:
            pass
    os.lchown(p, shift(st.st_uid), shift(st.st_gid))
    if not stat.S_ISLNK(st.st_mode):
        os.chmod(p, stat.S_IMODE(st.st_mode))  # chown drops set-id bits
    if caps is not None:
        os.setxattr(p, "security.capability", caps, follow_symlinks=False)
one(top)
for d, dirs, files in os.walk(top):
    for n in dirs + files:
        one(os.path.join(d, n))
E
		touch "$ctrdir/store-user/.shifted"
	fi
	;;
esac

# --- which guest runs which scenarios ------------------------------------
# A TCG guest keeps about one host core busy (its tests are shell scripts,
# mostly one process at a time), so on a host with two cores or more the
# scenarios are split between SBX_VM_GUESTS guests (default 2; 1 on a
# one-core host) booted side by side, and the host's cores are
# shared out as their vCPUs: together the guests never ask for more cores
# than there are, since a vCPU descheduled while it holds a guest lock is
# what makes a TCG guest report a soft lockup.  The split is by how long
# each scenario typically takes in a guest here (seconds; unknown: 300),
# longest first, each to the guest with the least so far; each guest runs
# its scenarios in the order given.
ncpu=$(nproc 2>/dev/null || echo 1)
guests=${SBX_VM_GUESTS:-$(( ncpu >= 2 ? 2 : 1 ))}
case $guests in ''|*[!0-9]*|0) bail "SBX_VM_GUESTS must be a positive number, not '$guests'" ;; esac
groups=$(echo "$scenarios" | tr ' ' '\n' | awk -v g="$guests" '
	BEGIN { w["root-cgroup"] = 1150; w["extract"] = 440
		w["scope"] = 400; w["service"] = 400; w["container"] = 400; w["bench"] = 120
		w["host"] = 40; w["parent"] = 300; w["template"] = 900; w["template-full"] = 2700 }
	NF { n++; name[n] = $1; len[n] = ($1 in w) ? w[$1] : 300; o[n] = n }
	END {
		if (g > n) g = n
		# longest first (a stable insertion sort of the indices)
		for (i = 2; i <= n; i++)
			for (j = i; j > 1 && len[o[j]] > len[o[j - 1]]; j--) { t = o[j]; o[j] = o[j - 1]; o[j - 1] = t }
		for (i = 1; i <= n; i++) {
			b = 1
			for (k = 2; k <= g; k++) if (load[k] < load[b]) b = k
			load[b] += len[o[i]]; at[o[i]] = b
		}
		for (k = 1; k <= g; k++) {
			line = ""
			for (i = 1; i <= n; i++) if (at[i] == k) line = line (line == "" ? "" : " ") name[i]
			print line
		}
	}')
nguests=$(echo "$groups" | grep -c .)
smp=$(( ncpu / nguests ))
[ "$smp" -ge 1 ] || smp=1
[ "$smp" -le 2 ] || smp=2

# --- the initramfs: busybox, the 9p/overlay modules, and our init --------
ir="$vmdir/initramfs"
rm -rf "$ir" && mkdir -p "$ir/bin" "$ir/modules" "$ir/proc" "$ir/sys" "$ir/dev" || bail "initramfs dir"
cp "$(command -v busybox)" "$ir/bin/busybox" || bail "busybox"
for a in sh mount umount insmod mkdir cp switch_root poweroff cat echo sleep; do
	ln -s busybox "$ir/bin/$a"
done
for m in fs/netfs/netfs fs/fscache/fscache net/9p/9pnet drivers/virtio/virtio \
	 drivers/virtio/virtio_ring drivers/virtio/virtio_pci_legacy_dev \
	 drivers/virtio/virtio_pci_modern_dev drivers/virtio/virtio_pci \
	 net/9p/9pnet_virtio fs/9p/9p fs/overlayfs/overlay fs/fuse/fuse; do
	f=$(ls "$mods/$m.ko"* 2>/dev/null | head -n1)
	[ -n "$f" ] || bail "module $m missing from $pkg"
	case $f in
	*.xz) xz -dc "$f" > "$ir/modules/${m##*/}.ko" ;;
	*.zst) zstd -qdc "$f" > "$ir/modules/${m##*/}.ko" ;;
	*) cp "$f" "$ir/modules/" ;;
	esac || bail "cannot copy module $m"
done
cp "$src/tests/vm/initramfs-init" "$ir/init" && chmod 0755 "$ir/init" || bail "init"
# The trees the guest must see even below its own /tmp.
printf 'SBX_VM_TREES="%s %s%s"\n' "$src" "$bld" "${ctrdir:+ $ctrdir}" > "$ir/vm.conf"
# What the guest gets on top of the host's root (copied into the overlay).
ov="$ir/overlay"
mkdir -p "$ov/etc/systemd/system" "$ov/etc/systemd/system/sbx-vm.target.wants"
: > "$ov/etc/fstab"                   # no host disks, no remote file systems
echo "sbx-vm" > "$ov/etc/hostname"
# Host services the test target must not start (clock sync, crash store).
for u in systemd-timesyncd.service systemd-pstore.service postgresql.service \
	 getty@tty1.service serial-getty@ttyS0.service; do
	ln -s /dev/null "$ov/etc/systemd/system/$u"
done
cat > "$ov/etc/systemd/system/sbx-vm.target" <<EOF
[Unit]
Description=sbx VM test run
Requires=basic.target sbx-vm-tests.service
After=basic.target
AllowIsolate=yes
EOF
# initrd G SCENARIOS: guest G's initramfs, whose test unit runs SCENARIOS.
initrd() {
	cat > "$ov/etc/systemd/system/sbx-vm-tests.service" <<EOF
[Unit]
Description=sbx cgroup v2 scenarios
After=basic.target systemd-logind.service dbus.service
Wants=systemd-logind.service dbus.service
SuccessAction=poweroff-force
FailureAction=poweroff-force

[Service]
Type=oneshot
Environment=SBX_SRCDIR=$src SBX_BUILDDIR=$bld "SBX_VM_SCENARIOS=$2"
Environment=SBX_VM_CONTAINER_DIR=$ctrdir "SBX_VM_CONTAINER_IDS=${ctr_ids:-}"
ExecStart=/bin/sh $src/tests/vm/guest.sh
StandardOutput=tty
StandardError=tty
TTYPath=/dev/ttyS0
TimeoutStartSec=infinity
EOF
	( cd "$ir" && find . | busybox cpio -o -H newc 2>/dev/null ) > "$vmdir/initrd.$1.cpio"
}
g=0
echo "$groups" | while IFS= read -r grp; do
	g=$((g + 1))
	initrd "$g" "$grp" || exit 1
done || bail "cannot pack the initramfs"

# --- boot ---------------------------------------------------------------
accel=tcg
if grep -qw -e kvm_intel -e kvm_amd /proc/modules 2>/dev/null && [ -w /dev/kvm ]; then accel=kvm; fi

# boot G N: guest G's Nth bounded boot; returns 0 when the guest reported,
# 2 on a stall, 3 when it ran out of its bound, 1 on another failure.
boot() {
	res="$vmdir/results.$1.$2" con="$vmdir/console.$1.$2.log"
	rm -rf "$res" && mkdir -p "$res" || return 1
	chmod 0777 "$res"
	: > "$con"
	qemu-system-x86_64 -accel "$accel" -machine q35 -cpu max -smp "$smp" -m 3072 \
		-nographic -no-reboot -nic none \
		-kernel "$vmlinuz" -initrd "$vmdir/initrd.$1.cpio" \
		-append "console=ttyS0 panic=-1 quiet loglevel=4 systemd.unit=sbx-vm.target systemd.show_status=0 systemd.log_target=console systemd.log_level=warning" \
		-fsdev local,id=hostroot,path=/,security_model=passthrough,readonly=on,multidevs=remap \
		-device virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot \
		-fsdev local,id=results,path="$res",security_model=passthrough,multidevs=remap \
		-device virtio-9p-pci,fsdev=results,mount_tag=results \
		</dev/null >"$con" 2>&1 &
	qpid=$!
	start=$(date +%s) last=$start lastsize=0 why= done_at=
	while kill -0 "$qpid" 2>/dev/null; do
		sleep 2
		now=$(date +%s)
		size=$(( $(wc -c < "$con") + $(cat "$res"/*.tap 2>/dev/null | wc -c) ))
		[ "$size" -ne "$lastsize" ] && { lastsize=$size; last=$now; }
		# Reported: give the power-off a moment, then end it ourselves.
		if [ -f "$res/done" ]; then
			[ -n "${done_at:-}" ] || done_at=$now
			if [ $((now - done_at)) -ge 30 ]; then kill -9 "$qpid" 2>/dev/null; break; fi
			continue
		fi
		if grep -q -e 'soft lockup' -e 'self-detected stall' -e 'Kernel panic' "$con"; then
			why="the guest stalled: $(grep -m1 -e 'soft lockup' -e 'self-detected stall' -e 'Kernel panic' "$con")"
		elif [ $((now - last)) -ge "$stall" ]; then
			why="no progress from the guest for ${stall}s"
		elif [ $((now - start)) -ge "$timeout" ]; then
			# Not a stall: a slow guest is as slow the second time,
			# and a retry would only double the wait.
			kill -9 "$qpid" 2>/dev/null
			wait "$qpid" 2>/dev/null
			note "guest $1, boot $2: the boot took over ${timeout}s (not retried: the guest was progressing)"
			return 3
		fi
		if [ -n "$why" ]; then
			kill -9 "$qpid" 2>/dev/null
			wait "$qpid" 2>/dev/null
			note "guest $1, boot $2: $why"
			return 2
		fi
	done
	wait "$qpid" 2>/dev/null
	note "guest $1, boot $2: $(( $(date +%s) - start ))s under $accel, $smp vCPU"
	[ -f "$res/done" ] || { note "guest $1, boot $2: the guest ended without reporting"; return 1; }
	return 0
}

# guest G: guest G's boot, a stalled one retried once; what became of it
# (status, results dir, console log) in $vmdir/guest.G.
guest() {
	trap 'kill -9 "$qpid" 2>/dev/null; exit 1' TERM
	boot "$1" 1; r=$?
	if [ "$r" -eq 2 ]; then
		tail -n 20 "$con" | sed "s/^/#   guest $1: /"
		note "guest $1: retrying once"
		boot "$1" 2; r=$?
	fi
	echo "$r $res $con" > "$vmdir/guest.$1"
}

g=0
pids=
echo "$groups" > "$vmdir/groups"
while IFS= read -r grp; do
	g=$((g + 1))
	note "guest $g: $grp"
	rm -f "$vmdir/guest.$g"
	guest "$g" &
	pids="$pids $!"
done < "$vmdir/groups"
# A stop of this script stops the guests' watchers (and so their qemu).
trap 'kill $pids 2>/dev/null' EXIT INT TERM
wait

# One TAP stream: each guest's results in turn, renumbered; a guest that
# did not complete ends it with a bail-out after the others' results.
total=0 failed=
g=0
while IFS= read -r grp; do
	g=$((g + 1))
	r=1 res= con=
	[ -f "$vmdir/guest.$g" ] && read -r r res con < "$vmdir/guest.$g"
	if [ "$r" -ne 0 ]; then
		[ -n "$con" ] && tail -n 30 "$con" | sed "s/^/#   guest $g: /"
		failed="$failed $g"
		continue
	fi
	echo "# guest $g: $grp"
	awk -v off="$total" -v count="$vmdir/count" '
		/^ok [0-9]+/ { n++; sub(/^ok [0-9]+/, "ok " (off + n)); print; next }
		/^not ok [0-9]+/ { n++; sub(/^not ok [0-9]+/, "not ok " (off + n)); print; next }
		/^1\.\.[0-9]+$/ { next }
		{ print }
		END { print off + n > count }' "$res/guest.tap"
	total=$(cat "$vmdir/count")
done < "$vmdir/groups"
trap - EXIT INT TERM
[ -z "$failed" ] || bail "the VM did not complete (guest$failed)"
echo "1..$total"
exit 0
