package record

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
)

// EncodeFloat renders v as JSON, encoding NaN and infinities as strings.
func EncodeFloat(v float64) json.RawMessage {
	switch {
	case math.IsNaN(v):
		return json.RawMessage(`"NaN"`)
	case math.IsInf(v, 1):
		return json.RawMessage(`"Infinity"`)
	case math.IsInf(v, -1):
		return json.RawMessage(`"-Infinity"`)
	}
	return json.RawMessage(strconv.FormatFloat(v, 'g', -1, 64))
}

// DecodeFloat reads a JSON number or one of the strings EncodeFloat writes.
func DecodeFloat(raw json.RawMessage) (float64, error) {
	if len(raw) > 0 && raw[0] != '"' {
		// A number, in a document already checked to be JSON: no second JSON pass (the live
		// feeder reads every line a trial writes).
		if f, err := strconv.ParseFloat(string(raw), 64); err == nil {
			return f, nil
		}
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err == nil {
		return f, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return 0, fmt.Errorf("value %s is not a number", raw)
	}
	switch s {
	case "NaN", "nan":
		return math.NaN(), nil
	case "Infinity", "inf", "+Infinity":
		return math.Inf(1), nil
	case "-Infinity", "-inf":
		return math.Inf(-1), nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("value %q is not a number", s)
	}
	return f, nil
}

// Metrics are final metric values; NaN and infinities are written as EncodeFloat writes
// them ("NaN", "Infinity", "-Infinity"), which JSON numbers cannot hold.
type Metrics map[string]float64

// MarshalJSON writes the values in name order with EncodeFloat.
func (m Metrics) MarshalJSON() ([]byte, error) {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		key, err := json.Marshal(k)
		if err != nil {
			return nil, err
		}
		b.Write(key)
		b.WriteByte(':')
		b.Write(EncodeFloat(m[k]))
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads what MarshalJSON writes; null leaves m as it is, as for a plain map.
func (m *Metrics) UnmarshalJSON(data []byte) error {
	if string(data) == "null" {
		return nil
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	out := make(Metrics, len(raw))
	for k, v := range raw {
		f, err := DecodeFloat(v)
		if err != nil {
			return fmt.Errorf("metric %q: %w", k, err)
		}
		out[k] = f
	}
	*m = out
	return nil
}
