"""Writes cases.jsonl: the Spider 2.0 differential corpus (README.md beside this file).

    python make_cases.py > cases.jsonl        # pandas 2.2.3, seed fixed below

Each case is one Spider 2.0-lite instance: gold result files (CSV text, named as in
gold/exec_result), the eval settings (`condition_cols` as written, or absent; `ignore_order`) and a
prediction: a table of typed SQLite values the test stores as table `p<n>` and predicts with
`SELECT * FROM p<n>`. Gold tables are synthetic but shaped like the real spider2-lite golds: small
integer counts, 19-digit and 64-digit ids, floats with up to 17 significant digits, dates and
timestamps, names, booleans, NULLs, numbers padded with spaces. Gold CSVs are written as Spider
2.0's are (`DataFrame.to_csv(index=False)`), or verbatim for the malformed ones.
"""
import io
import json
import random
import struct
import sys

import pandas as pd

RNG = random.Random(35)
WORDS = ["Oslo", "Lyon", "alpha", "beta", "N/A x", "Zürich", "a,b", 'say "hi"', "007", "True", "1e3"]


def real(x):
    """A float as its exact bits (the test stores the same double in SQLite)."""
    return {"real": struct.unpack("<q", struct.pack("<d", x))[0]}


def value_kind(kind):
    r = RNG
    if kind == "int":
        return r.choice([r.randint(0, 20), r.randint(-5, 5), r.randint(1000, 10**6)])
    if kind == "float":
        return round(r.uniform(-100, 1000), r.choice([1, 2, 3, 6, 15]))
    if kind == "f17":
        return float(f"{r.uniform(1, 99):.15f}") + r.random() * 1e-12
    if kind == "text":
        return r.choice(WORDS)
    if kind == "date":
        return f"20{r.randint(10, 24)}-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}"
    if kind == "ts":
        return f"2023-0{r.randint(1, 9)}-1{r.randint(0, 9)} {r.randint(10, 23)}:0{r.randint(0, 9)}:00"
    if kind == "bigid":
        return str(r.randint(10**63, 10**64 - 1))
    if kind == "uid":
        return str(r.randint(2**63, 2**64 - 1))
    if kind == "bool":
        return r.choice([True, False])
    if kind == "nint":
        return None if r.random() < 0.3 else r.randint(0, 9)
    if kind == "nfloat":
        return None if r.random() < 0.3 else round(r.uniform(0, 5), 3)
    if kind == "ntext":
        return None if r.random() < 0.3 else r.choice(WORDS)
    raise ValueError(kind)


KINDS = ["int", "float", "f17", "text", "date", "ts", "bigid", "uid", "bool", "nint", "nfloat", "ntext"]


def gold_table(kinds=None, rows=None):
    kinds = kinds or [RNG.choice(KINDS) for _ in range(RNG.choice([1, 2, 2, 3, 3, 4]))]
    rows = RNG.choice([1, 2, 3, 4, 5, 6]) if rows is None else rows
    return kinds, [[value_kind(k) for k in kinds] for _ in range(rows)]


def to_csv(columns, rows):
    """A gold file as Spider 2.0 writes one: the values through a DataFrame and to_csv."""
    frame = pd.DataFrame([[to_python(v) for v in row] for row in rows], columns=columns)
    out = io.StringIO()
    frame.to_csv(out, index=False)
    return out.getvalue()


def to_python(v):
    if isinstance(v, str) and v.isdigit() and len(v) > 18:
        return int(v)
    return v


def sqlite_value(v):
    """A gold value as a prediction would return it from SQLite."""
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, float):
        return real(v)
    return v


def pred_rows(rows):
    return [[sqlite_value(v) for v in row] for row in rows]


def perturb_value(v, how):
    if how == "noise":
        return real(v + RNG.choice([-0.011, -0.009, -0.005, 0.004, 0.0099, 0.0101, 0.02])) if isinstance(v, float) else sqlite_value(v)
    if how == "round":
        return real(round(v, RNG.choice([0, 1, 2]))) if isinstance(v, float) else sqlite_value(v)
    if how == "null":
        return RNG.choice(["NULL", "None", "", "nan", "N/A", 0, real(0.004), "null", "0", None]) if v is None else sqlite_value(v)
    if how == "bignum":
        if isinstance(v, str) and v.isdigit() and len(v) > 18:
            choice = RNG.choice(["float", "digit", "same", "int"])
            if choice == "float":
                return real(float(v))
            if choice == "digit":
                return v[:-3] + str((int(v[-3]) + 1) % 10) + v[-2:]
            if choice == "int" and int(v) < 2**63:
                return int(v)
        return sqlite_value(v)
    if how == "date":
        if isinstance(v, str) and len(v) == 10 and v[4] == "-":
            return RNG.choice([v + " 00:00:00", v.replace("-", "/"), v])
        return sqlite_value(v)
    if how == "text_number":
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return RNG.choice([str(v), f" {v}", f"{v} "])
        return sqlite_value(v)
    raise ValueError(how)


RANDOM = "random"


def case(klass, golds, pred_columns, pred, condition=RANDOM, ignore_order=None):
    """One instance; `condition` is `condition_cols` as written, "absent" for none."""
    if condition == RANDOM:
        condition = RNG.choice(["absent", None, [], [], [], [], [[]]])
    record = {"class": klass, "golds": golds, "pred_columns": pred_columns, "pred": pred,
              "ignore_order": RNG.random() < 0.5 if ignore_order is None else ignore_order}
    if condition != "absent":
        record["condition_cols"] = condition
    return record


def names(n, prefix="c"):
    return [f"{prefix}{i}" for i in range(n)]


def simple(klass, transform, rows=None, kinds=None):
    kinds, rows = gold_table(kinds, rows)
    cols = names(len(kinds))
    columns, pred = transform(kinds, rows)
    return case(klass, {"single": to_csv(cols, rows)}, columns, pred)


def shuffled(rows):
    rows = list(rows)
    RNG.shuffle(rows)
    return rows


def generate():
    out = []
    add = out.append
    for _ in range(60):
        add(simple("identity", lambda k, r: (names(len(k), "p"), pred_rows(r))))
    for _ in range(60):
        def reorder(k, r):
            order = list(range(len(k)))
            RNG.shuffle(order)
            return names(len(k), "p"), [[sqlite_value(row[i]) for i in order] for row in r]
        add(simple("reordered columns", reorder))
    for _ in range(60):
        def extra(k, r):
            extra_kind = RNG.choice(KINDS)
            return names(len(k) + 1, "p"), [[sqlite_value(value_kind(extra_kind))] + pred_rows([row])[0] for row in r]
        add(simple("extra column", lambda k, r: tuple(x for x in extra(k, r))))
    for _ in range(40):
        add(simple("renamed columns", lambda k, r: (names(len(k), "renamed_"), pred_rows(r))))
    for _ in range(80):
        add(simple("shuffled rows", lambda k, r: (names(len(k), "p"), pred_rows(shuffled(r)))))
    for _ in range(40):
        def scramble(k, r):
            columns = [list(c) for c in zip(*r)] if r else []
            for c in columns:
                RNG.shuffle(c)
            return names(len(k), "p"), pred_rows([list(x) for x in zip(*columns)]) if columns else []
        add(simple("scrambled across rows", scramble, kinds=[RNG.choice(["int", "text"]), RNG.choice(["int", "text", "float"])]))
    for how, count, kinds in [
        ("noise", 100, lambda: ["float", RNG.choice(["float", "f17", "int"])]),
        ("round", 60, lambda: ["float", RNG.choice(["text", "float"])]),
        ("null", 100, lambda: [RNG.choice(["nint", "nfloat", "ntext"]), RNG.choice(["int", "text", "nint"])]),
        ("bignum", 80, lambda: [RNG.choice(["bigid", "uid"]), RNG.choice(["int", "text", "bigid", "uid"])]),
        ("date", 50, lambda: ["date", RNG.choice(["ts", "int"])]),
        ("text_number", 60, lambda: [RNG.choice(["int", "float"]), "text"]),
    ]:
        for _ in range(count):
            add(simple(how, lambda k, r, how=how: (names(len(k), "p"), [[perturb_value(v, how) for v in row] for row in r]), kinds=kinds()))
    for _ in range(50):
        def dropped(k, r):
            r = list(r)
            if r and RNG.random() < 0.5:
                r.pop(RNG.randrange(len(r)))
            elif r:
                r.insert(RNG.randrange(len(r) + 1), RNG.choice(r))
            return names(len(k), "p"), pred_rows(r)
        add(simple("dropped or duplicated rows", dropped))
    out.extend(padded_cases(80))
    out.extend(missing_is_zero_cases(60))
    out.extend(float_edge_cases(80))
    out.extend(alternative_cases(100))
    out.extend(malformed_cases(50))
    out.extend(empty_cases(20))
    return out


def padded_cases(count):
    """D1: numbers written with spaces around them are numbers to pandas."""
    result = []
    for _ in range(count):
        values = [RNG.randint(0, 99) for _ in range(RNG.randint(1, 4))]
        style = RNG.choice(["lead", "trail", "both"])
        pad = lambda v: {"lead": f" {v}", "trail": f"{v} ", "both": f"  {v} "}[style]
        text = "n,label\n" + "".join(f"{pad(v)},w{i}\n" for i, v in enumerate(values))
        pred_kind = RNG.choice(["int", "text", "padded", "float"])
        pred = [[{"int": v, "text": str(v), "padded": pad(v), "float": real(v + 0.001)}[pred_kind], f"w{i}"] for i, v in enumerate(values)]
        result.append(case("padded numbers", {"single": text}, ["n", "label"], pred))
    return result


def missing_is_zero_cases(count):
    """D3: gold NULL against a predicted 0, 0.004, False, '0'."""
    result = []
    for _ in range(count):
        rows = [[RNG.choice([None, RNG.randint(1, 9)]), f"k{i}"] for i in range(RNG.randint(1, 5))]
        rows[0][0] = None
        zero = RNG.choice([0, real(0.004), real(0.0), "0", real(0.02), "False", None])
        pred = [[zero if r[0] is None else r[0], r[1]] for r in rows]
        result.append(case("missing is zero", {"single": to_csv(["v", "k"], rows)}, ["v", "k"], pred))
    return result


def float_edge_cases(count):
    """D5: 17-digit floats one hundredth apart, where pandas' parser is one step off."""
    result = []
    for _ in range(count):
        g = RNG.uniform(0.1, 900)
        p = g + RNG.choice([0.01, -0.01, 0.01 + 2**-40, -0.01 - 2**-40])
        text = f"x\n{g!r}\n"
        result.append(case("float tolerance edge", {"single": text}, ["x"], [[real(p)]], ignore_order=False))
    return result


def alternative_cases(count):
    """Several gold files (`_a`, `_b`, ...), a lone `_a` (D2), condition lists per answer."""
    result = []
    for _ in range(count):
        n = RNG.choice([1, 1, 2, 2, 3])
        tables = [gold_table([RNG.choice(["int", "text", "float"]) for _ in range(RNG.randint(2, 4))]) for _ in range(n)]
        golds = {f"_{chr(97 + i)}": to_csv(names(len(k)), r) for i, (k, r) in enumerate(tables)}
        if RNG.random() < 0.2:
            golds["single"] = to_csv(names(len(tables[0][0])), tables[0][1])
        pick = RNG.randrange(n)
        kinds, rows = tables[pick]
        cols = list(range(len(kinds)))
        RNG.shuffle(cols)
        keep = cols[: RNG.randint(1, len(cols))]
        pred = [[sqlite_value(row[i]) for i in keep] for row in rows]
        width = min(len(k) for k, _ in tables)
        condition = RNG.choice([
            "absent", "null", [], [[]], [0], [width - 1], [0, width - 1], [1, 0], [-1],
            [[RNG.randrange(width)] for _ in range(n)],
            [[RNG.randrange(width)] for _ in range(max(1, n - 1))],
            [[RNG.randrange(width)] for _ in range(n + 1)],
            [width + 2], [[0], 1],
        ])
        condition = None if condition == "null" else condition
        result.append(case("alternative golds", golds, names(len(keep), "p"), pred, condition=condition))
    return result


def malformed_cases(count):
    """Gold files pandas reads its own way (short rows, bare CR) or refuses (too many fields)."""
    result = []
    for _ in range(count):
        shape = RNG.choice(["short", "bare_cr", "long", "quote_cr", "open_quote", "blank_lines"])
        rows = [[RNG.randint(0, 9), RNG.choice(WORDS[:4]), RNG.randint(0, 9)] for _ in range(RNG.randint(2, 4))]
        lines = [",".join(str(v) for v in r) for r in rows]
        pred = [[r[0], r[1], r[2]] for r in rows]
        if shape == "short":
            lines[-1] = f"{rows[-1][0]},{rows[-1][1]}"
            pred[-1][2] = RNG.choice([None, 0, rows[-1][2]])
        elif shape == "bare_cr":
            lines[0] = f"{rows[0][0]},{rows[0][1]}\r{rows[0][2]}"
            pred = [[None, None, None]] + pred if RNG.random() < 0.3 else pred
        elif shape == "long":
            lines[-1] += ",9"
        elif shape == "quote_cr":
            lines[0] = f'{rows[0][0]},"{rows[0][1]}\r",{rows[0][2]}'
            pred[0][1] = RNG.choice([rows[0][1] + "\r", rows[0][1]])
        elif shape == "open_quote":
            lines[-1] = f'{rows[-1][0]},"{rows[-1][1]},{rows[-1][2]}'
        else:
            lines.insert(1, "   ")
            lines.insert(0, "")
        text = "a,b,c\n" + "\n".join(lines) + "\n"
        result.append(case(f"malformed gold ({shape})", {"single": text}, ["a", "b", "c"], pred))
    return result


def empty_cases(count):
    result = []
    for _ in range(count):
        kinds, rows = gold_table(["int", "text"], rows=RNG.choice([0, 0, 1]))
        pred = [] if RNG.random() < 0.6 else pred_rows(rows)
        result.append(case("empty results", {"single": to_csv(["a", "b"], rows)}, ["a", "b"], pred))
    return result


def main():
    for number, record in enumerate(generate()):
        record["instance_id"] = f"local{number:04d}"
        print(json.dumps(record, ensure_ascii=False))


if __name__ == "__main__":
    sys.exit(main())
