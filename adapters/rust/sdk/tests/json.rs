//! The strict codec's edge cases.

use ahp_sdk::json::{encode, equal, is_positive_integer, parse, MAX_DEPTH};
use serde_json::{json, Value};

fn ok(text: &str) -> Value {
    parse(text.as_bytes()).unwrap_or_else(|e| panic!("{text:?} refused: {e}"))
}

fn refused(text: &[u8]) -> String {
    match parse(text) {
        Ok(v) => panic!("{:?} accepted as {v}", String::from_utf8_lossy(text)),
        Err(e) => e.to_string(),
    }
}

fn nested(depth: usize, open: &str, close: &str) -> String {
    format!("{}{}", open.repeat(depth), close.repeat(depth))
}

#[test]
fn scalars_and_containers() {
    assert_eq!(ok("null"), Value::Null);
    assert_eq!(ok(" true "), json!(true));
    assert_eq!(ok("\t\r\nfalse\n"), json!(false));
    assert_eq!(ok(r#""x""#), json!("x"));
    assert_eq!(ok("[]"), json!([]));
    assert_eq!(ok("{}"), json!({}));
    assert_eq!(
        ok(r#"{"a":[1,{"b":null}],"c":"d"}"#),
        json!({"a": [1, {"b": null}], "c": "d"})
    );
}

#[test]
fn duplicate_keys_are_refused_at_any_depth() {
    assert!(refused(br#"{"a":1,"a":2}"#).contains("duplicate object key \"a\""));
    refused(br#"{"x":{"y":{"a":1,"b":2,"a":1}}}"#);
    refused(br#"[{"ok":1},[{"k":1,"k":1}]]"#);
    // the same key spelt with an escape is the same key
    refused(br#"{"a":1,"\u0061":2}"#);
    // the same key in sibling objects is fine
    ok(r#"[{"a":1},{"a":2}]"#);
    ok(r#"{"a":{"a":{"a":1}}}"#);
}

#[test]
fn depth_512_parses_and_513_is_refused() {
    let deep = ok(&nested(MAX_DEPTH, "[", "]"));
    let mut v = &deep;
    let mut depth = 0;
    while let Value::Array(items) = v {
        depth += 1;
        match items.first() {
            Some(inner) => v = inner,
            None => break,
        }
    }
    assert_eq!(depth, MAX_DEPTH);
    assert!(refused(nested(MAX_DEPTH + 1, "[", "]").as_bytes()).contains("deeper than 512"));
    let objects = |n: usize| format!("{}1{}", r#"{"k":"#.repeat(n), "}".repeat(n));
    ok(&objects(MAX_DEPTH));
    refused(objects(MAX_DEPTH + 1).as_bytes());
    // mixed containers count alike
    let mixed = format!("{}0{}", r#"[{"k":"#.repeat(256), "}]".repeat(256));
    ok(&mixed);
    let mixed = format!("[{}0{}]", r#"[{"k":"#.repeat(256), "}]".repeat(256));
    refused(mixed.as_bytes());
}

#[test]
fn deep_nesting_is_safe_on_a_small_stack() {
    // a server thread may have a small stack; 512 levels must still parse
    let text = nested(MAX_DEPTH, "[", "]");
    let handle = std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(move || parse(text.as_bytes()).is_ok())
        .unwrap();
    assert!(handle.join().unwrap());
    // and a hostile depth is refused, never a stack overflow
    let text = nested(100_000, "[", "]");
    assert!(parse(text.as_bytes()).is_err());
}

#[test]
fn non_standard_tokens_are_refused() {
    for text in [
        "NaN",
        "Infinity",
        "-Infinity",
        "[NaN]",
        "{\"a\":Infinity}",
        "nan",
        "undefined",
        "'x'",
        "[1,]",
        "{\"a\":1,}",
        "[01]",
        "-",
        "1.",
        ".5",
        "1e",
        "1e+",
        "+1",
        "0x10",
        "[1 2]",
        "{\"a\" 1}",
        "{a:1}",
        "tru",
        "nul",
        "",
        "   ",
        "[",
        "{",
        "\"open",
        "// c\n1",
        "1 2",
        "[]]",
        "\u{feff}1",
    ] {
        refused(text.as_bytes());
    }
}

#[test]
fn invalid_utf8_is_refused() {
    assert!(refused(b"\"\xff\"").contains("invalid UTF-8"));
    refused(b"[\"a\xc3\"]");
    refused(b"\"\xed\xa0\x80\""); // a surrogate encoded in UTF-8 (CESU / WTF-8)
    refused(b"\"\xc0\xaf\""); // overlong
    refused(b"{\"\xfe\":1}");
    assert_eq!(ok("\"caf\u{e9} \u{1f30d}\""), json!("café 🌍"));
}

#[test]
fn escapes() {
    assert_eq!(ok(r#""\"\\\/\b\f\n\r\t""#), json!("\"\\/\u{8}\u{c}\n\r\t"));
    assert_eq!(ok(r#""\u00e9\u00E9""#), json!("éé"));
    assert_eq!(ok(r#""\u0000""#), json!("\u{0}"));
    assert_eq!(ok(r#""\ud83c\udf0d""#), json!("🌍"));
    assert_eq!(ok(r#""\uD83C\uDF0D""#), json!("🌍"));
    refused(br#""\x""#);
    refused(br#""\u12""#);
    refused(br#""\u12g4""#);
    refused(b"\"\\");
    // raw control characters are not allowed in strings
    refused(b"\"a\nb\"");
    refused(b"\"\t\"");
    refused(b"\"\x00\"");
    // DEL and U+2028 are fine raw
    ok("\"\u{7f}\u{2028}\"");
}

#[test]
fn lone_surrogates_are_refused() {
    // RFC 8259 section 8.2 / RFC 7493 section 2.1: a Rust string cannot hold one
    for text in [
        r#""\ud800""#,
        r#""\udc00""#,
        r#""\ud800x""#,
        r#""\ud800\u0041""#,
        r#""\udf0d\ud83c""#,
        r#""\ud800\ud800""#,
    ] {
        assert!(
            refused(text.as_bytes()).contains("lone surrogate"),
            "{text}"
        );
    }
}

#[test]
fn integers_floats_and_booleans_stay_distinct() {
    let v = ok(r#"{"i":1,"f":1.0,"e":1e2,"b":true,"z":-0,"n":-5}"#);
    assert!(v["i"].is_i64() && v["i"].as_i64() == Some(1));
    assert!(v["f"].is_f64() && v["f"].as_f64() == Some(1.0));
    assert!(v["e"].is_f64() && v["e"].as_f64() == Some(100.0));
    assert!(v["b"].is_boolean());
    assert_eq!(v["z"].as_i64(), Some(0));
    assert_eq!(v["n"].as_i64(), Some(-5));
    assert_eq!(
        encode(&v),
        r#"{"i":1,"f":1.0,"e":100.0,"b":true,"z":0,"n":-5}"#
    );
}

#[test]
fn numbers_per_the_i_json_profile() {
    // 2^53 - 1 is carried exactly, both signs
    assert_eq!(encode(&ok("9007199254740991")), "9007199254740991");
    assert_eq!(encode(&ok("-9007199254740991")), "-9007199254740991");
    // beyond the profile: 64-bit integers are still exact
    assert_eq!(encode(&ok("9007199254740993")), "9007199254740993");
    assert_eq!(encode(&ok("18446744073709551615")), "18446744073709551615");
    assert_eq!(encode(&ok("-9223372036854775808")), "-9223372036854775808");
    // ... and beyond 64 bits an integer is its binary64 value, as JavaScript reads it
    assert_eq!(
        ok("18446744073709551616").as_f64(),
        Some(18446744073709551616.0)
    );
    assert_eq!(ok("-100000000000000000000000").as_f64(), Some(-1e23));
    // binary64 values, correctly rounded, including the extremes
    assert_eq!(ok("0.1").as_f64(), Some(0.1));
    assert_eq!(ok("5e-324").as_f64(), Some(5e-324));
    assert_eq!(ok("1.7976931348623157e308").as_f64(), Some(f64::MAX));
    assert_eq!(ok("1e-400").as_f64(), Some(0.0)); // underflow is a binary64 value (zero)
    assert_eq!(ok("-0.0").as_f64(), Some(-0.0));
    assert_eq!(ok("1E+2").as_f64(), Some(100.0));
    // no binary64 value carries these
    assert!(refused(b"1e400").contains("binary64"));
    refused(b"-1e309");
    refused(b"[1.8e308]");
    let long = format!("1{}", "0".repeat(400));
    refused(long.as_bytes());
}

#[test]
fn encode_is_compact_in_stored_order() {
    let v = ok(r#" { "z" : 1 , "a" : [ 1 , 2 ] , "m" : { "y" : null , "b" : "é\n\"" } } "#);
    assert_eq!(
        encode(&v),
        r#"{"z":1,"a":[1,2],"m":{"y":null,"b":"é\n\""}}"#
    );
    assert_eq!(encode(&ok(r#""\u0001\u001f""#)), r#""\u0001\u001f""#);
    // a round trip is the identity on values
    let text = r#"{"k":[0.5,-2.25,1.0,2,9007199254740991,"🔑",{"":false}],"__proto__":{}}"#;
    assert_eq!(encode(&ok(text)), text);
    assert!(equal(&ok(&encode(&ok(text))), &ok(text)));
}

#[test]
fn equality_is_strict_json_typing() {
    let e = |a: &str, b: &str| equal(&ok(a), &ok(b));
    // no coercion between 1, true and "1"
    assert!(!e("1", "true"));
    assert!(!e("1", r#""1""#));
    assert!(!e("true", r#""true""#));
    assert!(!e("0", "false"));
    assert!(!e("0", "null"));
    assert!(!e(r#""""#, "null"));
    assert!(!e("[]", "{}"));
    assert!(!e("[]", "null"));
    // numbers by value: 1 equals 1.0
    assert!(e("1", "1.0"));
    assert!(e("1.0", "1"));
    assert!(e("100", "1e2"));
    assert!(e("0", "-0.0"));
    assert!(e("-3", "-3.0"));
    assert!(!e("1", "1.5"));
    assert!(!e("1.5", "1"));
    assert!(e("9007199254740991", "9007199254740991.0"));
    // exact beyond 2^53: 2^53 + 1 is not the binary64 2^53
    assert!(!e("9007199254740993", "9007199254740992.0"));
    assert!(e("9007199254740992", "9007199254740992.0"));
    assert!(e("18446744073709551615", "18446744073709551615"));
    assert!(!e("18446744073709551615", "-1"));
    // key order is ignored, array order is not
    assert!(e(r#"{"a":1,"b":[1,2]}"#, r#"{"b":[1.0,2],"a":1}"#));
    assert!(!e("[1,2]", "[2,1]"));
    assert!(!e("[1]", "[1,1]"));
    assert!(!e(r#"{"a":1}"#, r#"{"a":1,"b":null}"#));
    assert!(!e(r#"{"a":null}"#, "{}"));
    assert!(e("null", "null"));
}

#[test]
fn positive_integers() {
    for yes in [
        "1",
        "2.0",
        "2e0",
        "9007199254740991",
        "18446744073709551615",
    ] {
        assert!(is_positive_integer(&ok(yes)), "{yes}");
    }
    for no in [
        "0", "-1", "0.5", "1.5", "-0.0", "true", r#""1""#, "null", "[1]",
    ] {
        assert!(!is_positive_integer(&ok(no)), "{no}");
    }
}
