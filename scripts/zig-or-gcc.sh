#!/bin/sh
# The linker cargo calls for x86_64-unknown-linux-gnu (.cargo/config.toml).
# It is the system's cc. Given the marker -spillway-glibc-floor=2.17 (which
# scripts/build-linux-x64-gnu.sh passes as a link-arg), it links the same
# objects with zig against glibc 2.17's symbol versions instead, through
# cargo-zigbuild's own `zig cc` wrapper, which drops the flags zig does not
# take. The marker rides in rustc's arguments, so cargo's fingerprint tells
# a floor link from a host link and never reuses one for the other.
#
# A host link of the release addon also keeps what it linked (the LTO'd
# objects, rustc's temporary folder, the arguments) in floor-link/
# beside it: the floor build then links those again with zig, in seconds,
# instead of running the addon's two-minute LTO a second time
# (scripts/build-linux-x64-gnu.sh checks they belong to the current addon).
floor=
out=
prev=
for a in "$@"; do
  case "$a" in
    -spillway-glibc-floor=*) floor=${a#-spillway-glibc-floor=} ;;
  esac
  [ "$prev" = "-o" ] && out=$a
  prev=$a
done
if [ -z "$floor" ]; then
  case "$out" in
    */x86_64-unknown-linux-gnu/release/deps/libspillway_node.so) ;;
    *) exec cc "$@" ;;
  esac
  stash="${out%/deps/libspillway_node.so}/floor-link"
  rm -rf "$stash"
  cc "$@" || exit $?
  # rustc's own folder for this link (its objects, symbols.o, the version
  # script): every argument naming a file in /…/rustcXXXX/ points into it.
  tmp=
  for a in "$@"; do
    case "$a" in
      */rustc*/*) tmp=${a%%/rustc*}; rest=${a#"$tmp"/}; tmp="$tmp/${rest%%/*}"; tmp=${tmp#*=}; break ;;
    esac
  done
  [ -n "$tmp" ] && [ -d "$tmp" ] || exit 0
  # The LTO'd objects sit beside the output until rustc deletes them after
  # this link: hard links keep them (a copy where links are refused).
  if ! { mkdir -p "$stash/objects" && cp -R "$tmp" "$stash/rustc"; }; then
    rm -rf "$stash"
    exit 0
  fi
  : >"$stash/args"
  for a in "$@"; do
    # One argument per line: rustc's link arguments hold no newline.
    case "$a" in
      *"$tmp"*) a=$(printf '%s' "$a" | sed "s#$tmp#@RUSTC@#g") ;;
      *.o)
        if [ -f "$a" ]; then
          b=$(basename "$a")
          ln "$a" "$stash/objects/$b" 2>/dev/null || cp "$a" "$stash/objects/$b" || { rm -rf "$stash"; exit 0; }
          a="@OBJECTS@/$b"
        fi
        ;;
    esac
    printf '%s\n' "$a" >>"$stash/args"
  done
  sha256sum <"$out" | cut -d' ' -f1 >"$stash/linked.sha256"
  exit 0
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
