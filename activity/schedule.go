package activity

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/workflows"
)

// number accepts a JSON number or a numeric string, as step controls written
// by hand or by older clients carry either.
type number float64

// UnmarshalJSON reads a number or a numeric string.
func (n *number) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	if s == "" || s == "null" {
		return nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return fmt.Errorf("not a number: %s", b)
	}
	*n = number(f)
	return nil
}

// window is an amount of a time unit.
type window struct {
	Amount number `json:"amount"`
	Unit   string `json:"unit"`
}

// maxWindow bounds a delay or digest window. Past it the float → Duration
// conversion would overflow into an arbitrary, even negative, schedule.
const maxWindow = 100 * 365 * 24 * time.Hour

// after returns t moved forward by the window. Months move by calendar
// months, so a one-month delay from Jan 31 lands on Mar 3 as time.AddDate does.
func (w window) after(t time.Time) (time.Time, error) {
	if w.Amount < 0 {
		return t, fmt.Errorf("amount %v is negative", float64(w.Amount))
	}
	a := float64(w.Amount)
	unit := strings.TrimSuffix(strings.ToLower(w.Unit), "s")
	span := func(per time.Duration) (time.Time, error) {
		if a*float64(per) > float64(maxWindow) {
			return t, fmt.Errorf("amount %v %s is longer than 100 years", a, w.Unit)
		}
		return t.Add(time.Duration(a * float64(per))), nil
	}
	switch unit {
	case "second":
		return span(time.Second)
	case "minute":
		return span(time.Minute)
	case "hour":
		return span(time.Hour)
	case "day":
		return span(24 * time.Hour)
	case "week":
		return span(7 * 24 * time.Hour)
	case "month":
		if a > 1200 {
			return t, fmt.Errorf("amount %v months is longer than 100 years", a)
		}
		return t.AddDate(0, int(a), 0), nil
	default:
		return t, fmt.Errorf("unit %q is not one of seconds, minutes, hours, days, weeks, months", w.Unit)
	}
}

// before returns t moved back by the window.
func (w window) before(t time.Time) (time.Time, error) {
	later, err := w.after(t)
	if err != nil {
		return t, err
	}
	if strings.HasPrefix(strings.ToLower(w.Unit), "month") {
		return t.AddDate(0, -int(w.Amount), 0), nil
	}
	return t.Add(-later.Sub(t)), nil
}

// delayConfig is a delay step's controls: regular (amount + unit), timed
// (cron) or scheduled (an ISO 8601 time read from the payload at delayPath).
type delayConfig struct {
	Type      string `json:"type"`
	Amount    number `json:"amount"`
	Unit      string `json:"unit"`
	Cron      string `json:"cron"`
	DelayPath string `json:"delayPath"`
}

// metadata is the step's delay metadata (docs/api.md, "Workflow summaries"):
// regular with amount and unit, scheduled with delayPath, or timed with a
// cron.
func (c delayConfig) metadata() map[string]any {
	m := map[string]any{"type": firstNonEmpty(c.Type, "regular")}
	switch {
	case c.DelayPath != "":
		m["type"] = "scheduled"
		m["delayPath"] = c.DelayPath
	case c.Cron != "":
		m["type"] = "timed"
		m["cron"] = c.Cron
	default:
		m["amount"] = float64(c.Amount)
		m["unit"] = c.Unit
	}
	return m
}

// until returns when the delay ends for a job that starts at now.
func (c delayConfig) until(now time.Time, payload map[string]any) (time.Time, error) {
	switch {
	case c.Type == "scheduled" || (c.Type == "" && c.DelayPath != ""):
		v, ok := lookup(payload, c.DelayPath)
		s, isStr := v.(string)
		if !ok || !isStr {
			return now, fmt.Errorf("payload has no date at %q", c.DelayPath)
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return now, fmt.Errorf("payload value at %q is not an ISO 8601 date", c.DelayPath)
		}
		return t.UTC(), nil
	case c.Type == "timed" || (c.Type == "" && c.Cron != ""):
		return workflows.NextCron(c.Cron, now)
	case c.Type == "" || c.Type == "regular":
		if c.Unit == "" {
			return now, fmt.Errorf("amount and unit are required")
		}
		return window{Amount: c.Amount, Unit: c.Unit}.after(now)
	default:
		return now, fmt.Errorf("type %q is not regular, timed or scheduled", c.Type)
	}
}

// digestConfig is a digest step's controls, in the v2 shape (lookBackWindow)
// or the older metadata shape (backoff, backoffAmount, backoffUnit).
type digestConfig struct {
	Type           string  `json:"type"`
	Amount         number  `json:"amount"`
	Unit           string  `json:"unit"`
	DigestKey      string  `json:"digestKey"`
	Cron           string  `json:"cron"`
	LookBackWindow *window `json:"lookBackWindow"`
	Backoff        bool    `json:"backoff"`
	BackoffAmount  number  `json:"backoffAmount"`
	BackoffUnit    string  `json:"backoffUnit"`
	Timed          *struct {
		CronExpression string `json:"cronExpression"`
	} `json:"timed"`
}

// cron returns the digest's cron expression, if it is timed.
func (c digestConfig) cron() string {
	if c.Cron != "" {
		return c.Cron
	}
	if c.Timed != nil {
		return c.Timed.CronExpression
	}
	return ""
}

// backoff returns the backoff window, if the digest has one.
func (c digestConfig) backoff() (window, bool) {
	if c.LookBackWindow != nil && c.LookBackWindow.Unit != "" {
		return *c.LookBackWindow, true
	}
	if c.Type == "backoff" || c.Backoff {
		if c.BackoffUnit != "" {
			return window{Amount: c.BackoffAmount, Unit: c.BackoffUnit}, true
		}
		return window{Amount: c.Amount, Unit: c.Unit}, true
	}
	return window{}, false
}

// until returns when a digest that opens at now fires.
func (c digestConfig) until(now time.Time) (time.Time, error) {
	if c.Type == "timed" || c.cron() != "" {
		return workflows.NextCron(c.cron(), now)
	}
	if c.Unit == "" {
		return now, fmt.Errorf("amount and unit are required")
	}
	return window{Amount: c.Amount, Unit: c.Unit}.after(now)
}

// metadata is the job's digest metadata of the "Notifications" section of
// docs/api.md.
func (c digestConfig) metadata() map[string]any {
	m := map[string]any{"type": firstNonEmpty(c.Type, "regular")}
	if c.cron() != "" {
		m["type"] = "timed"
		m["timed"] = map[string]any{"cronExpression": c.cron()}
	}
	if c.Unit != "" {
		m["amount"] = float64(c.Amount)
		m["unit"] = c.Unit
	}
	if c.DigestKey != "" {
		m["digestKey"] = c.DigestKey
	}
	if w, ok := c.backoff(); ok {
		m["backoff"] = true
		m["backoffAmount"] = float64(w.Amount)
		m["backoffUnit"] = w.Unit
	}
	return m
}

// throttleConfig is a throttle step's controls: at most threshold runs per
// window, counted per subscriber, workflow and the payload value at
// throttleKey.
type throttleConfig struct {
	Amount      number `json:"amount"`
	Unit        string `json:"unit"`
	Window      number `json:"window"`
	Threshold   number `json:"threshold"`
	ThrottleKey string `json:"throttleKey"`
}

func (c throttleConfig) window() window {
	if c.Amount == 0 && c.Window != 0 {
		return window{Amount: c.Window, Unit: c.Unit}
	}
	return window{Amount: c.Amount, Unit: c.Unit}
}

func (c throttleConfig) threshold() int {
	if c.Threshold < 1 {
		return 1
	}
	return int(c.Threshold)
}

// lookup returns the value at a dotted path of a decoded JSON object.
func lookup(doc map[string]any, path string) (any, bool) {
	if path == "" {
		return nil, false
	}
	return platform.ValueAt(doc, path)
}

// keyValue is the string a digest or throttle groups on: the payload value at
// key, "" when no key is configured, "No-Value-Provided" when it is missing
// (the reference's spelling).
//
// The key is a payload path ("orderId"), possibly written as the v2 editor
// writes it ("{{ payload.orderId }}").
func keyValue(payload map[string]any, key string) string {
	key = strings.TrimSpace(key)
	if strings.HasPrefix(key, "{{") && strings.HasSuffix(key, "}}") {
		key = strings.TrimSpace(key[2 : len(key)-2])
	}
	key = strings.TrimPrefix(key, "payload.")
	if key == "" {
		return ""
	}
	v, ok := lookup(payload, key)
	if !ok || v == nil {
		return "No-Value-Provided"
	}
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// retryDelay is how long a job waits before attempt n+1 after its n-th
// attempt failed: base, then doubling.
func retryDelay(base time.Duration, attempt int) time.Duration {
	d := base
	for i := 1; i < attempt; i++ {
		d *= 2
	}
	return d
}
