# Sourced by the scripts: lets Open MPI's mpirun run as root (CI, containers) and place
# more ranks than cores, which a single machine emulating many devices needs.
if [[ $(id -u) -eq 0 ]]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
export OMPI_MCA_rmaps_base_oversubscribe=1
