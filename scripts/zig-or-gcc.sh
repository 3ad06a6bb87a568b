#!/bin/sh
# The linker cargo calls for x86_64-unknown-linux-gnu (.cargo/config.toml).
# It is the system's cc. Given the marker -spillway-glibc-floor=2.17 (which
# scripts/build-linux-x64-gnu.sh passes as a link-arg), it links the same
# objects with zig against glibc 2.17's symbol versions instead, through
# cargo-zigbuild's own `zig cc` wrapper, which drops the flags zig does not
# take. The marker rides in rustc's arguments, so cargo's fingerprint tells
# a floor link from a host link and never reuses one for the other.
floor=
for a in "$@"; do
  case "$a" in
    -spillway-glibc-floor=*) floor=${a#-spillway-glibc-floor=} ;;
  esac
done
if [ -z "$floor" ]; then
  exec cc "$@"
fi
if [ -z "${SPILLWAY_ZIGBUILD:-}" ]; then
  echo "scripts/zig-or-gcc.sh: a glibc $floor link needs SPILLWAY_ZIGBUILD (run scripts/build-linux-x64-gnu.sh)" >&2
  exit 1
fi
for a in "$@"; do
  shift
  case "$a" in
    -spillway-glibc-floor=*) ;;
    *) set -- "$@" "$a" ;;
  esac
done
exec "$SPILLWAY_ZIGBUILD" zig cc -- -g -fno-sanitize=all -target "x86_64-linux-gnu.$floor" "$@"
