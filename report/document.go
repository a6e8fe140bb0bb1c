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
func WriteDocument(w io.Writer, h Header, body any) error {
	warnings := h.Warnings
	if warnings == nil {
		warnings = []string{}
	}
	var obj bytes.Buffer
	obj.WriteByte('{')
	put := func(key string, v any) error {
		if obj.Len() > 1 {
			obj.WriteByte(',')
		}
		k, _ := json.Marshal(key)
		obj.Write(k)
		obj.WriteByte(':')
		b, err := marshal(v)
		if err != nil {
			return fmt.Errorf("json %s: %w", key, err)
		}
		obj.Write(b)
		return nil
	}
	head := []struct {
		key string
		v   any
	}{{"schema_version", SchemaVersion}, {"command", h.Command}, {"version", h.Version},
		{"trace", h.Trace}, {"window", h.Window}, {"warnings", warnings}}
	taken := map[string]bool{}
	for _, kv := range head {
		if err := put(kv.key, kv.v); err != nil {
			return err
		}
		taken[kv.key] = true
	}
	b, err := marshal(body)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return fmt.Errorf("json document: the body is not an object")
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := t.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return err
		}
		if taken[key] {
			continue
		}
		taken[key] = true
		if err := put(key, raw); err != nil {
			return err
		}
	}
	obj.WriteByte('}')
	var out bytes.Buffer
	if err := json.Indent(&out, obj.Bytes(), "", "  "); err != nil {
		return err
	}
	out.WriteByte('\n')
	_, err = w.Write(out.Bytes())
	return err
}

func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}
