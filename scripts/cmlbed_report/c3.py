"""Accuracy under a bandwidth and a client-compute budget (`cmlbed-report c3`), the
numbers AdaSplit (Chopra et al., arXiv 2112.01637) scores methods by, from a run's
/rounds table. What each number means: docs/explanation/c3-accounting.md.

The paper's C3-Score combines accuracy with the two budgets by a formula we did not
have; nothing here is called a C3-Score. The ratio accuracy / (TFLOPs x GB) printed
below is the one in the authors' notebook, labelled as such."""

import json
import math

import numpy as np


RATIO_LABEL = "authors' notebook ratio (not the paper's C3-Score)"


def cumulative_traffic(run):
    """Bytes that crossed the links (up + down, all devices) by the end of each round."""
    return np.cumsum(run.rounds["bytes_up"].astype(float) + run.rounds["bytes_down"])


def cumulative_client_flops(run):
    """Training FLOPs of all devices (ranks >= 1) by the end of each round; None when
    the file predates the flops column."""
    flops = run.per_rank("flops")
    if flops is None:
        return None
    return np.cumsum(flops[:, 1:].sum(axis=1))


def _evaluated(run):
    return ~np.isnan(run.rounds["test_accuracy"].astype(float))


def _last_evaluated(run, within):
    """(index, accuracy) of the last evaluated round among the first `within` rounds,
    or (None, None)."""
    evaluated = np.flatnonzero(_evaluated(run)[:within])
    if len(evaluated) == 0:
        return None, None
    i = int(evaluated[-1])
    return i, float(run.rounds["test_accuracy"][i])


def _device_accuracies(run, i):
    if i is None or not run.has_column("device_accuracy"):
        return None
    values = run.per_rank("device_accuracy")[i, 1:]
    return None if np.all(np.isnan(values)) else [None if math.isnan(v) else float(v)
                                                  for v in values]


def budget_numbers(run, bandwidth_budget, compute_budget):
    """Everything `c3` prints for one run, as plain Python values (the JSON output).
    Budgets in bytes and FLOPs."""
    rounds = run.rounds
    n = len(rounds)
    traffic = cumulative_traffic(run)
    client = cumulative_client_flops(run)
    final_i, final_acc = _last_evaluated(run, n)
    total_bytes = float(traffic[-1])
    total_flops = float(client[-1]) if client is not None else math.nan

    # The budgets hold for a prefix of the rounds (both sums only grow): the first
    # round that takes either sum past its budget exhausts it.
    over_bandwidth = traffic > bandwidth_budget
    over_compute = (client > compute_budget) if client is not None else np.zeros(n, bool)
    over = over_bandwidth | over_compute
    first_over = int(np.argmax(over)) if over.any() else None
    within = n if first_over is None else first_over
    budget_i, budget_acc = _last_evaluated(run, within)

    exhausted_by = []
    if first_over is not None:
        exhausted_by = [name for name, over_it in (("bandwidth", over_bandwidth),
                                                   ("compute", over_compute))
                        if over_it[first_over]]
    if client is None:
        # Without client FLOPs the compute budget may have run out in any round.
        status, budget_i, budget_acc = "unknown", None, None
        note = ("the file has no flops column (written by an older cmlbed): the compute "
                "budget cannot be checked")
    elif first_over is None:
        status = "not exhausted"
        note = ("the run never exhausts either budget: the accuracy at the budget is the "
                "final accuracy")
    else:
        status = "exhausted"
        note = ("%s budget exhausted in round %d (the %s of %d)"
                % (" and ".join(exhausted_by), int(rounds["round"][first_over]),
                   _ordinal(first_over + 1), n))
        if within == 0:
            note += "; no round qualifies: the first round alone exceeds the budget"
        elif budget_i is None:
            note += "; no evaluated round within both budgets"
        else:
            note += ("; accuracy of round %d, the last evaluated round within both budgets"
                     % int(rounds["round"][budget_i]))

    gb = total_bytes / 1e9
    tflops = total_flops / 1e12
    ratio = (final_acc / (tflops * gb) if final_acc is not None and tflops > 0 and gb > 0
             else None)
    return {
        "run": run.name,
        "file": run.path,
        "method": run.method,
        "rounds": n,
        "configured_rounds": run.configured_rounds,
        "complete": run.complete,
        "evaluation_scope": run.option("evaluation.scope") or "global",
        "final_accuracy": final_acc,
        "final_accuracy_round": None if final_i is None else int(rounds["round"][final_i]),
        "final_device_accuracy": _device_accuracies(run, final_i),
        "bytes_up": float(rounds["bytes_up"].sum()),
        "bytes_down": float(rounds["bytes_down"].sum()),
        "total_gb": gb,
        "client_tflops": None if math.isnan(tflops) else tflops,
        "bandwidth_budget_gb": bandwidth_budget / 1e9,
        "compute_budget_tflops": compute_budget / 1e12,
        "within_bandwidth_budget": bool(total_bytes <= bandwidth_budget),
        "within_compute_budget": None if client is None else bool(total_flops <= compute_budget),
        "budget_status": status,
        "exhausted_by": exhausted_by,
        "exhausted_in_round": None if first_over is None else int(rounds["round"][first_over]),
        "rounds_within_budgets": within,
        "accuracy_at_budget": budget_acc,
        "accuracy_at_budget_round": None if budget_i is None else int(rounds["round"][budget_i]),
        "budget_note": note,
        "notebook_ratio": ratio,
        "notebook_ratio_label": RATIO_LABEL,
    }


def _ordinal(k):
    suffix = "th" if 10 <= k % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(k % 10, "th")
    return "%d%s round" % (k, suffix)


def _acc(value):
    return "-" if value is None else "%.4f" % value


def _within(value):
    return {True: "within", False: "exceeded", None: "unknown"}[value]


def report_text(rows):
    """A block of lines per run, blocks separated by a blank line."""
    blocks = []
    for r in rows:
        status = "" if r["complete"] else "  (incomplete: %d of %d rounds)" % (
            r["rounds"], r["configured_rounds"])
        device = ""
        if r["final_device_accuracy"]:
            device = " (per device: %s)" % " ".join(_acc(v) for v in r["final_device_accuracy"])
        final = _acc(r["final_accuracy"])
        if r["final_accuracy_round"] is not None:
            final += ", round %d" % r["final_accuracy_round"]
        lines = [
            ("final accuracy", "%s, evaluation %s%s" % (final, r["evaluation_scope"], device)),
            ("total traffic", "%.4f GB (up %.4f, down %.4f; GB = 10^9 bytes)"
             % (r["total_gb"], r["bytes_up"] / 1e9, r["bytes_down"] / 1e9)),
            ("client compute", "-" if r["client_tflops"] is None else
             "%.4f TFLOP (training FLOPs of all devices, ranks >= 1)" % r["client_tflops"]),
            ("bandwidth budget", "%s GB: %s (%.1f%% used)"
             % (_g(r["bandwidth_budget_gb"]), _within(r["within_bandwidth_budget"]),
                100 * r["total_gb"] / r["bandwidth_budget_gb"])),
            ("compute budget", "%s TFLOP: %s%s"
             % (_g(r["compute_budget_tflops"]), _within(r["within_compute_budget"]),
                "" if r["client_tflops"] is None else " (%.1f%% used)"
                % (100 * r["client_tflops"] / r["compute_budget_tflops"]))),
            ("accuracy at budget", "%s: %s" % (_acc(r["accuracy_at_budget"]), r["budget_note"])),
            (RATIO_LABEL, "-" if r["notebook_ratio"] is None else
             "%.4g = accuracy / (client TFLOPs x GB)" % r["notebook_ratio"]),
        ]
        width = max(len(k) for k, _ in lines)
        blocks.append("== %s: %s, %s%s\n" % (r["run"], r["method"], r["file"], status)
                      + "".join("  %s  %s\n" % (k.ljust(width), v) for k, v in lines))
    return "\n".join(blocks)


def _g(value):
    return "%g" % value


def report_json(rows, bandwidth_budget, compute_budget):
    document = {
        "bandwidth_budget_bytes": bandwidth_budget,
        "compute_budget_flops": compute_budget,
        "units": {"gb": "10^9 bytes", "tflops": "10^12 FLOP", "accuracy": "fraction"},
        "runs": rows,
    }
    return json.dumps(document, indent=2, allow_nan=False) + "\n"

