"""Whether a run's times are the emulated system's or the host's: the verdict cmlbed
writes into every results file (root attributes `emulation`, `emulation_reasons`,
`emulation_placement`; docs/explanation/fidelity.md), per run and per group of runs."""

from .errors import NotFaithful

# Worse to the right; a group is as good as its worst run.
ORDER = ("simulated", "faithful", "unknown", "degraded", "broken")


def verdict(run):
    """'faithful', 'degraded' or 'broken'; 'simulated' for a `cmlbed simulate` file (a
    prediction, not an emulation); 'unknown' for a file written before cmlbed judged."""
    if int(run.attrs.get("simulated", 0) or 0):
        return "simulated"
    value = run.attrs.get("emulation")
    return str(value) if value is not None else "unknown"


def reasons(run):
    """What failed, one entry per rule (empty when faithful or unknown)."""
    text = str(run.attrs.get("emulation_reasons", "") or "")
    return [line for line in text.split("\n") if line]


def placement(run):
    return str(run.attrs.get("emulation_placement", "") or "")


def worst(verdicts):
    return max(verdicts, key=ORDER.index) if verdicts else "unknown"


def trusted(level):
    return level in ("faithful", "simulated")


def note(runs):
    """Lines naming each run whose times are not the emulated system's, and why."""
    lines = []
    for run in runs:
        level = verdict(run)
        if trusted(level):
            continue
        if level == "unknown":
            why = "written by a cmlbed that did not judge its emulation"
        else:
            why = "; ".join(reasons(run)) or "no reason recorded"
        lines.append("emulation %s: %s: %s" % (level, run.name, why))
    if not lines:
        return ""
    return ("Emulation (docs/explanation/fidelity.md): the times of these runs are partly this "
            "host's, not the emulated system's:\n" + "".join("  " + line + "\n" for line in lines))


def require_faithful(runs):
    """Raises NotFaithful (exit 2, one line) when a run is not faithful."""
    failed = ["%s (%s)" % (run.name, verdict(run)) for run in runs if not trusted(verdict(run))]
    if failed:
        raise NotFaithful("--require-faithful: %d of %d runs are not faithful emulations: %s "
                          "(reasons: cmlbed-report summary without --require-faithful)"
                          % (len(failed), len(runs), ", ".join(failed)))


LEVEL_NAMES = {0: "faithful", 1: "degraded", 2: "broken"}


def marks(run):
    """What did not hold, per round and rank, from the /rounds columns: a list of dicts
    (row: the /rounds row, round, rank, level: the round's verdict, overran: held stages
    that ran long, overrun_s, runqueue_s) for every rank with a held stage that overran,
    and for the server (rank 0) of every round that is not faithful. Empty for files without the columns."""
    rows = run.rounds
    names = rows.dtype.names
    if "emulation" not in names or "paced_overran" not in names:
        return []
    out = []
    for row, r in enumerate(rows):
        level = int(r["emulation"])
        for rank in range(run.mpi_size):
            overran = float(r["paced_overran"][rank])
            # Every rank whose held stages overran; the server also for the round's verdict.
            if not overran > 0 and not (rank == 0 and level > 0):
                continue
            out.append({"row": row, "round": int(r["round"]), "rank": rank,
                        "level": LEVEL_NAMES.get(level, "not judged"),
                        "overran": 0 if overran != overran else int(overran),
                        "overrun_s": float(r["paced_overrun_s"][rank]),
                        "runqueue_s": float(r["runqueue_s"][rank]),
                        "t_ns": int(r["t_start_ns"])})
    return out


def title_note(run):
    """'emulation broken: rounds 0, 1 (reason)' for a picture's title where the run was
    judged degraded or broken; '' otherwise."""
    level = verdict(run)
    if level not in ("degraded", "broken"):
        return ""
    rounds = sorted({m["round"] for m in marks(run) if m["level"] in ("degraded", "broken")})
    why = reasons(run)
    return "emulation %s%s%s" % (level, (": rounds " + ", ".join(str(r) for r in rounds)) if rounds else "",
                                 (" (" + why[0][:90] + ("..." if len(why[0]) > 90 else "") + ")") if why else "")
