"""Persistent decisions: one file per decision key under METILE_TUNE_CACHE, else
<cache root>/tune (the root of metile's disk caches: METILE_CACHE_DIR, $XDG_CACHE_HOME/metile
or ~/.cache/metile). Each file carries its key and a SHA-256 checksum of its text (as the
traced-IR cache's entries do) and is written atomically, so concurrent processes never read
half an entry; a damaged entry, or one whose recorded key differs, is removed and the
decision made again. clear_cache() (or ``python -m metile.tune --clear``) removes them all.
"""

import hashlib
import json
import os

from .. import disk_cache

_MAGIC = "metile-tune"
_SUFFIX = ".json"


def directory():
    return os.environ.get("METILE_TUNE_CACHE") or os.path.join(disk_cache.cache_root(), "tune")


def entry_name(fields):
    """The file name (without suffix) of a decision key: the SHA-256 of its canonical JSON."""
    text = json.dumps(fields, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def _path(entry):
    return os.path.join(directory(), entry + _SUFFIX)


def load(fields):
    """The stored decision for a key (a dict), or None: missing, damaged or another key's."""
    entry = entry_name(fields)
    path = _path(entry)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    text = disk_cache.checked_body(data, _MAGIC, entry)
    record = None
    if text is not None:
        try:
            record = json.loads(text)
        except ValueError:
            record = None
    if not isinstance(record, dict) or record.get("key") != fields or not isinstance(
            record.get("winner"), str) or not isinstance(record.get("report"), dict):
        try:
            os.remove(path)
        except OSError:
            pass
        return None
    return record


def save(fields, record):
    """Stores a decision; True when it was written (a read-only directory is no error: the
    next process decides again)."""
    entry = entry_name(fields)
    try:
        os.makedirs(directory(), exist_ok=True)
        disk_cache.write_atomic(_path(entry), disk_cache.checked_bytes(
            _MAGIC, entry, json.dumps(dict(record, key=fields), sort_keys=True)))
    except OSError:
        return False
    return True


def clear_cache():
    """Removes every stored decision; returns how many were removed."""
    folder = directory()
    try:
        names = os.listdir(folder)
    except OSError:
        return 0
    removed = 0
    for name in names:
        if name.endswith(_SUFFIX) or name.endswith(".tmp"):
            try:
                os.remove(os.path.join(folder, name))
                removed += name.endswith(_SUFFIX)
            except OSError:
                pass
    return removed
