"""The one exception type for bad user input anywhere in hopsim."""


class InputError(ValueError):
    """Bad input (file, flag, parameter): one line naming the offending key; the CLI exits 2."""
