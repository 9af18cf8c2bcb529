"""python -m metile.tune --clear: removes every stored tuning decision."""

import argparse

from . import clear_cache, directory

parser = argparse.ArgumentParser(prog="python -m metile.tune",
                                 description="metile's stored tuning decisions")
parser.add_argument("--clear", action="store_true", help="remove every stored decision")
arguments = parser.parse_args()
if arguments.clear:
    print(f"metile.tune: removed {clear_cache()} decisions from {directory()}")
else:
    print(f"metile.tune: decisions are stored in {directory()} (--clear removes them)")
