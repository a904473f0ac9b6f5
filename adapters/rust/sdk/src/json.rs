//! The strict JSON codec: the only way JSON enters the adapter.
//!
//! [`parse`] accepts exactly one RFC 8259 value and refuses what lenient
//! parsers let through (docs/CONTRACT.md, "Exit codes, logs and JSON"): invalid
//! UTF-8, a duplicate object key at any depth, `NaN`/`Infinity` or any other
//! non-standard token, trailing data, and nesting deeper than [`MAX_DEPTH`]
//! containers (`[]` is depth 1). Integers, fractions and booleans stay distinct
//! (`1`, `1.0` and `true` are three different values in the tree).
//!
//! Numbers follow the I-JSON profile of docs/scenarios.md ("Numbers: the I-JSON
//! profile", RFC 7493 section 2.2): an integer literal (no fraction, no
//! exponent) within the 64-bit range is kept exactly (so 2^53 - 1 round-trips
//! digit for digit); any other number is a binary64 value, correctly rounded.
//! An integer literal beyond 64 bits (outside the profile) becomes its binary64
//! value, as JavaScript reads it; a number whose magnitude overflows binary64
//! (`1e400`) is refused, since no binary64 value carries it.
//!
//! Strings: every escape of RFC 8259 section 7, surrogate pairs combined. An
//! escaped lone surrogate (`"\ud800"`) is refused: a Rust string cannot hold
//! it, RFC 8259 section 8.2 calls such strings unpredictable and I-JSON
//! (RFC 7493 section 2.1) forbids them. (The Python, TypeScript and Go adapters
//! keep them; no scenario and no doc relies on either reading.)

use serde_json::{Map, Number, Value};
use std::cmp::Ordering;
use std::fmt;

/// The deepest nesting of containers a JSON text may have.
pub const MAX_DEPTH: usize = 512;

/// Why a text is not one strict JSON value (with the byte offset).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonError {
    /// Byte offset in the input where the problem was found.
    pub offset: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "malformed JSON at byte {}: {}",
            self.offset, self.message
        )
    }
}

impl std::error::Error for JsonError {}

/// Parses exactly one strict JSON value (see the module documentation).
pub fn parse(bytes: &[u8]) -> Result<Value, JsonError> {
    if let Err(e) = std::str::from_utf8(bytes) {
        return Err(JsonError {
            offset: e.valid_up_to(),
            message: "invalid UTF-8".into(),
        });
    }
    let mut p = Parser {
        data: bytes,
        pos: 0,
    };
    p.space();
    let v = p.value(0)?;
    p.space();
    if p.pos != p.data.len() {
        return Err(p.fail("trailing data after the JSON value"));
    }
    Ok(v)
}

/// Parses a string slice (already UTF-8) strictly; see [`parse`].
pub fn parse_str(text: &str) -> Result<Value, JsonError> {
    parse(text.as_bytes())
}

struct Parser<'a> {
    data: &'a [u8],
    pos: usize,
}

impl Parser<'_> {
    fn fail(&self, message: &str) -> JsonError {
        JsonError {
            offset: self.pos,
            message: message.to_string(),
        }
    }

    fn peek(&self) -> Option<u8> {
        self.data.get(self.pos).copied()
    }

    fn space(&mut self) {
        while let Some(b' ' | b'\t' | b'\r' | b'\n') = self.peek() {
            self.pos += 1;
        }
    }

    fn literal(&mut self, word: &str, v: Value) -> Result<Value, JsonError> {
        if self.data[self.pos..].starts_with(word.as_bytes()) {
            self.pos += word.len();
            Ok(v)
        } else {
            Err(self.fail("invalid token"))
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value, JsonError> {
        match self.peek() {
            None => Err(self.fail("unexpected end of input")),
            Some(b'{') => self.object(depth + 1),
            Some(b'[') => self.array(depth + 1),
            Some(b'"') => Ok(Value::String(self.string()?)),
            Some(b't') => self.literal("true", Value::Bool(true)),
            Some(b'f') => self.literal("false", Value::Bool(false)),
            Some(b'n') => self.literal("null", Value::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(c) => Err(self.fail(&format!("unexpected character {:?}", c as char))),
        }
    }

    fn too_deep(&self, depth: usize) -> Result<(), JsonError> {
        if depth > MAX_DEPTH {
            Err(self.fail(&format!("nested deeper than {MAX_DEPTH} levels")))
        } else {
            Ok(())
        }
    }

    fn object(&mut self, depth: usize) -> Result<Value, JsonError> {
        self.too_deep(depth)?;
        self.pos += 1; // {
        let mut out = Map::new();
        self.space();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(Value::Object(out));
        }
        loop {
            self.space();
            if self.peek() != Some(b'"') {
                return Err(self.fail("expected an object key"));
            }
            let key_at = self.pos;
            let key = self.string()?;
            if out.contains_key(&key) {
                return Err(JsonError {
                    offset: key_at,
                    message: format!("duplicate object key {key:?}"),
                });
            }
            self.space();
            if self.peek() != Some(b':') {
                return Err(self.fail("expected ':'"));
            }
            self.pos += 1;
            self.space();
            let v = self.value(depth)?;
            out.insert(key, v);
            self.space();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(Value::Object(out));
                }
                None => return Err(self.fail("unterminated object")),
                Some(_) => return Err(self.fail("expected ',' or '}'")),
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<Value, JsonError> {
        self.too_deep(depth)?;
        self.pos += 1; // [
        let mut out = Vec::new();
        self.space();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(Value::Array(out));
        }
        loop {
            self.space();
            out.push(self.value(depth)?);
            self.space();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(Value::Array(out));
                }
                None => return Err(self.fail("unterminated array")),
                Some(_) => return Err(self.fail("expected ',' or ']'")),
            }
        }
    }

    fn hex4(&self, at: usize) -> Option<u32> {
        let digits = self.data.get(at..at + 4)?;
        let mut r = 0u32;
        for &c in digits {
            r = (r << 4) | (c as char).to_digit(16)?;
        }
        Some(r)
    }

    fn string(&mut self) -> Result<String, JsonError> {
        self.pos += 1; // opening quote
        let mut buf: Vec<u8> = Vec::new();
        loop {
            let start = self.pos;
            // a run of plain bytes
            while let Some(c) = self.peek() {
                if c == b'"' || c == b'\\' || c < 0x20 {
                    break;
                }
                self.pos += 1;
            }
            buf.extend_from_slice(&self.data[start..self.pos]);
            match self.peek() {
                None => return Err(self.fail("unterminated string")),
                Some(b'"') => {
                    self.pos += 1;
                    // The input is valid UTF-8 and escapes add whole characters.
                    return String::from_utf8(buf).map_err(|_| self.fail("invalid UTF-8"));
                }
                Some(b'\\') => self.escape(&mut buf)?,
                Some(_) => return Err(self.fail("control character in string")),
            }
        }
    }

    fn escape(&mut self, buf: &mut Vec<u8>) -> Result<(), JsonError> {
        let Some(&e) = self.data.get(self.pos + 1) else {
            return Err(self.fail("unterminated escape"));
        };
        let simple = match e {
            b'"' => Some('"'),
            b'\\' => Some('\\'),
            b'/' => Some('/'),
            b'b' => Some('\u{8}'),
            b'f' => Some('\u{c}'),
            b'n' => Some('\n'),
            b'r' => Some('\r'),
            b't' => Some('\t'),
            b'u' => None,
            _ => return Err(self.fail("invalid escape")),
        };
        if let Some(c) = simple {
            self.pos += 2;
            buf.push(c as u8);
            return Ok(());
        }
        let Some(unit) = self.hex4(self.pos + 2) else {
            return Err(self.fail("invalid \\u escape"));
        };
        let code = match unit {
            0xD800..=0xDBFF => {
                let next = self.pos + 6;
                let low = if self.data.get(next..next + 2) == Some(b"\\u") {
                    self.hex4(next + 2)
                } else {
                    None
                };
                match low {
                    Some(low @ 0xDC00..=0xDFFF) => {
                        self.pos += 6;
                        0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                    }
                    _ => return Err(self.fail("lone surrogate escape")),
                }
            }
            0xDC00..=0xDFFF => return Err(self.fail("lone surrogate escape")),
            _ => unit,
        };
        self.pos += 6;
        let c = char::from_u32(code).ok_or_else(|| self.fail("invalid \\u escape"))?;
        let mut tmp = [0u8; 4];
        buf.extend_from_slice(c.encode_utf8(&mut tmp).as_bytes());
        Ok(())
    }

    fn digits(&mut self) -> usize {
        let start = self.pos;
        while let Some(b'0'..=b'9') = self.peek() {
            self.pos += 1;
        }
        self.pos - start
    }

    fn number(&mut self) -> Result<Value, JsonError> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.peek() {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return Err(self.fail("invalid number")),
        }
        let mut integer = true;
        if self.peek() == Some(b'.') {
            integer = false;
            self.pos += 1;
            if self.digits() == 0 {
                return Err(self.fail("invalid number"));
            }
        }
        if let Some(b'e' | b'E') = self.peek() {
            integer = false;
            self.pos += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.pos += 1;
            }
            if self.digits() == 0 {
                return Err(self.fail("invalid number"));
            }
        }
        // ASCII by construction
        let text = std::str::from_utf8(&self.data[start..self.pos]).unwrap_or_default();
        if integer {
            if let Ok(i) = text.parse::<i64>() {
                return Ok(Value::Number(i.into()));
            }
            if let Ok(u) = text.parse::<u64>() {
                return Ok(Value::Number(u.into()));
            }
        }
        let f: f64 = text.parse().map_err(|_| JsonError {
            offset: start,
            message: "invalid number".into(),
        })?;
        Number::from_f64(f).map(Value::Number).ok_or(JsonError {
            offset: start,
            message: "number out of binary64 range".into(),
        })
    }
}

/// Compact JSON text: no whitespace, object keys in stored order, non-ASCII
/// written as UTF-8, integers as integers and fractions with their fraction
/// (`1.0` stays `1.0`).
pub fn encode(v: &Value) -> String {
    v.to_string()
}

/// The one JSON equality of the docs (docs/scenarios.md, "The expected keys"):
/// strict typing, so `1`, `true` and `"1"` are all different; arrays compare
/// in order and length; objects by key set, key order ignored; `null` equals
/// only `null`. Numbers compare by value, so `1` equals `1.0` (scenarios.md,
/// "Numbers: the I-JSON profile": "Within the profile, numbers compare by
/// value (`1` equals `1.0`)"); the comparison is exact on the mathematical
/// values (as the harness's Python verifier compares int and float), so two
/// integers beyond 2^53 that round to the same binary64 still differ.
pub fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Number(x), Value::Number(y)) => number_cmp(x, y) == Some(Ordering::Equal),
        (Value::String(x), Value::String(y)) => x == y,
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(l, r)| equal(l, r))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, l)| y.get(k).is_some_and(|r| equal(l, r)))
        }
        _ => false,
    }
}

/// An integer number's exact value.
fn integer_of(n: &Number) -> Option<i128> {
    n.as_i64()
        .map(i128::from)
        .or_else(|| n.as_u64().map(i128::from))
}

/// Exact order of an integer and a binary64 value (None for NaN, which
/// `serde_json` cannot hold anyway).
fn int_float_cmp(i: i128, f: f64) -> Option<Ordering> {
    if f.is_nan() {
        return None;
    }
    // Every i128 we hold fits in 65 bits; beyond 2^100 the float decides.
    const BOUND: f64 = 1.2676506002282294e30; // 2^100
    if f >= BOUND {
        return Some(Ordering::Less);
    }
    if f <= -BOUND {
        return Some(Ordering::Greater);
    }
    let t = f.trunc();
    let ti = t as i128; // exact: |t| < 2^100
    match i.cmp(&ti) {
        Ordering::Equal => {
            if f > t {
                Some(Ordering::Less)
            } else if f < t {
                Some(Ordering::Greater)
            } else {
                Some(Ordering::Equal)
            }
        }
        other => Some(other),
    }
}

/// Exact numeric order of two JSON numbers.
pub fn number_cmp(a: &Number, b: &Number) -> Option<Ordering> {
    match (integer_of(a), integer_of(b)) {
        (Some(x), Some(y)) => Some(x.cmp(&y)),
        (Some(x), None) => int_float_cmp(x, b.as_f64()?),
        (None, Some(y)) => int_float_cmp(y, a.as_f64()?).map(Ordering::reverse),
        (None, None) => a.as_f64()?.partial_cmp(&b.as_f64()?),
    }
}

/// A JSON number with an integral value (`2` and `2.0` alike), or None.
pub fn integer_value(v: &Value) -> Option<i128> {
    let Value::Number(n) = v else { return None };
    if let Some(i) = integer_of(n) {
        return Some(i);
    }
    let f = n.as_f64()?;
    if f.is_finite() && f.fract() == 0.0 && f.abs() < 1.2676506002282294e30 {
        Some(f as i128)
    } else {
        None
    }
}

/// A JSON number with an integral value above zero; never a boolean. `2.0`
/// and `2e0` count (as in JavaScript, Python and Go: docs/scenarios.md, "Host
/// rules": "a positive integer (not a boolean, not a fraction)").
pub fn is_positive_integer(v: &Value) -> bool {
    match v {
        Value::Number(n) => match integer_of(n) {
            Some(i) => i > 0,
            None => n
                .as_f64()
                .is_some_and(|f| f.is_finite() && f.fract() == 0.0 && f > 0.0),
        },
        _ => false,
    }
}

/// The value at `keys` through nested objects, or None.
pub fn path<'a>(v: &'a Value, keys: &[&str]) -> Option<&'a Value> {
    let mut node = v;
    for k in keys {
        node = node.as_object()?.get(*k)?;
    }
    Some(node)
}

/// The string members of `v` when it is an array (others skipped).
pub fn strings(v: Option<&Value>) -> Vec<&str> {
    match v {
        Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}
