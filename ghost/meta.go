package ghost

import (
	"encoding/json"
	"fmt"
	"strings"
)

const metaVersion = 1

// FormatMessage returns the ghost commit message carrying m. The subject is git-ghost's, so the
// commits look the same in either tool's history.
func FormatMessage(m Meta) (string, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return "", fmt.Errorf("encode ghost metadata: %w", err)
	}
	return ghostSubject + "\n\n" + string(b) + "\n", nil
}

// ParseMessage reads the metadata from a ghost commit message. It returns ok=false, and no
// error, for a message without metadata (a ghost written by git-ghost); an error means the
// message claims metadata that does not decode.
func ParseMessage(msg string) (m Meta, ok bool, err error) {
	_, body, found := strings.Cut(msg, "\n\n")
	if !found {
		return Meta{}, false, nil
	}
	body = strings.TrimSpace(body)
	if !strings.HasPrefix(body, "{") {
		return Meta{}, false, nil
	}
	dec := json.NewDecoder(strings.NewReader(body))
	if err := dec.Decode(&m); err != nil {
		return Meta{}, false, fmt.Errorf("decode ghost metadata: %w", err)
	}
	if m.Version < 1 {
		return Meta{}, false, fmt.Errorf("decode ghost metadata: version %d is not supported", m.Version)
	}
	return m, true, nil
}
