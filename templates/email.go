package templates

import (
	"encoding/json"
	"fmt"
	"html"
	"strings"
)

// str returns m[key] when it is a string.
func str(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

// obj returns m[key] when it is an object.
func obj(m map[string]any, key string) map[string]any {
	o, _ := m[key].(map[string]any)
	return o
}

// RenderEmail renders an email step's body control as HTML: an HTML string,
// a block-editor (Maily) document, or an EmailBlock array. Every
// interpolated value is escaped unless raw. blocks is non-nil only for the
// EmailBlock form, each block rendered, for the message to store as its
// content.
func RenderEmail(body any, editorType string, vars map[string]any, raw bool) (string, []EmailBlock, error) {
	src, blocks, err := emailBody(body, editorType)
	if err != nil {
		return "", nil, err
	}
	if blocks == nil {
		out, err := RenderHTML(src, vars, raw)
		if err != nil {
			return "", nil, fmt.Errorf("body: %w", err)
		}
		return out, nil, nil
	}
	for i := range blocks {
		// a text block's content is HTML; a button's is text, escaped whole by BlocksHTML
		if blocks[i].Content, err = RenderHTML(blocks[i].Content, vars, raw || blocks[i].Type == "button"); err != nil {
			return "", nil, fmt.Errorf("body.%d.content: %w", i, err)
		}
		if blocks[i].URL, err = RenderText(blocks[i].URL, vars); err != nil {
			return "", nil, fmt.Errorf("body.%d.url: %w", i, err)
		}
	}
	return BlocksHTML(blocks), blocks, nil
}

// emailBody turns an email step's body control into HTML that still holds
// its Liquid: an HTML string as it is, a block-editor (Maily/TipTap) document
// converted, or an EmailBlock array (the older editor) as blocks. blocks is
// non-nil only for the EmailBlock form, which messages store as content.
func emailBody(body any, editorType string) (htmlSrc string, blocks []EmailBlock, err error) {
	switch b := body.(type) {
	case nil:
		return "", nil, nil
	case map[string]any:
		return mailyHTML(b), nil, nil
	case []any:
		raw, _ := json.Marshal(b)
		if err := json.Unmarshal(raw, &blocks); err != nil {
			return "", nil, fmt.Errorf("body: an array must hold email blocks: %v", err)
		}
		for i := range blocks {
			if blocks[i].Type != "button" {
				blocks[i].Type = "text" // an EmailBlock is a button or text
			}
		}
		return "", blocks, nil
	case string:
		// A body that is not a JSON object is HTML, whatever editorType
		// says: clients send "block" by default, also with an HTML body.
		trimmed := strings.TrimSpace(b)
		if strings.HasPrefix(trimmed, "{") {
			var doc map[string]any
			if err := json.Unmarshal([]byte(trimmed), &doc); err == nil && str(doc, "type") == "doc" {
				return mailyHTML(doc), nil, nil
			} else if editorType == "block" {
				return "", nil, fmt.Errorf("body: the block editor needs a JSON document")
			}
		}
		return b, nil, nil
	default:
		return "", nil, fmt.Errorf("body must be a string or a block-editor document")
	}
}

// EmailBlock is one block of an email body written in the older block
// editor: a button or text, as the API's EmailBlock spells it.
type EmailBlock struct {
	Type    string `json:"type"`
	Content string `json:"content"`
	URL     string `json:"url,omitempty"`
	Styles  *struct {
		TextAlign string `json:"textAlign,omitempty"`
	} `json:"styles,omitempty"`
}

// BlocksHTML renders already rendered EmailBlocks as HTML: what an email
// written in blocks sends, inside its layout.
func BlocksHTML(blocks []EmailBlock) string {
	var b strings.Builder
	for _, bl := range blocks {
		align := ""
		if bl.Styles != nil && bl.Styles.TextAlign != "" {
			align = ` style="text-align:` + html.EscapeString(bl.Styles.TextAlign) + `"`
		}
		switch bl.Type {
		case "button":
			fmt.Fprintf(&b, `<p%s><a href="%s" style="%s">%s</a></p>`, align, html.EscapeString(bl.URL), buttonStyle, html.EscapeString(bl.Content))
		default:
			fmt.Fprintf(&b, `<p%s>%s</p>`, align, bl.Content)
		}
	}
	return b.String()
}

// WithLayout wraps an email body in Herald's default layout: a plain,
// centred, mobile-friendly page.
func WithLayout(subject, body string) string {
	return `<!DOCTYPE html><html><head><meta charset="utf-8">` +
		`<meta name="viewport" content="width=device-width, initial-scale=1">` +
		`<title>` + html.EscapeString(subject) + `</title></head>` +
		`<body style="margin:0;padding:0;background-color:#f4f4f5;">` +
		`<div style="max-width:600px;margin:0 auto;padding:24px;background-color:#ffffff;` +
		`font-family:-apple-system,BlinkMacSystemFont,'Segoe UI',Roboto,Helvetica,Arial,sans-serif;` +
		`font-size:16px;line-height:1.5;color:#18181b;">` + body + `</div></body></html>`
}

// PlainText is a plain-text alternative of an HTML body: tags dropped,
// block ends turned into line breaks, entities decoded.
func PlainText(h string) string {
	var b strings.Builder
	inTag, inStyle := false, false
	var tag strings.Builder
	for _, r := range h {
		switch {
		case r == '<':
			inTag = true
			tag.Reset()
		case r == '>' && inTag:
			inTag = false
			name := ""
			if fields := strings.Fields(tag.String()); len(fields) > 0 {
				name = strings.ToLower(fields[0])
			}
			switch name {
			case "style", "title":
				inStyle = true
			case "/style", "/title":
				inStyle = false
			case "/p", "br", "br/", "/h1", "/h2", "/h3", "/h4", "/h5", "/h6", "/li", "/div", "hr", "hr/", "/tr":
				b.WriteByte('\n')
			}
		case inTag:
			tag.WriteRune(r)
		case !inStyle:
			b.WriteRune(r)
		}
	}
	lines := strings.Split(html.UnescapeString(b.String()), "\n")
	out := lines[:0]
	for _, l := range lines {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
