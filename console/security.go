package console

import "net/http"

// pagePolicy is the Content-Security-Policy of every console response:
// scripts, styles and images from the console itself only (no inline
// script or style, no eval), forms posting to it only, frames of its own
// (an email's preview) only, and no page of another site may frame it.
const pagePolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self'; form-action 'self'; frame-src 'self'; frame-ancestors 'none'; base-uri 'none'"

// editorPolicy is pagePolicy on the workflow editor, which also shows an
// in-app preview's avatar: an image from any https address. An image runs
// nothing, and the page's referrer policy (and the image's own
// no-referrer) keeps the console's addresses from its host; only a
// member's address reaches it, as it would reach the avatar's host from
// the subscriber's inbox.
const editorPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: https:; " +
	"connect-src 'self'; font-src 'self'; form-action 'self'; frame-src 'self'; frame-ancestors 'none'; base-uri 'none'"

// emailPolicy is the policy of an email shown as it was sent, inside the
// console's sandboxed frame: its own inline styles and remote images, as a
// mail client shows them, and nothing that runs.
const emailPolicy = "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src https: data:; font-src https: data:; " +
	"frame-ancestors 'self'; base-uri 'none'; form-action 'none'"

// secure sets the headers every console response carries: the policy
// above, no MIME sniffing, no referrer to other sites, no framing, and no
// caching of pages that show a team's data (assets set their own).
func secure(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", pagePolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("Cache-Control", "no-store")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		next.ServeHTTP(w, r)
	})
}

// frameable relaxes secure's headers for an email shown in the console's
// own sandboxed frame.
func frameable(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Security-Policy", emailPolicy)
	h.Set("X-Frame-Options", "SAMEORIGIN")
	h.Set("Referrer-Policy", "no-referrer")
}
