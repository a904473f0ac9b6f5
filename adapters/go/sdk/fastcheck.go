package sdk

import (
	"encoding/json"
	"math/big"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// A fast, allocation-free, valid-or-not pre-check over a compiled schema.
//
// It walks the same *jsonschema.Schema graph the library validates against,
// keyword by keyword with the library's semantics (Draft 2020-12 keywords only),
// and answers "valid" only when it is sure. Any keyword, value type or number
// it does not handle exactly as the library does marks the check unsure, and
// Check then runs the library's own validation, which also gives every reason
// of an invalid instance: the verdicts and the messages are the library's,
// the pre-check only skips building them for valid instances.

// fastMaxDepth bounds the recursion (a $ref cycle, which the library reports
// as an error, ends up unsure here).
const fastMaxDepth = 4096

const (
	fNull uint8 = 1 << iota
	fBoolean
	fNumber
	fInteger
	fString
	fArray
	fObject
)

type fastProp struct {
	name string
	node *fastNode
}

type fastPattern struct {
	re   jsonschema.Regexp
	node *fastNode
}

// fastNode mirrors one compiled schema.
type fastNode struct {
	unsupported bool
	isBool      bool
	boolValue   bool

	types    uint8 // 0: no type keyword
	hasConst bool
	constV   any
	hasEnum  bool
	enum     []any
	format   func(any) error
	ref      *fastNode

	not                 *fastNode
	allOf, anyOf, oneOf []*fastNode
	ifN, thenN, elseN   *fastNode

	minProps, maxProps int // -1: absent
	required           []string
	propertyNames      *fastNode
	properties         map[string]*fastNode
	propList           []fastProp // properties as a list
	patternProps       []fastPattern
	hasAdditional      bool
	additionalFalse    bool
	additional         *fastNode

	minItems, maxItems       int // -1: absent
	unique                   bool
	contains                 *fastNode
	minContains, maxContains int // -1: absent
	prefixItems              []*fastNode
	items                    *fastNode

	minLength, maxLength int // -1: absent
	pattern              jsonschema.Regexp

	hasBounds                                          bool
	minimum, maximum, exclMinimum, exclMaximum, multOf *big.Rat
}

func optInt(p *int) int {
	if p == nil {
		return -1
	}
	return *p
}

// buildFast mirrors sch and everything it reaches (seen breaks cycles).
func buildFast(sch *jsonschema.Schema, seen map[*jsonschema.Schema]*fastNode) *fastNode {
	if sch == nil {
		return nil
	}
	if n, ok := seen[sch]; ok {
		return n
	}
	n := &fastNode{}
	seen[sch] = n
	if sch.Bool != nil {
		n.isBool, n.boolValue = true, *sch.Bool
		return n
	}
	if sch.DraftVersion < 2020 || sch.RecursiveRef != nil || sch.DynamicRef != nil ||
		len(sch.Dependencies) > 0 || len(sch.DependentRequired) > 0 || len(sch.DependentSchemas) > 0 ||
		sch.UnevaluatedProperties != nil || sch.UnevaluatedItems != nil ||
		sch.Items != nil || sch.AdditionalItems != nil ||
		sch.ContentEncoding != nil || sch.ContentMediaType != nil || sch.ContentSchema != nil ||
		len(sch.Extensions) > 0 {
		n.unsupported = true
		return n
	}
	if sch.Types != nil && !sch.Types.IsEmpty() {
		for _, t := range sch.Types.ToStrings() {
			switch t {
			case "null":
				n.types |= fNull
			case "boolean":
				n.types |= fBoolean
			case "number":
				n.types |= fNumber
			case "integer":
				n.types |= fInteger
			case "string":
				n.types |= fString
			case "array":
				n.types |= fArray
			case "object":
				n.types |= fObject
			default:
				n.unsupported = true
			}
		}
	}
	if sch.Const != nil {
		n.hasConst, n.constV = true, *sch.Const
	}
	if sch.Enum != nil {
		n.hasEnum, n.enum = true, sch.Enum.Values
	}
	if sch.Format != nil {
		if sch.Format.Validate == nil {
			n.unsupported = true
		}
		n.format = sch.Format.Validate
	}
	n.ref = buildFast(sch.Ref, seen)
	n.not = buildFast(sch.Not, seen)
	n.allOf = buildFastList(sch.AllOf, seen)
	n.anyOf = buildFastList(sch.AnyOf, seen)
	n.oneOf = buildFastList(sch.OneOf, seen)
	n.ifN = buildFast(sch.If, seen)
	n.thenN = buildFast(sch.Then, seen)
	n.elseN = buildFast(sch.Else, seen)

	n.minProps, n.maxProps = optInt(sch.MinProperties), optInt(sch.MaxProperties)
	n.required = sch.Required
	n.propertyNames = buildFast(sch.PropertyNames, seen)
	if len(sch.Properties) > 0 {
		n.properties = make(map[string]*fastNode, len(sch.Properties))
		for name, sub := range sch.Properties {
			node := buildFast(sub, seen)
			n.properties[name] = node
			n.propList = append(n.propList, fastProp{name, node})
		}
	}
	for re, sub := range sch.PatternProperties {
		n.patternProps = append(n.patternProps, fastPattern{re, buildFast(sub, seen)})
	}
	switch a := sch.AdditionalProperties.(type) {
	case nil:
	case bool:
		n.hasAdditional, n.additionalFalse = true, !a
	case *jsonschema.Schema:
		n.hasAdditional, n.additional = true, buildFast(a, seen)
	default:
		n.unsupported = true
	}

	n.minItems, n.maxItems = optInt(sch.MinItems), optInt(sch.MaxItems)
	n.unique = sch.UniqueItems
	n.contains = buildFast(sch.Contains, seen)
	n.minContains, n.maxContains = optInt(sch.MinContains), optInt(sch.MaxContains)
	n.prefixItems = buildFastList(sch.PrefixItems, seen)
	n.items = buildFast(sch.Items2020, seen)

	n.minLength, n.maxLength = optInt(sch.MinLength), optInt(sch.MaxLength)
	n.pattern = sch.Pattern

	n.minimum, n.maximum = sch.Minimum, sch.Maximum
	n.exclMinimum, n.exclMaximum, n.multOf = sch.ExclusiveMinimum, sch.ExclusiveMaximum, sch.MultipleOf
	n.hasBounds = n.minimum != nil || n.maximum != nil || n.exclMinimum != nil || n.exclMaximum != nil || n.multOf != nil
	return n
}

func buildFastList(list []*jsonschema.Schema, seen map[*jsonschema.Schema]*fastNode) []*fastNode {
	if len(list) == 0 {
		return nil
	}
	out := make([]*fastNode, len(list))
	for i, sch := range list {
		out[i] = buildFast(sch, seen)
	}
	return out
}

// fastCheck is one pre-check; unsure is set once any part of it was not
// decided exactly, and then its answer is not used.
type fastCheck struct{ unsure bool }

// fastValid reports whether v is surely valid against n.
func fastValid(n *fastNode, v any) bool {
	c := fastCheck{}
	ok := c.valid(n, v, 0)
	return ok && !c.unsure
}

func fastType(v any) uint8 {
	switch v.(type) {
	case nil:
		return fNull
	case bool:
		return fBoolean
	case json.Number:
		return fNumber
	case string:
		return fString
	case []any:
		return fArray
	case map[string]any:
		return fObject
	}
	return 0 // any other Go type: left to the library
}

// isPlainInteger: an optional minus and digits only (a literal big.Rat reads
// as an integer).
func isPlainInteger(s string) bool {
	if s != "" && s[0] == '-' {
		s = s[1:]
	}
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func (c *fastCheck) rat(v any) *big.Rat {
	r, ok := new(big.Rat).SetString(string(v.(json.Number)))
	if !ok {
		c.unsure = true
		return nil
	}
	return r
}

// equal is the library's equality (numbers by exact value); known is false
// for a value it does not handle.
func (c *fastCheck) equal(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, va := range x {
			vb, ok := y[k]
			if !ok || !c.equal(va, vb) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !c.equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case nil:
		return b == nil
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case string:
		y, ok := b.(string)
		return ok && x == y
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			if fastType(b) == 0 {
				c.unsure = true
			}
			return false
		}
		if x == y && isPlainInteger(string(x)) {
			return true
		}
		rx, ry := c.rat(x), c.rat(y)
		return rx != nil && ry != nil && rx.Cmp(ry) == 0
	}
	c.unsure = true
	return false
}

func (c *fastCheck) valid(n *fastNode, v any, depth int) bool {
	if n.isBool {
		return n.boolValue
	}
	if n.unsupported || depth > fastMaxDepth {
		c.unsure = true
		return false
	}
	depth++
	t := fastType(v)
	if t == 0 {
		c.unsure = true
		return false
	}
	if n.types != 0 && n.types&t == 0 {
		if n.types&fInteger == 0 || t != fNumber || !c.integral(v) {
			return false
		}
	}
	if n.hasConst && !c.equal(v, n.constV) {
		return false
	}
	if n.hasEnum {
		matched := false
		for _, item := range n.enum {
			if c.equal(v, item) {
				matched = true
				break
			}
		}
		if !matched {
			return false
		}
	}
	if n.format != nil && n.format(v) != nil {
		return false
	}
	if n.ref != nil && !c.valid(n.ref, v, depth) {
		return false
	}
	switch x := v.(type) {
	case map[string]any:
		if !c.object(n, x, depth) {
			return false
		}
	case []any:
		if !c.array(n, x, depth) {
			return false
		}
	case string:
		if n.minLength >= 0 || n.maxLength >= 0 {
			l := utf8.RuneCountInString(x)
			if (n.minLength >= 0 && l < n.minLength) || (n.maxLength >= 0 && l > n.maxLength) {
				return false
			}
		}
		if n.pattern != nil && !n.pattern.MatchString(x) {
			return false
		}
	case json.Number:
		if n.hasBounds && !c.number(n, x) {
			return false
		}
	}
	if n.not != nil && c.valid(n.not, v, depth) {
		return false
	}
	for _, sub := range n.allOf {
		if !c.valid(sub, v, depth) {
			return false
		}
	}
	if len(n.anyOf) > 0 {
		matched := false
		for _, sub := range n.anyOf {
			if c.valid(sub, v, depth) {
				matched = true
				break
			}
		}
		if !matched {
			return false
		}
	}
	if len(n.oneOf) > 0 {
		count := 0
		for _, sub := range n.oneOf {
			if c.valid(sub, v, depth) {
				count++
				if count > 1 {
					return false
				}
			}
		}
		if count != 1 {
			return false
		}
	}
	if n.ifN != nil {
		if c.valid(n.ifN, v, depth) {
			if n.thenN != nil && !c.valid(n.thenN, v, depth) {
				return false
			}
		} else if n.elseN != nil && !c.valid(n.elseN, v, depth) {
			return false
		}
	}
	return true
}

// integral is the library's isInteger for a number.
func (c *fastCheck) integral(v any) bool {
	s := string(v.(json.Number))
	if isPlainInteger(s) {
		return true
	}
	r, ok := new(big.Rat).SetString(s)
	return ok && r.IsInt()
}

func (c *fastCheck) number(n *fastNode, v json.Number) bool {
	r := c.rat(v)
	if r == nil {
		return false
	}
	if n.minimum != nil && r.Cmp(n.minimum) < 0 {
		return false
	}
	if n.maximum != nil && r.Cmp(n.maximum) > 0 {
		return false
	}
	if n.exclMinimum != nil && r.Cmp(n.exclMinimum) <= 0 {
		return false
	}
	if n.exclMaximum != nil && r.Cmp(n.exclMaximum) >= 0 {
		return false
	}
	if n.multOf != nil {
		if n.multOf.Sign() == 0 {
			c.unsure = true
			return false
		}
		if !new(big.Rat).Quo(r, n.multOf).IsInt() {
			return false
		}
	}
	return true
}

func (c *fastCheck) object(n *fastNode, obj map[string]any, depth int) bool {
	if n.minProps >= 0 && len(obj) < n.minProps {
		return false
	}
	if n.maxProps >= 0 && len(obj) > n.maxProps {
		return false
	}
	for _, name := range n.required {
		if _, ok := obj[name]; !ok {
			return false
		}
	}
	if n.patternProps == nil && !n.hasAdditional && n.propertyNames == nil {
		// only properties apply: the fewer of the two sides is walked
		if len(n.propList) <= len(obj) {
			for _, p := range n.propList {
				if value, ok := obj[p.name]; ok && !c.valid(p.node, value, depth) {
					return false
				}
			}
			return true
		}
	}
	for name, value := range obj {
		evaluated := false
		if sub, ok := n.properties[name]; ok {
			evaluated = true
			if !c.valid(sub, value, depth) {
				return false
			}
		}
		for _, p := range n.patternProps {
			if p.re.MatchString(name) {
				evaluated = true
				if !c.valid(p.node, value, depth) {
					return false
				}
			}
		}
		if !evaluated && n.hasAdditional {
			if n.additionalFalse {
				return false
			}
			if n.additional != nil && !c.valid(n.additional, value, depth) {
				return false
			}
		}
		if n.propertyNames != nil && !c.valid(n.propertyNames, name, depth) {
			return false
		}
	}
	return true
}

func (c *fastCheck) array(n *fastNode, arr []any, depth int) bool {
	if n.minItems >= 0 && len(arr) < n.minItems {
		return false
	}
	if n.maxItems >= 0 && len(arr) > n.maxItems {
		return false
	}
	if n.unique {
		for i := 1; i < len(arr); i++ {
			for j := 0; j < i; j++ {
				if c.equal(arr[i], arr[j]) {
					return false
				}
			}
		}
	}
	evaluated := len(n.prefixItems)
	if evaluated > len(arr) {
		evaluated = len(arr)
	}
	for i := 0; i < evaluated; i++ {
		if !c.valid(n.prefixItems[i], arr[i], depth) {
			return false
		}
	}
	if n.items != nil {
		for _, item := range arr[evaluated:] {
			if !c.valid(n.items, item, depth) {
				return false
			}
		}
	}
	if n.contains != nil {
		matched := 0
		for _, item := range arr {
			if c.valid(n.contains, item, depth) {
				matched++
			}
		}
		if n.minContains >= 0 {
			if matched < n.minContains {
				return false
			}
		} else if matched == 0 {
			return false
		}
		if n.maxContains >= 0 && matched > n.maxContains {
			return false
		}
	}
	return true
}
