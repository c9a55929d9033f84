package sqldb

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
)

func TestNewID(t *testing.T) {
	is := is.New(t)
	seen := map[string]bool{}
	prev := ""
	at := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	for i := range 10000 {
		id := NewIDAt(at.Add(time.Duration(i) * time.Second))
		is.True(IsID(id))  // 24 lowercase hex characters
		is.True(!seen[id]) // unique
		is.True(id > prev) // ordered by time
		seen[id], prev = true, id
	}
	is.Equal(NewIDAt(at)[:8], fmt.Sprintf("%08x", at.Unix())) // leading 4 bytes are the Unix seconds
	is.True(!IsID("6A1F4760aaaaaaaaaaaaaaaa"))                // uppercase rejected
	is.True(!IsID("xyz"))                                     // wrong length rejected
}

func TestPlaceholders(t *testing.T) {
	is := is.New(t)
	is.Equal(Placeholders(1), "?")
	is.Equal(Placeholders(3), "?, ?, ?")
}

func TestFormatTime(t *testing.T) {
	is := is.New(t)
	at := time.Date(2026, 11, 21, 10, 4, 5, 123456789, time.FixedZone("X", 3600))
	is.Equal(FormatTime(at), "2026-11-21T09:04:05.123Z") // UTC with milliseconds
	back, err := ParseTime("2026-11-21T10:04:05+01:00")
	is.NoErr(err)                                          // offsets accepted
	is.Equal(FormatTime(back), "2026-11-21T09:04:05.000Z") // and normalised
}

func TestWriteCache(t *testing.T) {
	is := is.New(t)
	var c WriteCache[int]
	loads := 0
	load := func(v int) func() (int, error) {
		return func() (int, error) { loads++; return v, nil }
	}
	v, _ := c.Get("k", load(1))
	is.Equal(v, 1) // loaded
	v, _ = c.Get("k", load(2))
	is.Equal(v, 1)     // cached
	is.Equal(loads, 1) // without loading again
	c.Invalidate()
	v, _ = c.Get("k", load(3))
	is.Equal(v, 3) // a write forgets the answer
	// A write that lands while an answer is being loaded must not leave
	// that (possibly stale) answer cached.
	v, _ = c.Get("j", func() (int, error) { c.Invalidate(); return 4, nil })
	is.Equal(v, 4) // the caller still gets its answer
	v, _ = c.Get("j", load(5))
	is.Equal(v, 5) // but the next caller reads again
	_, err := c.Get("e", func() (int, error) { return 0, fmt.Errorf("down") })
	is.True(err != nil) // errors are returned
	v, _ = c.Get("e", load(6))
	is.Equal(v, 6) // and never cached
}

func TestWriteCache_Forget(t *testing.T) {
	is := is.New(t)
	var c WriteCache[int]
	load := func(v int) func() (int, error) {
		return func() (int, error) { return v, nil }
	}
	c.Get("a", load(1))
	c.Get("b", load(2))
	c.Forget("a")
	v, _ := c.Get("a", load(3))
	is.Equal(v, 3) // the forgotten key is read again
	v, _ = c.Get("b", load(4))
	is.Equal(v, 2) // the others stay
	// A key forgotten while another is being loaded may be the one loaded
	// (Forget does not say which), so that answer is not kept.
	v, _ = c.Get("c", func() (int, error) { c.Forget("c"); return 5, nil })
	is.Equal(v, 5) // the caller still gets its answer
	v, _ = c.Get("c", load(6))
	is.Equal(v, 6) // but the next caller reads again
	v, _ = c.Get("c", load(7))
	is.Equal(v, 6) // and that answer is kept
}

func TestWriteCache_GetIfAndLimit(t *testing.T) {
	is := is.New(t)
	c := WriteCache[int]{Limit: 2}
	loads := 0
	load := func(v int, keep bool) func() (int, bool, error) {
		return func() (int, bool, error) { loads++; return v, keep, nil }
	}
	v, _ := c.GetIf("k", load(1, false))
	is.Equal(v, 1) // loaded
	v, _ = c.GetIf("k", load(2, true))
	is.Equal(v, 2) // an answer its loader would not keep was not cached
	v, _ = c.GetIf("k", load(3, true))
	is.Equal(v, 2) // a kept one is
	c.GetIf("a", load(4, true))
	c.GetIf("b", load(5, true)) // past the limit: the cache starts over
	loads = 0
	v, _ = c.GetIf("k", load(6, true))
	is.Equal(v, 6)     // so k is read again
	is.Equal(loads, 1) // once
}

func TestWriteCache_GetMany(t *testing.T) {
	is := is.New(t)
	var c WriteCache[int]
	var asked [][]string
	load := func(answers map[string]Loaded[int]) func([]string) (map[string]Loaded[int], error) {
		return func(missing []string) (map[string]Loaded[int], error) {
			asked = append(asked, missing)
			return answers, nil
		}
	}
	c.Get("a", func() (int, error) { return 1, nil })
	got, err := c.GetMany([]string{"a", "b", "c", "d"}, load(map[string]Loaded[int]{
		"b": {Value: 2, Keep: true}, "c": {Value: 3}}))
	is.NoErr(err)
	is.Equal(got, map[string]int{"a": 1, "b": 2, "c": 3}) // cached, loaded, and d found by neither
	is.Equal(asked, [][]string{{"b", "c", "d"}})          // one load, for the keys not cached
	asked = nil
	got, _ = c.GetMany([]string{"a", "b", "c"}, load(map[string]Loaded[int]{"c": {Value: 4}}))
	is.Equal(got, map[string]int{"a": 1, "b": 2, "c": 4}) // b was kept, c (not to be kept) read again
	is.Equal(asked, [][]string{{"c"}})
	asked = nil
	got, _ = c.GetMany([]string{"a", "b"}, load(nil))
	is.Equal(got, map[string]int{"a": 1, "b": 2})
	is.Equal(len(asked), 0) // everything cached: no load at all

	// A key forgotten while others load may be one of them: none is kept.
	c.GetMany([]string{"e", "f"}, func([]string) (map[string]Loaded[int], error) {
		c.Forget("zz")
		return map[string]Loaded[int]{"e": {Value: 5, Keep: true}, "f": {Value: 6, Keep: true}}, nil
	})
	asked = nil
	got, _ = c.GetMany([]string{"e", "f"}, load(map[string]Loaded[int]{"e": {Value: 7, Keep: true}, "f": {Value: 8, Keep: true}}))
	is.Equal(got, map[string]int{"e": 7, "f": 8}) // both read again
	c.Invalidate()
	got, _ = c.GetMany([]string{"e"}, load(map[string]Loaded[int]{"e": {Value: 9, Keep: true}}))
	is.Equal(got, map[string]int{"e": 9}) // a write forgets them all

	_, err = c.GetMany([]string{"x"}, func([]string) (map[string]Loaded[int], error) { return nil, fmt.Errorf("down") })
	is.True(err != nil) // errors are returned
}

func TestByteCache_ForgetOneKey(t *testing.T) {
	is := is.New(t)
	var c ByteCache
	load := func(v string) func() ([]byte, error) {
		return func() ([]byte, error) { return []byte(v), nil }
	}
	c.Get("a", load("1"))
	c.Get("b", load("2"))
	c.Forget("a")
	v, _ := c.Get("a", load("3"))
	is.Equal(string(v), "3") // the forgotten key is read again
	v, _ = c.Get("b", load("4"))
	is.Equal(string(v), "2") // the others stay
}

func TestParseCache(t *testing.T) {
	is := is.New(t)
	var c ParseCache[string]
	parses := 0
	parse := func(raw []byte) (string, error) {
		parses++
		if string(raw) == "bad" {
			return "", fmt.Errorf("bad document")
		}
		return strings.ToUpper(string(raw)), nil
	}
	v, _ := c.Get("k", []byte("one"), parse)
	is.Equal(v, "ONE") // parsed
	v, _ = c.Get("k", []byte("one"), parse)
	is.Equal(v, "ONE")  // the same bytes again
	is.Equal(parses, 1) // are not parsed again
	v, _ = c.Get("k", []byte("two"), parse)
	is.Equal(v, "TWO") // changed bytes are
	_, err := c.Get("e", []byte("bad"), parse)
	is.True(err != nil) // a parse error is returned
	c.Get("e", []byte("bad"), parse)
	is.Equal(parses, 4) // and never kept
}

func TestByteCache(t *testing.T) {
	is := is.New(t)
	c := ByteCache{Limit: 2}
	loads := 0
	load := func(v string) func() ([]byte, error) {
		return func() ([]byte, error) { loads++; return []byte(v), nil }
	}
	v, _ := c.Get("k", load("1"))
	is.Equal(string(v), "1") // loaded
	v, _ = c.Get("k", load("2"))
	is.Equal(string(v), "1") // cached
	is.Equal(loads, 1)       // without loading again
	c.Forget("k")
	v, _ = c.Get("k", load("3"))
	is.Equal(string(v), "3") // a write forgets the answer
	// A write that lands while an answer is being loaded must not leave
	// that (possibly stale) answer cached.
	v, _ = c.Get("j", func() ([]byte, error) { c.Forget("j"); return []byte("4"), nil })
	is.Equal(string(v), "4") // the caller still gets its answer
	v, _ = c.Get("j", load("5"))
	is.Equal(string(v), "5") // but the next caller reads again
	_, err := c.Get("e", func() ([]byte, error) { return nil, fmt.Errorf("down") })
	is.True(err != nil) // errors are returned
	v, _ = c.Get("e", load("6"))
	is.Equal(string(v), "6") // and never cached

	// Past the limit the cache starts over, and what it answered before
	// stays as it was.
	kept, _ := c.Get("j", load("7"))
	is.Equal(string(kept), "5")
	c.Get("x", load("8")) // the third entry since "j" and "e": a new arena
	loads = 0
	v, _ = c.Get("j", load("9"))
	is.Equal(string(v), "9") // so j is read again
	is.Equal(loads, 1)
	is.Equal(string(kept), "5") // and the answer handed out earlier is intact
	v, _ = c.Get("", load(""))  // an empty key and value are answers like any other
	is.Equal(string(v), "")
	v, _ = c.Get("", load("z"))
	is.Equal(string(v), "")
}
