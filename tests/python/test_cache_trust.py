"""The trace cache trusts only what this user wrote: its folders and entries are created
owner-only; an entry another user owns, a folder others may write to, a secret others may
read and an entry forged with a recomputed checksum are refused (the first three with an
UntrustedCacheWarning naming the path and the reason) and the kernel traced again
(disk_cache.py)."""

import hashlib
import hmac
import os
import re

import numpy as np
import pytest

import metile
from metile import disk_cache
from metile.disk_cache import UntrustedCacheWarning

FOREIGN_UID = 12345


@metile.kernel
def triple(x, out, n, BLOCK: metile.constexpr):
    i = metile.program_id(0) * BLOCK + metile.arange(0, BLOCK)
    metile.store(out + i, metile.load(x + i, mask=i < n) * 3.0, mask=i < n)


def run(n=40):
    """A launch of `triple` as a new process makes it: traced or read from the disk cache."""
    fresh = metile.KernelFunction(triple.fn)
    x, out = np.arange(n, dtype=np.float32), np.zeros(n, np.float32)
    fresh[(1,)](x, out, n, BLOCK=64)
    np.testing.assert_array_equal(out, x * 3)  # never a forged entry's result
    return fresh.stats.traces, fresh.stats.disk_hits


@pytest.fixture
def cache(monkeypatch, tmp_path):
    """A fresh cache root, the entry of `triple` in it, and warnings as errors."""
    root = tmp_path / "cache" / "metile"
    monkeypatch.setenv("METILE_CACHE_DIR", str(root))
    monkeypatch.setattr(disk_cache, "_warned", set())
    assert run() == (1, 0)
    [entry] = (root / "python-ir").glob("*.tir")
    return root, entry


def mode(path):
    return os.stat(path).st_mode & 0o777


def make_foreign(path, monkeypatch):
    """Gives ``path`` another owner: chown as root, else a stat of it that says so."""
    if os.geteuid() == 0:
        os.chown(path, FOREIGN_UID, FOREIGN_UID)
        return
    inode, real_fstat = os.stat(path).st_ino, os.fstat

    def fstat(descriptor):
        status = real_fstat(descriptor)
        if status.st_ino != inode:
            return status
        fields = list(status[:10])
        fields[4] = FOREIGN_UID
        return os.stat_result(fields)

    monkeypatch.setattr(os, "fstat", fstat)


def forge(entry, digest):
    """The entry with its kernel's 3.0 made 2.0, under a header with ``digest(body)``."""
    header, body = entry.read_bytes().split(b"\n", 1)
    assert b"3.0" in body
    body = body.replace(b"3.0", b"2.0")
    magic, key, _ = header.split(b" ")
    entry.write_bytes(b" ".join([magic, key, digest(body).encode()]) + b"\n" + body)


def test_folders_secret_and_entries_are_created_owner_only(cache):
    root, entry = cache
    assert mode(root) == 0o700 and mode(root / "python-ir") == 0o700
    assert mode(root / "secret.key") == 0o600 and mode(entry) == 0o600
    assert run() == (0, 1)  # and trusted by the next process


def test_an_entry_another_user_owns_is_refused_with_a_warning_and_rebuilt(cache, monkeypatch):
    root, entry = cache
    make_foreign(entry, monkeypatch)
    with pytest.warns(UntrustedCacheWarning,
                      match=re.escape(f"the trace cache does not trust {entry}: it is owned by "
                                      f"uid {FOREIGN_UID}, not by this user (uid "
                                      f"{os.geteuid()})")):
        assert run() == (1, 0)
    monkeypatch.undo()
    monkeypatch.setenv("METILE_CACHE_DIR", str(root))
    assert os.stat(entry).st_uid == os.geteuid()  # rebuilt: served to the next process
    assert run() == (0, 1)


@pytest.mark.parametrize("folder", ["root", "python-ir"])
def test_a_folder_others_may_write_to_is_refused_with_a_warning(cache, folder):
    root, entry = cache
    path = root if folder == "root" else root / "python-ir"
    os.chmod(path, 0o777)
    with pytest.warns(UntrustedCacheWarning,
                      match=re.escape(f"does not trust {path}: group or others may write to it "
                                      f"(mode 777); make it owner-only (chmod 700 {path}) to "
                                      "use the cache")):
        assert run() == (1, 0)
    os.chmod(path, 0o700)
    assert run() == (0, 1)  # the entry there was not replaced while the folder was open


def test_an_entry_forged_with_a_recomputed_checksum_is_traced_again(cache):
    root, entry = cache
    forge(entry, lambda body: hashlib.sha256(body).hexdigest())
    assert run() == (1, 0)  # and the result is 3x, not the forged 2x
    assert run() == (0, 1)


def test_an_entry_signed_with_another_users_secret_is_traced_again(cache):
    root, entry = cache
    forge(entry, lambda body: hmac.new(os.urandom(32), body, hashlib.sha256).hexdigest())
    assert run() == (1, 0)


def test_a_secret_others_may_read_is_refused_with_a_warning(cache, monkeypatch):
    root, entry = cache
    monkeypatch.setattr(disk_cache, "_secrets", {})
    os.chmod(root / "secret.key", 0o644)
    with pytest.warns(UntrustedCacheWarning,
                      match=re.escape(f"does not trust {root / 'secret.key'}: group or others "
                                      "may read or write it (mode 644)")):
        assert run() == (1, 0)


def test_an_entry_that_is_a_symbolic_link_is_refused_with_a_warning(cache, tmp_path):
    root, entry = cache
    elsewhere = tmp_path / "elsewhere.tir"
    entry.rename(elsewhere)
    entry.symlink_to(elsewhere)
    with pytest.warns(UntrustedCacheWarning, match=re.escape(f"{entry}: it is a symbolic link")):
        assert run() == (1, 0)
    assert not entry.is_symlink()


# -- the C++ core's compiled objects (<cache root>/host, metile/runtime/disk_cache.h) -------
# They are code the process runs (dlopen), signed with the same secret. The host compiler's
# cache folder is fixed when a process first compiles, so each run is a new process.

CHILD = '''
import json, sys, warnings
import numpy as np
import metile

@metile.kernel
def scale(x, out, n, BLOCK: metile.constexpr):
    i = metile.program_id(0) * BLOCK + metile.arange(0, BLOCK)
    metile.store(out + i, metile.load(x + i, mask=i < n) * FACTOR, mask=i < n)

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    x, out = np.arange(8, dtype=np.float32), np.zeros(8, np.float32)
    scale[(1,)](x, out, 8, BLOCK=8)
print(json.dumps({"ratio": float(out[5] / x[5]),
                  "warnings": [[w.category.__name__, str(w.message)] for w in caught]}))
'''


def run_child(root, tmp_path, factor=3.0):
    """scale(x) = FACTOR * x compiled and run by a new process on the host device with
    ``root`` as its cache root; the ratio it computed and the warnings it saw."""
    import json
    import subprocess
    import sys

    script = tmp_path / "child" / "scale_kernel.py"  # one path: objects differ by FACTOR only
    script.parent.mkdir(exist_ok=True)
    script.write_text(f"FACTOR = {factor}\n" + CHILD)
    env = dict(os.environ, METILE_CACHE_DIR=str(root), METILE_DEVICE="host",
               METILE_TRACE_CACHE="off")
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return result["ratio"], result["warnings"]


@pytest.fixture
def objects(tmp_path):
    """A cache root whose host folder holds the compiled object of scale (x3)."""
    root = tmp_path / "cache" / "metile"
    ratio, caught = run_child(root, tmp_path)
    assert ratio == 3.0 and caught == []
    [entry] = (root / "host").glob("*.so")
    return root, entry


def fnv1a64(data, seed=0xcbf29ce484222325):
    h = seed
    for byte in data:
        h = ((h ^ byte) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def plain_checksum(name, data):
    """The checksum before issue 34 (metile::content_hash): anyone could recompute it."""
    return f"{name}\n{fnv1a64(data):016x}{fnv1a64(data, 0x84222325cbf29ce4):016x}".encode()


def hmac_checksum(key, name, data):
    digest = hmac.new(key, name.encode() + b"\0" + data, hashlib.sha256).hexdigest()
    return f"{name}\nhmac-sha256 {digest}\n".encode()


def test_compiled_objects_are_owner_only_and_signed_with_the_trace_caches_secret(objects):
    root, entry = objects
    assert mode(root) == 0o700 and mode(root / "host") == 0o700
    assert mode(root / "secret.key") == 0o600
    assert mode(entry) == 0o600 and mode(f"{entry}.sum") == 0o600
    [stdlib] = (root / "host").glob("stdlib-*")
    assert mode(stdlib) == 0o700
    assert all(mode(p) == (0o700 if p.is_dir() else 0o600) for p in stdlib.rglob("*"))
    # The C++ core's HMAC-SHA256 agrees with Python's, under the one per-user secret.
    secret_key = (root / "secret.key").read_bytes()
    assert len(secret_key) == 32
    assert (root / "host" / f"{entry.name}.sum").read_bytes() == hmac_checksum(
        secret_key, entry.name, entry.read_bytes())


@pytest.mark.parametrize("checksum", ["plain", "another key"])
def test_an_object_forged_with_a_recomputed_checksum_is_rebuilt(objects, tmp_path, checksum):
    root, entry = objects
    forger = tmp_path / "forger"
    assert run_child(forger, tmp_path, factor=2.0)[0] == 2.0
    [forged] = (forger / "host").glob("*.so")
    data = forged.read_bytes()
    entry.write_bytes(data)
    sum_bytes = (plain_checksum(entry.name, data) if checksum == "plain"
                 else hmac_checksum(os.urandom(32), entry.name, data))
    (root / "host" / f"{entry.name}.sum").write_bytes(sum_bytes)
    assert run_child(root, tmp_path) == (3.0, [])  # rebuilt: never the forged 2x
    assert entry.read_bytes() != data


def test_an_object_another_user_owns_is_refused_with_a_warning_and_rebuilt(objects, tmp_path):
    root, entry = objects
    if os.geteuid() != 0:
        pytest.skip("chown to another user needs root")
    os.chown(entry, FOREIGN_UID, FOREIGN_UID)
    ratio, caught = run_child(root, tmp_path)
    assert ratio == 3.0
    assert caught == [["UntrustedCacheWarning",
                       f"metile: the compiled-object cache does not trust {entry}: it is owned "
                       f"by uid {FOREIGN_UID}, not by this user (uid 0); it is removed and the "
                       "kernel compiled again"]]
    assert os.stat(entry).st_uid == 0
    assert run_child(root, tmp_path) == (3.0, [])


def test_a_host_folder_others_may_write_to_is_refused_with_a_warning(objects, tmp_path):
    root, entry = objects
    host = root / "host"
    os.chmod(host, 0o777)
    before = sorted(host.rglob("*"))
    ratio, caught = run_child(root, tmp_path)
    assert ratio == 3.0
    assert caught == [["UntrustedCacheWarning",
                       f"metile: the compiled-object cache does not trust {host}: group or "
                       f"others may write to it (mode 777); make it owner-only (chmod 700 {host}) "
                       "to use the cache; nothing there is used, and kernels are compiled in a "
                       "private temporary folder instead"]]
    assert sorted(host.rglob("*")) == before  # nothing read, written or removed there
    os.chmod(host, 0o700)
    assert run_child(root, tmp_path) == (3.0, [])


def test_a_compiled_object_that_is_a_symbolic_link_is_refused_with_a_warning(objects, tmp_path):
    root, entry = objects
    elsewhere = tmp_path / "elsewhere.so"
    entry.rename(elsewhere)
    entry.symlink_to(elsewhere)
    ratio, caught = run_child(root, tmp_path)
    assert ratio == 3.0
    assert [category for category, _ in caught] == ["UntrustedCacheWarning"]
    assert f"{entry}: it is a symbolic link" in caught[0][1]
    assert not entry.is_symlink()
