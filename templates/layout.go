package templates

import (
	"encoding/json"
	"errors"
	"regexp"
	"strings"
)

// contentSlot matches the Liquid output a layout marks its step's body with:
// {{content}}, spaces allowed inside the braces.
var contentSlot = regexp.MustCompile(`\{\{\s*content\s*\}\}`)

// contentMark stands in for the step's body while the layout renders: an
// HTML comment, which an escaped value can never spell, so a payload
// cannot place the body a second time.
const contentMark = "<!--herald:content-->"

// Layout errors name what is wrong with a layout's email body.
var (
	ErrLayoutNoContent = errors.New(`The layout body should contain the "content" variable`)
	ErrLayoutNotHTML   = errors.New("Content must be a valid HTML content")
	ErrLayoutNotBlocks = errors.New("Content must be a valid Maily JSON content")
)

// LayoutSource returns a layout's email body as HTML that still holds its
// Liquid: an HTML page as it is, a block-editor (Maily) document converted.
func LayoutSource(body, editorType string) (string, error) {
	if editorType == "block" {
		var doc map[string]any
		if err := json.Unmarshal([]byte(body), &doc); err != nil || str(doc, "type") != "doc" {
			return "", ErrLayoutNotBlocks
		}
		return mailyHTML(doc), nil
	}
	return body, nil
}

// CheckLayout reports what keeps body from serving as a layout: a page
// without its html and body elements, a block document that is not one,
// or no {{content}} slot for the step's body.
func CheckLayout(body, editorType string) error {
	src, err := LayoutSource(body, editorType)
	if err != nil {
		return err
	}
	if editorType != "block" {
		lower := strings.ToLower(src)
		for _, tag := range []string{"<html", "</html>", "<body", "</body>"} {
			if !strings.Contains(lower, tag) {
				return ErrLayoutNotHTML
			}
		}
	}
	if !contentSlot.MatchString(src) {
		return ErrLayoutNoContent
	}
	return nil
}

// ApplyLayout renders a layout's HTML source (LayoutSource) with vars, the
// step's variables, and puts content, the step's rendered body, in its
// {{content}} slot. Values are escaped in the layout as in the step, unless
// raw.
func ApplyLayout(src, content string, vars map[string]any, raw bool) (string, error) {
	marked := contentSlot.ReplaceAllLiteralString(src, contentMark)
	out, err := RenderHTML(marked, vars, raw)
	if err != nil {
		return "", err
	}
	return strings.ReplaceAll(out, contentMark, content), nil
}

// DefaultLayout is the HTML of the layout every environment starts with: a
// plain, centred, mobile-friendly page around the step's body.
const DefaultLayout = `<!DOCTYPE html><html><head><meta charset="utf-8">` +
	`<meta name="viewport" content="width=device-width, initial-scale=1"></head>` +
	`<body style="margin:0;padding:0;background-color:#f4f4f5;">` +
	`<div style="max-width:600px;margin:0 auto;padding:24px;background-color:#ffffff;` +
	`font-family:-apple-system,BlinkMacSystemFont,'Segoe UI',Roboto,Helvetica,Arial,sans-serif;` +
	`font-size:16px;line-height:1.5;color:#18181b;">{{content}}</div></body></html>`
