package templates

import (
	"fmt"
	"html"
	"strconv"
	"strings"
)

// buttonStyle is the look of call-to-action buttons in emails.
const buttonStyle = "display:inline-block;padding:10px 20px;border-radius:6px;background-color:#18181b;" +
	"color:#ffffff;text-decoration:none;font-weight:600;"

// mailyHTML converts a block-editor document (Maily, a TipTap/ProseMirror
// JSON tree: doc, paragraph, heading, text with marks, button, image,
// divider, spacer, lists, variables, repeat…) into HTML. Liquid in text and
// attributes is kept, to be rendered with the rest of the body; variable
// nodes become {{ … }} outputs.
func mailyHTML(doc map[string]any) string {
	var b strings.Builder
	(&mailyWriter{b: &b}).node(doc)
	return b.String()
}

type mailyWriter struct {
	b    *strings.Builder
	each string // the array a repeat node iterates over, whose items are "item"
}

func (w *mailyWriter) children(n map[string]any) {
	list, _ := n["content"].([]any)
	for _, c := range list {
		if cn, ok := c.(map[string]any); ok {
			w.node(cn)
		}
	}
}

func (w *mailyWriter) node(n map[string]any) {
	attrs := obj(n, "attrs")
	switch str(n, "type") {
	case "text":
		w.text(n)
	case "paragraph":
		w.b.WriteString("<p" + alignStyle(attrs, "margin:0 0 16px 0;") + ">")
		w.children(n)
		w.b.WriteString("</p>")
	case "heading":
		level := int(num(attrs["level"], 1))
		level = min(max(level, 1), 6)
		fmt.Fprintf(w.b, "<h%d%s>", level, alignStyle(attrs, "margin:0 0 12px 0;"))
		w.children(n)
		fmt.Fprintf(w.b, "</h%d>", level)
	case "hardBreak":
		w.b.WriteString("<br>")
	case "horizontalRule", "divider":
		w.b.WriteString(`<hr style="border:none;border-top:1px solid #e4e4e7;margin:24px 0;">`)
	case "spacer":
		fmt.Fprintf(w.b, `<div style="height:%dpx;line-height:%dpx;">&nbsp;</div>`, spacerHeight(attrs["height"]), spacerHeight(attrs["height"]))
	case "bulletList":
		w.wrap("ul", n)
	case "orderedList":
		w.wrap("ol", n)
	case "listItem":
		w.wrap("li", n)
	case "blockquote":
		w.b.WriteString(`<blockquote style="margin:0 0 16px 0;padding-left:12px;border-left:3px solid #e4e4e7;">`)
		w.children(n)
		w.b.WriteString("</blockquote>")
	case "codeBlock":
		w.b.WriteString("<pre><code>")
		w.children(n)
		w.b.WriteString("</code></pre>")
	case "footer":
		w.b.WriteString(`<p style="font-size:12px;color:#71717a;margin:16px 0 0 0;">`)
		w.children(n)
		w.b.WriteString("</p>")
	case "button":
		text := w.attr(attrs, "text", "isTextVariable")
		url := w.attr(attrs, "url", "isUrlVariable")
		style := buttonStyle
		if c := str(attrs, "buttonColor"); c != "" {
			style += "background-color:" + html.EscapeString(c) + ";"
		}
		if c := str(attrs, "textColor"); c != "" {
			style += "color:" + html.EscapeString(c) + ";"
		}
		fmt.Fprintf(w.b, `<p%s><a href="%s" target="_blank" style="%s">%s</a></p>`, alignStyle(attrs, "margin:0 0 16px 0;"), url, style, text)
	case "image", "logo", "inlineImage":
		src := w.attr(attrs, "src", "isSrcVariable")
		img := fmt.Sprintf(`<img src="%s" alt="%s"%s style="max-width:100%%;height:auto;border:0;">`,
			src, escapeKeepingLiquid(str(attrs, "alt")), sizeAttrs(attrs))
		if link := w.attr(attrs, "externalLink", "isExternalLinkVariable"); link != "" {
			img = `<a href="` + link + `" target="_blank">` + img + `</a>`
		}
		w.b.WriteString("<p" + alignStyle(attrs, "margin:0 0 16px 0;") + ">" + img + "</p>")
	case "variable":
		w.b.WriteString(w.output(str(attrs, "id"), str(attrs, "fallback")))
	case "repeat", "for":
		each := w.path(str(attrs, "each"))
		if each == "" {
			w.children(n)
			return
		}
		w.b.WriteString("{% for item in " + each + " %}")
		inner := &mailyWriter{b: w.b, each: each}
		inner.children(n)
		w.b.WriteString("{% endfor %}")
	case "section":
		w.b.WriteString(`<div` + alignStyle(attrs, "margin:0 0 16px 0;") + ">")
		w.children(n)
		w.b.WriteString("</div>")
	case "columns":
		w.b.WriteString(`<table role="presentation" width="100%" cellpadding="0" cellspacing="0"><tr>`)
		w.children(n)
		w.b.WriteString("</tr></table>")
	case "column":
		w.b.WriteString(`<td valign="top">`)
		w.children(n)
		w.b.WriteString("</td>")
	default: // doc and anything unknown: keep the content
		w.children(n)
	}
}

func (w *mailyWriter) wrap(tag string, n map[string]any) {
	w.b.WriteString("<" + tag + ">")
	w.children(n)
	w.b.WriteString("</" + tag + ">")
}

// text writes a text node, escaped outside its Liquid, inside its marks.
func (w *mailyWriter) text(n map[string]any) {
	s := escapeKeepingLiquid(str(n, "text"))
	marks, _ := n["marks"].([]any)
	for _, m := range marks {
		mark, _ := m.(map[string]any)
		attrs := obj(mark, "attrs")
		switch str(mark, "type") {
		case "bold":
			s = "<strong>" + s + "</strong>"
		case "italic":
			s = "<em>" + s + "</em>"
		case "underline":
			s = "<u>" + s + "</u>"
		case "strike":
			s = "<s>" + s + "</s>"
		case "code":
			s = "<code>" + s + "</code>"
		case "link":
			s = `<a href="` + w.attr(attrs, "href", "isUrlVariable") + `" target="_blank">` + s + "</a>"
		case "textStyle":
			if c := str(attrs, "color"); c != "" {
				s = `<span style="color:` + html.EscapeString(c) + `">` + s + "</span>"
			}
		}
	}
	w.b.WriteString(s)
}

// attr returns an attribute escaped for HTML, or, when the flag says the
// attribute names a variable, a Liquid output of that variable.
func (w *mailyWriter) attr(attrs map[string]any, name, variableFlag string) string {
	v := str(attrs, name)
	if b, _ := attrs[variableFlag].(bool); b && v != "" {
		return w.output(v, "")
	}
	return escapeKeepingLiquid(v)
}

// output is the Liquid that prints variable id, with its fallback.
func (w *mailyWriter) output(id, fallback string) string {
	id = w.path(id)
	if id == "" {
		return ""
	}
	if fallback != "" {
		return "{{ " + id + " | default: " + strconv.Quote(fallback) + " }}"
	}
	return "{{ " + id + " }}"
}

// path cleans a variable name and, inside a repeat, refers the iterated
// array's fields to the loop item.
func (w *mailyWriter) path(id string) string {
	id = strings.TrimSpace(id)
	if strings.ContainsAny(id, "{}%\"'") {
		return "" // not a variable name; never let it break out of the tag
	}
	if w.each != "" && strings.HasPrefix(id, w.each+".") {
		return "item." + strings.TrimPrefix(id, w.each+".")
	}
	return id
}

// escapeKeepingLiquid escapes text for HTML except inside {{ }} and {% %},
// whose quotes and filters must reach Liquid untouched.
func escapeKeepingLiquid(s string) string {
	var b strings.Builder
	for s != "" {
		i := strings.Index(s, "{")
		if i < 0 || i+1 >= len(s) {
			b.WriteString(html.EscapeString(s))
			break
		}
		closer := map[byte]string{'{': "}}", '%': "%}"}[s[i+1]]
		end := -1
		if closer != "" {
			end = strings.Index(s[i+2:], closer)
		}
		if end < 0 {
			b.WriteString(html.EscapeString(s[:i+1]))
			s = s[i+1:]
			continue
		}
		stop := i + 2 + end + 2
		b.WriteString(html.EscapeString(s[:i]))
		b.WriteString(s[i:stop])
		s = s[stop:]
	}
	return b.String()
}

func alignStyle(attrs map[string]any, base string) string {
	a := str(attrs, "textAlign")
	if a == "" {
		a = str(attrs, "alignment")
	}
	switch a {
	case "center", "right", "left", "justify":
		base += "text-align:" + a + ";"
	}
	return ` style="` + base + `"`
}

func sizeAttrs(attrs map[string]any) string {
	out := ""
	for _, k := range []string{"width", "height"} {
		if n := num(attrs[k], 0); n > 0 {
			out += fmt.Sprintf(` %s="%d"`, k, int(n))
		}
	}
	return out
}

func spacerHeight(v any) int {
	switch t := v.(type) {
	case string:
		if h, ok := map[string]int{"sm": 8, "md": 16, "lg": 32, "xl": 64}[t]; ok {
			return h
		}
	}
	if n := num(v, 16); n > 0 && n < 1000 {
		return int(n)
	}
	return 16
}

// num reads a JSON number that may also arrive as a string.
func num(v any, def float64) float64 {
	switch t := v.(type) {
	case float64:
		return t
	case int:
		return float64(t)
	case int64:
		return float64(t)
	case string:
		if f, err := strconv.ParseFloat(t, 64); err == nil {
			return f
		}
	}
	return def
}
