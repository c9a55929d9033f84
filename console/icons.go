package console

import "html/template"

// iconPaths are the console's icons: strokes on a 24-unit grid, drawn in
// the text's colour. Inline SVG needs no request and no style attribute,
// which the console's Content-Security-Policy would refuse.
var iconPaths = map[string]string{
	"overview":     `<path d="M3 12h4l3 7 4-14 3 7h4"/>`,
	"activity":     `<path d="M4 6h16M4 12h16M4 18h10"/><circle cx="19" cy="18" r="2"/>`,
	"subscribers":  `<circle cx="12" cy="8" r="4"/><path d="M4 21c1-4 4-6 8-6s7 2 8 6"/>`,
	"topics":       `<path d="M9 3 7 21M17 3l-2 18M4 8h17M3 16h17"/>`,
	"workflows":    `<circle cx="6" cy="5" r="2"/><circle cx="6" cy="19" r="2"/><circle cx="18" cy="12" r="2"/><path d="M6 7v10M8 5c6 0 8 3 8 5M8 19c6 0 8-3 8-5"/>`,
	"layouts":      `<rect x="3" y="3" width="18" height="18" rx="2"/><path d="M3 8h18M8 8v13"/>`,
	"integrations": `<path d="M9 2v5M15 2v5M6 7h12v4a6 6 0 0 1-12 0zM12 17v5"/>`,
	"webhooks":     `<circle cx="6" cy="17" r="3"/><circle cx="18" cy="17" r="3"/><circle cx="12" cy="6" r="3"/><path d="M10.5 8.6 7.5 14.4M13.5 8.6l3 5.8M9 17h6"/>`,
	"contexts":     `<path d="M4 21V8l8-5 8 5v13"/><path d="M9 21v-6h6v6M9 10h.01M15 10h.01"/>`,
	"keys":         `<circle cx="8" cy="15" r="4"/><path d="m11 12 9-9M17 6l3 3M15 8l2 2"/>`,
	"team":         `<circle cx="9" cy="8" r="3.5"/><circle cx="17" cy="9" r="2.5"/><path d="M2 20c.8-3.5 3.4-5.5 7-5.5s6.2 2 7 5.5M16 14.5c3 0 5 1.6 6 4.5"/>`,
	"search":       `<circle cx="11" cy="11" r="7"/><path d="m20 20-4-4"/>`,
	"check":        `<path d="m5 12 5 5 9-10"/>`,
	"x":            `<path d="M6 6l12 12M18 6 6 18"/>`,
	"alert":        `<path d="M12 3 2 21h20z"/><path d="M12 10v5M12 18v.5"/>`,
	"info":         `<circle cx="12" cy="12" r="9"/><path d="M12 11v6M12 7.5v.5"/>`,
	"left":         `<path d="m15 5-7 7 7 7"/>`,
	"right":        `<path d="m9 5 7 7-7 7"/>`,
	"logout":       `<path d="M15 4h4v16h-4M10 8l-4 4 4 4M6 12h11"/>`,
	"email":        `<rect x="3" y="5" width="18" height="14" rx="2"/><path d="m3 7 9 6 9-6"/>`,
	"in_app":       `<path d="M6 10a6 6 0 0 1 12 0v5l2 3H4l2-3z"/><path d="M10 21h4"/>`,
	"sms":          `<rect x="7" y="2" width="10" height="20" rx="2"/><path d="M11 18h2"/>`,
	"push":         `<rect x="6" y="3" width="12" height="18" rx="2"/><circle cx="17" cy="5" r="3"/>`,
	"chat":         `<path d="M4 5h16v11H9l-5 4z"/>`,
	"delay":        `<circle cx="12" cy="13" r="8"/><path d="M12 9v4l3 2M9 2h6"/>`,
	"digest":       `<path d="M4 6h16M6 10h12M8 14h8M10 18h4"/>`,
	"throttle":     `<path d="M4 18a8 8 0 1 1 16 0"/><path d="m12 18 4-6"/>`,
	"trigger":      `<path d="M13 2 4 14h7l-1 8 9-12h-7z"/>`,
	"custom":       `<path d="m8 8-5 4 5 4M16 8l5 4-5 4"/>`,
	"plus":         `<path d="M12 5v14M5 12h14"/>`,
	"trash":        `<path d="M4 7h16M9 7V4h6v3M6 7l1 13h10l1-13"/>`,
	"menu":         `<path d="M4 6h16M4 12h16M4 18h16"/>`,
	"copy":         `<rect x="8" y="8" width="12" height="12" rx="2"/><path d="M4 16V6a2 2 0 0 1 2-2h10"/>`,
	"link":         `<path d="M10 14a4 4 0 0 0 6 0l3-3a4 4 0 0 0-6-6l-1 1M14 10a4 4 0 0 0-6 0l-3 3a4 4 0 0 0 6 6l1-1"/>`,
	"logo":         `<path d="M4 10v4l11 5V5z"/><path d="M15 8a4 4 0 0 1 0 8M7 14v5h3v-4"/>`,
	"user":         `<circle cx="12" cy="8" r="4"/><path d="M4 21c1-4 4-6 8-6s7 2 8 6"/>`,
	"sync":         `<path d="M20 7H8a4 4 0 0 0-4 4M4 17h12a4 4 0 0 0 4-4"/><path d="m17 4 3 3-3 3M7 14l-3 3 3 3"/>`,
}

// icon is the named icon as inline SVG, hidden from screen readers: the
// text beside it says what it means.
func icon(name string) template.HTML {
	p, ok := iconPaths[name]
	if !ok {
		p = iconPaths["info"]
	}
	return template.HTML(`<svg class="icon" viewBox="0 0 24 24" width="18" height="18" fill="none" stroke="currentColor" ` +
		`stroke-width="1.8" stroke-linecap="round" stroke-linejoin="round" aria-hidden="true" focusable="false">` + p + `</svg>`)
}
