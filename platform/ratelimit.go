package platform

import (
	"math"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// RateLimits are the request limits of one process (docs/security.md,
// "Rate limits"). Each limit is a token bucket: Rate tokens a second, up to
// Burst at once. A zero Rate takes the default; a negative one turns the
// limit off.
type RateLimits struct {
	// Write limits POST, PUT, PATCH and DELETE per API key (so per
	// environment): a runaway client slows down instead of filling the
	// queue. The defaults are far above what a busy installation sends.
	Write      float64
	WriteBurst int
	// AuthFailure limits failed authentications per client address, so
	// guessing keys takes years rather than seconds.
	AuthFailure      float64
	AuthFailureBurst int
	// Sessions and NewSessions limit the inbox's sessions per client
	// address, a minute each, all at once if they come so: Sessions those of
	// subscribers that exist, NewSessions those naming one that does not
	// (created or refused). A page's public identifier is all a session
	// needs, so without them anyone could mint subscribers, which then
	// receive every broadcast, as fast as they can send.
	Sessions    float64
	NewSessions float64
}

// The defaults of RateLimits.
const (
	DefaultWriteRate        = 1000
	DefaultWriteBurst       = 2000
	DefaultAuthFailureRate  = 10
	DefaultAuthFailureBurst = 50
	// Many users may share one address behind a NAT, and each of them
	// opens a session on every page load: existing subscribers get ten
	// times what new ones do.
	DefaultSessionRate    = 600
	DefaultNewSessionRate = 60
)

func (l RateLimits) withDefaults() RateLimits {
	if l.Write == 0 {
		l.Write = DefaultWriteRate
	}
	if l.WriteBurst <= 0 {
		l.WriteBurst = max(DefaultWriteBurst, int(l.Write))
	}
	if l.AuthFailure == 0 {
		l.AuthFailure = DefaultAuthFailureRate
	}
	if l.AuthFailureBurst <= 0 {
		l.AuthFailureBurst = DefaultAuthFailureBurst
	}
	if l.Sessions == 0 {
		l.Sessions = DefaultSessionRate
	}
	if l.NewSessions == 0 {
		l.NewSessions = DefaultNewSessionRate
	}
	return l
}

// perMinute is a bucket of n a minute, n of them at once, refilled by the
// clock now.
func perMinute(n float64, now func() time.Time) *buckets {
	b := newBuckets(n/60, max(1, int(n)))
	if b != nil {
		b.now = now
	}
	return b
}

// buckets keeps one token bucket per key. A bucket idle long enough to have
// filled up again is the same as a new one, so it is dropped when the map
// grows: clients that come and go (every address of an IPv6 network, say)
// cannot grow it without bound.
type buckets struct {
	limit  rate.Limit
	burst  int
	refill time.Duration    // how long an empty bucket takes to fill
	now    func() time.Time // the clock that refills them; time.Now when nil

	mu    sync.Mutex
	byKey map[string]*bucket
	swept int // the map's size after the last sweep
}

type bucket struct {
	lim  *rate.Limiter
	used time.Time
}

func newBuckets(perSecond float64, burst int) *buckets {
	if perSecond < 0 {
		return nil
	}
	refill := time.Duration(float64(burst) / perSecond * float64(time.Second))
	return &buckets{limit: rate.Limit(perSecond), burst: burst, refill: refill, byKey: map[string]*bucket{}}
}

func (b *buckets) clock() time.Time {
	if b.now == nil {
		return time.Now()
	}
	return b.now()
}

// get returns key's bucket, creating it full.
func (b *buckets) get(key string, now time.Time) *rate.Limiter {
	b.mu.Lock()
	defer b.mu.Unlock()
	if e, ok := b.byKey[key]; ok {
		e.used = now
		return e.lim
	}
	if len(b.byKey) >= 2*b.swept+1024 {
		for k, e := range b.byKey {
			if now.Sub(e.used) > b.refill {
				delete(b.byKey, k)
			}
		}
		b.swept = len(b.byKey)
	}
	lim := rate.NewLimiter(b.limit, b.burst)
	b.byKey[key] = &bucket{lim: lim, used: now}
	return lim
}

// take spends one of key's tokens, or answers the 429 of the "Errors"
// section of docs/api.md with how long until one is there.
func (b *buckets) take(key string) error {
	if b == nil {
		return nil
	}
	now := b.clock()
	r := b.get(key, now).ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return tooMany(d)
	}
	return nil
}

// empty reports, without spending anything, whether key's bucket has no
// whole token left, and if so for how long.
func (b *buckets) empty(key string) (time.Duration, bool) {
	if b == nil {
		return 0, false
	}
	now := b.clock()
	b.mu.Lock()
	e, ok := b.byKey[key]
	b.mu.Unlock()
	if !ok {
		return 0, false // no bucket yet is a full one; requests that succeed make none
	}
	tokens := e.lim.TokensAt(now)
	if tokens >= 1 {
		return 0, false
	}
	return time.Duration((1 - tokens) / float64(b.limit) * float64(time.Second)), true
}

// tooMany is the 429 for a wait of d, with Retry-After in whole seconds
// (at least 1, as the header cannot say less).
func tooMany(d time.Duration) *Error {
	secs := int(math.Ceil(d.Seconds()))
	return &Error{Status: http.StatusTooManyRequests, Message: "Too many requests, retry after " + strconv.Itoa(max(secs, 1)) + " s",
		Header: http.Header{"Retry-After": {strconv.Itoa(max(secs, 1))}}}
}

// clientAddress is the key of a request's failed-authentication bucket:
// the peer's address, and for IPv6 its /64, which one client usually holds
// whole. Herald does not read X-Forwarded-For: behind a proxy every client
// shares the proxy's bucket (docs/security.md).
func clientAddress(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	a = a.Unmap()
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p.String()
	}
	return a.String()
}

// isWrite reports whether r changes something, and so counts against the
// per-key write limit.
func isWrite(r *http.Request) bool {
	switch r.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return true
	}
	return false
}
