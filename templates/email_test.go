package templates

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/matryer/is"
)

func TestMailyHTML(t *testing.T) {
	doc := `{"type":"doc","content":[
		{"type":"heading","attrs":{"level":1,"textAlign":"center"},"content":[{"type":"text","text":"Hello "},{"type":"variable","attrs":{"id":"subscriber.firstName","fallback":"friend"}}]},
		{"type":"paragraph","content":[
			{"type":"text","text":"Bold","marks":[{"type":"bold"}]},
			{"type":"text","text":" & "},
			{"type":"text","text":"link","marks":[{"type":"link","attrs":{"href":"https://acme.test/?a=1&b=2"}}]},
			{"type":"hardBreak"},
			{"type":"text","text":"<script>{{ payload.title | default: \"x\" }}"}]},
		{"type":"bulletList","content":[{"type":"listItem","content":[{"type":"paragraph","content":[{"type":"text","text":"one"}]}]}]},
		{"type":"horizontalRule"},
		{"type":"spacer","attrs":{"height":"lg"}},
		{"type":"image","attrs":{"src":"https://acme.test/logo.png","alt":"Logo","width":100}},
		{"type":"button","attrs":{"text":"Go","url":"payload.url","isUrlVariable":true,"alignment":"center"}},
		{"type":"repeat","attrs":{"each":"payload.items"},"content":[{"type":"paragraph","content":[{"type":"variable","attrs":{"id":"payload.items.name"}}]}]}
	]}`
	var m map[string]any
	is := is.New(t)
	is.NoErr(json.Unmarshal([]byte(doc), &m)) // a valid document
	want := `<h1 style="margin:0 0 12px 0;text-align:center;">Hello {{ subscriber.firstName | default: "friend" }}</h1>` +
		`<p style="margin:0 0 16px 0;"><strong>Bold</strong> &amp; <a href="https://acme.test/?a=1&amp;b=2" target="_blank">link</a><br>` +
		`&lt;script&gt;{{ payload.title | default: "x" }}</p>` +
		`<ul><li><p style="margin:0 0 16px 0;">one</p></li></ul>` +
		`<hr style="border:none;border-top:1px solid #e4e4e7;margin:24px 0;">` +
		`<div style="height:32px;line-height:32px;">&nbsp;</div>` +
		`<p style="margin:0 0 16px 0;"><img src="https://acme.test/logo.png" alt="Logo" width="100" style="max-width:100%;height:auto;border:0;"></p>` +
		`<p style="margin:0 0 16px 0;text-align:center;"><a href="{{ payload.url }}" target="_blank" style="` + buttonStyle + `">Go</a></p>` +
		`{% for item in payload.items %}<p style="margin:0 0 16px 0;">{{ item.name }}</p>{% endfor %}`
	got := mailyHTML(m)
	is.Equal(got, want) // the document as HTML with its Liquid intact

	var vars map[string]any
	json.Unmarshal([]byte(`{"subscriber":{},"payload":{"url":"https://acme.test/go","items":[{"name":"A"},{"name":"B"}]}}`), &vars)
	html, err := RenderText(got, vars)
	is.NoErr(err) // the Liquid in it renders
	for _, part := range []string{"Hello friend</h1>", `href="https://acme.test/go"`, ">A</p>", ">B</p>", `&lt;script&gt;x</p>`} {
		is.True(strings.Contains(html, part)) // rendered part present
	}
}

func TestEmailBody(t *testing.T) {
	is := is.New(t)
	src, blocks, err := emailBody("<p>{{ x }}</p>", "html")
	is.NoErr(err)                   // an HTML string
	is.Equal(src, "<p>{{ x }}</p>") // kept as it is
	is.Equal(blocks, nil)           // not blocks
	src, _, err = emailBody(`{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"hi"}]}]}`, "")
	is.NoErr(err)                                         // a Maily document in a string
	is.Equal(src, `<p style="margin:0 0 16px 0;">hi</p>`) // converted
	_, blocks, err = emailBody([]any{map[string]any{"type": "text", "content": "hi"}, map[string]any{"type": "button", "content": "Go", "url": "https://a.test"}}, "")
	is.NoErr(err)            // EmailBlocks
	is.Equal(len(blocks), 2) // both kept
	_, blocks, _ = emailBody([]any{map[string]any{"type": "image", "content": "x"}}, "")
	is.Equal(blocks[0].Type, "text") // only button and text exist
	src, _, err = emailBody("<p>hi</p>", "block")
	is.NoErr(err)              // an HTML body with the default editorType
	is.Equal(src, "<p>hi</p>") // is HTML
	_, _, err = emailBody("{not json", "block")
	is.True(err != nil)                                                                                                    // the block editor needs a document
	is.Equal(PlainText(`<html><head><title>T</title></head><body><h1>Hi</h1><p>a &amp; b</p></body></html>`), "Hi\na & b") // text alternative
	is.Equal(PlainText("a<>b< >c"), "abc")                                                                                 // empty tags do not break it
}

func TestApplyLayout(t *testing.T) {
	is := is.New(t)
	vars := map[string]any{"payload": map[string]any{"x": "<b>", "brand": "Acme"}}
	page := `<html><body><h1>{{ payload.brand }}</h1>{{ content }}<i>{{payload.x}}</i></body></html>`
	is.NoErr(CheckLayout(page, "html")) // a page with its slot
	out, err := ApplyLayout(page, "<p>Hi</p>", vars, false)
	is.NoErr(err)                                                                     // renders
	is.Equal(out, `<html><body><h1>Acme</h1><p>Hi</p><i>&lt;b&gt;</i></body></html>`) // body unescaped in its slot, values escaped

	is.Equal(CheckLayout(`<html><body>no slot</body></html>`, "html"), ErrLayoutNoContent) // the slot is required
	is.Equal(CheckLayout(`{{content}}`, "html"), ErrLayoutNotHTML)                         // a whole page is required
	is.Equal(CheckLayout(`<html>`, "block"), ErrLayoutNotBlocks)                           // block needs a document
	doc := `{"type":"doc","content":[{"type":"paragraph","content":[{"type":"variable","attrs":{"id":"content"}}]}]}`
	is.NoErr(CheckLayout(doc, "block")) // a block document with a content variable
	src, err := LayoutSource(doc, "block")
	is.NoErr(err)
	out, err = ApplyLayout(src, "<p>Hi</p>", vars, false)
	is.NoErr(err)
	is.True(strings.Contains(out, "<p>Hi</p>")) // the body lands in the block layout
	out, err = ApplyLayout(DefaultLayout, "<p>Hi</p>", vars, false)
	is.NoErr(err)
	is.True(strings.Contains(out, `color:#18181b;"><p>Hi</p></div>`)) // the default layout wraps the body
}
