"""METILE_DEBUG=tune (or all): every decision is printed on stderr and saved as JSON under
<METILE_DEBUG_DIR, default debug_output>/tune/<name>-<key>.json (characters other than
letters, digits, '.', '_' and '-' of the name become '_')."""

import json
import os
import sys


def enabled():
    items = os.environ.get("METILE_DEBUG", "").split(",")
    return "tune" in items or "all" in items or "1" in items


def publish(name, entry, report):
    """Prints and saves a decision's report when METILE_DEBUG asks for it."""
    if not enabled():
        return
    text = json.dumps(report, indent=2)
    print(f"metile.tune: {name}: {report['reason']}\n{text}", file=sys.stderr)
    folder = os.path.join(os.environ.get("METILE_DEBUG_DIR") or "debug_output", "tune")
    os.makedirs(folder, exist_ok=True)
    safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in name)
    with open(os.path.join(folder, f"{safe}-{entry[:16]}.json"), "w") as f:
        f.write(text + "\n")
