"""The one exception the report tool turns into a clean message and a non-zero exit."""


class ReportError(Exception):
    pass
