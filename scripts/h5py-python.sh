# Sourced by scripts that read results files. `h5py_python WHO` sets $python to a Python
# with h5py: $PYTHON, else python3 on PATH, else Debian's /usr/bin/python3 (python3-h5py);
# without one it says so, as WHO, and exits 2.
h5py_python() {
  python=${PYTHON:-python3}
  "$python" -c "import h5py" 2>/dev/null || python=/usr/bin/python3
  "$python" -c "import h5py" 2>/dev/null ||
    { echo "$1: needs Python with h5py (apt-get install python3-h5py)" >&2; exit 2; }
}
