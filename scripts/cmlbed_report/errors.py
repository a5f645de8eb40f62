"""The exceptions the report tool turns into a clean message and a non-zero exit."""


class ReportError(Exception):
    """Bad input: exit status 1."""
    exit_status = 1


class NotFaithful(ReportError):
    """--require-faithful met a run whose times are the host's: exit status 2."""
    exit_status = 2
