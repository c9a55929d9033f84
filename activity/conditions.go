package activity

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
)

// A step's `skip` control is a JSON Logic condition over {subscriber,
// payload} (the reference's v2 editor writes them); `filters` are the older
// StepFilter groups of the "Step filters" section of docs/api.md. evalSkip
// and passFilters decide both.

// evalSkip reports whether a skip condition holds. An empty object or null
// never skips.
func evalSkip(cond json.RawMessage, data map[string]any) (bool, error) {
	if isNull(cond) {
		return false, nil
	}
	var rule any
	if err := json.Unmarshal(cond, &rule); err != nil {
		return false, fmt.Errorf("skip condition is not JSON: %w", err)
	}
	if m, ok := rule.(map[string]any); ok && len(m) == 0 {
		return false, nil
	}
	v, err := logic(rule, data)
	if err != nil {
		return false, err
	}
	return truthy(v), nil
}

// logic evaluates the JSON Logic operators conditions use: var, the
// comparisons, and/or/not, in, and the ! / !! truth tests.
func logic(rule any, data map[string]any) (any, error) {
	switch r := rule.(type) {
	case []any:
		out := make([]any, len(r))
		for i, x := range r {
			v, err := logic(x, data)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	case map[string]any:
		if len(r) != 1 {
			return r, nil
		}
		for op, rawArgs := range r {
			args, ok := rawArgs.([]any)
			if !ok {
				args = []any{rawArgs}
			}
			return apply(op, args, data)
		}
	}
	return rule, nil
}

func apply(op string, args []any, data map[string]any) (any, error) {
	// and/or short-circuit, so they evaluate their own arguments.
	switch op {
	case "and", "or":
		var last any = op == "and"
		for _, a := range args {
			v, err := logic(a, data)
			if err != nil {
				return nil, err
			}
			last = v
			if truthy(v) == (op == "or") {
				return v, nil
			}
		}
		return last, nil
	}
	vals := make([]any, len(args))
	for i, a := range args {
		v, err := logic(a, data)
		if err != nil {
			return nil, err
		}
		vals[i] = v
	}
	arg := func(i int) any {
		if i < len(vals) {
			return vals[i]
		}
		return nil
	}
	switch op {
	case "var":
		path, _ := arg(0).(string)
		if path == "" {
			return data, nil
		}
		if v, ok := lookup(data, path); ok {
			return v, nil
		}
		return arg(1), nil
	case "==":
		return looseEqual(arg(0), arg(1)), nil
	case "!=":
		return !looseEqual(arg(0), arg(1)), nil
	case "===":
		return reflect.DeepEqual(arg(0), arg(1)), nil
	case "!==":
		return !reflect.DeepEqual(arg(0), arg(1)), nil
	case "<", "<=", ">", ">=":
		if len(vals) == 3 && (op == "<" || op == "<=") { // between: a < b < c
			return compare(op, arg(0), arg(1)) && compare(op, arg(1), arg(2)), nil
		}
		return compare(op, arg(0), arg(1)), nil
	case "!":
		return !truthy(arg(0)), nil
	case "!!":
		return truthy(arg(0)), nil
	case "in":
		switch hay := arg(1).(type) {
		case string:
			return strings.Contains(hay, toString(arg(0))), nil
		case []any:
			for _, x := range hay {
				if looseEqual(x, arg(0)) {
					return true, nil
				}
			}
		}
		return false, nil
	default:
		return nil, fmt.Errorf("skip condition uses unsupported operator %q", op)
	}
}

func truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case float64:
		return x != 0
	case string:
		return x != ""
	case []any:
		return len(x) > 0
	default:
		return true
	}
}

func toNumber(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		return f, err == nil
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	return math.NaN(), false
}

func toString(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}

// looseEqual compares as JavaScript's == does for the JSON types: numbers
// with numeric strings by value, everything else by string form.
func looseEqual(a, b any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	_, aStr := a.(string)
	_, bStr := b.(string)
	if !(aStr && bStr) {
		if x, ok := toNumber(a); ok {
			if y, ok := toNumber(b); ok {
				return x == y
			}
		}
	}
	return toString(a) == toString(b)
}

func compare(op string, a, b any) bool {
	x, okA := toNumber(a)
	y, okB := toNumber(b)
	if !okA || !okB {
		sa, sb := toString(a), toString(b)
		switch op {
		case "<":
			return sa < sb
		case "<=":
			return sa <= sb
		case ">":
			return sa > sb
		default:
			return sa >= sb
		}
	}
	switch op {
	case "<":
		return x < y
	case "<=":
		return x <= y
	case ">":
		return x > y
	default:
		return x >= y
	}
}

// stepFilter is the StepFilter (docs/api.md, "Step filters").
type stepFilter struct {
	IsNegated bool `json:"isNegated"`
	Type      string
	Value     string `json:"value"`
	Children  []struct {
		Field    string `json:"field"`
		Value    string `json:"value"`
		Operator string `json:"operator"`
		On       string `json:"on"`
	} `json:"children"`
}

// passFilters reports whether every filter group passes. A group joins its
// children with AND or OR, and isNegated inverts it; a group without
// children passes.
func passFilters(raw json.RawMessage, data map[string]any) (bool, error) {
	if isNull(raw) {
		return true, nil
	}
	var filters []stepFilter
	if err := json.Unmarshal(raw, &filters); err != nil {
		return false, fmt.Errorf("filters are not StepFilter groups: %w", err)
	}
	for _, f := range filters {
		if len(f.Children) == 0 {
			continue
		}
		or := strings.EqualFold(f.Value, "OR")
		pass := !or
		for _, c := range f.Children {
			on, _ := data[firstNonEmpty(c.On, "payload")].(map[string]any)
			actual, found := lookup(on, c.Field)
			ok, err := fieldMatches(c.Operator, actual, found, c.Value)
			if err != nil {
				return false, err
			}
			if or && ok {
				pass = true
				break
			}
			if !or && !ok {
				pass = false
				break
			}
		}
		if f.IsNegated {
			pass = !pass
		}
		if !pass {
			return false, nil
		}
	}
	return true, nil
}

// fieldMatches applies one FieldFilterPart operator.
func fieldMatches(op string, actual any, found bool, want string) (bool, error) {
	list := func() []string {
		var xs []any
		if json.Unmarshal([]byte(want), &xs) == nil {
			out := make([]string, len(xs))
			for i, x := range xs {
				out[i] = toString(x)
			}
			return out
		}
		parts := strings.Split(want, ",")
		for i := range parts {
			parts[i] = strings.TrimSpace(parts[i])
		}
		return parts
	}
	contains := func(xs []string, s string) bool {
		for _, x := range xs {
			if x == s {
				return true
			}
		}
		return false
	}
	actuals := func() []string {
		if arr, ok := actual.([]any); ok {
			out := make([]string, len(arr))
			for i, x := range arr {
				out[i] = toString(x)
			}
			return out
		}
		if !found {
			return nil
		}
		return []string{toString(actual)}
	}
	switch op {
	case "EQUAL":
		return found && looseEqual(actual, want), nil
	case "NOT_EQUAL":
		return !found || !looseEqual(actual, want), nil
	case "LARGER":
		return found && compare(">", actual, want), nil
	case "SMALLER":
		return found && compare("<", actual, want), nil
	case "LARGER_EQUAL":
		return found && compare(">=", actual, want), nil
	case "SMALLER_EQUAL":
		return found && compare("<=", actual, want), nil
	case "LIKE":
		return found && strings.Contains(toString(actual), want), nil
	case "NOT_LIKE":
		return !found || !strings.Contains(toString(actual), want), nil
	case "IN":
		return found && contains(list(), toString(actual)), nil
	case "NOT_IN":
		return !found || !contains(list(), toString(actual)), nil
	case "ANY_IN":
		for _, a := range actuals() {
			if contains(list(), a) {
				return true, nil
			}
		}
		return false, nil
	case "ALL_IN":
		have := actuals()
		for _, w := range list() {
			if !contains(have, w) {
				return false, nil
			}
		}
		return true, nil
	case "BETWEEN", "NOT_BETWEEN":
		bounds := list()
		if len(bounds) != 2 {
			return false, fmt.Errorf("%s needs two bounds, got %q", op, want)
		}
		in := found && compare(">=", actual, bounds[0]) && compare("<=", actual, bounds[1])
		return in == (op == "BETWEEN"), nil
	default:
		return false, fmt.Errorf("filter operator %q is not supported", op)
	}
}
