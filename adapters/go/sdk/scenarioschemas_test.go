package sdk

// Every scenario file of schemas/scenario-files.json against its format's
// schema. The index (written by the harness from the suites' declarations)
// names each scenario file, relative to the repository root, and the file of
// schemas/scenarios/ its format is. Every adapter validates the same files
// against the same schemas, each with its own validator: here LoadSchemas over
// schemas/scenarios/ (every schema an AddResource under its $id, so
// common.schema.json#/$defs/... resolves against
// https://interop.ahp.test/schemas/scenarios/common.schema.json and nothing is
// loaded from elsewhere; Draft 2020-12, formats asserted) and the library's
// Validate, whose every innermost error is listed.

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

const (
	repoRoot        = "../../.."
	scenarioIndex   = repoRoot + "/schemas/scenario-files.json"
	scenarioSchemas = repoRoot + "/schemas/scenarios"
	shownProblems   = 20 // problems listed per file
)

func loadScenarioSchemas(t *testing.T) *Schemas {
	t.Helper()
	s, err := LoadSchemas(os.DirFS(scenarioSchemas))
	if err != nil {
		t.Fatalf("%s: %v", scenarioSchemas, err)
	}
	return s
}

var plainKeyPattern = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$-]*$`)

// dottedPath: `expected.states["a:b"].flow`, `steps[3]`, from instance location tokens.
func dottedPath(tokens []string) string {
	var sb strings.Builder
	for _, tok := range tokens {
		switch {
		case isArrayIndex(tok):
			sb.WriteString("[" + tok + "]")
		case !plainKeyPattern.MatchString(tok):
			sb.WriteString("[" + strconv.Quote(tok) + "]")
		case sb.Len() > 0:
			sb.WriteString("." + tok)
		default:
			sb.WriteString(tok)
		}
	}
	return sb.String()
}

func isArrayIndex(tok string) bool {
	_, err := strconv.Atoi(tok)
	return err == nil && tok != "" && tok[0] != '-' && tok[0] != '+'
}

// describeProblem: `<file>: scenarios[3] (id "x"): expected: <what>`: the file, the row, the field.
func describeProblem(file string, doc any, leaf *jsonschema.ValidationError) string {
	tokens := leaf.InstanceLocation
	parts := []string{file}
	field := "(root)"
	if len(tokens) >= 2 && tokens[0] == "scenarios" && isArrayIndex(tokens[1]) {
		where := "scenarios[" + tokens[1] + "]"
		rows, _ := Path(doc, "scenarios").([]any)
		if i, _ := strconv.Atoi(tokens[1]); i < len(rows) {
			if id, ok := Object(rows[i])["id"].(string); ok && id != "" {
				where += " (id " + strconv.Quote(id) + ")"
			}
		}
		parts = append(parts, where)
		tokens, field = tokens[2:], "(the row)"
	}
	if f := dottedPath(tokens); f != "" {
		field = f
	}
	// a leaf's basic output is its one error, worded by the library
	return strings.Join(append(parts, field, leaf.BasicOutput().Error.String()), ": ")
}

// scenarioProblems lists every innermost error of doc against schema (a file
// of schemas/scenarios/), in the library's order.
func scenarioProblems(t *testing.T, s *Schemas, schema, file string, doc any) []string {
	t.Helper()
	sch, err := s.Compile(schema)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	err = sch.Validate(doc)
	if err == nil {
		return nil
	}
	var invalid *jsonschema.ValidationError
	if !errors.As(err, &invalid) {
		return []string{fmt.Sprintf("%s: %v", file, err)}
	}
	var out []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			out = append(out, describeProblem(file, doc, e))
		}
		for _, cause := range e.Causes {
			walk(cause)
		}
	}
	walk(invalid)
	return out
}

func TestEveryIndexedScenarioFileFitsItsSchema(t *testing.T) {
	data, err := os.ReadFile(scenarioIndex)
	if err != nil {
		t.Fatalf("the scenario files' index moved? %v", err)
	}
	var index struct {
		Files []struct {
			File   string `json:"file"`
			Schema string `json:"schema"`
		} `json:"files"`
	}
	if err := json.Unmarshal(data, &index); err != nil {
		t.Fatalf("%s: %v", scenarioIndex, err)
	}
	if len(index.Files) == 0 {
		t.Fatalf("%s lists no scenario files", scenarioIndex)
	}
	s := loadScenarioSchemas(t)
	if !s.Has("common.schema.json") {
		t.Fatalf("%s: no common.schema.json", scenarioSchemas)
	}
	for _, entry := range index.Files {
		if !s.Has(entry.Schema) {
			t.Errorf("%s: no schema %s in schemas/scenarios/", entry.File, entry.Schema)
			continue
		}
		raw, err := os.ReadFile(filepath.Join(repoRoot, filepath.FromSlash(entry.File)))
		if err != nil {
			t.Errorf("%s: %v", entry.File, err)
			continue
		}
		doc, err := Decode(raw)
		if err != nil {
			t.Errorf("%s: %v", entry.File, err)
			continue
		}
		found := scenarioProblems(t, s, entry.Schema, entry.File, doc)
		if len(found) == 0 {
			rows, _ := Path(doc, "scenarios").([]any)
			t.Logf("%s: %d rows fit %s", entry.File, len(rows), entry.Schema)
			continue
		}
		shown := found
		if len(shown) > shownProblems {
			shown = shown[:shownProblems]
		}
		t.Errorf("%s breaks %s (%d problems):\n  %s", entry.File, entry.Schema, len(found), strings.Join(shown, "\n  "))
	}
}

func TestMisspeltKeyInARowIsRefused(t *testing.T) {
	s := loadScenarioSchemas(t)
	row := func(expected string) any {
		doc, err := Decode([]byte(`{"version": 1, "scenarios": [{"id": "typo-1", "request": {},
			"response": null, "tags": [], "expected": ` + expected + `}]}`))
		if err != nil {
			t.Fatal(err)
		}
		return doc
	}
	if found := scenarioProblems(t, s, "core.schema.json", "good.json", row(`{"decision": "deny"}`)); len(found) != 0 {
		t.Fatalf("the well-spelt row is refused: %v", found)
	}
	found := scenarioProblems(t, s, "core.schema.json", "typo.json", row(`{"decison": "deny"}`))
	if len(found) == 0 {
		t.Fatal("a misspelt key was accepted")
	}
	t.Logf("refused: %s", strings.Join(found, "; "))
	if !strings.HasPrefix(found[0], `typo.json: scenarios[0] (id "typo-1"): expected: `) || !strings.Contains(found[0], "decison") {
		t.Fatalf("the refusal does not name the file, the row and the field: %v", found)
	}
}
