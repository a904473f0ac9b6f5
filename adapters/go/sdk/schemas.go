package sdk

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Canonical schema names (files of the schema directory, or file#pointer).
const (
	SchemaBase           = "https://interop.ahp.test/schemas/draft/"
	InterceptRequest     = "intercept-request.schema.json"
	InterceptResponse    = "intercept-response.schema.json"
	CapabilitiesRequest  = "capabilities-request.schema.json"
	CapabilitiesResponse = "capabilities-response.schema.json"
)

// Schemas holds every *.schema.json of one directory, registered by $id and
// compiled on first use (each definition once per process), with format
// assertions on (uri, date-time). Patterns compile with Go's RE2 engine; a
// pattern RE2 cannot compile is an error of Load, naming the file and pattern.
type Schemas struct {
	compiler  *jsonschema.Compiler
	ids       map[string]string // file name -> $id
	mu        sync.Mutex
	compiled  map[string]*jsonschema.Schema
	documents map[string]any
	// the pre-check's mirror of each compiled schema (fastcheck.go)
	fast     map[string]*fastNode
	fastSeen map[*jsonschema.Schema]*fastNode
}

// LoadSchemas reads every *.schema.json at the root of dir.
func LoadSchemas(dir fs.FS) (*Schemas, error) {
	names, err := fs.Glob(dir, "*.schema.json")
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, errors.New("no *.schema.json files in the schema directory")
	}
	sort.Strings(names)
	s := &Schemas{
		compiler:  jsonschema.NewCompiler(),
		ids:       map[string]string{},
		compiled:  map[string]*jsonschema.Schema{},
		documents: map[string]any{},
		fast:      map[string]*fastNode{},
		fastSeen:  map[*jsonschema.Schema]*fastNode{},
	}
	s.compiler.DefaultDraft(jsonschema.Draft2020)
	s.compiler.AssertFormat()
	for _, name := range names {
		data, err := fs.ReadFile(dir, name)
		if err != nil {
			return nil, err
		}
		doc, err := Decode(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		obj, ok := doc.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s is not a schema object", name)
		}
		if bad := PatternProblems(obj); len(bad) > 0 {
			return nil, fmt.Errorf("%s: patterns RE2 cannot compile: %s", name, strings.Join(bad, "; "))
		}
		id, _ := obj["$id"].(string)
		if id == "" {
			id = SchemaBase + path.Base(name)
		}
		if err := s.compiler.AddResource(id, doc); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		s.ids[name] = id
		s.documents[name] = doc
	}
	return s, nil
}

// Names lists the schema files.
func (s *Schemas) Names() []string {
	out := make([]string, 0, len(s.ids))
	for name := range s.ids {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// Has reports whether the directory holds the schema file.
func (s *Schemas) Has(file string) bool { _, ok := s.ids[file]; return ok }

// Compile returns the validator of a schema file or of file#/pointer, built once.
func (s *Schemas) Compile(name string) (*jsonschema.Schema, error) {
	sch, _, err := s.compile(name)
	return sch, err
}

func (s *Schemas) compile(name string) (*jsonschema.Schema, *fastNode, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sch, ok := s.compiled[name]; ok {
		return sch, s.fast[name], nil
	}
	file, pointer, _ := strings.Cut(name, "#")
	id, ok := s.ids[file]
	if !ok {
		return nil, nil, fmt.Errorf("schema %s not found", file)
	}
	loc := id
	if pointer != "" {
		loc += "#" + pointer
	}
	sch, err := s.compiler.Compile(loc)
	if err != nil {
		return nil, nil, fmt.Errorf("compiling %s: %w", name, err)
	}
	s.compiled[name] = sch
	fast := buildFast(sch, s.fastSeen)
	s.fast[name] = fast
	return sch, fast, nil
}

// Check validates v against the named schema: "" when valid, else a reason.
// A value the pre-check finds surely valid is valid; any other is validated
// by the library, whose verdict and reasons are the answer.
func (s *Schemas) Check(name string, v any) string {
	sch, fast, err := s.compile(name)
	if err != nil {
		return err.Error()
	}
	if fastValid(fast, v) {
		return ""
	}
	if err := sch.Validate(v); err != nil {
		msg := strings.Join(strings.Fields(err.Error()), " ")
		if len(msg) > 400 {
			msg = msg[:400]
		}
		return name + ": " + msg
	}
	return ""
}

// PatternProblems lists every "pattern" and "patternProperties" key of a
// schema document that Go's regexp (RE2) cannot compile.
func PatternProblems(doc any) []string {
	var bad []string
	var walk func(node any, inData bool)
	walk = func(node any, inData bool) {
		switch x := node.(type) {
		case []any:
			for _, item := range x {
				walk(item, inData)
			}
		case map[string]any:
			if inData {
				return
			}
			for k, v := range x {
				switch k {
				case "const", "enum", "default", "examples", "required":
					continue
				case "pattern":
					if p, ok := v.(string); ok {
						if _, err := regexp.Compile(p); err != nil {
							bad = append(bad, fmt.Sprintf("%q: %v", p, err))
						}
					}
				case "patternProperties":
					for p, sub := range Object(v) {
						if _, err := regexp.Compile(p); err != nil {
							bad = append(bad, fmt.Sprintf("%q: %v", p, err))
						}
						walk(sub, false)
					}
				case "properties", "$defs", "definitions", "dependentSchemas":
					for _, sub := range Object(v) {
						walk(sub, false)
					}
				default:
					walk(v, false)
				}
			}
		}
	}
	walk(doc, false)
	sort.Strings(bad)
	return bad
}
