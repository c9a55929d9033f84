package activity

import (
	"errors"
	"testing"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/messaging"
)

// TestSplitAttachments_KeepsTheRestAsWritten takes payload.attachments
// out of payloads whose other members must keep their bytes: their order,
// spacing and escapes, which templates and the feed hand on as written.
func TestSplitAttachments_KeepsTheRestAsWritten(t *testing.T) {
	for _, tc := range []struct {
		name, payload, rest, files string
	}{
		{"OK first", `{"attachments":[1], "z":"\u00e9","a":2}`, `{ "z":"\u00e9","a":2}`, `[1]`},
		{"OK middle", `{"z":1 , "attachments" : [{"file":"x"}] ,"a":{"attachments":3}}`, `{"z":1  ,"a":{"attachments":3}}`, `[{"file":"x"}]`},
		{"OK last", `{"z":1,"attachments":[]}`, `{"z":1}`, `[]`},
		{"OK alone", `{"attachments":[2]}`, `{}`, `[2]`},
		{"OK none", `{"z":"attachments"}`, `{"z":"attachments"}`, ``},
		{"OK nested only", `{"a":{"attachments":[1]}}`, `{"a":{"attachments":[1]}}`, ``},
		{"OK not an object", `[1,"attachments"]`, `[1,"attachments"]`, ``},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			rest, files := splitAttachments([]byte(tc.payload))
			is.Equal(string(rest), tc.rest)   // the rest as the client wrote it
			is.Equal(string(files), tc.files) // the files' JSON
		})
	}
}

// TestDecodeFile_TakesWhatClientsSend reads a file's content as base64 in
// either alphabet, padded or not, and as the JSON of a Node Buffer, which
// @novu/node sends; anything else is refused.
func TestDecodeFile_TakesWhatClientsSend(t *testing.T) {
	for _, tc := range []struct {
		name, raw, want string
		ok              bool
	}{
		{"OK padded", `"aGk/Pz8+"`, "hi???>", true},
		{"OK unpadded", `"aGk"`, "hi", true},
		{"OK URL alphabet", `"aGk_Pz8-"`, "hi???>", true},
		{"OK wrapped lines", `"aGk/\nPz8+"`, "hi???>", true},
		{"OK Node Buffer", `{"type":"Buffer","data":[104,105,0,255]}`, "hi\x00\xff", true},
		{"ErrNotBase64", `"not base64!"`, "", false},
		{"ErrByteOutOfRange", `{"type":"Buffer","data":[256]}`, "", false},
		{"ErrOtherObject", `{"data":[1]}`, "", false},
		{"ErrNumber", `12`, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			got, problem := decodeFile([]byte(tc.raw))
			is.Equal(problem == "", tc.ok) // accepted or refused
			is.Equal(string(got), tc.want) // the bytes meant
		})
	}
}

// TestFileCache_LoadsOnceAndForgets: reads of one key load it once, a
// failed load is tried again, and only the last few keys are kept.
func TestFileCache_LoadsOnceAndForgets(t *testing.T) {
	is := is.New(t)
	var c fileCache
	loads := map[string]int{}
	load := func(key string, fail bool) func() ([]messaging.Attachment, error) {
		return func() ([]messaging.Attachment, error) {
			loads[key]++
			if fail {
				return nil, errors.New("unavailable")
			}
			return []messaging.Attachment{{Name: key}}, nil
		}
	}
	for range 3 {
		files, err := c.get("@a", load("@a", false))
		is.NoErr(err)                 // read
		is.Equal(files[0].Name, "@a") // the key's files
	}
	is.Equal(loads["@a"], 1) // loaded once

	_, err := c.get("@b", load("@b", true))
	is.True(err != nil) // a failed load fails the read
	_, err = c.get("@b", load("@b", false))
	is.NoErr(err)            // and is tried again
	is.Equal(loads["@b"], 2) // by the next read

	for _, k := range []string{"@c", "@d", "@e"} {
		c.get(k, load(k, false))
	}
	c.get("@a", load("@a", false))
	is.Equal(loads["@a"], 2) // pushed out by four newer keys, loaded again
}
