// Package sdk is the AHP implementation under test: the strict JSON codec, the
// canonical schemas, the boundary table and the composition engine. It knows
// nothing of the interop contract and performs no I/O of its own.
package sdk

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxDepth is the deepest nesting of containers a JSON text may have.
const MaxDepth = 512

// A decoded JSON value is one of: nil, bool, string, json.Number (the number's
// literal text, so integers, fractions and booleans stay distinct and exact),
// []any, map[string]any.

// ErrMalformed wraps every decoding failure.
var ErrMalformed = errors.New("malformed JSON")

type decodeError struct {
	offset int
	msg    string
}

func (e *decodeError) Error() string {
	return fmt.Sprintf("malformed JSON at byte %d: %s", e.offset, e.msg)
}
func (e *decodeError) Unwrap() error { return ErrMalformed }

type decoder struct {
	data []byte
	pos  int
}

// Decode parses exactly one strict JSON value: valid UTF-8, no duplicate
// object keys, no NaN/Infinity or other non-standard tokens, no trailing data,
// at most MaxDepth levels of nesting. A lone surrogate escape (\ud800) is
// kept (as its WTF-8 bytes) and written back as the same escape by Encode.
func Decode(data []byte) (any, error) {
	if !utf8.Valid(data) {
		return nil, &decodeError{0, "invalid UTF-8"}
	}
	d := &decoder{data: data}
	d.space()
	v, err := d.value(0)
	if err != nil {
		return nil, err
	}
	d.space()
	if d.pos != len(d.data) {
		return nil, d.fail("trailing data after the JSON value")
	}
	return v, nil
}

func (d *decoder) fail(msg string) error { return &decodeError{d.pos, msg} }

func (d *decoder) space() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\r', '\n':
			d.pos++
		default:
			return
		}
	}
}

func (d *decoder) literal(word string, v any) (any, error) {
	if bytes.HasPrefix(d.data[d.pos:], []byte(word)) {
		d.pos += len(word)
		return v, nil
	}
	return nil, d.fail("invalid token")
}

func (d *decoder) value(depth int) (any, error) {
	if d.pos >= len(d.data) {
		return nil, d.fail("unexpected end of input")
	}
	switch c := d.data[d.pos]; {
	case c == '{':
		return d.object(depth + 1)
	case c == '[':
		return d.array(depth + 1)
	case c == '"':
		return d.str()
	case c == 't':
		return d.literal("true", true)
	case c == 'f':
		return d.literal("false", false)
	case c == 'n':
		return d.literal("null", nil)
	case c == '-' || (c >= '0' && c <= '9'):
		return d.number()
	default:
		return nil, d.fail(fmt.Sprintf("unexpected character %q", c))
	}
}

func (d *decoder) object(depth int) (any, error) {
	if depth > MaxDepth {
		return nil, d.fail(fmt.Sprintf("nested deeper than %d levels", MaxDepth))
	}
	d.pos++ // {
	out := map[string]any{}
	d.space()
	if d.pos < len(d.data) && d.data[d.pos] == '}' {
		d.pos++
		return out, nil
	}
	for {
		d.space()
		if d.pos >= len(d.data) || d.data[d.pos] != '"' {
			return nil, d.fail("expected an object key")
		}
		keyAt := d.pos
		key, err := d.str()
		if err != nil {
			return nil, err
		}
		if _, dup := out[key]; dup {
			return nil, &decodeError{keyAt, fmt.Sprintf("duplicate object key %q", key)}
		}
		d.space()
		if d.pos >= len(d.data) || d.data[d.pos] != ':' {
			return nil, d.fail("expected ':'")
		}
		d.pos++
		d.space()
		v, err := d.value(depth)
		if err != nil {
			return nil, err
		}
		out[key] = v
		d.space()
		if d.pos >= len(d.data) {
			return nil, d.fail("unterminated object")
		}
		switch d.data[d.pos] {
		case ',':
			d.pos++
		case '}':
			d.pos++
			return out, nil
		default:
			return nil, d.fail("expected ',' or '}'")
		}
	}
}

func (d *decoder) array(depth int) (any, error) {
	if depth > MaxDepth {
		return nil, d.fail(fmt.Sprintf("nested deeper than %d levels", MaxDepth))
	}
	d.pos++ // [
	out := []any{}
	d.space()
	if d.pos < len(d.data) && d.data[d.pos] == ']' {
		d.pos++
		return out, nil
	}
	for {
		d.space()
		v, err := d.value(depth)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		d.space()
		if d.pos >= len(d.data) {
			return nil, d.fail("unterminated array")
		}
		switch d.data[d.pos] {
		case ',':
			d.pos++
		case ']':
			d.pos++
			return out, nil
		default:
			return nil, d.fail("expected ',' or ']'")
		}
	}
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c-'a') + 10
		case c >= 'A' && c <= 'F':
			r |= rune(c-'A') + 10
		default:
			return 0, false
		}
	}
	return r, true
}

// appendWTF8 writes a lone surrogate as the three bytes UTF-8 would use.
func appendWTF8(buf []byte, r rune) []byte {
	return append(buf, byte(0xE0|(r>>12)), byte(0x80|((r>>6)&0x3F)), byte(0x80|(r&0x3F)))
}

func (d *decoder) str() (string, error) {
	d.pos++ // opening quote
	start := d.pos
	// fast path: no escapes
	for d.pos < len(d.data) {
		c := d.data[d.pos]
		if c == '"' {
			s := string(d.data[start:d.pos])
			d.pos++
			return s, nil
		}
		if c == '\\' {
			break
		}
		if c < 0x20 {
			return "", d.fail("control character in string")
		}
		d.pos++
	}
	buf := append([]byte(nil), d.data[start:d.pos]...)
	for d.pos < len(d.data) {
		c := d.data[d.pos]
		switch {
		case c == '"':
			d.pos++
			return string(buf), nil
		case c < 0x20:
			return "", d.fail("control character in string")
		case c != '\\':
			buf = append(buf, c)
			d.pos++
			continue
		}
		if d.pos+1 >= len(d.data) {
			return "", d.fail("unterminated escape")
		}
		e := d.data[d.pos+1]
		d.pos += 2
		switch e {
		case '"', '\\', '/':
			buf = append(buf, e)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, ok := hex4(d.data[d.pos:])
			if !ok {
				return "", d.fail("invalid \\u escape")
			}
			d.pos += 4
			if r >= 0xD800 && r < 0xDC00 && d.pos+1 < len(d.data) && d.data[d.pos] == '\\' && d.data[d.pos+1] == 'u' {
				if low, ok := hex4(d.data[d.pos+2:]); ok && low >= 0xDC00 && low < 0xE000 {
					d.pos += 6
					buf = utf8.AppendRune(buf, 0x10000+((r-0xD800)<<10)+(low-0xDC00))
					continue
				}
			}
			if r >= 0xD800 && r < 0xE000 {
				buf = appendWTF8(buf, r)
			} else {
				buf = utf8.AppendRune(buf, r)
			}
		default:
			return "", d.fail("invalid escape")
		}
	}
	return "", d.fail("unterminated string")
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func (d *decoder) number() (any, error) {
	start := d.pos
	if d.data[d.pos] == '-' {
		d.pos++
	}
	if d.pos >= len(d.data) {
		return nil, d.fail("invalid number")
	}
	if d.data[d.pos] == '0' {
		d.pos++
	} else if isDigit(d.data[d.pos]) {
		for d.pos < len(d.data) && isDigit(d.data[d.pos]) {
			d.pos++
		}
	} else {
		return nil, d.fail("invalid number")
	}
	if d.pos < len(d.data) && d.data[d.pos] == '.' {
		d.pos++
		if d.pos >= len(d.data) || !isDigit(d.data[d.pos]) {
			return nil, d.fail("invalid number")
		}
		for d.pos < len(d.data) && isDigit(d.data[d.pos]) {
			d.pos++
		}
	}
	if d.pos < len(d.data) && (d.data[d.pos] == 'e' || d.data[d.pos] == 'E') {
		d.pos++
		if d.pos < len(d.data) && (d.data[d.pos] == '+' || d.data[d.pos] == '-') {
			d.pos++
		}
		if d.pos >= len(d.data) || !isDigit(d.data[d.pos]) {
			return nil, d.fail("invalid number")
		}
		for d.pos < len(d.data) && isDigit(d.data[d.pos]) {
			d.pos++
		}
	}
	text := string(d.data[start:d.pos])
	if f, err := strconv.ParseFloat(text, 64); err != nil && math.IsInf(f, 0) {
		return nil, &decodeError{start, "number out of binary64 range"}
	}
	return json.Number(text), nil
}

// Encode writes v as compact JSON (object keys sorted, non-ASCII as UTF-8).
func Encode(v any) []byte {
	var b bytes.Buffer
	encodeTo(&b, v)
	return b.Bytes()
}

// EncodeString is Encode as a string.
func EncodeString(v any) string { return string(Encode(v)) }

func encodeTo(b *bytes.Buffer, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		if x {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case string:
		encodeString(b, x)
	case json.Number:
		b.WriteString(string(x))
	case int:
		b.WriteString(strconv.Itoa(x))
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			b.WriteString("null")
		} else {
			b.WriteString(strconv.FormatFloat(x, 'g', -1, 64))
		}
	case []any:
		b.WriteByte('[')
		for i, item := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			encodeTo(b, item)
		}
		b.WriteByte(']')
	case []string:
		b.WriteByte('[')
		for i, item := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			encodeString(b, item)
		}
		b.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			encodeString(b, k)
			b.WriteByte(':')
			encodeTo(b, x[k])
		}
		b.WriteByte('}')
	default:
		// Not a decoded JSON value: fall back on encoding/json.
		data, err := json.Marshal(x)
		if err != nil {
			b.WriteString("null")
			return
		}
		b.Write(data)
	}
}

const hexDigits = "0123456789abcdef"

func encodeString(b *bytes.Buffer, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"':
				b.WriteString(`\"`)
			case c == '\\':
				b.WriteString(`\\`)
			case c == '\n':
				b.WriteString(`\n`)
			case c == '\r':
				b.WriteString(`\r`)
			case c == '\t':
				b.WriteString(`\t`)
			case c == '\b':
				b.WriteString(`\b`)
			case c == '\f':
				b.WriteString(`\f`)
			case c < 0x20:
				b.WriteString(`\u00`)
				b.WriteByte(hexDigits[c>>4])
				b.WriteByte(hexDigits[c&0xF])
			default:
				b.WriteByte(c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			// a lone surrogate kept as WTF-8 by Decode
			if c == 0xED && i+2 < len(s) && s[i+1] >= 0xA0 && s[i+1] <= 0xBF && s[i+2] >= 0x80 && s[i+2] <= 0xBF {
				sur := rune(0xD000) | rune(s[i+1]&0x3F)<<6 | rune(s[i+2]&0x3F)
				fmt.Fprintf(b, `\u%04x`, sur)
				i += 3
				continue
			}
			b.WriteString(`\ufffd`)
			i++
			continue
		}
		b.WriteString(s[i : i+size])
		i += size
	}
	b.WriteByte('"')
}

// Clone deep-copies a decoded JSON value.
func Clone(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, item := range x {
			out[k] = Clone(item)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, item := range x {
			out[i] = Clone(item)
		}
		return out
	default:
		return v
	}
}

func numberText(v any) (string, bool) {
	switch x := v.(type) {
	case json.Number:
		return string(x), true
	case int:
		return strconv.Itoa(x), true
	case int64:
		return strconv.FormatInt(x, 10), true
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), true
	}
	return "", false
}

// IsNumber reports whether v is a JSON number (never a boolean).
func IsNumber(v any) bool {
	_, ok := numberText(v)
	return ok
}

func isIntegerLiteral(text string) bool {
	return !strings.ContainsAny(text, ".eE")
}

// numberEqual compares two numbers by value: integers exactly, anything with
// a fraction or exponent as binary64 (as every JSON implementation can).
func numberEqual(a, b string) bool {
	if isIntegerLiteral(a) && isIntegerLiteral(b) {
		x, okx := new(big.Int).SetString(a, 10)
		y, oky := new(big.Int).SetString(b, 10)
		return okx && oky && x.Cmp(y) == 0
	}
	x, errx := strconv.ParseFloat(a, 64)
	y, erry := strconv.ParseFloat(b, 64)
	return errx == nil && erry == nil && x == y
}

// Integer returns v's value when v is a JSON number with an integral value
// (2 and 2.0 alike) that fits an int64.
func Integer(v any) (int64, bool) {
	text, ok := numberText(v)
	if !ok {
		return 0, false
	}
	r, ok := new(big.Rat).SetString(text)
	if !ok || !r.IsInt() {
		return 0, false
	}
	n := r.Num()
	if !n.IsInt64() {
		return 0, false
	}
	return n.Int64(), true
}

// IsPositiveInteger: a number with an integral value above zero.
func IsPositiveInteger(v any) bool {
	text, ok := numberText(v)
	if !ok {
		return false
	}
	r, ok := new(big.Rat).SetString(text)
	return ok && r.IsInt() && r.Sign() > 0
}

// Equal is deep equality under JSON typing: booleans are not numbers, 1
// equals 1.0, object key order is ignored, arrays compare in order and length.
func Equal(a, b any) bool {
	if ta, ok := numberText(a); ok {
		tb, ok := numberText(b)
		return ok && numberEqual(ta, tb)
	}
	switch x := a.(type) {
	case nil:
		return b == nil
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case string:
		y, ok := b.(string)
		return ok && x == y
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !Equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, found := y[k]
			if !found || !Equal(v, w) {
				return false
			}
		}
		return true
	}
	return false
}

// Path is the value at the keys through nested objects, or nil.
func Path(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// Object is v as an object, or an empty one.
func Object(v any) map[string]any {
	if m, ok := v.(map[string]any); ok {
		return m
	}
	return map[string]any{}
}

// Strings is the string members of v when v is an array.
func Strings(v any) []string {
	list, _ := v.([]any)
	out := []string{}
	for _, item := range list {
		if s, ok := item.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, item := range list {
		if item == s {
			return true
		}
	}
	return false
}
