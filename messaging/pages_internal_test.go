package messaging

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/matryer/is"
)

func TestPageCache_KeepsNoAnswerReadAcrossAWrite(t *testing.T) {
	is := is.New(t)
	c := newTestCache()
	ada, bob := "env\x00ada", "env\x00bob"
	is.True(stripe(ada) != stripe(bob)) // the test needs two stripes
	_, ok, epoch := c.get(ada, "q")
	is.True(!ok) // nothing kept yet
	c.forget(ada)
	c.keep(ada, "q", epoch, []byte("old"))
	_, ok, epoch = c.get(ada, "q")
	is.True(!ok) // read while its owner's write was forgotten: not kept
	c.forget(bob)
	c.keep(ada, "q", epoch, []byte("new"))
	v, ok, _ := c.get(ada, "q")
	is.True(ok)                // kept, though another owner's write came meanwhile
	is.Equal(string(v), "new") // the answer read after the write
	c.forget(ada)
	_, ok, epoch = c.get(ada, "q")
	is.True(!ok) // forgotten with its owner
	c.forget()
	c.keep(ada, "q", epoch, []byte("older"))
	_, ok, _ = c.get(ada, "q")
	is.True(!ok) // forgetting everyone bumps every epoch
}

func TestPageCache_Ring(t *testing.T) {
	is := is.New(t)
	c := newTestCache()
	_, _, epoch := c.get("a", "")
	for _, q := range []string{"1", "2", "3", "4", "5"} {
		c.keep("a", q, epoch, []byte(q))
	}
	_, ok, _ := c.get("a", "1")
	is.True(!ok) // an owner's fifth page drops the four before
	v, ok, _ := c.get("a", "5")
	is.True(ok && string(v) == "5") // and keeps itself
	c.keep("b", "big", epoch, make([]byte, DefaultPageCache/16+1))
	_, ok, _ = c.get("b", "big")
	is.True(!ok) // a page too large is not kept

	// Pages of a sixteenth of the ring each: the seventeenth wraps over
	// the first, and the pages after it stay.
	page := func(i int) []byte { return bytes.Repeat([]byte{byte(i)}, DefaultPageCache/16-8) }
	for i := range 17 {
		c.keep(fmt.Sprint("p", i), "q", epoch, page(i))
	}
	_, ok, _ = c.get("a", "5")
	is.True(!ok) // written over
	_, ok, _ = c.get("p0", "q")
	is.True(!ok) // written over
	v, ok, _ = c.get("p1", "q")
	is.True(ok && bytes.Equal(v, page(1))) // the last lap's, past where this one reached
	v, ok, _ = c.get("p16", "q")
	is.True(ok && bytes.Equal(v, page(16))) // this lap's
	for i := 17; i < 40; i++ {
		c.keep(fmt.Sprint("p", i), "q", epoch, page(i))
	}
	is.Equal(len(c.owners), 24) // the index holds this lap's pages and the last one's, none before
	c.forget()
	_, ok, _ = c.get("p39", "q")
	is.True(!ok) // forgetting all empties it
}

func TestPageCodec_RoundTrip(t *testing.T) {
	is := is.New(t)
	subject := "Hi"
	in := feedAnswer{total: 42, msgs: []*message{
		{ID: "a", Content: []byte(`"x"`), Subject: &subject, Read: true, CTA: []byte{}, SubscriberSummary: nil},
		{ID: "b", Archived: true, Payload: []byte(`{"n":1}`)},
		{ID: "b", Subject: &subject, Payload: []byte(`{"n":1}`), CTA: []byte{}},
	}}
	out, err := decodeFeed(in.encode(nil))
	is.NoErr(err)
	is.Equal(out.total, 42)                      // the count
	is.Equal(len(out.msgs), 3)                   // every row
	is.Equal(*out.msgs[0].Subject, "Hi")         // a pointer's text
	is.Equal(out.msgs[1].Subject, nil)           // a nil pointer
	is.True(out.msgs[0].CTA != nil)              // an empty slice stays empty, not nil
	is.Equal(out.msgs[0].SubscriberSummary, nil) // a nil slice stays nil
	is.True(out.msgs[0].Read && out.msgs[1].Archived)
	is.Equal(string(out.msgs[1].Payload), `{"n":1}`)
	is.Equal(out.msgs[2].ID, "b")                    // a text as the row before's
	is.Equal(string(out.msgs[2].Payload), `{"n":1}`) // bytes as the row before's
	is.Equal(*out.msgs[2].Subject, "Hi")             // a pointer's text after a nil one
	is.True(out.msgs[2].CTA != nil)                  // an empty slice after a nil one
	enc := in.encode(nil)
	for n := range len(enc) {
		_, err := decodeFeed(enc[:n])
		is.True(err != nil) // a cut page does not decode
	}
}

func newTestCache() *pageCache {
	c := &pageCache{}
	c.size.Store(DefaultPageCache)
	return c
}

func TestPageCache_Resized(t *testing.T) {
	is := is.New(t)
	c := newTestCache()
	_, _, epoch := c.get("a", "q")
	c.keep("a", "q", epoch, []byte("page"))
	c.size.Store(1 << 20)
	_, _, epoch = c.get("b", "q")
	c.keep("b", "q", epoch, []byte("other"))
	is.Equal(len(c.ring), 1<<20) // mapped again at the new size
	_, ok, _ := c.get("a", "q")
	is.True(!ok) // the pages of the old ring dropped
	v, ok, _ := c.get("b", "q")
	is.True(ok && string(v) == "other") // the new ring's kept
}
