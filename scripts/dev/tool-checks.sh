# Sourced by the measuring scripts (choice-quality.sh, prediction-accuracy.sh,
# bench-server-streams.sh): what they need before a long run, checked up front.
# `cmlbed_binary WHO [VARIABLE]` sets $cmlbed to ${VARIABLE:-build/cmlbed} (VARIABLE
# default CMLBED), or says, as WHO, that it is not built and exits 2.
# `h5py_python WHO` sets $python to a Python with h5py: $PYTHON, else python3 on PATH,
# else Debian's /usr/bin/python3 (python3-h5py), or says so and exits 2.
cmlbed_binary() {
  local variable=${2:-CMLBED}
  cmlbed=${!variable:-build/cmlbed}
  [[ -x $cmlbed ]] || { echo "$1: no $cmlbed (build first, or set $variable)" >&2; exit 2; }
}

h5py_python() {
  python=${PYTHON:-python3}
  "$python" -c "import h5py" 2>/dev/null || python=/usr/bin/python3
  "$python" -c "import h5py" 2>/dev/null ||
    { echo "$1: needs Python with h5py (apt-get install python3-h5py)" >&2; exit 2; }
}
