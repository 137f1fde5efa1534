"""The one exception type for user-facing errors."""


class UtvmError(Exception):
    """A problem with the user's input or environment.

    The command line prints ``error: <message>`` on one line and exits with code 2;
    no traceback is shown for these.
    """
