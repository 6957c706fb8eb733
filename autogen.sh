#!/bin/sh
# Generate the build system from configure.ac and Makefile.am.
set -e
cd "$(dirname "$0")"
mkdir -p m4 build-aux
autoreconf --install --force
# The TAP driver that the test harness uses ships with automake.
cp -f "$(automake --print-libdir)/tap-driver.sh" build-aux/tap-driver.sh
