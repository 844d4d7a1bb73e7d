"""An interrupt handled by a command's main(), made to stay handled at exit."""


def forget_handled_interrupt() -> None:
    """Clears CPython's record of an unhandled ^C, for a main() that handled it.

    A KeyboardInterrupt that leaves eval() or exec() of a string (collections.namedtuple
    runs one, so the first import of any module defining a NamedTuple can be where ^C
    lands) is marked unhandled in CPython there, however it is handled afterwards; a
    module run with ``python -m`` then kills itself with SIGINT at exit (status -2, not
    the 130 main returned). The flag is CPython's exported global; elsewhere there is
    nothing to clear.
    """
    try:
        import ctypes

        ctypes.c_int.in_dll(ctypes.pythonapi, "_Py_UnhandledKeyboardInterrupt").value = 0
    except (ImportError, AttributeError, ValueError):
        pass
