package messaging

import (
	"context"
	"testing"
	"time"

	"github.com/matryer/is"
)

// TestHoldFiles_BoundsTheBytesInFlight: sends holding maxFilesInFlight
// bytes of files make the next send with files wait, while a send without
// files goes at once; once they are done, it goes.
func TestHoldFiles_BoundsTheBytesInFlight(t *testing.T) {
	is := is.New(t)
	e := NewDeliverer(nil, nil)
	big := []Attachment{{Content: make([]byte, maxFilesInFlight/2)}}
	first, err := e.holdFiles(t.Context(), big)
	is.NoErr(err) // the first fits
	second, err := e.holdFiles(t.Context(), big)
	is.NoErr(err) // so does the second

	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	_, err = e.holdFiles(ctx, []Attachment{{Content: []byte("x")}})
	is.True(err != nil) // a third waits while the two are in flight

	none, err := e.holdFiles(ctx, nil)
	is.NoErr(err) // an email without files never waits
	none()

	first()
	second()
	third, err := e.holdFiles(t.Context(), big)
	is.NoErr(err) // it goes once they are done
	third()
}
