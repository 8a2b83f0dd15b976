//! SQLite's `LIKE` and `GLOB` matching (`patternCompare` in SQLite's `func.c`), ported so that a
//! long match can be interrupted: the same verdict on every input, including invalid UTF-8 and
//! SQLite's ASCII-only case folding, with SQLite's recursion replaced by the one backtracking
//! point it can ever return to (the latest `%` / `*`), and the work counted by a [`Budget`].

use crate::util::watchdog::{Budget, Stop};

/// The wildcards of one matcher.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rules {
    /// Matches any sequence (`%`, `*`); 0 when it is the escape character.
    match_all: u32,
    /// Matches one character (`_`, `?`); 0 when it is the escape character.
    match_one: u32,
    /// The escape character (`LIKE ... ESCAPE`) or `[` (GLOB); 0 for none.
    match_other: u32,
    /// Whether `[...]` sets are recognised (GLOB).
    sets: bool,
    /// ASCII case folding (LIKE).
    no_case: bool,
}

impl Rules {
    /// `LIKE` without `ESCAPE`.
    pub const LIKE: Rules = Rules {
        match_all: '%' as u32,
        match_one: '_' as u32,
        match_other: 0,
        sets: false,
        no_case: true,
    };

    /// `GLOB`.
    pub const GLOB: Rules = Rules {
        match_all: '*' as u32,
        match_one: '?' as u32,
        match_other: '[' as u32,
        sets: true,
        no_case: false,
    };

    /// These rules with `escape` as the escape character (a wildcard equal to it is disabled).
    pub fn with_escape(self, escape: u32) -> Rules {
        Rules {
            match_all: if escape == self.match_all {
                0
            } else {
                self.match_all
            },
            match_one: if escape == self.match_one {
                0
            } else {
                self.match_one
            },
            match_other: escape,
            ..self
        }
    }
}

/// The leading bytes of the multi-byte UTF-8 forms, as SQLite decodes them.
const TRANS1: [u8; 64] = [
    0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
    0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f,
    0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
    0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x00, 0x01, 0x02, 0x03, 0x00, 0x01, 0x00, 0x00,
];

/// Reads one character at `*at` as `sqlite3Utf8Read` does (the end of `bytes` reads as 0, like
/// the terminating NUL) and moves past it.
pub fn read_char(bytes: &[u8], at: &mut usize) -> u32 {
    let Some(&first) = bytes.get(*at) else {
        *at += 1;
        return 0;
    };
    *at += 1;
    let mut c = first as u32;
    if c >= 0xc0 {
        c = TRANS1[(c - 0xc0) as usize] as u32;
        while let Some(&next) = bytes.get(*at).filter(|b| *b & 0xc0 == 0x80) {
            c = (c << 6).wrapping_add(0x3f & next as u32);
            *at += 1;
        }
        if c < 0x80 || (c & 0xFFFF_F800) == 0xD800 {
            c = 0xFFFD;
        }
    }
    c
}

/// The characters of `bytes` as SQLite's `SQLITE_SKIP_UTF8` steps through them, lazily, so a
/// caller can spend its budget per character on a value near the length cap.
pub fn chars(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut at = 0;
    std::iter::from_fn(move || {
        let start = at;
        (start < bytes.len()).then(|| {
            at = skip_char(bytes, start);
            &bytes[start..at]
        })
    })
}

/// The position after the character at `at` (`SQLITE_SKIP_UTF8`).
fn skip_char(bytes: &[u8], at: usize) -> usize {
    let mut next = at + 1;
    if bytes[at] >= 0xc0 {
        while bytes.get(next).is_some_and(|b| b & 0xc0 == 0x80) {
            next += 1;
        }
    }
    next
}

/// Whether `text` matches `pattern` (both up to their first NUL) under `rules`.
pub fn matches(
    pattern: &[u8],
    text: &[u8],
    rules: &Rules,
    budget: &mut Budget,
) -> Result<bool, Stop> {
    let matcher = Matcher {
        pattern,
        text,
        rules,
    };
    let mut star: Option<Star> = None;
    let mut step = matcher.run(0, 0, budget)?;
    loop {
        step = match step {
            Step::Match => return Ok(true),
            Step::NoWildcardMatch => return Ok(false),
            Step::Star(found) => {
                let found = star.insert(found);
                matcher.next_candidate(found, budget)?
            }
            Step::NoMatch => match star.as_mut() {
                None => return Ok(false),
                Some(found) => matcher.next_candidate(found, budget)?,
            },
        };
    }
}

/// What one pass of the matcher ended with (SQLite's return codes, plus a new `%` / `*` to
/// search from).
enum Step {
    Match,
    NoMatch,
    NoWildcardMatch,
    Star(Star),
}

/// The latest `%` / `*`: what follows it in the pattern and where the next candidate is sought.
enum Star {
    /// A character `c` follows: the rest of the pattern (after `c`) is tried after each
    /// occurrence of `c` in the text from `next` on.
    Char { c: u32, rest: usize, next: usize },
    /// A `[...]` set follows (GLOB): the pattern from the set is tried at every character.
    Set { set: usize, next: usize },
}

struct Matcher<'a> {
    pattern: &'a [u8],
    text: &'a [u8],
    rules: &'a Rules,
}

impl Matcher<'_> {
    /// Tries the pattern from the star's next candidate position on.
    fn next_candidate(&self, star: &mut Star, budget: &mut Budget) -> Result<Step, Stop> {
        match star {
            Star::Set { set, next } => {
                if *next >= self.text.len() {
                    return Ok(Step::NoWildcardMatch);
                }
                let at = *next;
                *next = skip_char(self.text, at);
                self.run(*set, at, budget)
            }
            Star::Char { c, rest, next } if *c < 0x80 => {
                let byte = *c as u8;
                let rest_of_text = &self.text[(*next).min(self.text.len())..];
                let found = if self.rules.no_case {
                    memchr::memchr2(
                        byte.to_ascii_uppercase(),
                        byte.to_ascii_lowercase(),
                        rest_of_text,
                    )
                } else {
                    memchr::memchr(byte, rest_of_text)
                };
                let Some(offset) = found else {
                    return Ok(Step::NoWildcardMatch);
                };
                budget.spend(1)?;
                *next += offset + 1;
                self.run(*rest, *next, budget)
            }
            Star::Char { c, rest, next } => loop {
                budget.spend(1)?;
                let read = read_char(self.text, next);
                if read == 0 {
                    return Ok(Step::NoWildcardMatch);
                }
                if read == *c {
                    return self.run(*rest, *next, budget);
                }
            },
        }
    }

    /// SQLite's matching loop from pattern position `p` and text position `s`, until it decides
    /// or meets a `%` / `*`.
    fn run(&self, mut p: usize, mut s: usize, budget: &mut Budget) -> Result<Step, Stop> {
        let rules = self.rules;
        let mut escaped_at = None;
        loop {
            budget.spend(1)?;
            let mut c = read_char(self.pattern, &mut p);
            if c == 0 {
                return Ok(if s >= self.text.len() {
                    Step::Match
                } else {
                    Step::NoMatch
                });
            }
            if c == rules.match_all {
                return Ok(self.star(p, s));
            }
            if c == rules.match_other {
                if !rules.sets {
                    c = read_char(self.pattern, &mut p);
                    if c == 0 {
                        return Ok(Step::NoMatch);
                    }
                    escaped_at = Some(p);
                } else if self.in_set(&mut p, &mut s) {
                    continue;
                } else {
                    return Ok(Step::NoMatch);
                }
            }
            let c2 = read_char(self.text, &mut s);
            if c == c2 {
                continue;
            }
            if rules.no_case && c < 0x80 && c2 < 0x80 && (c as u8).eq_ignore_ascii_case(&(c2 as u8))
            {
                continue;
            }
            if c == rules.match_one && escaped_at != Some(p) && c2 != 0 {
                continue;
            }
            return Ok(Step::NoMatch);
        }
    }

    /// After a `%` / `*` at pattern position `p - 1`: skips further stars and single-character
    /// wildcards (consuming a text character for each) and says what to search for.
    fn star(&self, mut p: usize, mut s: usize) -> Step {
        let rules = self.rules;
        let mut c;
        loop {
            c = read_char(self.pattern, &mut p);
            if c == rules.match_all {
                continue;
            }
            if c == rules.match_one && rules.match_one != 0 {
                if read_char(self.text, &mut s) == 0 {
                    return Step::NoWildcardMatch;
                }
                continue;
            }
            break;
        }
        if c == 0 {
            return Step::Match;
        }
        if c == rules.match_other {
            if rules.sets {
                return Step::Star(Star::Set {
                    set: p - 1,
                    next: s,
                });
            }
            c = read_char(self.pattern, &mut p);
            if c == 0 {
                return Step::NoWildcardMatch;
            }
        }
        Step::Star(Star::Char {
            c,
            rest: p,
            next: s,
        })
    }

    /// Matches one text character against the `[...]` set starting after `[` at `*p`.
    fn in_set(&self, p: &mut usize, s: &mut usize) -> bool {
        let c = read_char(self.text, s);
        if c == 0 {
            return false;
        }
        let (mut seen, mut invert, mut prior) = (false, false, 0u32);
        let mut c2 = read_char(self.pattern, p);
        if c2 == '^' as u32 {
            invert = true;
            c2 = read_char(self.pattern, p);
        }
        if c2 == ']' as u32 {
            seen = c == ']' as u32;
            c2 = read_char(self.pattern, p);
        }
        while c2 != 0 && c2 != ']' as u32 {
            let next = self.pattern.get(*p).copied().unwrap_or(0);
            if c2 == '-' as u32 && next != b']' && next != 0 && prior > 0 {
                c2 = read_char(self.pattern, p);
                if c >= prior && c <= c2 {
                    seen = true;
                }
                prior = 0;
            } else {
                if c == c2 {
                    seen = true;
                }
                prior = c2;
            }
            c2 = read_char(self.pattern, p);
        }
        c2 != 0 && seen != invert
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn like(pattern: &str, text: &str, rules: Rules) -> bool {
        let never = || false;
        matches(
            pattern.as_bytes(),
            text.as_bytes(),
            &rules,
            &mut Budget::new(&never),
        )
        .unwrap()
    }

    #[test]
    fn wildcards_escapes_sets_and_case() {
        assert!(like("a%c", "ABBBC", Rules::LIKE));
        assert!(like("_é%", "xé", Rules::LIKE));
        assert!(
            !like("_é%", "xÉ", Rules::LIKE),
            "case folding is ASCII only"
        );
        assert!(like(
            "%a!%b%",
            "xxa%bzz",
            Rules::LIKE.with_escape('!' as u32)
        ));
        assert!(!like(
            "%a!%b%",
            "xxazbzz",
            Rules::LIKE.with_escape('!' as u32)
        ));
        assert!(like("a%%", "a%", Rules::LIKE.with_escape('%' as u32)));
        assert!(!like("a%%", "ab", Rules::LIKE.with_escape('%' as u32)));
        assert!(like("*[a-c]?[^x]", "zzb1y", Rules::GLOB));
        assert!(!like("*[a-c]?[^x]", "zzb1x", Rules::GLOB));
        assert!(like("[]]*", "]z", Rules::GLOB));
        assert!(!like("A*", "abc", Rules::GLOB));
    }

    #[test]
    fn a_long_match_stops_when_interrupted() {
        let text = vec![b'a'; 1 << 20];
        let mut pattern = b"%".to_vec();
        pattern.extend(std::iter::repeat_n(b'a', 40_000));
        pattern.push(b'b');
        let always = || true;
        let stopped = matches(&pattern, &text, &Rules::LIKE, &mut Budget::new(&always));
        assert_eq!(stopped, Err(Stop::Interrupted));
    }
}
