//! CPython's `list(set(rows))` order, for scorers that pair rows by position after a set
//! conversion (BIRD mini-dev's Soft-F1).
//!
//! The order is a function of the rows' hashes and of insertion order: CPython 3.12's `hash` of
//! `int`, `float`, `None` (a constant since 3.12), `str` and `bytes` (SipHash-1-3, keyed by the
//! process's hash secret; here the key of `PYTHONHASHSEED=0`, the only reproducible setting),
//! the xxHash-style `tuple` hash, and `setobject.c`'s open addressing (linear probes of 9, then
//! perturbed probing; resize to 4x used when 60 % full). Under any other hash seed the official
//! order of rows holding text differs from run to run, and so can the official Soft-F1.

use crate::engine::pyvalue::{Date, Number, PyValue, TimeOfDay};
use crate::engine::value::{Key, Row, Value};

/// Mersenne prime modulus of numeric hashes (`_PyHASH_MODULUS`, 64-bit builds).
const MODULUS: u64 = (1 << 61) - 1;
const HASH_BITS: u32 = 61;
const HASH_INF: i64 = 314_159;
/// `hash(None)` since CPython 3.12.
const HASH_NONE: i64 = 0xFCA8_6420;

/// The indexes of the distinct rows of `rows` (first occurrences, by Python equality) in the
/// order CPython 3.12 iterates `set(rows)` when `PYTHONHASHSEED=0`.
pub fn set_order(rows: &[Row]) -> Vec<usize> {
    let mut table = Table::new();
    for (index, row) in rows.iter().enumerate() {
        table.add(rows, index, tuple_hash(row));
    }
    table.slots.into_iter().flatten().map(|(i, _)| i).collect()
}

/// CPython's set table: each slot holds (row index, hash).
struct Table {
    slots: Vec<Option<(usize, u64)>>,
    used: usize,
}

const LINEAR_PROBES: usize = 9;
const PERTURB_SHIFT: u32 = 5;

impl Table {
    fn new() -> Self {
        Table {
            slots: vec![None; 8],
            used: 0,
        }
    }

    /// `set_add_entry`.
    fn add(&mut self, rows: &[Row], index: usize, hash: u64) {
        let mask = self.slots.len() - 1;
        let mut i = hash as usize & mask;
        let mut perturb = hash;
        loop {
            let probes = if i + LINEAR_PROBES <= mask {
                LINEAR_PROBES
            } else {
                0
            };
            for slot in i..=i + probes {
                match self.slots[slot] {
                    None => {
                        self.slots[slot] = Some((index, hash));
                        self.used += 1;
                        if self.used * 5 >= mask * 3 {
                            self.resize(self.used * if self.used > 50_000 { 2 } else { 4 });
                        }
                        return;
                    }
                    Some((other, other_hash))
                        if other_hash == hash && rows_equal(&rows[other], &rows[index]) =>
                    {
                        return;
                    }
                    Some(_) => {}
                }
            }
            perturb >>= PERTURB_SHIFT;
            i = (i
                .wrapping_mul(5)
                .wrapping_add(1)
                .wrapping_add(perturb as usize))
                & mask;
        }
    }

    /// `set_table_resize` (no deleted entries here) with `set_insert_clean`.
    fn resize(&mut self, min_used: usize) {
        let mut size = 8;
        while size <= min_used {
            size <<= 1;
        }
        let old = std::mem::replace(&mut self.slots, vec![None; size]);
        let mask = size - 1;
        for (index, hash) in old.into_iter().flatten() {
            let mut i = hash as usize & mask;
            let mut perturb = hash;
            'probe: loop {
                let last = if i + LINEAR_PROBES <= mask {
                    i + LINEAR_PROBES
                } else {
                    i
                };
                for slot in i..=last {
                    if self.slots[slot].is_none() {
                        self.slots[slot] = Some((index, hash));
                        break 'probe;
                    }
                }
                perturb >>= PERTURB_SHIFT;
                i = (i
                    .wrapping_mul(5)
                    .wrapping_add(1)
                    .wrapping_add(perturb as usize))
                    & mask;
            }
        }
    }
}

fn rows_equal(a: &[Value], b: &[Value]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.key() == y.key())
}

/// CPython's `hash(tuple(row))`.
pub fn tuple_hash(row: &[Value]) -> u64 {
    const PRIME_1: u64 = 11_400_714_785_074_694_791;
    const PRIME_2: u64 = 14_029_467_366_897_019_727;
    const PRIME_5: u64 = 2_870_177_450_012_600_261;
    let mut acc = PRIME_5;
    for value in row {
        let lane = value_hash(value) as u64;
        acc = acc.wrapping_add(lane.wrapping_mul(PRIME_2));
        acc = acc.rotate_left(31);
        acc = acc.wrapping_mul(PRIME_1);
    }
    acc = acc.wrapping_add(row.len() as u64 ^ (PRIME_5 ^ 3_527_539));
    if acc == u64::MAX {
        1_546_275_796
    } else {
        acc
    }
}

/// CPython's `hash(x)` of one value.
pub fn value_hash(value: &Value) -> i64 {
    match value {
        Value::Null => HASH_NONE,
        Value::Int(i) => int_hash(*i),
        Value::Real(f) => match value.key() {
            Key::Int(i) => int_hash(i),
            _ => float_hash(*f),
        },
        Value::Text(s) => bytes_hash(&str_bytes(s)),
        Value::Blob(b) => bytes_hash(b),
        Value::Py(value) => py_hash(value),
    }
}

/// CPython's `hash(x)` of a `Decimal`, `bool`, date, datetime, time or timedelta.
fn py_hash(value: &PyValue) -> i64 {
    match value {
        PyValue::Bool(b) => i64::from(*b),
        PyValue::Decimal(decimal) => match &decimal.identity {
            Number::Int(i) => int_hash(*i),
            Number::Real(f) => float_hash(*f),
            Number::Exact(digits, exponent) => decimal_hash(digits, *exponent),
        },
        PyValue::Date(date) => bytes_hash(&date_bytes(*date)),
        PyValue::DateTime {
            date,
            time,
            offset: None,
        } => {
            let mut bytes = date_bytes(*date).to_vec();
            bytes.extend(time_bytes(*time));
            bytes_hash(&bytes)
        }
        PyValue::DateTime {
            date,
            time,
            offset: Some(offset),
        } => {
            let local = date.ordinal() * MICROS_PER_DAY + time.micros();
            timedelta_hash(local - i64::from(*offset) * 1_000_000)
        }
        PyValue::Time(time) => bytes_hash(&time_bytes(*time)),
        // `time_hash` in CPython's C datetime: the hash of `timedelta(local) - utcoffset`.
        PyValue::TimeTz { time, offset } => {
            timedelta_hash(time.micros() - i64::from(*offset) * 1_000_000)
        }
        PyValue::TimeDelta(micros) => timedelta_hash(*micros),
    }
}

const MICROS_PER_DAY: i64 = 86_400_000_000;

/// `date.data`: the year in two bytes, month, day.
fn date_bytes(date: Date) -> [u8; 4] {
    let [_, _, high, low] = date.year.to_be_bytes();
    [high, low, date.month as u8, date.day as u8]
}

/// The time part of `datetime.data` / `time.data`: hour, minute, second, microsecond in three bytes.
fn time_bytes(time: TimeOfDay) -> [u8; 6] {
    let [_, a, b, c] = time.micro.to_be_bytes();
    [
        time.hour as u8,
        time.minute as u8,
        time.second as u8,
        a,
        b,
        c,
    ]
}

/// `hash(timedelta)`: the hash of the tuple `(days, seconds, microseconds)`.
fn timedelta_hash(micros: i64) -> i64 {
    let days = micros.div_euclid(MICROS_PER_DAY);
    let rest = micros.rem_euclid(MICROS_PER_DAY);
    let state = [
        Value::Int(days),
        Value::Int(rest / 1_000_000),
        Value::Int(rest % 1_000_000),
    ];
    tuple_hash(&state) as i64
}

/// `Decimal.__hash__` of `±digits × 10^exponent`: the value modulo the hash modulus, with
/// 10's inverse for negative exponents; `NaN` hashes to 0 here (CPython uses its identity).
fn decimal_hash(digits: &str, exponent: i64) -> i64 {
    let (negative, digits) = match digits.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, digits),
    };
    if !digits.bytes().all(|b| b.is_ascii_digit()) {
        return 0;
    }
    let modulus = u128::from(MODULUS);
    let coefficient = digits
        .bytes()
        .fold(0u128, |acc, b| (acc * 10 + u128::from(b - b'0')) % modulus);
    const TEN_INVERSE: u128 = 2_075_258_708_292_324_556;
    let base = if exponent >= 0 { 10 } else { TEN_INVERSE };
    let scale = power_mod(base, exponent.unsigned_abs(), modulus);
    let magnitude = (coefficient * scale % modulus) as i64;
    let hash = if negative { -magnitude } else { magnitude };
    if hash == -1 {
        -2
    } else {
        hash
    }
}

fn power_mod(mut base: u128, mut exponent: u64, modulus: u128) -> u128 {
    let mut result = 1u128;
    base %= modulus;
    while exponent > 0 {
        if exponent & 1 == 1 {
            result = result * base % modulus;
        }
        base = base * base % modulus;
        exponent >>= 1;
    }
    result
}

fn int_hash(i: i64) -> i64 {
    let magnitude = (i.unsigned_abs() % MODULUS) as i64;
    let hash = if i < 0 { -magnitude } else { magnitude };
    if hash == -1 {
        -2
    } else {
        hash
    }
}

/// `_Py_HashDouble` for a finite non-integral or infinite value (NaN never comes from SQLite).
fn float_hash(v: f64) -> i64 {
    if v.is_infinite() {
        return if v > 0.0 { HASH_INF } else { -HASH_INF };
    }
    if v.is_nan() {
        return 0;
    }
    let (mut m, mut e) = frexp(v);
    let sign: i64 = if m < 0.0 {
        m = -m;
        -1
    } else {
        1
    };
    let mut x: u64 = 0;
    while m != 0.0 {
        x = ((x << 28) & MODULUS) | x >> (HASH_BITS - 28);
        m *= 268_435_456.0;
        e -= 28;
        let y = m as u64;
        m -= y as f64;
        x += y;
        if x >= MODULUS {
            x -= MODULUS;
        }
    }
    let e = if e >= 0 {
        e as u32 % HASH_BITS
    } else {
        HASH_BITS - 1 - ((-1 - e) as u32 % HASH_BITS)
    };
    x = ((x << e) & MODULUS) | x >> (HASH_BITS - e);
    let hash = (x as i64).wrapping_mul(sign);
    if hash == -1 {
        -2
    } else {
        hash
    }
}

/// C's `frexp`: `v = m * 2^e` with `0.5 <= |m| < 1`.
fn frexp(v: f64) -> (f64, i32) {
    if v == 0.0 {
        return (v, 0);
    }
    let bits = v.to_bits();
    let exponent = ((bits >> 52) & 0x7ff) as i32;
    if exponent == 0 {
        let (m, e) = frexp(v * f64::powi(2.0, 64));
        return (m, e - 64);
    }
    let m = f64::from_bits((bits & !(0x7ff << 52)) | (1022 << 52));
    (m, exponent - 1022)
}

/// The bytes CPython hashes for a `str`: one, two or four bytes per code point (little-endian),
/// by the widest code point.
fn str_bytes(s: &str) -> Vec<u8> {
    let widest = s.chars().map(u32::from).max().unwrap_or(0);
    let width = match widest {
        0..=0xff => 1,
        0x100..=0xffff => 2,
        _ => 4,
    };
    s.chars()
        .flat_map(|c| u32::from(c).to_le_bytes().into_iter().take(width))
        .collect()
}

/// `_Py_HashBytes` with SipHash-1-3 under the zero key.
fn bytes_hash(bytes: &[u8]) -> i64 {
    if bytes.is_empty() {
        return 0;
    }
    let hash = siphash13(0, 0, bytes) as i64;
    if hash == -1 {
        -2
    } else {
        hash
    }
}

fn siphash13(k0: u64, k1: u64, bytes: &[u8]) -> u64 {
    let mut v = [
        k0 ^ 0x736f_6d65_7073_6575,
        k1 ^ 0x646f_7261_6e64_6f6d,
        k0 ^ 0x6c79_6765_6e65_7261,
        k1 ^ 0x7465_6462_7974_6573,
    ];
    let round = |v: &mut [u64; 4]| {
        v[0] = v[0].wrapping_add(v[1]);
        v[1] = v[1].rotate_left(13) ^ v[0];
        v[0] = v[0].rotate_left(32);
        v[2] = v[2].wrapping_add(v[3]);
        v[3] = v[3].rotate_left(16) ^ v[2];
        v[0] = v[0].wrapping_add(v[3]);
        v[3] = v[3].rotate_left(21) ^ v[0];
        v[2] = v[2].wrapping_add(v[1]);
        v[1] = v[1].rotate_left(17) ^ v[2];
        v[2] = v[2].rotate_left(32);
    };
    let chunks = bytes.chunks_exact(8);
    let tail = chunks.remainder();
    for chunk in chunks {
        let m = u64::from_le_bytes(chunk.try_into().expect("eight bytes"));
        v[3] ^= m;
        round(&mut v);
        v[0] ^= m;
    }
    let mut last = (bytes.len() as u64) << 56;
    for (i, &b) in tail.iter().enumerate() {
        last |= (b as u64) << (8 * i);
    }
    v[3] ^= last;
    round(&mut v);
    v[0] ^= last;
    v[2] ^= 0xff;
    for _ in 0..3 {
        round(&mut v);
    }
    v[0] ^ v[1] ^ v[2] ^ v[3]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values printed by `PYTHONHASHSEED=0 python3.12 -c "print(hash(...))"`.
    #[test]
    fn hashes_equal_cpython_3_12() {
        assert_eq!(value_hash(&Value::Text("a".into())), 4644417185603328019);
        assert_eq!(value_hash(&Value::Blob(b"a".to_vec())), 4644417185603328019);
        assert_eq!(value_hash(&Value::Text(String::new())), 0);
        assert_eq!(value_hash(&Value::Real(1.5)), 1152921504606846977);
        assert_eq!(value_hash(&Value::Null), 4238894112);
        assert_eq!(value_hash(&Value::Int(-1)), -2);
        assert_eq!(
            tuple_hash(&[Value::Int(1), Value::Int(2)]) as i64,
            -3550055125485641917
        );
    }

    /// Values printed by `PYTHONHASHSEED=0 python3 -c "print(hash(...))"` for the types of
    /// psycopg2 and PyMySQL.
    #[test]
    fn server_value_hashes_equal_cpython() {
        use crate::engine::pyvalue::Decimal;
        let py = |value: PyValue| value_hash(&Value::Py(Box::new(value)));
        let decimal = |text: &str| py(PyValue::Decimal(Decimal::parse(text).unwrap()));
        assert_eq!(decimal("0.1"), 2075258708292324556);
        assert_eq!(decimal("-12.5"), -1152921504606846988);
        assert_eq!(decimal("0.5"), value_hash(&Value::Real(0.5)));
        assert_eq!(py(PyValue::Bool(true)), 1);
        let date = Date::new(2024, 2, 29).unwrap();
        assert_eq!(py(PyValue::Date(date)), 7258198328644207850);
        let date = Date::new(2020, 1, 2).unwrap();
        let time = TimeOfDay::new(3, 4, 5, 120).unwrap();
        let naive = PyValue::DateTime {
            date,
            time,
            offset: None,
        };
        assert_eq!(py(naive), 7877628105515251771);
        let time = TimeOfDay::new(3, 4, 5, 0).unwrap();
        let aware = PyValue::DateTime {
            date,
            time,
            offset: Some(5 * 3600 + 1800),
        };
        assert_eq!(py(aware), 3834612577025519732);
        assert_eq!(
            py(PyValue::Time(TimeOfDay::new(7, 5, 3, 120).unwrap())),
            5195505789314799273
        );
        assert_eq!(py(PyValue::TimeDelta(-1)), 7763318687411368668);
    }
}
