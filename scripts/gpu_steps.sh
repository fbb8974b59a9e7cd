# Sourced by the GPU-host result scripts, after they set $out (a folder) and $tarball (a path or
# empty): `step` logs a step and refreshes the tarball, so a call cut short by its time limit
# still returns what it measured; `b` runs one `ferry bench` with JSON and markdown kept beside
# its table.
step() {
  echo "== $(date -u +%T) $*" | tee -a "$out/steps.txt"
  [[ -n $tarball ]] && tar czf "$tarball" -C "$(dirname "$out")" "$(basename "$out")"
  return 0
}
b() {  # b NAME ARGS...
  local name=$1; shift
  step "ferry bench $*"
  echo "ferry bench $*" > "$out/$name.txt"
  timeout 300 ferry bench "$@" --json "$out/$name.json" --md "$out/$name.md" >> "$out/$name.txt" 2>&1
  echo "rc=$?" >> "$out/$name.txt"
}
