"""A class on one machine: a JupyterHub for the students, the lab's grading for the instructor.

`keel-course classroom start ROSTER DIR` starts the hub (`classroom/jupyterhub_config.py` reads the
class's settings from DIR), `keel-course classroom collect DIR` gathers every student's notebooks
into a timestamped folder and grades them. docs/classroom.md says what this gives and what not.
"""

from keel_course.classroom.collect import collect, grade
from keel_course.classroom.materials import give_handout
from keel_course.classroom.roster import read_roster
from keel_course.classroom.settings import Classroom

__all__ = ["Classroom", "collect", "give_handout", "grade", "read_roster"]
