#!/usr/bin/env bash
# Collects programs, with the shared libraries they load that another Linux machine may lack, into
# one folder that runs there:
#   scripts/bundle_binary.sh OUT_DIR PROGRAM...
#   LD_LIBRARY_PATH=OUT_DIR/lib OUT_DIR/bin/PROGRAM       (on the other machine)
# Each PROGRAM is copied to OUT_DIR/bin, and every library the dynamic loader resolves for it (ldd:
# those it names and those they name in turn) to OUT_DIR/lib, but for the ones every machine that
# runs it has its own of: the C library and its loader (glibc's parts must match each other),
# libgcc_s and libstdc++ (the compiler's runtime of the base system), and the NVIDIA driver's
# libcuda and libnvidia-* (they must match the machine's kernel module). A library that cannot be
# found here is an error, naming it: the bundle would not run either.
# Exit codes: 0 done, 1 a library the loader cannot find, 2 a wrong argument (no such program).
set -euo pipefail
if (($# < 2)); then
  echo "usage: scripts/bundle_binary.sh OUT_DIR PROGRAM..." >&2
  exit 2
fi
out=$1
shift
# Names of the libraries left to the machine that runs the bundle (see above).
system='^(linux-vdso|linux-gate|ld-linux[^ ]*|libc|libm|libmvec|libdl|libpthread|librt|libresolv|libutil|libgcc_s|libstdc\+\+|libcuda|libnvidia-[^ ]*)\.so'
mkdir -p "$out/bin" "$out/lib"
for program in "$@"; do
  if [[ ! -f $program ]]; then
    echo "bundle_binary: no such program: $program" >&2
    exit 2
  fi
  if ! needed=$(ldd "$program" 2>&1); then
    echo "bundle_binary: $program: ldd cannot list its libraries (${needed%%$'\n'*})" >&2
    exit 2
  fi
  missing=$(awk '/=> not found/ {print $1}' <<<"$needed" | tr '\n' ' ')
  if [[ -n $missing ]]; then
    echo "bundle_binary: $program needs ${missing% } and the loader cannot find it here" >&2
    exit 1
  fi
  cp -L "$program" "$out/bin/"
  # "name => /path (address)": a library found by name; the loader itself is a bare path.
  while read -r name path; do
    [[ $name =~ $system ]] && continue
    target="$out/lib/$name"
    if [[ -e $target ]]; then
      cmp -s "$path" "$target" ||
        echo "bundle_binary: $program loads $path, another $name than the bundle's; keeping the first" >&2
      continue
    fi
    cp -L "$path" "$target"
  done < <(awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' <<<"$needed")
done
echo "bundle_binary: $# program(s) in $out/bin, $(find "$out/lib" -maxdepth 1 -type f | wc -l) libraries in $out/lib" \
  "($(du -sh "$out" | cut -f1))"
