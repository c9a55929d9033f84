package messaging

import (
	"encoding/json"
	"testing"

	"github.com/matryer/is"
)

func TestStringList_AsTheDecoder(t *testing.T) {
	for _, raw := range []string{
		`["2026-11-29T09:00:00.000Z"]`, `["a","b"]`, `[""]`, `["",""]`, `[]`, `null`, ``, `["a", "b"]`,
		`["a\"b"]`, `["a\\","b"]`, `["\u00e9"]`, `x"]`, `["x`, `["]`, `[1]`, `["é","ü"]`, `["a","b",]`,
	} {
		is := is.New(t)
		var want []string
		if json.Unmarshal([]byte(raw), &want) != nil {
			want = nil
		}
		is.Equal(stringList([]byte(raw)), want) // as encoding/json decodes raw
	}
}

func TestLinksOrActs(t *testing.T) {
	is := is.New(t)
	is.True(!linksOrActs([]byte(`{"data":{},"type":"redirect"}`)))               // neither
	is.True(linksOrActs([]byte(`{"data":{"url":"/x"},"type":"redirect"}`)))      // a redirect
	is.True(linksOrActs([]byte(`{"data":{},"action":{"buttons":[]}}`)))          // buttons
	is.True(linksOrActs([]byte(`{"data":{"\u0075rl":"/x"},"type":"redirect"}`))) // a key escaped
}
