package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// indentedDocument is WriteDocument's layout built the plain way: the
// header's and body's members compact, gathered in one object, the
// body's keys the header has left out, and the whole indented by
// json.Indent.
func indentedDocument(t *testing.T, h Header, body any) string {
	t.Helper()
	compact := func(v any) []byte {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		return bytes.TrimRight(b.Bytes(), "\n")
	}
	w := h.Warnings
	if w == nil {
		w = []string{}
	}
	var obj bytes.Buffer
	obj.WriteByte('{')
	taken := map[string]bool{}
	add := func(k string, v []byte) {
		if taken[k] {
			return
		}
		taken[k] = true
		if obj.Len() > 1 {
			obj.WriteByte(',')
		}
		obj.Write(compact(k))
		obj.WriteByte(':')
		obj.Write(v)
	}
	for _, kv := range []struct {
		k string
		v any
	}{{"schema_version", SchemaVersion}, {"command", h.Command}, {"version", h.Version}, {"trace", h.Trace}, {"window", h.Window}, {"warnings", w}} {
		add(kv.k, compact(kv.v))
	}
	dec := json.NewDecoder(bytes.NewReader(compact(body)))
	dec.Token()
	for dec.More() {
		k, _ := dec.Token()
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			t.Fatal(err)
		}
		add(k.(string), raw)
	}
	obj.WriteByte('}')
	var out bytes.Buffer
	if err := json.Indent(&out, obj.Bytes(), "", "  "); err != nil {
		t.Fatal(err)
	}
	return out.String() + "\n"
}

// TestWriteDocument: the document is the one json.Indent makes of the
// header and body gathered compact, for bodies with nested and empty
// values, keys the header has, keys and strings that hold quotes,
// newlines and the text that starts a member line, and HTML characters.
func TestWriteDocument(t *testing.T) {
	h := Header{Command: "schedlens tasks x", Version: "v", Trace: map[string]any{"path": "x", "n": 2},
		Window: struct{ A, B int }{1, 2}, Warnings: []string{"w <idle>"}}
	type task struct {
		Comm string   `json:"comm"`
		Runs []int    `json:"runs"`
		Tags []string `json:"tags,omitempty"`
	}
	for _, tc := range []struct {
		name string
		h    Header
		body any
	}{
		{"tasks", h, struct {
			Tasks []task `json:"tasks"`
		}{[]task{{"a", []int{1, 2}, nil}, {"<idle>", []int{}, []string{"x"}}, {"q\"\n  \"x\": 1", nil, nil}}}},
		{"a header key again", h, map[string]any{"window": 5, "z": map[string]any{}, "a": []any{}}},
		{"keys with quotes", Header{}, map[string]any{"a\"b": 1, "c\\": "d", ",\n  \"e": true}},
		{"empty body", h, struct{}{}},
		{"only header keys", h, map[string]int{"command": 1, "warnings": 2}},
		{"nested", Header{Trace: []any{map[string]any{"x": []any{1, map[string]any{"y": nil}}}}}, map[string]any{"n": map[string]any{"m": map[string]any{"k": [][]int{{1}, {}}}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got bytes.Buffer
			if err := WriteDocument(&got, tc.h, tc.body); err != nil {
				t.Fatal(err)
			}
			if want := indentedDocument(t, tc.h, tc.body); got.String() != want {
				t.Errorf("got\n%s\nwant\n%s", got.String(), want)
			}
		})
	}
	for _, body := range []any{[]int{1}, 3, "x", nil} {
		if err := WriteDocument(new(bytes.Buffer), h, body); err == nil || !strings.Contains(err.Error(), "not an object") {
			t.Errorf("body %v: got %v, want an error: not an object", body, err)
		}
	}
}

// FuzzWriteDocument: any JSON object as the body gives the document that
// json.Indent makes of the header and body gathered compact.
func FuzzWriteDocument(f *testing.F) {
	for _, s := range []string{`{}`, `{"tasks":[{"comm":"a","runs":[1,2]}],"window":3}`,
		`{"a\"b":{"c":[[],{}]},",\n  \"e":"x\n  \"y"}`, `{"warnings":null,"z":"<idle>"}`} {
		f.Add([]byte(s))
	}
	h := Header{Command: "c", Version: "v", Trace: map[string]any{"p": 1}, Window: []int{1, 2}}
	f.Fuzz(func(t *testing.T, in []byte) {
		var body map[string]any
		if json.Unmarshal(in, &body) != nil || body == nil {
			return
		}
		var got bytes.Buffer
		if err := WriteDocument(&got, h, body); err != nil {
			t.Fatal(err)
		}
		if want := indentedDocument(t, h, body); got.String() != want {
			t.Fatalf("got\n%s\nwant\n%s", got.String(), want)
		}
	})
}
