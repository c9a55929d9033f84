package workflows

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/herald-notify/herald/platform"
)

// This file holds what each step kind's control values may be (docs/api.md,
// "Step controls"): the JSON Schema and UiSchema sent with every step, and
// the validation that turns wrong types and values into a 422.

var (
	timeUnits     = []string{"seconds", "minutes", "hours", "days", "weeks", "months"}
	redirectTargs = []string{"_self", "_blank", "_parent", "_top", "_unfencedTop"}
	variableOnly  = regexp.MustCompile(`^\{\{.*\}\}`)
)

func str() schema            { return schema{"type": "string"} }
func num(min float64) schema { return schema{"type": "number", "minimum": min} }
func enum(v []string) schema { return schema{"type": "string", "enum": v} }
func boolean() schema        { return schema{"type": "boolean"} }
func anyObject() schema      { return schema{"type": "object", "additionalProperties": true} }
func object(p schema) schema {
	return schema{"type": "object", "properties": p, "additionalProperties": false}
}
func urlString() schema {
	return schema{"type": "string", "pattern": `^(\{\{.*\}\}|/.*|[a-zA-Z][a-zA-Z0-9+.-]*://.+)$`}
}
func ui(c string) uiProperty { return uiProperty{Component: c} }
func uiP(c string, p any) uiProperty {
	return uiProperty{Component: c, Placeholder: p}
}

func redirectSchema() schema {
	return object(schema{"url": urlString(), "target": enum(redirectTargs)})
}

func actionSchema() schema {
	return object(schema{"label": str(), "redirect": redirectSchema()})
}

// dataSchema returns the JSON Schema of a step kind's control values.
func dataSchema(kind string) schema {
	skip := anyObject()
	var s schema
	switch kind {
	case "in_app":
		s = object(schema{
			"subject": str(), "body": str(), "avatar": urlString(),
			"primaryAction": actionSchema(), "secondaryAction": actionSchema(),
			"redirect": redirectSchema(), "disableOutputSanitization": boolean(),
			"data": anyObject(), "skip": skip,
		})
	case "email":
		s = object(schema{
			"subject": str(), "body": str(), "editorType": enum([]string{"block", "html"}),
			"disableOutputSanitization": boolean(),
			"layoutId":                  schema{"type": []string{"string", "null"}}, "skip": skip,
		})
		s["required"] = []string{"subject", "body"}
	case "sms", "chat":
		s = object(schema{"body": str(), "skip": skip})
	case "push":
		s = object(schema{"subject": str(), "body": str(), "skip": skip})
	case "delay":
		s = object(schema{
			"type": enum([]string{"regular", "timed"}), "amount": num(1), "unit": enum(timeUnits),
			"cron": schema{"type": "string", "minLength": 1}, "skip": skip,
		})
	case "digest":
		s = object(schema{
			"type": enum([]string{"regular", "timed"}), "amount": num(1), "unit": enum(timeUnits),
			"lookBackWindow": schema{
				"type": "object", "additionalProperties": false, "required": []string{"amount", "unit"},
				"properties": schema{"amount": num(1), "unit": enum(timeUnits)},
			},
			"cron": schema{"type": "string", "minLength": 1}, "digestKey": str(), "skip": skip,
		})
	case "throttle":
		s = object(schema{
			"type": enum([]string{"fixed", "dynamic"}), "amount": num(1), "unit": enum(timeUnits),
			"threshold": num(1), "throttleKey": str(), "dynamicKey": str(), "skip": skip,
		})
	default: // custom: whatever the step's code reads
		s = anyObject()
	}
	return s
}

// uiSchemaFor returns the editor hints of a step kind (spec UiSchema enums).
func uiSchemaFor(kind string) *uiSchema {
	skip := ui("QUERY_EDITOR")
	switch kind {
	case "in_app":
		redirect := uiProperty{Component: "URL_TEXT_BOX", Properties: map[string]uiProperty{
			"url": uiP("URL_TEXT_BOX", ""), "target": uiP("URL_TEXT_BOX", "_self"),
		}}
		return &uiSchema{Group: "IN_APP", Properties: map[string]uiProperty{
			"subject": ui("IN_APP_PRIMARY_SUBJECT"), "body": ui("IN_APP_BODY"), "avatar": ui("IN_APP_AVATAR"),
			"primaryAction": ui("IN_APP_BUTTON_DROPDOWN"), "secondaryAction": ui("IN_APP_BUTTON_DROPDOWN"),
			"redirect": redirect, "disableOutputSanitization": uiP("IN_APP_DISABLE_SANITIZATION_SWITCH", false),
			"data": ui("DATA"), "skip": skip,
		}}
	case "email":
		return &uiSchema{Group: "EMAIL", Properties: map[string]uiProperty{
			"subject": ui("TEXT_FULL_LINE"), "body": ui("EMAIL_BODY"), "editorType": uiP("EMAIL_EDITOR_SELECT", "block"),
			"layoutId": ui("LAYOUT_SELECT"), "disableOutputSanitization": uiP("DISABLE_SANITIZATION_SWITCH", false),
			"skip": skip,
		}}
	case "sms":
		return &uiSchema{Group: "SMS", Properties: map[string]uiProperty{"body": ui("SMS_BODY"), "skip": skip}}
	case "chat":
		return &uiSchema{Group: "CHAT", Properties: map[string]uiProperty{"body": ui("CHAT_BODY"), "skip": skip}}
	case "push":
		return &uiSchema{Group: "PUSH", Properties: map[string]uiProperty{
			"subject": ui("PUSH_SUBJECT"), "body": ui("PUSH_BODY"), "skip": skip,
		}}
	case "delay":
		return &uiSchema{Group: "DELAY", Properties: map[string]uiProperty{
			"type": uiP("DELAY_TYPE", "regular"), "amount": ui("DELAY_AMOUNT"), "unit": uiP("DELAY_UNIT", "seconds"),
			"cron": ui("DELAY_CRON"), "skip": skip,
		}}
	case "digest":
		return &uiSchema{Group: "DIGEST", Properties: map[string]uiProperty{
			"type": uiP("DIGEST_TYPE", "regular"), "amount": ui("DIGEST_AMOUNT"), "unit": uiP("DIGEST_UNIT", "seconds"),
			"digestKey": ui("DIGEST_KEY"), "cron": ui("DIGEST_CRON"), "skip": skip,
		}}
	case "throttle":
		return &uiSchema{Group: "THROTTLE", Properties: map[string]uiProperty{
			"type": uiP("THROTTLE_TYPE", "fixed"), "amount": ui("THROTTLE_WINDOW"), "unit": uiP("THROTTLE_UNIT", "minutes"),
			"threshold": ui("THROTTLE_THRESHOLD"), "throttleKey": ui("THROTTLE_KEY"), "dynamicKey": ui("THROTTLE_DYNAMIC_KEY"),
			"skip": skip,
		}}
	default:
		return &uiSchema{Properties: map[string]uiProperty{"skip": skip}}
	}
}

// controlChecker collects the problems of one step's control values, keyed
// by JSON path under prefix ("steps.0.controlValues").
type controlChecker struct {
	prefix string
	values map[string]any
	fields map[string]platform.FieldError
}

func (c *controlChecker) fail(path string, value any, format string, args ...any) {
	key := c.prefix + "." + path
	f := c.fields[key]
	f.Messages = append(f.Messages, fmt.Sprintf(format, args...))
	f.Value = value
	c.fields[key] = f
}

// lookup returns the value at a dotted path, and whether it is set (not absent, not null).
func lookup(values map[string]any, path string) (any, bool) {
	v, ok := platform.ValueAt(values, path)
	return v, ok && v != nil
}

func (c *controlChecker) string(path string) (string, bool) {
	v, ok := lookup(c.values, path)
	if !ok {
		return "", false
	}
	s, isStr := v.(string)
	if !isStr {
		c.fail(path, v, "must be a string")
	}
	return s, isStr
}

func (c *controlChecker) boolean(path string) {
	if v, ok := lookup(c.values, path); ok {
		if _, isBool := v.(bool); !isBool {
			c.fail(path, v, "must be a boolean")
		}
	}
}

func (c *controlChecker) object(path string) bool {
	v, ok := lookup(c.values, path)
	if !ok {
		return false
	}
	if _, isObj := v.(map[string]any); !isObj {
		c.fail(path, v, "must be an object")
		return false
	}
	return true
}

func (c *controlChecker) enum(path string, allowed []string) {
	if s, ok := c.string(path); ok && !slices.Contains(allowed, s) {
		c.fail(path, s, "must be one of: %s", strings.Join(allowed, ", "))
	}
}

func (c *controlChecker) number(path string, min float64) {
	v, ok := lookup(c.values, path)
	if !ok {
		return
	}
	n, isNum := v.(float64)
	switch {
	case !isNum:
		c.fail(path, v, "must be a number")
	case n < min:
		c.fail(path, v, "must not be less than %g", min)
	}
}

func (c *controlChecker) nonEmpty(path string) {
	if s, ok := c.string(path); ok && s == "" {
		c.fail(path, s, "must not be empty")
	}
}

// url checks a URL control: a valid absolute URL, a path starting with /, or
// a {{ variable }} (docs/api.md, "Step controls"). Empty means unset.
func (c *controlChecker) url(path string) {
	s, ok := c.string(path)
	if !ok || s == "" || strings.HasPrefix(s, "/") || variableOnly.MatchString(s) {
		return
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" || (u.Host == "" && u.Opaque == "") {
		c.fail(path, s, "must be a valid URL, a path starting with / or a {{ variable }}")
	}
}

func (c *controlChecker) redirect(path string) {
	if c.object(path) {
		c.url(path + ".url")
		c.enum(path+".target", redirectTargs)
	}
}

func (c *controlChecker) action(path string) {
	if c.object(path) {
		c.string(path + ".label")
		c.redirect(path + ".redirect")
	}
}

// validateControls checks one step's control values by kind; the problems
// are added to fields keyed by JSON path.
func validateControls(kind string, values map[string]any, prefix string, fields map[string]platform.FieldError) {
	c := &controlChecker{prefix: prefix, values: values, fields: fields}
	c.object("skip")
	switch kind {
	case "in_app":
		c.string("subject")
		c.string("body")
		c.url("avatar")
		c.action("primaryAction")
		c.action("secondaryAction")
		c.redirect("redirect")
		c.boolean("disableOutputSanitization")
		c.object("data")
	case "email":
		c.string("subject")
		c.string("body")
		c.enum("editorType", []string{"block", "html"})
		c.boolean("disableOutputSanitization")
		c.string("layoutId")
	case "sms", "chat":
		c.string("body")
	case "push":
		c.string("subject")
		c.string("body")
	case "delay":
		c.enum("type", []string{"regular", "timed"})
		c.number("amount", 1)
		c.enum("unit", timeUnits)
		c.nonEmpty("cron")
	case "digest":
		c.enum("type", []string{"regular", "timed"})
		c.number("amount", 1)
		c.enum("unit", timeUnits)
		c.nonEmpty("cron")
		c.string("digestKey")
		if c.object("lookBackWindow") {
			for _, f := range []string{"amount", "unit"} {
				if _, ok := lookup(values, "lookBackWindow."+f); !ok {
					c.fail("lookBackWindow."+f, nil, "is required")
				}
			}
			c.number("lookBackWindow.amount", 1)
			c.enum("lookBackWindow.unit", timeUnits)
		}
	case "throttle":
		c.enum("type", []string{"fixed", "dynamic"})
		c.number("amount", 1)
		c.enum("unit", timeUnits)
		c.number("threshold", 1)
		c.string("throttleKey")
		c.string("dynamicKey")
	}
}
