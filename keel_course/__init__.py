"""keel_course: the course's tools for instructors and authors, beside the lab.

The learner edition and the handout (`editions`, `handout`, `translation`), the nbgrader course
(`nbgrader`), grading submitted notebooks (`grading`), a class on one server (`classroom`) and
the instructor's guide (`guide`). It imports `keel_lab`; `keel_lab` never imports it, so a
learner's copy of the lab carries none of this.
"""
