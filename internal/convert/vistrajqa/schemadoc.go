package vistrajqa

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// schemaDefOrder is the order in which docs/vistrajqa.md documents the schema's definitions.
var schemaDefOrder = []string{"trajectory", "step", "probe", "qa_item", "memory_point"}

// SchemaTables renders the JSON Schema's definitions as Markdown field tables, the form that
// docs/vistrajqa.md shows; a test keeps the document's copy equal to it, so the two cannot drift.
func SchemaTables() (string, error) {
	type prop struct {
		Type        any             `json:"type"`
		Enum        []any           `json:"enum"`
		MinLength   *int            `json:"minLength"`
		Minimum     *float64        `json:"minimum"`
		MinItems    *int            `json:"minItems"`
		Ref         string          `json:"$ref"`
		Items       json.RawMessage `json:"items"`
		Description string          `json:"description"`
	}
	var doc struct {
		Defs map[string]struct {
			Description string          `json:"description"`
			Required    []string        `json:"required"`
			Properties  json.RawMessage `json:"properties"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(SchemaJSON, &doc); err != nil {
		return "", err
	}
	var b strings.Builder
	for i, name := range schemaDefOrder {
		def, ok := doc.Defs[name]
		if !ok {
			return "", fmt.Errorf("schema has no definition %s", name)
		}
		// Keep the file's property order: decode the object key by key.
		var order []string
		dec := json.NewDecoder(strings.NewReader(string(def.Properties)))
		props := map[string]prop{}
		if _, err := dec.Token(); err != nil {
			return "", err
		}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return "", err
			}
			var p prop
			if err := dec.Decode(&p); err != nil {
				return "", err
			}
			key := tok.(string)
			order = append(order, key)
			props[key] = p
		}
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "**%s** — %s\n\n", name, def.Description)
		b.WriteString("| field | type | required | description |\n|---|---|---|---|\n")
		for _, key := range order {
			p := props[key]
			req := ""
			if slices.Contains(def.Required, key) {
				req = "yes"
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", key, typeText(p.Type, p.Enum, p.MinLength, p.Minimum, p.MinItems, p.Items), req, p.Description)
		}
	}
	return b.String(), nil
}

// typeText describes a property's type in a few words.
func typeText(typ any, enum []any, minLength *int, minimum *float64, minItems *int, items json.RawMessage) string {
	if len(enum) > 0 {
		var vs []string
		for _, v := range enum {
			b, _ := json.Marshal(v)
			vs = append(vs, "`"+strings.Trim(string(b), `"`)+"`")
		}
		return "one of " + strings.Join(vs, ", ")
	}
	var types []string
	switch t := typ.(type) {
	case string:
		types = []string{t}
	case []any:
		for _, x := range t {
			types = append(types, fmt.Sprint(x))
		}
	}
	nullable := slices.Contains(types, "null")
	types = slices.DeleteFunc(types, func(s string) bool { return s == "null" })
	s := strings.Join(types, " or ")
	if len(types) == 1 && types[0] == "array" && len(items) > 0 {
		var it struct {
			Ref  string `json:"$ref"`
			Type string `json:"type"`
		}
		json.Unmarshal(items, &it)
		elem := strings.TrimPrefix(it.Ref, "#/$defs/")
		if elem == "" {
			elem = it.Type
		}
		s = "array of " + elem
	}
	switch {
	case minLength != nil && *minLength > 0:
		s += ", non-empty"
	case minimum != nil:
		s += fmt.Sprintf(" ≥ %g", *minimum)
	case minItems != nil && *minItems > 0:
		s += fmt.Sprintf(", at least %d", *minItems)
	}
	if nullable {
		s += " (or null)"
	}
	return s
}
