"""JupyterHub for a class on one machine, as `keel-course classroom start` (`make classroom`)
runs it.

Every value comes from the class folder's settings (`classroom.json`, named by the environment
variable KEEL_LAB_CLASSROOM). What this setup isolates and what it does not, and how to run a
class for real, is in docs/classroom.md.
"""

import os
from pathlib import Path

from keel_course.bubblewrap import unavailable
from keel_course.classroom.hub import SETTINGS_ENV
from keel_course.classroom.materials import give_handout
from keel_course.classroom.roster import INSTRUCTOR
from keel_course.classroom.settings import LOOPBACK, Classroom
from keel_course.classroom.spawner import ConfinedSpawner

c = get_config()  # noqa: F821 - JupyterHub defines it when it reads this file
room = Classroom.load(Path(os.environ[SETTINGS_ENV]))

# Loopback only: the students' address, the hub's API and the proxy's API.
c.JupyterHub.bind_url = room.url
c.JupyterHub.hub_bind_url = f"http://{LOOPBACK}:{room.hub_port}"
c.ConfigurableHTTPProxy.api_url = f"http://{LOOPBACK}:{room.proxy_api_port}"
c.ConfigurableHTTPProxy.command = [room.proxy]
c.JupyterHub.db_url = f"sqlite:///{room.class_dir / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(room.class_dir / "jupyterhub_cookie_secret")

# JupyterHub's own shared-password login: the class password for every student on the roster
# (and for students the instructor adds later through the admin page or the REST API).
c.JupyterHub.authenticator_class = "shared-password"
c.SharedPasswordAuthenticator.user_password = room.password
c.SharedPasswordAuthenticator.admin_users = {INSTRUCTOR}
c.SharedPasswordAuthenticator.admin_password = room.admin_password
c.Authenticator.allowed_users = set(room.students)
c.Authenticator.allow_existing_users = True

# Every student's server is the project's interpreter; each one starts in the student's own
# folder, where the handout is copied on its first start. Where bubblewrap can run, each server
# is confined (keel_course/classroom/spawner.py): it sees its own folder and a read-only lab
# without solutions, which its kernels import, and nothing else of the class or the checkout.
# Elsewhere (`keel-course classroom start` says so) the simple spawner runs them as they are, as
# the hub's own system user, importing the checkout (see docs/classroom.md).
SERVER = [room.python, "-m", "jupyterhub.singleuser"]
UNCONFINED = unavailable()
if UNCONFINED:
    c.JupyterHub.spawner_class = "simple"
    c.Spawner.cmd = SERVER
else:
    c.JupyterHub.spawner_class = ConfinedSpawner
    c.ConfinedSpawner.singleuser = SERVER
    c.ConfinedSpawner.lab = str(room.lab)
c.SimpleLocalProcessSpawner.home_dir_template = str(room.homes / "{username}")
c.Spawner.notebook_dir = str(room.homes / "{username}")
# nbgrader's server extensions (installed for `keel-course nbgrader` courses) stay off: this class
# hands the chapters out itself, and importing them took each server about 2 s here. A confined
# server runs as `nobody`, so only an unconfined one run by root needs --allow-root.
NBGRADER = ("formgrader", "assignment_list", "course_list", "validate_assignment")
c.Spawner.args = [*(["--allow-root"] if room.allow_root and UNCONFINED else []), *(
    f"--ServerApp.jpserver_extensions=nbgrader.server_extensions.{name}=False"
    for name in NBGRADER)]
c.Spawner.default_url = "/lab"
c.Spawner.start_timeout = 120  # 2 cores, many students starting at once
c.Spawner.http_timeout = 120
# A start request returns at once and the server comes up in the background (the student sees
# its progress; the REST API answers 202), instead of holding each request up to 10 seconds.
c.JupyterHub.tornado_settings = {"slow_spawn_timeout": 0}
c.Spawner.pre_spawn_hook = lambda spawner: give_handout(room.handout, Path(spawner.home_dir))

# The instructor's token for the REST API: creating students, starting servers, acting as one.
c.JupyterHub.services = [{"name": "instructor-api", "api_token": room.instructor_token}]
c.JupyterHub.load_roles = [{
    "name": "instructor-api",
    "scopes": ["admin:users", "admin:servers", "admin:server_state", "tokens", "access:servers"],
    "services": ["instructor-api"],
}]
