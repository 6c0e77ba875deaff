"""`python -m headroom._main ARGS`: headroom-train's main in this process, the child the stage
functions (headroom.stages) start. Ctrl-C must stop it as it stops the command line (the run
resumes from its last epoch when called again): Python's own SIGINT handler would only set a flag
that the C++ training loop never reads, so the default action is put back first."""

import signal
import sys

from . import _headroom


def main() -> int:
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    return _headroom.main(["headroom", *sys.argv[1:]])


if __name__ == "__main__":
    sys.exit(main())
