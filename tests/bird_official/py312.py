"""Makes CPython 3.8 to 3.11 score the official functions as CPython 3.12 does.

Two things 3.12 changed decide the official Soft-F1 (sqlgate reproduces 3.12):
- `hash(None)`: before 3.12 it is derived from None's address, which address-space layout
  randomisation changes from one process to the next, so the official Soft-F1 pairs rows
  holding a NULL in an order that changes from run to run; 3.12 made it the constant
  0xFCA86420. Here NoneType's `tp_hash` slot is set to a function returning that constant.
- `sum()` of floats: Neumaier-compensated since 3.12. `calculate_f1_score` calls the built-in
  `sum`; here the official module evaluation_f1 gets, as its global `sum`, 3.12's algorithm in
  Python.
The official text stays unchanged. Nothing else they use differs between 3.11 and 3.12: str and
bytes hashes under PYTHONHASHSEED=0 (SipHash-1-3 since 3.11), tuple, int, float, Decimal and
datetime hashes, and a set's iteration order."""
import ctypes
import math
import sys

NONE_HASH_312 = 0xFCA86420
# PyTypeObject on 3.8 to 3.11: the PyVarObject head (3 words), then tp_name, tp_basicsize,
# tp_itemsize, tp_dealloc, tp_vectorcall_offset, tp_getattr, tp_setattr, tp_as_async, tp_repr,
# tp_as_number, tp_as_sequence, tp_as_mapping: tp_hash is the 16th word.
TP_HASH_WORD = 15

_HASH_FUNC = ctypes.CFUNCTYPE(ctypes.c_ssize_t, ctypes.c_void_p)
_none_hash = _HASH_FUNC(lambda _none: NONE_HASH_312)


def sum_312(iterable, start=0):
    """CPython 3.12's built-in `sum` (Python/bltinmodule.c): an int fast path, then a float path
    that compensates float items (Neumaier) and adds int items plainly, then generic `+`."""
    items = iter(iterable)
    result = start
    if type(result) is int:
        for item in items:
            if type(item) in (int, bool):
                result += item
                continue
            result = result + item
            break
        else:
            return result
    if type(result) is float:
        total, compensation = result, 0.0
        for item in items:
            if type(item) is float:
                t = total + item
                if abs(total) >= abs(item):
                    compensation += (total - t) + item
                else:
                    compensation += (item - t) + total
                total = t
            elif isinstance(item, int):
                total += float(item)
            else:
                if compensation and math.isfinite(compensation):
                    total += compensation
                result = total + item
                break
        else:
            if compensation and math.isfinite(compensation):
                total += compensation
            return total
    for item in items:
        result = result + item
    return result


def behave_as_312(evaluation_f1):
    """Applies both changes when the interpreter is older than 3.12."""
    if sys.version_info >= (3, 12):
        return
    if sys.version_info < (3, 8) or sys.implementation.name != "cpython":
        raise SystemExit(f"bird_official: CPython 3.8 or later is needed, not {sys.version}")
    slot = id(type(None)) + TP_HASH_WORD * ctypes.sizeof(ctypes.c_void_p)
    ctypes.c_void_p.from_address(slot).value = ctypes.cast(_none_hash, ctypes.c_void_p).value
    if hash(None) != NONE_HASH_312 or hash((None, 1)) != -439879632793865346:
        raise SystemExit("bird_official: could not give None the hash CPython 3.12 gives it")
    evaluation_f1.sum = sum_312
