package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// SchemaVersion is the version of the layout of every JSON document
// schedlens writes. It changes when a key is removed or changes meaning;
// new keys do not change it.
const SchemaVersion = 1

// Header is what every JSON document carries first, in this order:
// schema_version, command (the command line as typed), version (of
// schedlens), trace (what was read: an object for one trace, the paths of
// each side for compare), window (the time measured) and warnings (each
// once, as printed on stderr, without the "warning: " prefix).
type Header struct {
	Command  string
	Version  string
	Trace    any
	Window   any
	Warnings []string
}

// WriteDocument writes one indented JSON object: the header's keys, then
// body's own keys (body must encode as an object) in its order, leaving out
// those the header already has. HTML characters are not escaped: comms
// such as <idle> stay readable.
//
// Each value is encoded once, indented where it goes (as json.Indent
// would indent the whole object): a body of tens of thousands of tasks is
// not encoded, decoded and indented again.
func WriteDocument(w io.Writer, h Header, body any) error {
	warnings := h.Warnings
	if warnings == nil {
		warnings = []string{}
	}
	var out bytes.Buffer
	out.WriteByte('{')
	n := 0
	put := func(key, v []byte) {
		if n > 0 {
			out.WriteByte(',')
		}
		n++
		out.WriteString("\n  ")
		out.Write(key)
		out.WriteString(": ")
		out.Write(v)
	}
	head := []struct {
		key string
		v   any
	}{{"schema_version", SchemaVersion}, {"command", h.Command}, {"version", h.Version},
		{"trace", h.Trace}, {"window", h.Window}, {"warnings", warnings}}
	taken := map[string]bool{}
	for _, kv := range head {
		b, err := encode(kv.v, "  ")
		if err != nil {
			return fmt.Errorf("json %s: %w", kv.key, err)
		}
		k, _ := json.Marshal(kv.key)
		put(k, b)
		taken[kv.key] = true
	}
	b, err := encode(body, "")
	if err != nil {
		return err
	}
	members, ok := objectMembers(b)
	if !ok {
		return fmt.Errorf("json document: the body is not an object")
	}
	for _, m := range members {
		var key string
		if err := json.Unmarshal(m[0], &key); err != nil {
			return fmt.Errorf("json document: key %s: %w", m[0], err)
		}
		if taken[key] {
			continue
		}
		taken[key] = true
		put(m[0], m[1])
	}
	if n > 0 {
		out.WriteByte('\n')
	}
	out.WriteString("}\n")
	_, err = w.Write(out.Bytes())
	return err
}

// encode encodes v indented as a value whose lines after the first begin
// with prefix (where it sits in the document), HTML characters unescaped.
func encode(v any, prefix string) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent(prefix, "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// objectMembers splits an object that encode indented with no prefix into
// its members' keys and values, in order; ok is false if b is not an
// object. Each member begins a line with two spaces and a quote, and no
// other line does: deeper lines have more spaces, and a string holds no
// raw newline.
func objectMembers(b []byte) (members [][2][]byte, ok bool) {
	if len(b) < 2 || b[0] != '{' || b[len(b)-1] != '}' {
		return nil, false
	}
	if len(b) == 2 {
		return nil, true // {}
	}
	rest := b[1 : len(b)-2] // from the newline after '{' to the one before '}'
	sep := []byte(",\n  \"")
	rest = rest[len("\n  "):]
	for len(rest) > 0 {
		m := rest
		if i := bytes.Index(rest, sep); i >= 0 {
			m, rest = rest[:i], rest[i+len(sep)-1:] // the quote begins the next
		} else {
			rest = nil
		}
		k := keyEnd(m)
		if k < 0 || !bytes.HasPrefix(m[k:], []byte(": ")) {
			return nil, false
		}
		members = append(members, [2][]byte{m[:k], m[k+2:]})
	}
	return members, true
}

// keyEnd returns the length of the JSON string that starts m, -1 if none.
func keyEnd(m []byte) int {
	if len(m) == 0 || m[0] != '"' {
		return -1
	}
	for i := 1; i < len(m); i++ {
		switch m[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}
