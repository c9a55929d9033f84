package messaging

import (
	"bytes"
	"encoding/binary"
	"errors"
	"unsafe"
)

// errBadPage is a kept page that does not decode; cachedPageOf reads the
// page from the database instead.
var errBadPage = errors.New("messaging: a kept page does not decode")

// A page's rows are encoded field by field, each field as the value its
// pointer (of the list dest gives, the one rows.Scan fills) points to. The
// rows of one subscriber's page repeat many values (its environment, its
// workflow, the actor, the tags), so a field that holds what the row
// before held is one byte. A field begins with a uvarint:
//
//	text (*string):            0 as before, else its length plus 1
//	bytes, maybe text (*[]byte, **string): 0 nil, 1 as before, else its length plus 2
//	flag (*bool):              a byte, 0 or 1
const (
	sameText  = 0
	nilValue  = 0
	sameValue = 1
)

// encodeRows appends rows to b (decodeRows reads them).
func encodeRows[T any](b []byte, rows []*T, dest func(*T) []any) []byte {
	b = binary.AppendUvarint(b, uint64(len(rows)))
	var prev []any
	for _, r := range rows {
		fields := dest(r)
		for i, f := range fields {
			var before any
			if prev != nil {
				before = prev[i]
			}
			b = appendPageField(b, f, before)
		}
		prev = fields
	}
	return b
}

// appendPageField appends the value f points to, or that it is the value
// before points to (nil for the first row).
func appendPageField(b []byte, f, before any) []byte {
	switch f := f.(type) {
	case *string:
		if before != nil && *f == *before.(*string) {
			return append(b, sameText)
		}
		b = binary.AppendUvarint(b, uint64(len(*f))+1)
		return append(b, *f...)
	case *[]byte:
		switch {
		case *f == nil:
			return append(b, nilValue)
		case before != nil && *before.(*[]byte) != nil && bytes.Equal(*f, *before.(*[]byte)):
			return append(b, sameValue)
		}
		b = binary.AppendUvarint(b, uint64(len(*f))+2)
		return append(b, *f...)
	case **string:
		switch {
		case *f == nil:
			return append(b, nilValue)
		case before != nil && *before.(**string) != nil && **f == **before.(**string):
			return append(b, sameValue)
		}
		b = binary.AppendUvarint(b, uint64(len(**f))+2)
		return append(b, **f...)
	case *bool:
		return appendFlag(b, *f)
	}
	panic("messaging: a page field of an unknown type")
}

func appendFlag(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

// decodeRows reads the rows encodeRows wrote. The rows' texts and byte
// slices share b, which no one may change after: a page decodes from a
// copy of its own (pageCache.get), and its rows are only read; a value
// repeated from the row before is shared with it.
func decodeRows[T any](b []byte, dest func(*T) []any) ([]*T, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return nil, errBadPage
	}
	b = b[k:]
	rows := make([]*T, n)
	var prev []any
	for i := range rows {
		rows[i] = new(T)
		fields := dest(rows[i])
		for j, f := range fields {
			var before any
			if prev != nil {
				before = prev[j]
			}
			var ok bool
			if b, ok = readPageField(b, f, before); !ok {
				return nil, errBadPage
			}
		}
		prev = fields
	}
	if len(b) != 0 {
		return nil, errBadPage
	}
	return rows, nil
}

// readPageField sets the value f points to from the front of b, or to
// the value before points to, and returns the rest of b.
func readPageField(b []byte, f, before any) ([]byte, bool) {
	if len(b) == 0 {
		return nil, false
	}
	if f, ok := f.(*bool); ok {
		*f = b[0] == 1
		return b[1:], true
	}
	n, k := binary.Uvarint(b)
	if k <= 0 {
		return nil, false
	}
	b = b[k:]
	// The length the tag gives, past the tag values of f's kind.
	value := func(past uint64) ([]byte, bool) {
		if n-past > uint64(len(b)) {
			return nil, false
		}
		return b[: n-past : n-past], true
	}
	switch f := f.(type) {
	case *string:
		if n == sameText {
			if before == nil {
				return nil, false
			}
			*f = *before.(*string)
			return b, true
		}
		v, ok := value(1)
		*f = text(v)
		return b[len(v):], ok
	case *[]byte, **string:
		switch {
		case n == nilValue:
			setField(f, nil, nil)
			return b, true
		case n == sameValue:
			if before == nil {
				return nil, false
			}
			setField(f, nil, before)
			return b, true
		}
		v, ok := value(2)
		setField(f, v, nil)
		return b[len(v):], ok
	}
	return nil, false
}

// setField sets a *[]byte or **string field to v, or to what before
// points to when it is set; neither sets nil.
func setField(f any, v []byte, before any) {
	switch f := f.(type) {
	case *[]byte:
		switch {
		case before != nil:
			*f = *before.(*[]byte)
		default:
			*f = v
		}
	case **string:
		switch {
		case before != nil:
			*f = *before.(**string)
		case v == nil:
			*f = nil
		default:
			s := text(v)
			*f = &s
		}
	}
}

// text is b as a string without a copy: b is a decoded page's own, never
// changed after (decodeRows), so the string is as immutable as any.
func text(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}
