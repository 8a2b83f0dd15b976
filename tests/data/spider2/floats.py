"""Writes pandas_floats.in: texts and the doubles pandas 2.2.3's `pd.read_csv` reads from them
(default `float_precision=None`: `precise_xstrtod`), for src/engine/read_csv.rs's tests.

    python floats.py > pandas_floats.in
"""
import io
import random
import struct

import pandas as pd

rng = random.Random(5)
texts = []
for _ in range(400):
    digits = "".join(rng.choice("0123456789") for _ in range(17))
    point = rng.randint(1, 16)
    text = digits[:point].lstrip("0") or "0"
    text += "." + digits[point:]
    texts.append(rng.choice(["", "-"]) + text)
for _ in range(100):
    texts.append(repr(rng.uniform(-1e6, 1e6)))
for _ in range(50):
    texts.append(f"{rng.uniform(1, 10):.16f}e{rng.randint(-320, 300)}")
texts += ["0.1", "1e-320", "2.2250738585072014e-308", "12345678901234567890", " 5.5 ", "1.7976931348623157e308"]
frame = pd.read_csv(io.StringIO("x\n" + "\n".join(texts) + "\n"), dtype={"x": float})
print("[")
for text, value in zip(texts, frame["x"]):
    bits = struct.unpack("<Q", struct.pack("<d", value))[0]
    print(f"    ({text!r:}, {bits:#x}),".replace("'", '"'))
print("]")
