"""`python -m headroom._plan RESULT_FILE ARGS`: `headroom plan --json` computed in this process, the
child that headroom.plan starts so that planning's process-wide settings (LibTorch's thread count,
the CPU tensor budget, a CUDA memory fraction) never reach the caller. Writes the plan, or the
error's class name and message, as JSON to RESULT_FILE; its stdout is the command's log."""

import json
import sys

from . import _headroom


def main() -> int:
    result_file, args = sys.argv[1], sys.argv[2:]
    try:
        outcome = {"plan": json.loads(_headroom.plan_json(args))}
    except Exception as error:  # noqa: BLE001 (handed to the caller, who raises it again)
        outcome = {"error": type(error).__name__, "message": str(error)}
    with open(result_file, "w") as out:
        json.dump(outcome, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
