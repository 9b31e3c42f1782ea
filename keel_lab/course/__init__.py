"""The course's own tooling: the incident data and tools, the offline model, shared scenarios,
experiments, plots, exercise checks, notebook helpers and the learner edition."""
