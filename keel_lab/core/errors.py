"""The one exception type for a user's mistake: the CLI prints it, it never becomes a traceback."""


class LabError(Exception):
    """Bad input from a learner or practitioner; the message says which call and what is wrong."""
