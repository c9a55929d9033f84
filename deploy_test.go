package main

import (
	"flag"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/matryer/is"
	"go.yaml.in/yaml/v3"
)

// The deployment files in deploy/ are checked here for what needs no
// container engine or systemd: each names only settings serve has, and
// the image keeps the properties docs/install.md promises.
// .ci/release-check runs the tools that check more where they exist.

// serveVariables are the HERALD_* variables serve reads, each named in a
// flag's usage.
func serveVariables() map[string]bool {
	vars := map[string]bool{}
	serveFlags(func(string) string { return "" }).VisitAll(func(f *flag.Flag) {
		if m := settingVariable.FindStringSubmatch(f.Usage); m != nil {
			vars[m[1]] = true
		}
	})
	return vars
}

var heraldVariable = regexp.MustCompile(`\bHERALD_[A-Z0-9_]+`)

func TestDeploy_FilesNameRealSettings(t *testing.T) {
	known := serveVariables()
	for _, file := range []string{"deploy/herald.env", "deploy/herald.service", "deploy/Dockerfile", "deploy/compose.yaml", "deploy/compose.postgres.yaml"} {
		t.Run(file, func(t *testing.T) {
			is := is.New(t)
			b, err := os.ReadFile(file)
			is.NoErr(err) // the file exists
			names := heraldVariable.FindAllString(string(b), -1)
			for _, name := range names {
				if !known[name] {
					t.Errorf("%s names %s, which no setting of serve reads", file, name)
				}
			}
		})
	}
}

func TestDeploy_ComposeFiles(t *testing.T) {
	for _, tc := range []struct {
		file     string
		services []string
	}{
		{"deploy/compose.yaml", []string{"herald"}},
		{"deploy/compose.postgres.yaml", []string{"postgres", "herald-1", "herald-2", "proxy"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			is := is.New(t)
			b, err := os.ReadFile(tc.file)
			is.NoErr(err) // the file exists
			var doc struct {
				Services map[string]struct {
					Build *struct {
						Context    string `yaml:"context"`
						Dockerfile string `yaml:"dockerfile"`
					} `yaml:"build"`
					Image       string            `yaml:"image"`
					Environment map[string]string `yaml:"environment"`
					Volumes     []string          `yaml:"volumes"`
				} `yaml:"services"`
			}
			is.NoErr(yaml.Unmarshal(b, &doc)) // valid YAML, anchors resolved
			for _, name := range tc.services {
				s, ok := doc.Services[name]
				is.True(ok) // the service is defined
				if !strings.HasPrefix(name, "herald") {
					continue
				}
				is.Equal(s.Build.Context, "..")                   // built from the repository's root
				is.Equal(s.Build.Dockerfile, "deploy/Dockerfile") // with the image's Dockerfile
			}
			is.Equal(len(doc.Services), len(tc.services)) // and nothing else
		})
	}
}

func TestDeploy_Dockerfile(t *testing.T) {
	is := is.New(t)
	b, err := os.ReadFile("deploy/Dockerfile")
	is.NoErr(err)
	df := string(b)
	stages := regexp.MustCompile(`(?m)^FROM\s+(\S+)`).FindAllStringSubmatch(df, -1)
	is.True(len(stages) >= 2)                            // built in one stage, shipped from another
	is.Equal(stages[len(stages)-1][1], "scratch")        // the image is the binary alone
	is.True(strings.Contains(df, "CGO_ENABLED=0"))       // a static binary, which scratch can run
	is.True(strings.Contains(df, "ca-certificates.crt")) // providers are reached over TLS
	is.True(strings.Contains(df, "timetzdata"))          // time zones without /usr/share/zoneinfo
	user := regexp.MustCompile(`(?m)^USER\s+(\S+)`).FindStringSubmatch(df)
	is.True(user != nil && !strings.HasPrefix(user[1], "0") && user[1] != "root") // not root
	is.True(regexp.MustCompile(`(?m)^VOLUME\s+/data`).MatchString(df))            // the data in a volume
	is.True(strings.Contains(df, `CMD ["/usr/bin/herald", "healthcheck"]`))       // the health check needs no curl
	for _, want := range []string{"stampedVersion", "stampedCommit"} {
		is.True(strings.Contains(df, want)) // the version and commit are stamped
	}
}
