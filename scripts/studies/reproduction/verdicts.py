"""Each claim's verdict (confirmed, not confirmed, not testable here), computed from
the intervals the report's sections measured; conclusions() gathers them."""

import math

from cmlbed_report import stats
from cmlbed_report.tables import ratio_text

from .constants import (ACCURACY_MARGIN, ADASPLIT_PAPER, ADASPLIT_PAPER_BYTES_RATIO,
                        BYTES_FACTOR_TOLERANCE, CONFIRMED, NOT_CONFIRMED, NOT_TESTABLE,
                        PERSONALISED_OPTION, PIPAR_PAPER, WITH_INTERVAL)
from .runsets import pipelined, pipelining


def supported(ratio):
    """The figure a ratio establishes above 1: the point ratio when its whole interval
    lies above 1, X when it is "> X" with X > 1; None otherwise."""
    if ratio.verdict == stats.ABOVE_1:
        return ratio.value
    if ratio.verdict == stats.LOWER_BOUND and ratio.bound > 1:
        return ratio.bound
    return None


def largest_supported(items):
    """(ratio, where) of items [(stats.Ratio, where), ...] with the largest supported()
    figure, or None when no interval lies above 1."""
    best = [(supported(r), r, w) for r, w in items if supported(r) is not None]
    if not best:
        return None
    _, ratio, where = max(best, key=lambda t: t[0])
    return ratio, where


def _upper(ratio):
    """The upper end of a ratio's interval (inf for "> X")."""
    return math.inf if ratio.verdict == stats.LOWER_BOUND else ratio.high


def _where_text(item):
    ratio, where = item
    return "%s (%s)" % (ratio_text(ratio), where)


NO_PIPELINED_CELL = ("no measured cell in which PiPar pipelines (m >= 2 micro-batches) with "
                     "split >= 1 and a faithful emulation")


GRID_SCOPE = "measured cells (split >= 1, m >= 2)"


def gain_verdicts(items, noun, none=NO_PIPELINED_CELL, scope=GRID_SCOPE):
    """The direction of a PiPar gain (noun: 'speedup', ...) over measured cells with split
    >= 1. items: [(stats.Ratio, where)]; none: the reason when there are none; scope: what
    the items are, for the reason. Returns (verdict, evidence, reason)."""
    if not items:
        return NOT_TESTABLE, "-", none
    with_interval = [i for i in items if i[0].verdict in WITH_INTERVAL]
    if not with_interval:
        return (NOT_TESTABLE, "; ".join(_where_text(i) for i in items[:3]),
                "all %d qualifying %s have n = 1 on a side: no interval (at least 2 seeds "
                "per run are needed)" % (len(items), scope))
    best = largest_supported(with_interval)
    if best:
        above = sum(1 for r, _ in with_interval if supported(r) is not None)
        return (CONFIRMED, _where_text(best),
                "%d of %d qualifying %s with an interval have the %s's 95%% interval above 1; "
                "the largest is cited" % (above, len(with_interval), scope, noun))
    counts = {}
    for r, _ in with_interval:
        counts[r.verdict] = counts.get(r.verdict, 0) + 1
    top = max(with_interval, key=lambda i: _upper(i[0]))
    parts = ["%d %s" % (counts[v], text) for v, text in (
        (stats.NO_DIFFERENCE, "no difference measured"), (stats.BELOW_1, "below 1"),
        (stats.LOWER_BOUND, "only '> X' with X <= 1 (the denominator's interval reaches 0)"))
        if counts.get(v)]
    return (NOT_CONFIRMED, _where_text(top),
            "none of the qualifying %s has the %s's interval above 1 (%d: %s); the one reaching "
            "highest is cited" % (scope, noun, len(with_interval), ", ".join(parts)))


def magnitude_verdicts(items, noun, paper):
    """The paper's figure ('up to 34.6x') against the measured cells with split >= 1:
    confirmed when some cell's interval above 1 reaches it (its upper end, or X of
    "> X", at least the paper's figure)."""
    direction = gain_verdicts(items, noun)
    if direction[0] == NOT_TESTABLE:
        return direction
    with_interval = [i for i in items if i[0].verdict in WITH_INTERVAL]
    if direction[0] == NOT_CONFIRMED:
        return (NOT_CONFIRMED, direction[1], "no %s is established at all: %s"
                % (noun, direction[2]))
    reaching = [(r, w) for r, w in with_interval
                if (r.verdict == stats.ABOVE_1 and r.high >= paper)
                or (r.verdict == stats.LOWER_BOUND and r.bound >= paper)]
    if reaching:
        ratio, where = largest_supported(reaching)
        low = ratio.bound if ratio.verdict == stats.LOWER_BOUND else ratio.low
        if low >= paper:
            reason = "the whole interval lies at or above the paper's %.1fx" % paper
        else:
            reason = ("the interval holds the paper's %.1fx: our largest %s is consistent with "
                      "it, not shown to be larger or smaller" % (paper, noun))
        return CONFIRMED, _where_text((ratio, where)), reason
    best = largest_supported(with_interval)
    ratio = best[0]
    reach = ("only '> %.2fx' is established there (the denominator's interval reaches 0)"
             % ratio.bound if ratio.verdict == stats.LOWER_BOUND else
             "its interval ends at %.2fx" % ratio.high)
    return (NOT_CONFIRMED, _where_text(best),
            "the largest %s whose interval lies above 1 stays below the paper's %.1fx: %s"
            % (noun, paper, reach))


def accuracy_verdicts(items, margin=ACCURACY_MARGIN, failed=()):
    """'Same accuracy as FL' from [(ratio of PiPar's final accuracy over FL's, where)]:
    confirmed when every interval lies within 1 +- margin; not confirmed when one
    excludes 1 or is too wide to tell. failed: the groups left out because FL did not
    clear the trivial rate (or it was not recorded)."""
    if not items and failed:
        return (NOT_TESTABLE, "-", "no group whose FL baseline learns: %s" % "; ".join(failed))
    if not items:
        return (NOT_TESTABLE, "-", "no accuracy runs of PiPar and FL (DP off) in the data "
                "(scripts/studies/reproduction.sh --only accuracy,report)")
    with_interval = [i for i in items if i[0].verdict in WITH_INTERVAL]
    if len(with_interval) < len(items):
        return (NOT_TESTABLE, "; ".join(_where_text(i) for i in items),
                "%d of %d groups have n = 1 on a side: no interval"
                % (len(items) - len(with_interval), len(items)))
    differ = [i for i in with_interval if i[0].verdict in (stats.ABOVE_1, stats.BELOW_1)]
    if differ:
        return (NOT_CONFIRMED, "; ".join(_where_text(i) for i in differ),
                "PiPar's final accuracy differs from FL's: the interval excludes 1 in %d of "
                "%d groups" % (len(differ), len(with_interval)))
    wide = [i for i in with_interval if i[0].verdict == stats.LOWER_BOUND
            or i[0].low < 1 - margin or i[0].high > 1 + margin]
    if wide:
        return (NOT_CONFIRMED, "; ".join(_where_text(i) for i in wide),
                "no difference measured, but the interval is wider than 1 +- %.0f%% in %d of "
                "%d groups: these seeds cannot tell the accuracies apart at that margin"
                % (100 * margin, len(wide), len(with_interval)))
    return (CONFIRMED, "; ".join(_where_text(i) for i in with_interval),
            "every interval of PiPar's final accuracy over FL's lies within 1 +- %.0f%% (%d "
            "groups, DP off)" % (100 * margin, len(with_interval)))


def condition_verdicts(items, condition, runs_seen, part=None):
    """A gain 'also with <condition>' from the heterogeneity part's runs of that condition
    (part: [(speedup Ratio, where)] of PiPar planned per device against FL, faithful
    emulations only; None: the part has not run), else from the measured grid cells that
    have it (items): gain_verdicts on their speedups, or not testable."""
    if part is not None:
        return gain_verdicts(part, "speedup", scope="experiments (PiPar planned per device "
                             "against FL, emulation faithful)",
                             none="the heterogeneity part ran this experiment, but not every run "
                             "of it was a faithful emulation (its table says which)")
    if not items:
        return (NOT_TESTABLE, "-", "none of the %d measured runs behind this report has %s, and "
                "the heterogeneity part has not run its experiment (scripts/studies/reproduction.sh "
                "--only heterogeneity,report)" % (runs_seen, condition))
    return gain_verdicts(items, "speedup")


def dp_verdicts(dp):
    """'The gain holds with DP' from the DP part: {"on": {"speedup": Ratio, "idle":
    Ratio}, "off": {...}} or None."""
    if not dp or "on" not in dp:
        return (NOT_TESTABLE, "-", "the DP part has not run "
                "(scripts/studies/reproduction.sh --only dp,report)")
    on = dp["on"]["speedup"]
    evidence = "speedup vs FL with DP on %s, off %s; server idle reduction on %s" % (
        ratio_text(on), ratio_text(dp["off"]["speedup"]) if "off" in dp else "-",
        ratio_text(dp["on"]["idle"]))
    if on.verdict not in WITH_INTERVAL:
        return NOT_TESTABLE, evidence, "n = 1 on a side with DP on: no interval"
    if supported(on) is not None:
        return (CONFIRMED, evidence, "PiPar's speedup vs FL with DP on has its interval above 1; "
                "this rests on round times only: what DP costs in accuracy is section 3's and "
                "privacy-accuracy.md's")
    return (NOT_CONFIRMED, evidence, "with DP on, PiPar's speedup vs FL is %s"
            % ("not distinguishable from 1" if on.verdict == stats.NO_DIFFERENCE
               else "below 1"))


def accuracy_baseline(ours, base):
    """The run name whose accuracy AdaSplit's is judged against for baseline `base` (sfl,
    sl): its personalised variant where that ran personalised (like for like: AdaSplit's
    devices are scored with their own models), else `base` itself; None when neither ran."""
    variant = base + "-personalised"
    if variant in ours and ours[variant]["personalised"]:
        return variant
    return base if base in ours else None


def adasplit_accuracy_verdicts(ratio, baseline, personalised, failed=(False, math.nan)):
    """AdaSplit's accuracy above a split baseline's: ratio = AdaSplit's final accuracy
    over the baseline's (None: a side not run); personalised: whether the baseline's
    runs keep a personalised model per device, as AdaSplit's devices do; failed:
    (failed_to_learn of the baseline, its trivial rate): a baseline that does not clear
    the trivial rate (True), or whose rate is not recorded (None), is no baseline."""
    if ratio is None:
        return NOT_TESTABLE, "-", "no %s run in the AdaSplit comparison's data" % baseline
    evidence = ratio_text(ratio)
    did_fail, trivial = failed
    if did_fail:
        return (NOT_TESTABLE, evidence, "our %s failed to learn: its accuracy's 95%% interval "
                "does not clear the trivial rate %.3f, so beating it shows nothing"
                % (baseline, trivial))
    if did_fail is None:
        return (NOT_TESTABLE, evidence, "our %s runs predate the trivial rate "
                "(trivial_accuracy), so whether that baseline learned is not known; rerun "
                "them" % baseline)
    if not personalised:
        return (NOT_TESTABLE, evidence,
                "not like for like: our %s deploys one global model (no %s in its "
                "configuration) while each AdaSplit device is scored with its own "
                "personalised model on its own classes" % (baseline, PERSONALISED_OPTION))
    if ratio.verdict not in WITH_INTERVAL:
        return NOT_TESTABLE, evidence, "n = 1 on a side: no interval"
    against = ("against our personalised %s (%s: each device scored with its own model, as "
               "AdaSplit's are)" % (baseline, PERSONALISED_OPTION))
    if supported(ratio) is not None:
        return CONFIRMED, evidence, "the interval of the accuracy ratio %s lies above 1" % against
    return NOT_CONFIRMED, evidence, "the interval of the accuracy ratio %s does not lie above 1" % against


def adasplit_bytes_verdicts(ratio, baseline):
    """AdaSplit sends fewer bytes than a baseline: ratio = baseline's GB / AdaSplit's."""
    if ratio is None:
        return NOT_TESTABLE, "-", "no %s run in the AdaSplit comparison's data" % baseline
    if ratio.verdict not in WITH_INTERVAL:
        return NOT_TESTABLE, ratio_text(ratio), "n = 1 on a side: no interval"
    if supported(ratio) is not None:
        return (CONFIRMED, ratio_text(ratio), "%s's bytes over AdaSplit's: the interval lies "
                "above 1" % baseline)
    return (NOT_CONFIRMED, ratio_text(ratio), "%s's bytes over AdaSplit's: the interval does "
            "not lie above 1" % baseline)


def bytes_factor_verdicts(ratio, paper=ADASPLIT_PAPER_BYTES_RATIO,
                          tolerance=BYTES_FACTOR_TOLERANCE, expected=None):
    """'8.13x fewer bytes than SplitFed': confirmed when our interval of SplitFed's bytes
    over AdaSplit's meets [paper / (1 + tolerance), paper (1 + tolerance)]. expected:
    (figure, how) the schedule of our runs predicts, quoted in the reason."""
    if ratio is None:
        return NOT_TESTABLE, "-", "no SplitFed and AdaSplit runs in the AdaSplit comparison's data"
    if ratio.verdict not in WITH_INTERVAL:
        return NOT_TESTABLE, ratio_text(ratio), "n = 1 on a side: no interval"
    low = ratio.bound if ratio.verdict == stats.LOWER_BOUND else ratio.low
    high = _upper(ratio)
    lo, hi = paper / (1 + tolerance), paper * (1 + tolerance)
    schedule = (" (our runs' schedule predicts %.2fx: %s)" % expected) if expected else ""
    if low <= hi and high >= lo:
        return (CONFIRMED, ratio_text(ratio), "the interval meets %.2fx +- %.0f%%%s"
                % (paper, 100 * tolerance, schedule))
    return (NOT_CONFIRMED, ratio_text(ratio), "the interval [%.2f, %s] misses %.2fx +- %.0f%% "
            "([%.2f, %.2f])%s" % (low, "inf" if math.isinf(high) else "%.2f" % high, paper,
                                   100 * tolerance, lo, hi, schedule))


def conclusions(evidence):
    """Every claim of both papers with its verdict, computed from `evidence` (what the
    report's sections measured):
      grid: [cell dicts of measured cells: speedup, idle (stats.Ratio), raw (split 0),
             heterogeneous, trace, where]
      runs_seen: how many measured runs the report read
      conditions: {"heterogeneous" | "changing-bandwidth": [(Ratio, where)]} of the
             heterogeneity part (absent: not run)
      accuracy: [(Ratio of PiPar's final accuracy over FL's, where)], DP off
      dp: as dp_verdicts takes it, or None
      adasplit: {"accuracy": {baseline: Ratio}, "bytes": {baseline: Ratio},
                 "personalised": {baseline: bool}, "expected": (figure, how) or None}
    Returns [{"paper", "claim", "paper_figure", "verdict", "evidence", "reason"}]."""
    # PiPar's own claims rest on cells where it pipelines (m >= 2): at m = 1 it runs
    # SFL's schedule, and its gain over FL there is splitting's.
    grid = [c for c in evidence.get("grid", []) if not c["raw"] and pipelined(c)]
    speedups = [(c["speedup"], c["where"]) for c in grid]
    idles = [(c["idle"], c["where"]) for c in grid]
    pipes = [(pipelining(c), c["where"]) for c in grid if pipelining(c) is not None]
    runs_seen = evidence.get("runs_seen", 0)
    claims = []

    def add(paper, claim, figure, verdict):
        claims.append({"paper": paper, "claim": claim, "paper_figure": figure,
                       "verdict": verdict[0], "evidence": verdict[1], "reason": verdict[2]})

    add("PiPar", "server idle time lower than FL's", "",
        gain_verdicts(idles, "server idle reduction"))
    add("PiPar", "server idle time down by up to 64.1x vs FL", "64.1x",
        magnitude_verdicts(idles, "server idle reduction", PIPAR_PAPER["idle_reduction"]))
    add("PiPar", "training faster than FL", "", gain_verdicts(speedups, "speedup"))
    add("PiPar", "training up to 34.6x faster than FL", "34.6x",
        magnitude_verdicts(speedups, "speedup", PIPAR_PAPER["speedup"]))
    add("PiPar", "pipelining itself speeds training (SFL / PiPar at PiPar's split)", "",
        gain_verdicts(pipes, "pipelining factor"))
    add("PiPar", "same accuracy as FL", "", accuracy_verdicts(
        evidence.get("accuracy", []), failed=evidence.get("accuracy_failed", ())))
    add("PiPar", "the speedup holds with differential privacy (round time only)", "", dp_verdicts(evidence.get("dp")))
    conditions = evidence.get("conditions") or {}
    add("PiPar", "the gain holds with heterogeneous devices", "", condition_verdicts(
        [(c["speedup"], c["where"]) for c in grid if c["heterogeneous"]],
        "devices of different speeds (per-device devices.flops or devices.slowdown)", runs_seen,
        conditions.get("heterogeneous")))
    add("PiPar", "the gain holds with changing bandwidth", "", condition_verdicts(
        [(c["speedup"], c["where"]) for c in grid if c["trace"]],
        "a link whose rate follows a trace (network.uplink_trace / downlink_trace)", runs_seen,
        conditions.get("changing-bandwidth")))
    ada = evidence.get("adasplit") or {}
    paper = {m: (a, gb) for m, a, gb in ADASPLIT_PAPER}
    for baseline, name in (("sfl", "SplitFed"), ("sl", "SL")):
        add("AdaSplit", "higher accuracy than %s" % name, "%.2f%% vs %.2f%%" % (
            paper["adasplit"][0], paper[baseline][0]),
            adasplit_accuracy_verdicts(ada.get("accuracy", {}).get(baseline), name,
                                       ada.get("personalised", {}).get(baseline, False),
                                       ada.get("failed", {}).get(baseline, (False, math.nan))))
        add("AdaSplit", "fewer bytes than %s" % name, "%.2f GB vs %.2f GB" % (
            paper["adasplit"][1], paper[baseline][1]),
            adasplit_bytes_verdicts(ada.get("bytes", {}).get(baseline), name))
    add("AdaSplit", "8.13x fewer bytes than SplitFed", "%.2fx" % ADASPLIT_PAPER_BYTES_RATIO,
        bytes_factor_verdicts(ada.get("bytes", {}).get("sfl"), expected=ada.get("expected")))
    return claims
