package main

import (
	"flag"
	"fmt"
	"strconv"

	"github.com/herald-notify/herald/platform"
)

// limitSettings are the settings that bound what one client can make the
// server do (docs/security.md).
type limitSettings struct {
	writeRate, authFailureRate   float64
	writeBurst, authFailureBurst int
	maxPayload                   int64
}

// addLimitFlags registers the limits' flags on fs, each defaulting to its
// HERALD_* variable, read through env.
func addLimitFlags(fs *flag.FlagSet, env func(name, def string) string) (*limitSettings, error) {
	s := &limitSettings{}
	for _, f := range []struct {
		name, variable, usage string
		def                   float64
		into                  func(float64)
	}{
		{"write-rate", "HERALD_WRITE_RATE", "writes (POST, PUT, PATCH, DELETE) a second per API key; 0 turns the limit off",
			platform.DefaultWriteRate, func(v float64) { s.writeRate = v }},
		{"write-burst", "HERALD_WRITE_BURST", "writes an API key may make at once before write-rate applies",
			platform.DefaultWriteBurst, func(v float64) { s.writeBurst = int(v) }},
		{"auth-failure-rate", "HERALD_AUTH_FAILURE_RATE", "failed authentications a second per client address; 0 turns the limit off",
			platform.DefaultAuthFailureRate, func(v float64) { s.authFailureRate = v }},
		{"auth-failure-burst", "HERALD_AUTH_FAILURE_BURST", "failed authentications a client address may make at once",
			platform.DefaultAuthFailureBurst, func(v float64) { s.authFailureBurst = int(v) }},
		{"max-payload", "HERALD_MAX_PAYLOAD", "largest trigger payload in bytes",
			platform.DefaultMaxPayload, func(v float64) { s.maxPayload = int64(v) }},
	} {
		v, err := strconv.ParseFloat(env(f.variable, strconv.FormatFloat(f.def, 'f', -1, 64)), 64)
		if err != nil || v < 0 {
			return nil, fmt.Errorf("%s: want a number of 0 or more", f.variable)
		}
		f.into(v)
		fs.Func(f.name, fmt.Sprintf("%s (%s, default %v)", f.usage, f.variable, f.def), func(arg string) error {
			v, err := strconv.ParseFloat(arg, 64)
			if err != nil || v < 0 {
				return fmt.Errorf("want a number of 0 or more")
			}
			f.into(v)
			return nil
		})
	}
	return s, nil
}

// rateLimits is the settings as the server takes them: 0 turns a limit off.
func (s *limitSettings) rateLimits() platform.RateLimits {
	off := func(v float64) float64 {
		if v == 0 {
			return -1
		}
		return v
	}
	return platform.RateLimits{Write: off(s.writeRate), WriteBurst: s.writeBurst,
		AuthFailure: off(s.authFailureRate), AuthFailureBurst: s.authFailureBurst}
}
