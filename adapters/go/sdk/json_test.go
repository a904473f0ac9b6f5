package sdk

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func mustDecode(t *testing.T, text string) any {
	t.Helper()
	v, err := Decode([]byte(text))
	if err != nil {
		t.Fatalf("Decode(%q): %v", text, err)
	}
	return v
}

func TestDecodeKeepsNumbersAndBooleansDistinct(t *testing.T) {
	v := mustDecode(t, `{"i":1,"f":1.0,"e":1e2,"b":true,"n":null,"big":9007199254740991}`).(map[string]any)
	if v["i"] != json.Number("1") || v["f"] != json.Number("1.0") || v["e"] != json.Number("1e2") {
		t.Fatalf("numbers lost their text: %#v", v)
	}
	if v["b"] != true || v["n"] != nil {
		t.Fatalf("literals: %#v", v)
	}
	if got := EncodeString(v["big"]); got != "9007199254740991" {
		t.Fatalf("2^53-1 not exact: %s", got)
	}
	if Equal(v["b"], json.Number("1")) || Equal(json.Number("1"), true) {
		t.Fatal("a boolean equals a number")
	}
	if !Equal(v["i"], v["f"]) || Equal(v["i"], json.Number("1.5")) {
		t.Fatal("numbers must compare by value")
	}
}

func TestDecodeRejects(t *testing.T) {
	cases := map[string]string{
		"duplicate key":        `{"a":1,"a":2}`,
		"nested duplicate key": `{"x":[{"k":1,"k":1}]}`,
		"NaN":                  `{"a":NaN}`,
		"Infinity":             `[Infinity]`,
		"-Infinity":            `[-Infinity]`,
		"trailing data":        `{} {}`,
		"trailing comma":       `[1,]`,
		"leading zero":         `01`,
		"bare fraction":        `.5`,
		"single quotes":        `{'a':1}`,
		"control character":    "\"a\tb\"",
		"bad escape":           `"\x"`,
		"empty":                ``,
		"comment":              `{} // no`,
		"unterminated":         `{"a":`,
	}
	for name, text := range cases {
		if _, err := Decode([]byte(text)); err == nil || !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %q accepted (%v)", name, text, err)
		}
	}
	if _, err := Decode([]byte("\"\xff\"")); err == nil {
		t.Error("invalid UTF-8 accepted")
	}
	if _, err := Decode([]byte("\"\xed\xa0\x80\"")); err == nil {
		t.Error("a raw surrogate (invalid UTF-8) accepted")
	}
}

func TestDepthLimit(t *testing.T) {
	ok := strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth)
	if _, err := Decode([]byte(ok)); err != nil {
		t.Fatalf("%d levels refused: %v", MaxDepth, err)
	}
	deep := strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1)
	if _, err := Decode([]byte(deep)); err == nil {
		t.Fatalf("%d levels accepted", MaxDepth+1)
	}
	obj := strings.Repeat(`{"a":`, MaxDepth+1) + "1" + strings.Repeat("}", MaxDepth+1)
	if _, err := Decode([]byte(obj)); err == nil {
		t.Fatal("deep objects accepted")
	}
}

func TestStringsRoundTrip(t *testing.T) {
	for text, want := range map[string]string{
		`"\u00e9\ud83d\ude00"`: "é😀",
		`"a\"b\\c\/d\n"`:       "a\"b\\c/d\n",
		`"\u0001"`:             "\x01",
	} {
		if got := mustDecode(t, text); got != want {
			t.Errorf("%s decoded to %q, want %q", text, got, want)
		}
	}
	// a lone surrogate is kept and written back as the same escape
	v := mustDecode(t, `"x\ud800y"`)
	if got := EncodeString(v); got != `"x\ud800y"` {
		t.Errorf("lone surrogate written as %s", got)
	}
	if got := EncodeString("é<>&\x01"); got != "\"é<>&\\u0001\"" {
		t.Errorf("encoding: %s", got)
	}
}

func TestEncodeCompactAndSorted(t *testing.T) {
	v := mustDecode(t, `{ "b" : [1, 2.50, {"z":null,"a":false}], "a" : "x" }`)
	if got := EncodeString(v); got != `{"a":"x","b":[1,2.50,{"a":false,"z":null}]}` {
		t.Fatalf("got %s", got)
	}
}

func TestEqualAndIntegers(t *testing.T) {
	a := mustDecode(t, `{"x":[1,{"y":2}],"z":"s"}`)
	b := mustDecode(t, `{"z":"s","x":[1.0,{"y":2e0}]}`)
	if !Equal(a, b) {
		t.Fatal("key order or number form changed equality")
	}
	if Equal(mustDecode(t, `[1,2]`), mustDecode(t, `[2,1]`)) || Equal(mustDecode(t, `{}`), mustDecode(t, `[]`)) {
		t.Fatal("unequal values compared equal")
	}
	if Equal(nil, mustDecode(t, `{}`)) || !Equal(nil, nil) {
		t.Fatal("null equality")
	}
	for text, want := range map[string]bool{`2`: true, `2.0`: true, `2e0`: true, `0`: false, `-1`: false, `1.5`: false, `true`: false, `"1"`: false} {
		if got := IsPositiveInteger(mustDecode(t, text)); got != want {
			t.Errorf("IsPositiveInteger(%s) = %v", text, got)
		}
	}
	if n, ok := Integer(mustDecode(t, `3.0`)); !ok || n != 3 {
		t.Errorf("Integer(3.0) = %d %v", n, ok)
	}
}

func TestCloneIsDeep(t *testing.T) {
	v := mustDecode(t, `{"a":[{"b":1}]}`)
	c := Clone(v).(map[string]any)
	c["a"].([]any)[0].(map[string]any)["b"] = "changed"
	if EncodeString(v) != `{"a":[{"b":1}]}` {
		t.Fatal("clone shares structure")
	}
}
