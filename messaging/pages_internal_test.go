package messaging

import (
	"testing"

	"github.com/matryer/is"
)

func TestPageCache_KeepsNoAnswerReadAcrossAWrite(t *testing.T) {
	is := is.New(t)
	var c pageCache
	_, ok, epoch := c.get("env\x00ada", "q")
	is.True(!ok) // nothing kept yet
	c.forget("env\x00bob")
	c.keep("env\x00ada", "q", epoch, "old", 10)
	_, ok, epoch = c.get("env\x00ada", "q")
	is.True(!ok) // read while a write was forgotten: not kept
	c.keep("env\x00ada", "q", epoch, "new", 10)
	v, ok, _ := c.get("env\x00ada", "q")
	is.True(ok)        // kept
	is.Equal(v, "new") // the answer read after the write
	c.forget("env\x00ada")
	_, ok, _ = c.get("env\x00ada", "q")
	is.True(!ok) // forgotten with its owner
}

func TestPageCache_Bounds(t *testing.T) {
	is := is.New(t)
	var c pageCache
	_, _, epoch := c.get("a", "")
	for _, q := range []string{"1", "2", "3", "4", "5"} {
		c.keep("a", q, epoch, q, 1)
	}
	_, ok, _ := c.get("a", "1")
	is.True(!ok) // an owner's fifth page drops the four before
	v, ok, _ := c.get("a", "5")
	is.True(ok && v == "5") // and keeps itself
	c.keep("b", "big", epoch, "x", pageCacheBytes/64+1)
	_, ok, _ = c.get("b", "big")
	is.True(!ok) // a page too large is not kept
	for i := range 64 {
		c.keep(string(rune('c'+i)), "q", epoch, i, pageCacheBytes/64)
	}
	is.True(c.bytes <= pageCacheBytes) // never past the bound
	_, ok, _ = c.get("a", "5")
	is.True(!ok) // starting over dropped the oldest
	c.forget()
	is.Equal(c.bytes, 0) // forgetting all empties it
}
