package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// healthcheckFlags are the flags of `herald healthcheck`.
func healthcheckFlags(getenv func(string) string) *flag.FlagSet {
	fs, _, _ := healthcheckFlagSet(getenv)
	return fs
}

func healthcheckFlagSet(getenv func(string) string) (*flag.FlagSet, *string, *time.Duration) {
	fs := quietFlagSet("herald healthcheck")
	addr := fs.String("addr", cmp.Or(getenv("HERALD_ADDR"), "127.0.0.1:3000"), "the server's listen address, as serve was given it (HERALD_ADDR)")
	timeout := fs.Duration("timeout", 5*time.Second, "how long to wait for the answer")
	return fs, addr, timeout
}

// runHealthcheck is `herald healthcheck`: it asks the server on this
// machine for GET /healthz and fails unless it answers 200, for a
// container's HEALTHCHECK on an image with no HTTP client of its own.
func runHealthcheck(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	fs, addr, timeout := healthcheckFlagSet(getenv)
	positional, err := parseFlags(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return help(stdout, []string{"healthcheck"})
	}
	if err != nil {
		return fmt.Errorf("herald healthcheck: %w; `herald help healthcheck` lists its flags", err)
	}
	if len(positional) > 0 {
		return fmt.Errorf("usage: %s", usage("healthcheck"))
	}
	url, err := healthzURL(*addr)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("healthcheck: %s answered %s", url, res.Status)
	}
	fmt.Fprintln(stdout, "ok")
	return nil
}

// healthzURL is where the server listening on addr answers /healthz from
// this machine: a wildcard or empty host is reached on loopback.
func healthzURL(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("HERALD_ADDR (-addr) %q is not host:port: %w", addr, err)
	}
	switch host {
	case "", "0.0.0.0":
		host = "127.0.0.1"
	case "::":
		host = "::1"
	}
	return "http://" + net.JoinHostPort(host, port) + "/healthz", nil
}
