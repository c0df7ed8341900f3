# Sourced by the GPU scripts: step SECONDS NAME COMMAND... runs COMMAND
# under its own timeout, so one hang cannot eat the device call, and prints
# its name and exit status on stderr.
step() {
  local t=$1 name=$2
  shift 2
  echo "== $name" >&2
  timeout "$t" "$@"
  echo "exit $?" >&2
}
