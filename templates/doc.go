// Package templates renders the Liquid in a workflow step's controls: text
// as written, HTML with every interpolated value escaped, in-app markup
// sanitized, and email bodies written as HTML, as block-editor (Maily)
// documents or as EmailBlock arrays, with Herald's default layout and a
// plain-text alternative. Every render is bounded in loop iterations, in
// the size of its output and of any string it builds, and in time (the
// templates of one step share one budget: ShareBudget); include is refused,
// and a parse is cached by its source, since every delivery of a step
// renders the same controls; a long template is parsed and cached in
// parts (split.go), so an edit to one place of it parses only that part.
// Parse and Check read a template without
// rendering it, so that a workflow names what would fail before any
// trigger: a template that does not parse, a variable the workflow does not
// provide, a filter given the wrong arguments. It imports no other Herald
// package, so workflows and messaging both build on it.
package templates
