"""A model file's global function replaced by a dispatcher while compiled models use it: the
function a framework's modules call by name from their file (mlx-lm's
scaled_dot_product_attention, transformers' apply_rotary_pos_emb), so a call made inside a
module with a region can go through the region. Counted: the file gets its own function back
when the last region using the patch lets go."""

import sys

_ORIGINALS = {}  # (file, name) -> (the file's own function, how many regions use the patch)


def patch(file, name, dispatcher):
    module = sys.modules[file]
    original, users = _ORIGINALS.get((file, name), (getattr(module, name), 0))
    _ORIGINALS[(file, name)] = (original, users + 1)
    setattr(module, name, dispatcher)


def unpatch(file, name):
    original, users = _ORIGINALS[(file, name)]
    if users > 1:
        _ORIGINALS[(file, name)] = (original, users - 1)
        return
    setattr(sys.modules[file], name, original)
    del _ORIGINALS[(file, name)]


def original(file, name):
    """The file's own function (patched or not), or None for a file without one."""
    found = _ORIGINALS.get((file, name))
    if found is not None:
        return found[0]
    return getattr(sys.modules.get(file), name, None)


def users(file, name):
    return _ORIGINALS.get((file, name), (None, 0))[1]
