# Sourced: h5py_python NAME sets $python to a Python that has h5py (the python3 on PATH,
# else Debian's /usr/bin/python3), or exits 1 with a line naming NAME and the package.
h5py_python() {
  python=python3
  "$python" -c "import h5py" 2>/dev/null || python=/usr/bin/python3
  "$python" -c "import h5py" 2>/dev/null ||
    { echo "$1: needs h5py: apt-get install python3-h5py (Debian's /usr/bin/python3)" >&2; exit 1; }
}
