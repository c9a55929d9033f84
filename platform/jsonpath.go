package platform

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// pathAtOffset returns the dotted JSON path ("steps.0.name") of the value in
// data that the decoder was reading at byte offset, or "" if none is found.
// It walks the tokens once, keeping a stack of the objects and arrays it is in.
func pathAtOffset(data []byte, offset int64) string {
	type frame struct {
		array   bool
		index   int    // arrays: index of the current element
		key     string // objects: key of the current member
		wantKey bool   // objects: the next string token is a key
	}
	var stack []*frame
	path := func() string {
		parts := make([]string, len(stack))
		for i, f := range stack {
			if f.array {
				parts[i] = strconv.Itoa(f.index)
			} else {
				parts[i] = f.key
			}
		}
		return strings.Join(parts, ".")
	}
	// advance moves the innermost container past the value just finished.
	advance := func() {
		if n := len(stack); n > 0 {
			if top := stack[n-1]; top.array {
				top.index++
			} else {
				top.wantKey = true
			}
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		tok, err := dec.Token()
		if err != nil {
			return ""
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			advance()
			continue
		}
		if n := len(stack); n > 0 && !stack[n-1].array && stack[n-1].wantKey {
			stack[n-1].key, _ = tok.(string)
			stack[n-1].wantKey = false
			continue
		}
		// tok is a value: a scalar, or the start of an object or array.
		if dec.InputOffset() >= offset {
			return path()
		}
		if d, ok := tok.(json.Delim); ok {
			stack = append(stack, &frame{array: d == '[', wantKey: d == '{'})
			continue
		}
		advance()
	}
}

// ValueAt follows a dotted path ("messageId.0", "payload.order.id") into a
// decoded JSON document: each segment a key of an object or an index of an
// array. It is the one path walker of Herald: a 422's rejected values, a
// payload schema's failing value, a delay's delayPath, a digest's key and a
// step's control values are all found with it.
func ValueAt(doc any, path string) (any, bool) {
	return ValueAtTokens(doc, strings.Split(path, "."))
}

// ValueAtTokens is ValueAt for a path already split, such as a JSON
// pointer's tokens.
func ValueAtTokens(doc any, path []string) (any, bool) {
	for _, tok := range path {
		switch node := doc.(type) {
		case map[string]any:
			v, ok := node[tok]
			if !ok {
				return nil, false
			}
			doc = v
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(node) {
				return nil, false
			}
			doc = node[i]
		default:
			return nil, false
		}
	}
	return doc, true
}
