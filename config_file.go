package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"

	"go.yaml.in/yaml/v3"
)

// A config file is the third source of serve's settings, below flags and
// the environment: a YAML mapping whose keys are the flags' names
// (`addr: 0.0.0.0:3000`, `activity-retention: 90d`), each value written as
// the flag takes it. Nothing lists the settings a second time: a key is
// looked up in serve's flag set, and set through it, so every setting a
// flag has, the file has too, parsed and checked the same way.

// settingVariable finds the HERALD_* variable a flag falls back to in its
// usage, which names it for help: "listen address (HERALD_ADDR)".
var settingVariable = regexp.MustCompile(`\((HERALD_[A-Z0-9_]+)`)

// notInFile are the flags a file cannot hold: which file to read, and an
// action rather than a setting.
var notInFile = map[string]bool{"config": true, "version": true}

// applyConfigFile sets, from the YAML file at path, each setting of fs
// that neither the command line (set) nor its HERALD_* variable (read
// through getenv) gave. An unknown key, a key twice, a value that is not
// one scalar, or one the flag refuses stops the start, naming the file and
// the line.
func applyConfigFile(fs *flag.FlagSet, path string, set map[string]bool, getenv func(string) string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("HERALD_CONFIG (-config): %w", err)
	}
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil // an empty file sets nothing
		}
		return fmt.Errorf("%s: %w", path, err)
	}
	if len(doc.Content) == 0 {
		return nil
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return fmt.Errorf("%s:%d: want settings as `name: value` lines, one per flag of `herald serve`", path, root.Line)
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		key, value := root.Content[i], root.Content[i+1]
		name := key.Value
		f := fs.Lookup(name)
		switch {
		case key.Kind != yaml.ScalarNode || f == nil:
			return fmt.Errorf("%s:%d: unknown setting %q: the keys are the flags of `herald serve`, which `herald help serve` lists", path, key.Line, name)
		case notInFile[name]:
			return fmt.Errorf("%s:%d: %q is not a setting a config file can hold", path, key.Line, name)
		case seen[name] > 0:
			return fmt.Errorf("%s:%d: %q is set twice, first on line %d", path, key.Line, name, seen[name])
		case value.Kind != yaml.ScalarNode:
			return fmt.Errorf("%s:%d: %s: want one value; a list is written as the flag takes it, comma-separated", path, value.Line, name)
		}
		seen[name] = key.Line
		if set[name] {
			continue // the command line wins
		}
		if m := settingVariable.FindStringSubmatch(f.Usage); m != nil && getenv(m[1]) != "" {
			continue // so does the environment
		}
		if err := fs.Set(name, value.Value); err != nil {
			return fmt.Errorf("%s:%d: %s %q: %w", path, value.Line, name, value.Value, err)
		}
	}
	return nil
}

// withConfigFile is getenv for the commands that open the server's
// database (keys, users, backup, restore): a HERALD_* variable the
// environment leaves empty reads the setting of the file HERALD_CONFIG
// names, so an installation configured by that file needs no -db to
// reach its database. The file is read as serve reads it, so one it
// would refuse is refused here too.
func withConfigFile(getenv func(string) string) (func(string) string, error) {
	if getenv("HERALD_CONFIG") == "" {
		return getenv, nil
	}
	cfg, err := parseConfig(nil, getenv)
	if err != nil {
		return nil, err
	}
	fromFile := map[string]string{}
	cfg.flags.VisitAll(func(f *flag.Flag) {
		if m := settingVariable.FindStringSubmatch(f.Usage); m != nil && f.Value.String() != f.DefValue {
			fromFile[m[1]] = f.Value.String()
		}
	})
	return func(name string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return fromFile[name]
	}, nil
}
