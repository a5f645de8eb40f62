#!/usr/bin/env python3
"""Summarise scripts/bench/bench-startup.sh: per rank count, medians over ranks of the
start-up to round 1 (total and CPU seconds per phase), resident memory of the server
and the devices against the idle baseline, and the machine's memory in use. Needs h5py
and numpy (Debian's /usr/bin/python3).

usage: bench-startup-summary.py DIR N [N ...] [--json FILE]"""
import argparse
import json
import os
import sys

import h5py
import numpy as np

PHASES = ["load", "mpi_init", "config", "libtorch", "data", "model", "clocks", "results_file", "transport"]
MIB = 2.0**20


def median(values):
    return float(np.median(values)) if len(values) else float("nan")


def summarise(directory, n):
    with open(f"{directory}/idle-{n}.json") as f:
        idle = json.load(f)
    with open(f"{directory}/run-{n}.json") as f:
        run = json.load(f)
    with h5py.File(f"{directory}/run-{n}.h5", "r") as f:
        process = {name: f["process"][name][()] for name in f["process"]}
        round_wall = float(f["rounds"]["wall_s"][0])
    devices = slice(1, None)
    baseline_peak = median(idle["peak_rss_bytes"])
    result = {
        "ranks": n,
        "devices": n - 1,
        "mpirun_wall_s": run["mpirun_wall_s"],
        "round1_wall_s": round_wall,
        "startup_s_median": median(process["startup_s"]),
        "startup_s_max": float(np.max(process["startup_s"])),
        # Every rank's CPU seconds to round 1, summed: over the machine's cores, the least
        # wall time start-up could take on an otherwise idle machine.
        "startup_cpu_s_all_ranks": float(sum(np.sum(process[f"startup_{p}_cpu_s"]) for p in PHASES)),
        "idle_rank_cpu_s_all_ranks": float(np.sum(idle["load_cpu_s"]) + np.sum(idle["mpi_init_cpu_s"])
                                           + np.sum(idle["libtorch_cpu_s"])),
        "startup_cpu_s_median_device": {p: median(process[f"startup_{p}_cpu_s"][devices]) for p in PHASES},
        "startup_cpu_s_server": {p: float(process[f"startup_{p}_cpu_s"][0]) for p in PHASES},
        "startup_wall_s_median": {p: median(process[f"startup_{p}_s"]) for p in PHASES},
        "idle_rank": {
            "startup_s_median": median(idle["startup_s"]),
            "load_cpu_s_median": median(idle["load_cpu_s"]),
            "mpi_init_cpu_s_median": median(idle["mpi_init_cpu_s"]),
            "peak_rss_mib_median": baseline_peak / MIB,
        },
        "device_rss_at_round1_mib_median": median(process["rss_at_round1_bytes"][devices]) / MIB,
        "device_peak_rss_mib_median": median(process["peak_rss_bytes"][devices]) / MIB,
        "device_peak_rss_mib_max": float(np.max(process["peak_rss_bytes"][devices])) / MIB,
        "device_peak_above_idle_mib_max": (float(np.max(process["peak_rss_bytes"][devices])) - baseline_peak) / MIB,
        "server_peak_rss_mib": float(process["peak_rss_bytes"][0]) / MIB,
        "machine_memory_used_by_run_gib": (run["available_before_kib"] - run["available_lowest_kib"]) / 2.0**20,
        "pss_all_ranks_at_round1_gib": float(np.sum(process["pss_at_round1_bytes"])) / 2.0**30,
        "pss_all_ranks_at_end_gib": float(np.sum(process["pss_at_end_bytes"])) / 2.0**30,
        "device_pss_at_round1_mib_median": median(process["pss_at_round1_bytes"][devices]) / MIB,
        "run_cpu_s": run.get("cpu_s", float("nan")),
        "others_busy_cores": run.get("others_busy_cores", float("nan")),
    }
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory")
    parser.add_argument("ranks", nargs="+", type=int)
    parser.add_argument("--json", default="results/bench-startup.json")
    args = parser.parse_args()
    results = [summarise(args.directory, n) for n in args.ranks]
    cores = os.cpu_count() or 1
    print(f"ranks  others' cores  mpirun s  start-up s median/max (idle rank)  CPU s of all ranks to round 1 "
          f"/ {cores} cores (idle ranks)  round 1 s")
    for r in results:
        print(f"{r['ranks']:5d}  {r['others_busy_cores']:13.2f}  {r['mpirun_wall_s']:8.1f}"
              f"  {r['startup_s_median']:6.1f} / {r['startup_s_max']:6.1f} ({r['idle_rank']['startup_s_median']:6.1f})"
              f"  {r['startup_cpu_s_all_ranks']:7.1f} / {cores} = {r['startup_cpu_s_all_ranks'] / cores:6.1f}"
              f" ({r['idle_rank_cpu_s_all_ranks'] / cores:6.1f})  {r['round1_wall_s']:9.2f}")
    print("\nranks  device peak RSS MiB median/max (idle rank)  above idle  device Pss MiB  server peak MiB"
          "  Pss of all ranks GiB round 1/end  MemAvailable drop GiB")
    for r in results:
        print(f"{r['ranks']:5d}  {r['device_peak_rss_mib_median']:19.0f} / {r['device_peak_rss_mib_max']:4.0f}"
              f" ({r['idle_rank']['peak_rss_mib_median']:4.0f})  {r['device_peak_above_idle_mib_max']:10.0f}"
              f"  {r['device_pss_at_round1_mib_median']:14.0f}  {r['server_peak_rss_mib']:15.0f}"
              f"  {r['pss_all_ranks_at_round1_gib']:16.2f} / {r['pss_all_ranks_at_end_gib']:5.2f}"
              f"  {r['machine_memory_used_by_run_gib']:21.2f}")
    print("\nCPU seconds per rank by start-up phase (median device / server):")
    print("ranks  " + "  ".join(f"{p:>17s}" for p in PHASES))
    for r in results:
        cells = [f"{r['startup_cpu_s_median_device'][p]:8.3f}/{r['startup_cpu_s_server'][p]:8.3f}" for p in PHASES]
        print(f"{r['ranks']:5d}  " + "  ".join(cells))
    print("\nwall seconds per rank by start-up phase (median over ranks; includes waiting for the others):")
    print("ranks  " + "  ".join(f"{p:>12s}" for p in PHASES))
    for r in results:
        print(f"{r['ranks']:5d}  " + "  ".join(f"{r['startup_wall_s_median'][p]:12.2f}" for p in PHASES))
    with open(args.json, "w") as f:
        json.dump({"runs": results}, f, indent=1)
    print(f"\nwrote {args.json}")


if __name__ == "__main__":
    sys.exit(main())
