package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"text/tabwriter"
	"time"
)

// row is one line of the results table: a measured figure, the floor it is
// compared with (when there is one), and the target it must reach.
type row struct {
	Scenario string  `json:"scenario"`
	Metric   string  `json:"metric"`
	Value    float64 `json:"value"`
	Unit     string  `json:"unit"`
	Floor    float64 `json:"floor,omitempty"`
	Ratio    float64 `json:"ratio,omitempty"`
	Target   string  `json:"target"`
	Pass     *bool   `json:"pass,omitempty"`  // nil: reported, not judged
	Store    string  `json:"store,omitempty"` // sqlite or postgresql, in a run with -db
}

type report struct {
	Started time.Time `json:"started"`
	Quick   bool      `json:"quick"`
	Machine string    `json:"machine"`
	Rows    []row     `json:"rows"`

	store string // the store the rows being added were measured on (-db)
}

func machine() string {
	cpu := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if name, ok := strings.CutPrefix(line, "model name"); ok {
				cpu = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(name), ":"))
				break
			}
		}
	}
	return fmt.Sprintf("%s/%s, %d cores (GOMAXPROCS %d), %s, %s", runtime.GOOS, runtime.GOARCH,
		runtime.NumCPU(), runtime.GOMAXPROCS(0), cpu, runtime.Version())
}

// add appends a row; atLeast/atMost give its target, judged when set.
func (r *report) add(x row) {
	// A figure of nothing (0/0: no send measured, say) is 0 and says so;
	// JSON has no NaN.
	if math.IsNaN(x.Value) || math.IsInf(x.Value, 0) {
		x.Value, x.Metric = 0, x.Metric+" (undefined: nothing measured)"
	}
	if x.Floor > 0 {
		x.Ratio = x.Value / x.Floor
	}
	if x.Store == "" {
		x.Store = r.store
	}
	r.Rows = append(r.Rows, x)
}

func judged(ok bool) *bool { return &ok }

func (r *report) print(w io.Writer) {
	fmt.Fprintf(w, "Herald benchmark, %s (quick=%v)\n%s\n\n", r.Started.Format(time.RFC3339), r.Quick, r.Machine)
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "scenario\tmetric\tvalue\tfloor\tratio\ttarget\tresult")
	for _, x := range r.Rows {
		if x.Store == storePostgres {
			x.Scenario += " [postgresql]"
		}
		floor, ratio := "-", "-"
		if x.Floor > 0 {
			floor, ratio = formatValue(x.Floor, x.Unit), fmt.Sprintf("%.2f", x.Ratio)
		}
		result := "-"
		if x.Pass != nil {
			result = map[bool]string{true: "PASS", false: "FAIL"}[*x.Pass]
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", x.Scenario, x.Metric, formatValue(x.Value, x.Unit), floor, ratio, x.Target, result)
	}
	tw.Flush()
	r.printStores(w)
}

// printStores prints, for a run with -db, each figure measured on both
// stores side by side. A figure is known by its scenario and its metric with
// the numbers in it left out (they hold measured rates and counts), and the
// k-th such row on SQLite is paired with the k-th on PostgreSQL.
func (r *report) printStores(w io.Writer) {
	type key struct {
		scenario, metric string
		k                int
	}
	shape := func(x row) string { return digits.ReplaceAllString(x.Metric, "#") }
	pg := map[key]row{}
	seen := map[[2]string]int{}
	for _, x := range r.Rows {
		if x.Store == storePostgres {
			s := [2]string{x.Scenario, shape(x)}
			pg[key{s[0], s[1], seen[s]}] = x
			seen[s]++
		}
	}
	var lines []string
	seen = map[[2]string]int{}
	for _, x := range r.Rows {
		if x.Store == storePostgres || x.Unit == "" {
			continue
		}
		s := [2]string{x.Scenario, shape(x)}
		k := key{s[0], s[1], seen[s]}
		seen[s]++
		y, ok := pg[k]
		if !ok {
			continue
		}
		other, ratio := formatValue(y.Value, y.Unit), "-"
		if y.Unit == "" {
			other = y.Metric // the scenario failed there
		} else if x.Value > 0 {
			ratio = fmt.Sprintf("%.2f", y.Value/x.Value)
		}
		// The metric shown is SQLite's: say when PostgreSQL's counted errors.
		if m := errorCount.FindStringSubmatch(y.Metric); m != nil && m[1] != "0" {
			other += " (" + m[0] + ")"
		}
		lines = append(lines, fmt.Sprintf("%s\t%s\t%s\t%s\t%s\n", x.Scenario, x.Metric, formatValue(x.Value, x.Unit), other, ratio))
	}
	if len(lines) == 0 {
		return
	}
	fmt.Fprintf(w, "\nThe same scenarios on SQLite and PostgreSQL, this run\n\n")
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "scenario\tmetric (as on SQLite)\tsqlite\tpostgresql\tpostgresql/sqlite")
	for _, line := range lines {
		fmt.Fprint(tw, line)
	}
	tw.Flush()
}

// digits are the numbers in a metric's text; errorCount is its count of
// failed requests.
var (
	digits     = regexp.MustCompile(`[0-9][0-9.,]*`)
	errorCount = regexp.MustCompile(`([0-9][0-9,]*) errors`)
)

func formatValue(v float64, unit string) string {
	switch unit {
	case "":
		return "-" // a row that reports an error

	case "ms":
		return fmt.Sprintf("%.2f ms", v)
	case "x":
		return fmt.Sprintf("%.2fx", v)
	case "cores":
		return fmt.Sprintf("%.2f cores", v)
	}
	return fmt.Sprintf("%.0f %s", v, unit)
}

func (r *report) save(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
