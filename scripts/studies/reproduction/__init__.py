"""The reproduction report of the PiPar and AdaSplit papers, by section
(scripts/studies/reproduction_report.py is its command line; it writes docs/reproduction.md).

  constants      the papers' quoted figures, the verdicts' margins, the repository's root
  text           number formats, Markdown tables, the provenance citations [n]
  runsets        a name's seed files (RunSet), the file names' keys, grouping and comparing
  learning       whether accuracy settled and cleared the trivial rate
  band           the simulator's validated error band (prediction-accuracy pages)
  verdicts       each claim's verdict from intervals, and conclusions()
  report         Report: its state, made of the section mixins below
  cells          a grid cell's numbers and how a cell's figures are written
  grid           section 1: the grid table and its profiles
  grid_pictures  section 1: the grid's pictures
  grid_factors   section 1: maxima, the gain taken apart (grid.csv), sittings
  grid_why       section 1: where the gain is large, and why
  measured_vs_simulated  section 1: the simulator against the measured cells
  rounds         section 1: how the round length moves the answer
  heterogeneity  heterogeneous devices and changing bandwidth
  dp             section 2: DP on the main job
  accuracy       section 3: accuracy
  adasplit       section 4: the AdaSplit comparison
  adasplit_sweeps  section 4: the kappa, eta and learning-rate sweeps
  conclusions    What we conclude
  provenance     the runs behind the numbers
  page           the page around the sections: header, summary, section 0, regenerating
"""
