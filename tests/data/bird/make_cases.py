"""Writes cases/dev.json and cases/predictions.json: hand-made (gold, prediction) pairs on cases.sql
covering duplicates, column order, NULLs, floats, empty results, ties, text kinds and blobs."""
import json

CASES = [
    ("identical", "SELECT name, score FROM t", "SELECT name, score FROM t"),
    ("column order", "SELECT name, score FROM t", "SELECT score, name FROM t"),
    ("duplicates", "SELECT grp FROM t", "SELECT DISTINCT grp FROM t"),
    ("row order", "SELECT id FROM t ORDER BY id", "SELECT id FROM t ORDER BY id DESC"),
    ("subset of rows", "SELECT id, name FROM t", "SELECT id, name FROM t WHERE id < 4"),
    ("superset of rows", "SELECT id, name FROM t WHERE id < 4", "SELECT id, name FROM t"),
    ("nulls", "SELECT score FROM t WHERE score IS NULL", "SELECT NULL"),
    ("null vs value", "SELECT grp FROM t WHERE id = 5", "SELECT 'x'"),
    ("int vs real", "SELECT 1", "SELECT 1.0"),
    ("text vs int", "SELECT '1'", "SELECT 1"),
    ("float precision", "SELECT score FROM t WHERE id = 8", "SELECT 0.3"),
    ("float rounding", "SELECT score * 3 FROM t", "SELECT round(score * 3, 1) FROM t"),
    ("both empty", "SELECT x FROM e", "SELECT id FROM t WHERE 0"),
    ("gold empty", "SELECT x FROM e", "SELECT id FROM t"),
    ("prediction empty", "SELECT id FROM t", "SELECT x FROM e"),
    ("extra column", "SELECT name FROM t", "SELECT name, id FROM t"),
    ("missing column", "SELECT name, id, grp FROM t", "SELECT name, grp FROM t"),
    ("partial rows and columns", "SELECT name, grp FROM t WHERE id <= 6", "SELECT name, score FROM t WHERE id >= 3"),
    ("shuffled cells", "SELECT id, name, grp FROM t", "SELECT grp, id, name FROM t ORDER BY name"),
    ("tie at limit", "SELECT name FROM t ORDER BY score DESC LIMIT 2", "SELECT name FROM t WHERE score = 2.5"),
    ("aggregate", "SELECT grp, count(*) FROM t GROUP BY grp", "SELECT grp, count(id) FROM t GROUP BY grp"),
    ("aggregate off by one", "SELECT grp, count(*) FROM t GROUP BY grp", "SELECT grp, count(score) FROM t GROUP BY grp"),
    ("big integers", "SELECT v FROM n", "SELECT v FROM n WHERE v > 0"),
    ("blobs", "SELECT b FROM n", "SELECT b FROM n WHERE b IS NOT NULL"),
    ("blob vs text", "SELECT b FROM n WHERE v = 1", "SELECT 'a'"),
    ("mixed types", "SELECT v, w FROM n", "SELECT w, v FROM n"),
    ("unicode", "SELECT name FROM t WHERE id >= 7", "SELECT name FROM t WHERE id >= 8"),
    ("duplicate values in a row", "SELECT name, name FROM t", "SELECT name, grp FROM t"),
    ("many rows", "SELECT a.id, b.name FROM t AS a, t AS b", "SELECT a.id, b.name FROM t AS a, t AS b WHERE a.id <> 3"),
    ("many text rows", "SELECT a.name || b.grp FROM t AS a, t AS b", "SELECT a.name || b.grp FROM t AS a, t AS b WHERE b.id < 9"),
    ("prediction error", "SELECT id FROM t", "SELEC id FROM t"),
    ("prediction unknown column", "SELECT id FROM t", "SELECT nope FROM t"),
    ("gold error", "SELECT nope FROM t", "SELECT id FROM t"),
    ("missing prediction", "SELECT id FROM t", None),
]

json.dump([{"question_id": i, "db_id": "cases", "question": name, "evidence": "", "SQL": gold,
            "difficulty": ["simple", "moderate", "challenging"][i % 3]}
           for i, (name, gold, _) in enumerate(CASES)], open("cases/dev.json", "w"), indent=1, ensure_ascii=False)
json.dump({str(i): pred + "\t----- bird -----\tcases" for i, (_, _, pred) in enumerate(CASES) if pred is not None},
          open("cases/predictions.json", "w"), indent=1, ensure_ascii=False)
