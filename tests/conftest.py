"""Suite-wide set-up."""
import signal

# A suite started in the background of a non-interactive shell (nohup, `&`) inherits
# SIGINT ignored, and exec passes an ignored signal on: every hopsim a test starts would
# then ignore the Ctrl-C the interrupt tests send, as the shell meant for its background
# jobs (hopsim keeps that convention). A handler, unlike SIG_IGN, is reset to the default
# by exec, so the commands the tests start take SIGINT as from a terminal.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
