"""The lab's data sets, installed as the package `keel_lab.data` (pyproject.toml maps it to this
folder): read them through `keel_lab.course.data`."""
