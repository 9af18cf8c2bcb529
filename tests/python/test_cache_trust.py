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
