package scenario

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// decodeYAML reads YAML 1.2 into v through JSON, refusing unknown fields. YAML 1.2's core
// schema keeps y, n, yes, no, on and off strings (YAML 1.1 made them booleans, so a job named n
// became false), reads 010 as ten, and dates as strings. JSON is YAML 1.2, so JSON files read
// the same way.
func decodeYAML(data []byte, v any) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return err
	}
	var tree any
	if len(doc.Content) > 0 {
		var err error
		if tree, err = toJSON(&doc); err != nil {
			return err
		}
	}
	js, err := json.Marshal(tree)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	return dec.Decode(v)
}

// toJSON converts a YAML node to the values encoding/json writes, resolving scalars with the
// YAML 1.2 core schema.
func toJSON(n *yaml.Node) (any, error) {
	switch n.Kind {
	case yaml.DocumentNode:
		return toJSON(n.Content[0])
	case yaml.AliasNode:
		return toJSON(n.Alias)
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := toJSON(c)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.MappingNode:
		out := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("line %d: a mapping key must be a plain value", k.Line)
			}
			if _, dup := out[k.Value]; dup {
				return nil, fmt.Errorf("line %d: key %q appears twice in one mapping", k.Line, k.Value)
			}
			v, err := toJSON(n.Content[i+1])
			if err != nil {
				return nil, err
			}
			out[k.Value] = v
		}
		return out, nil
	}
	return scalar(n)
}

func scalar(n *yaml.Node) (any, error) {
	s := n.Value
	switch n.ShortTag() {
	case "!!null":
		return nil, nil
	case "!!bool":
		return strings.EqualFold(s, "true"), nil
	case "!!int":
		return coreInt(n)
	case "!!float":
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || strings.HasPrefix(strings.ToLower(strings.TrimLeft(s, "+-")), ".inf") {
			return nil, fmt.Errorf("line %d: %q is not a finite number", n.Line, s)
		}
		return json.Number(strconv.FormatFloat(f, 'g', -1, 64)), nil
	}
	// Strings, and dates and binary kept as their text.
	return s, nil
}

// coreInt reads an integer of the YAML 1.2 core schema: decimal (leading zeros allowed), 0o
// octal or 0x hexadecimal.
func coreInt(n *yaml.Node) (any, error) {
	s := n.Value
	body, sign := strings.TrimLeft(s, "+-"), ""
	if strings.HasPrefix(s, "-") {
		sign = "-"
	}
	base := 10
	switch {
	case strings.HasPrefix(body, "0o"):
		body, base = body[2:], 8
	case strings.HasPrefix(body, "0x"):
		body, base = body[2:], 16
	}
	v, err := strconv.ParseInt(sign+body, base, 64)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			return nil, fmt.Errorf("line %d: %s is out of range", n.Line, s)
		}
		// Not an integer of the core schema (YAML 1.1 forms such as 0b1 or 1_000): keep the text.
		return s, nil
	}
	return json.Number(strconv.FormatInt(v, 10)), nil
}
