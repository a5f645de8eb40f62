"""Section 1: where the gain is large, and why, in sentences built from the grid."""

import os

import numpy as np

from cmlbed_report import stats
from cmlbed_report.tables import ratio_text

from .text import rate_text
from .verdicts import supported


class GridWhy:
    def _why(self, heat, networks, rates, cells):
        """What the data say about where the gain is large, in sentences built from it."""
        if not cells:
            return
        lines = [self._why_networks(heat, networks)]
        lines += self._why_link_rate(heat, networks)
        lines.append(
            "- **Server idle.** In FL the server only averages: its idle time is nearly the "
            "whole round. The reduction is FL's idle seconds per round divided by PiPar's "
            "remaining ones, so it is largest where PiPar keeps the server busiest, not where "
            "the round is shortest. Where PiPar's remaining idle time is near 0 its interval "
            "reaches 0 and only '> X' can be said.")
        lines += self._why_cells(cells)
        lines.append(
            "- **Why ours differs from 34.6x / 64.1x.** The paper's server and devices are "
            "not ours: here the server is one CPU core at the speeds of the profile table "
            "and the devices are paced at 2 GFLOP/s, so each side's compute, and with it "
            "both factors, differ. Our rounds are %s, which weighs FL's per-round model exchange "
            "more than a CIFAR-10 epoch (390 mini-batches per device at 4 devices) would: "
            "the round-length curve shows by how much. The grid's devices "
            "are identical and paced exactly; the paper's testbed is not modelled here. "
            "PiPar's choices come from our planner (it simulates the real schedule, with "
            "one server serving every device), not from the authors' closed form."
            % self._grid_rounds_text(cells))
        self.add("### Where the gain is large, and why\n\n" + "\n".join(lines) + "\n\n")

    def _why_networks(self, heat, networks):
        """Which networks gain most, and why: the largest speedup of each."""
        by_net = np.array([np.nanmax(row) if np.isfinite(row).any() else np.nan
                           for row in heat["speedup"]])
        order = np.argsort(-np.nan_to_num(by_net, nan=-1))
        flops = {}
        for net in networks:
            data = self.store.read_json(os.path.join(self.results, "profiles", net + ".json"))
            if data:
                flops[net] = sum(l["flops_per_sample"] for l in data["ranks"][0]["layers"])
        ranked = [networks[k] for k in order if np.isfinite(by_net[k]) and networks[k] in flops]
        heavy_first = (len(ranked) >= 2 and
                       ranked[0] in sorted(flops, key=flops.get, reverse=True)[:max(1, len(flops) // 2)])
        heading = "Heavy networks gain most." if heavy_first else "Gain per network."

        def measured_at_max(k):
            row = heat["speedup"][k]
            return bool(heat["measured"][k][int(np.nanargmax(row))])
        return ("- **" + heading + "** Largest speedup per network (point ratios; "
                "measured cells: the mean of the seeds; simulated ones are predictions, "
                "not findings): " + ", ".join(
                    "%s %.1fx (%s)" % (networks[k], by_net[k],
                                       "measured" if measured_at_max(k) else "simulated")
                    for k in order if np.isfinite(by_net[k])) +
                ". FL makes each device train the whole model at 2 GFLOP/s and send it "
                "both ways every round; PiPar's planner leaves the device a thin first part "
                "(see the device FLOPs share column) and the server, %s faster than a "
                "device, does the rest. Most of that gain is splitting's, not "
                "pipelining's (section 'The gain taken apart'); and since FL's model "
                "exchange is paid once a round, the gain shrinks as rounds grow longer "
                "(section 'How the round length moves the answer')."
                % self._speed_ratio_text(networks))

    def _why_link_rate(self, heat, networks):
        """How the speedup moves from the thinnest to the fastest uplink, per network."""
        lines = []
        trend = []
        for k, net in enumerate(networks):
            row = heat["speedup"][k]
            ok = np.isfinite(row)
            if ok.sum() >= 2:
                trend.append((net, row[ok][0], row[ok][-1]))
        if trend:
            thin = [t for t in trend if t[1] > t[2]]
            lines.append(
                "- **Link rate.** Speedup at the thinnest vs the fastest uplink: " + ", ".join(
                    "%s %.1fx -> %.1fx" % t for t in trend) + ". " +
                ("For %s the gain is larger on thin links: FL sends the whole model up and "
                 "down every round, which the thin link makes long, while PiPar's "
                 "activations are small next to the model. " % ", ".join(t[0] for t in thin)
                 if thin else "") +
                ("For %s the gain grows with the rate: PiPar's per-sample activations "
                 "outweigh the model's bytes there, so a faster link helps PiPar more than "
                 "FL. " % ", ".join(t[0] for t in trend if t[1] <= t[2])
                 if len(thin) < len(trend) else ""))
        return lines

    def _why_cells(self, cells):
        """The cells that say something on their own: where the emulation did not hold,
        where PiPar loses to FL, runs at one micro-batch, is slower or faster than SFL."""
        lines = []
        shown = [c.get("measured") or c.get("simulated") for c in cells.values()]
        losing = [c for c in shown if (c["source"] == "measured" and c["speedup"].verdict == stats.BELOW_1)
                  or (c["source"] == "simulated" and np.isfinite(c["speedup"].value)
                      and c["speedup"].value < 1)]
        # A gain or loss measured while the emulation did not hold is the host's, not a
        # finding (docs/explanation/fidelity.md).
        host_made = [c for c in shown if c.get("emulation") in ("degraded", "broken")]
        losing = [c for c in losing if c not in host_made]
        if host_made:
            lines.append(
                "- **Where the emulation did not hold:** %s. Their round times are partly this "
                "host's (its ranks waited for its cores, or the devices' stages outlasted their "
                "pace), so these cells are no evidence either way; they are kept out of the "
                "headline." % "; ".join(
                    "%s at %s (%s; emulation %s: %s)" % (
                        c["net"], rate_text(c["rate"]), self._ratio_cell(c["speedup"], c["source"]),
                        c["emulation"], self._first_reason(c)) for c in host_made))
        if losing:
            lines.append(
                "- **Where PiPar loses to FL:** %s. Light networks (few FLOPs per sample) "
                "leave FL little device work to save, while PiPar still sends every "
                "activation and gradient and the server runs every device's micro-batches "
                "one after another." % ", ".join(
                    "%s at %s (%s)" % (c["net"], rate_text(c["rate"]),
                                       self._ratio_cell(c["speedup"], c["source"])) for c in losing))
        measured = [c["measured"] for c in cells.values() if "measured" in c]
        alike = [c for c in measured if c["m"] == "1"]
        if alike:
            lines.append(
                "- **PiPar with one micro-batch** (the planner's choice) runs SFL's schedule: "
                "vs SFL %s." % ", ".join("%s at %s %s" % (c["net"], rate_text(c["rate"]),
                                                          ratio_text(c["vs_sfl"])) for c in alike))
        slower = [c for c in measured if c["m"] != "1" and c["vs_sfl"].verdict == stats.BELOW_1]
        if slower:
            lines.append(
                "- **Where PiPar (m > 1) is slower than SFL:** %s. The server bounds the round "
                "there, and PiPar runs m smaller stages per mini-batch where SFL runs one, which "
                "on this CPU takes longer in all (per-layer call costs do not shrink with the "
                "micro-batch)." % ", ".join("%s at %s (%s)" % (c["net"], rate_text(c["rate"]),
                                                              ratio_text(c["vs_sfl"])) for c in slower))
        faster = [c for c in measured if c["m"] != "1" and supported(c["vs_sfl"]) is not None]
        if faster:
            lines.append(
                "- **Pipelining itself** (PiPar with m > 1 against SFL, the same mathematics "
                "without the pipeline): faster in %s." % ", ".join(
                    "%s at %s (%s)" % (c["net"], rate_text(c["rate"]), ratio_text(c["vs_sfl"]))
                    for c in faster))
        return lines


    def _speed_ratio_text(self, networks):
        ratios = []
        for net in networks:
            data = self.store.read_json(os.path.join(self.results, "profiles", net + ".json"))
            if not data:
                continue
            server = next(r for r in data["ranks"] if r["role"] == "server")
            batch = data["batch_sizes"][-1]
            seconds = sum(l["forward_s"][-1] + l["backward_s"][-1] for l in server["layers"])
            flops = 3 * batch * sum(l["flops_per_sample"] for l in server["layers"])
            ratios.append(flops / seconds / 2e9)
        if not ratios:
            return "(no profile)"
        if round(min(ratios)) == round(max(ratios)):
            return "%.0fx" % ratios[0]
        return "%.0f-%.0fx" % (min(ratios), max(ratios))
