"""The report: its state (ReportBase) and Report, made of one mixin per section."""

import os

from cmlbed_report.archive import Archive

from .accuracy import Accuracy
from .adasplit import AdaSplit
from .adasplit_sweeps import AdaSplitSweeps
from .band import simulator_band
from .cells import Cells
from .conclusions import Conclusions
from .constants import ROOT
from .dp import Dp
from .grid import Grid
from .grid_factors import GridFactors
from .grid_pictures import GridPictures
from .grid_why import GridWhy
from .heterogeneity import Heterogeneity
from .measured_vs_simulated import MeasuredVsSimulated
from .page import Page
from .provenance import Provenance
from .rounds import Rounds
from .text import Citations


class ReportBase:
    """What the sections share: the settings, the runs (store), the citations, the page's
    parts, the headline figures, what is pending, and the evidence of the conclusions."""

    def __init__(self, args):
        self.args = args
        self.results = args.results
        self.from_round = args.from_round
        self.store = Archive(args.results, args.archive)
        self.doc_dir = os.path.dirname(os.path.abspath(args.doc))
        self.images = args.images
        self.cite = Citations()
        self.parts = []
        self.headline = {}
        self.pending = []
        self.band = simulator_band()
        # What the conclusions rest on (conclusions() documents the keys).
        self.evidence = {"grid": [], "accuracy": [], "dp": None, "adasplit": {}, "runs_seen": 0}
        self.legacy = []       # names whose runs predate seeds (n = 1)
        self.superseded = 0    # pre-seed files ignored because seed files exist
        self.short = []        # names with fewer seeds than --repeats asks for
        self.fallback = []     # names with too few rounds for the window (all rounds used)
        self.unfaithful = []   # measured grid cells whose emulation was degraded or broken
        self.unjudged = []     # measured grid cells made before cmlbed judged its emulation

    def image(self, name):
        return os.path.join(self.images, "reproduction-%s.png" % name)

    def link(self, path):
        return os.path.relpath(os.path.abspath(path), self.doc_dir)

    def add(self, text):
        self.parts.append(text)

    def note_sets(self, label, sets):
        """Keeps track of pre-seed runs, missing seeds and window fallbacks of RunSets."""
        legacy = False
        for s in sets:
            if s is None:
                continue
            self.superseded += len(s.superseded)
            runs = s.runs()
            if s.legacy:
                legacy = True
            elif 0 < len(runs) < self.args.repeats:
                self.short.append("%s (n = %d)" % (label, len(runs)))
        if legacy and label not in self.legacy:
            self.legacy.append(label)

    def note_rows(self, label, rows):
        if any(row.get("window_fallback") for row in rows):
            self.fallback.append(label)

    def measured_runs(self, count):
        self.evidence["runs_seen"] += count

    def _archive_text(self):
        return (os.path.relpath(os.path.abspath(self.args.archive), ROOT) if self.args.archive
                else os.path.relpath(os.path.abspath(self.results), ROOT))

    def regenerate_command(self):
        return ("scripts/studies/reproduction.sh --full --repeats %d" % max(3, self.args.repeats))


class Report(Grid, GridPictures, GridFactors, GridWhy, MeasuredVsSimulated, Rounds, Heterogeneity,
             Dp, Accuracy, AdaSplit, AdaSplitSweeps, Conclusions, Provenance, Page, Cells,
             ReportBase):
    """The report: main() calls grid(), rounds(), heterogeneity(), dp(), accuracy(),
    adasplit(), conclude() and provenance() in that order (the citations [n] are numbered
    in it), then write()."""
