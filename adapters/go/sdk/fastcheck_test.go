package sdk

import (
	"encoding/json"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// corpus: every row's request and response of the repository's scenario
// files, and the values inside them down to a few levels.
func fastCorpus(t *testing.T) []any {
	t.Helper()
	var files []string
	for _, pattern := range []string{"../../../scenarios/*.json", "../../../scenarios/upstream/*.json"} {
		found, _ := filepath.Glob(pattern)
		files = append(files, found...)
	}
	if len(files) == 0 {
		t.Skip("no scenario files")
	}
	var out []any
	var collect func(v any, depth int)
	collect = func(v any, depth int) {
		out = append(out, v)
		if depth == 0 {
			return
		}
		switch x := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				collect(x[k], depth-1)
			}
		case []any:
			for _, item := range x {
				collect(item, depth-1)
			}
		}
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := Decode(data)
		if err != nil {
			continue
		}
		rows, _ := Path(doc, "scenarios").([]any)
		for _, row := range rows {
			m, _ := row.(map[string]any)
			for _, k := range []string{"request", "response"} {
				if v, ok := m[k]; ok {
					collect(v, 2)
				}
			}
		}
	}
	return out
}

// mutate returns a copy of v with one value somewhere in it replaced,
// removed or duplicated.
func mutate(r *rand.Rand, v any) any {
	v = Clone(v)
	replacements := []any{nil, true, json.Number("0"), json.Number("-1"), json.Number("1.5"), "", "x",
		"2024-01-01T00:00:00Z", "not a uri", []any{}, map[string]any{}, []any{"a", "a"}}
	var walk func(node any) any
	walk = func(node any) any {
		switch x := node.(type) {
		case map[string]any:
			if len(x) > 0 && r.Intn(3) > 0 {
				keys := make([]string, 0, len(x))
				for k := range x {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				k := keys[r.Intn(len(keys))]
				switch r.Intn(4) {
				case 0:
					delete(x, k)
				case 1:
					x[k] = replacements[r.Intn(len(replacements))]
				default:
					x[k] = walk(x[k])
				}
				return x
			}
			x["unexpected"] = replacements[r.Intn(len(replacements))]
			return x
		case []any:
			if len(x) > 0 {
				i := r.Intn(len(x))
				switch r.Intn(4) {
				case 0:
					return append(x[:i:i], x[i+1:]...)
				case 1:
					return append(x, Clone(x[i]))
				default:
					x[i] = walk(x[i])
					return x
				}
			}
			return append(x, replacements[r.Intn(len(replacements))])
		}
		return replacements[r.Intn(len(replacements))]
	}
	return walk(v)
}

// TestFastCheckAgreesWithLibrary: the pre-check never calls valid what the
// library calls invalid (soundness, which Check relies on), and on this
// corpus it decides as the library does.
func TestFastCheckAgreesWithLibrary(t *testing.T) {
	s, err := LoadSchemas(os.DirFS("../../../schemas/draft"))
	if err != nil {
		t.Fatal(err)
	}
	names := append(s.Names(), Definitions()...)
	names = append(names, DefMCPResult, DefRequestParams)
	corpus := fastCorpus(t)
	r := rand.New(rand.NewSource(1))
	var mutants []any
	for _, v := range corpus {
		if _, ok := v.(map[string]any); ok {
			mutants = append(mutants, mutate(r, v), mutate(r, v))
		}
	}
	sameVerdict, validSeen := 0, 0
	for _, name := range names {
		sch, fast, err := s.compile(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		check := func(v any, mustAgree bool) {
			fastOK := fastValid(fast, v)
			libOK := sch.Validate(v) == nil
			if fastOK && !libOK {
				t.Fatalf("%s: pre-check calls valid what the library rejects: %s", name, EncodeString(v))
			}
			if fastOK == libOK {
				sameVerdict++
			} else if mustAgree {
				t.Errorf("%s: pre-check unsure of a value the library accepts: %.300s", name, EncodeString(v))
			}
			if libOK {
				validSeen++
			}
		}
		for _, v := range corpus {
			check(v, true)
		}
		for _, v := range mutants {
			check(v, true)
		}
	}
	if validSeen == 0 {
		t.Fatal("no value of the corpus is valid against any schema")
	}
	t.Logf("%d schemas, %d values, %d mutants: %d verdicts alike, %d valid", len(names), len(corpus), len(mutants), sameVerdict, validSeen)
}

// TestFastCheckUnsure: what the pre-check does not handle goes to the library.
func TestFastCheckUnsure(t *testing.T) {
	s, err := LoadSchemas(os.DirFS("../../../schemas/draft"))
	if err != nil {
		t.Fatal(err)
	}
	_, fast, err := s.compile(DefMessages)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []any{
		[]any{map[string]any{"role": "user", "parts": []string{"not a decoded value"}}},
		[]string{"x"},
		42,
	} {
		if fastValid(fast, v) {
			t.Errorf("%#v: a value of a Go type the pre-check does not handle was called valid", v)
		}
	}
	// a $ref cycle on one value ends unsure instead of looping
	loop := &fastNode{}
	loop.ref = loop
	c := fastCheck{}
	if c.valid(loop, "x", 0) || !c.unsure {
		t.Error("a reference cycle must end unsure")
	}
	// a number the pre-check cannot read is unsure
	c = fastCheck{}
	if c.equal(json.Number("1"), 1) || !c.unsure {
		t.Error("a number of another Go type must be unsure")
	}
}
