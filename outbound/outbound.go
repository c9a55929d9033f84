package outbound

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"syscall"
	"time"
)

// Setting names the setting that lets outbound connections reach
// addresses the guard refuses; error messages name it so the operator
// knows what to change.
const Setting = "HERALD_OUTBOUND_ALLOW"

// Guard checks every connection Herald opens on a user's behalf (a
// provider send, a webhook, an integration check). A user who can set a
// webhook URL must not make Herald reach inside the network it runs in:
// loopback, private, link-local (the cloud metadata address), shared,
// unspecified and multicast addresses are refused unless the operator
// allows them. The check runs on the address actually dialled,
// after DNS resolution, so a name that resolves inside is refused too, and
// a name that resolves differently the second time cannot slip past.
//
// A nil *Guard is the default guard: it allows nothing extra.
type Guard struct {
	nets  []netip.Prefix
	hosts map[string]bool // lower case, no trailing dot
}

// ParseAllow reads the allow list: comma-separated CIDRs (or bare
// addresses) and host names. Empty entries are skipped. A malformed entry
// is an error that names it, so a typo stops the start instead of leaving
// a receiver unreachable or, worse, a range open that was meant closed.
func ParseAllow(list string) (*Guard, error) {
	o := &Guard{hosts: map[string]bool{}}
	for entry := range strings.SplitSeq(list, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		if p, err := netip.ParsePrefix(entry); err == nil {
			o.nets = append(o.nets, p.Masked())
			continue
		}
		if a, err := netip.ParseAddr(entry); err == nil {
			o.nets = append(o.nets, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
			continue
		}
		host := strings.TrimSuffix(strings.ToLower(entry), ".")
		if !isHostName(host) {
			return nil, fmt.Errorf("%s: %q is neither a CIDR, an IP address nor a host name", Setting, entry)
		}
		o.hosts[host] = true
	}
	return o, nil
}

// isHostName reports whether s is a DNS name: dot-separated labels of
// letters, digits, underscores and inner hyphens, with a last label that
// is not all digits (so a mistyped address such as 10.0.0.300 is not taken
// for a name).
func isHostName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	labels := strings.Split(s, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for _, c := range l {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return strings.Trim(labels[len(labels)-1], "0123456789") != ""
}

// RefusedError is a connection the guard refused.
type RefusedError struct {
	Host string     // the host as the caller named it
	Addr netip.Addr // the address it resolved to
}

func (e *RefusedError) Error() string {
	if e.Host != "" && e.Host != e.Addr.String() {
		return fmt.Sprintf("%s (%s) is on a private network; Herald connects there only when %s allows it", e.Host, e.Addr, Setting)
	}
	return fmt.Sprintf("%s is on a private network; Herald connects there only when %s allows it", e.Addr, Setting)
}

// blockedNets are the ranges refused beyond what netip's predicates cover.
var blockedNets = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network" (RFC 1122); 0.0.0.0 reaches the local host
	netip.MustParsePrefix("100.64.0.0/10"),   // shared address space, carrier-grade NAT (RFC 6598)
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments (RFC 6890)
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking networks (RFC 2544)
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, including the broadcast address
	netip.MustParsePrefix("64:ff9b:1::/48"),  // local-use NAT64 (RFC 8215)
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
	netip.MustParsePrefix("100::/64"),        // discard-only (RFC 6666)
	netip.MustParsePrefix("fec0::/10"),       // deprecated site-local
	netip.MustParsePrefix("2002::/16"),       // 6to4: embeds an IPv4 address a relay would reach
	netip.MustParsePrefix("2001::/32"),       // Teredo: the same
	netip.MustParsePrefix("::/96"),           // IPv4-compatible addresses (deprecated)
	netip.MustParsePrefix("::ffff:0:0:0/96"), // SIIT translated addresses (RFC 6052)
}

// nat64 is the well-known NAT64 prefix (RFC 6052): its addresses carry an
// IPv4 address in their last 32 bits, which is what a NAT64 gateway reaches.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// Blocked reports whether a is an address the guard refuses by default.
func Blocked(a netip.Addr) bool {
	a = a.Unmap()
	if nat64.Contains(a) {
		b := a.As16()
		a = netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
	}
	if !a.IsValid() || a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsUnspecified() ||
		a.IsMulticast() || a.IsLinkLocalMulticast() || a.IsInterfaceLocalMulticast() {
		return true
	}
	for _, p := range blockedNets {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// allowedHost reports whether host (as a URL or a setting names it) is on
// the allow list by name.
func (o *Guard) allowedHost(host string) bool {
	return o != nil && len(o.hosts) > 0 && o.hosts[strings.TrimSuffix(strings.ToLower(host), ".")]
}

// allowedAddr reports whether a is outside the refused ranges or inside an
// allowed one.
func (o *Guard) allowedAddr(a netip.Addr) bool {
	a = a.Unmap()
	if !Blocked(a) {
		return true
	}
	if o == nil {
		return false
	}
	for _, p := range o.nets {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// check refuses host (a name or an address literal) at address a unless
// the allow list names the host or holds the address.
func (o *Guard) check(host string, a netip.Addr) error {
	if o.allowedHost(host) || o.allowedAddr(a) {
		return nil
	}
	return &RefusedError{Host: host, Addr: a.Unmap()}
}

// DialContext connects like net.Dialer.DialContext, refusing each resolved
// address the guard does not allow. It is the dial function of every
// outbound HTTP transport and SMTP connection.
func (o *Guard) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	return (&dialer{guard: o, d: net.Dialer{Timeout: dialTimeout}}).DialContext(ctx, network, addr)
}

// dialTimeout bounds connecting, apart from what the caller's context allows.
const dialTimeout = 5 * time.Second

// dialer is a net.Dialer behind the guard.
type dialer struct {
	guard *Guard
	d     net.Dialer
}

// DialContext dials addr. A host name on the allow list is dialled
// unchecked; otherwise Control checks each address the dialer tries, after
// resolution.
func (d *dialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if d.guard.allowedHost(host) {
		return d.d.DialContext(ctx, network, addr)
	}
	nd := d.d
	nd.ControlContext = func(_ context.Context, _, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return fmt.Errorf("outbound guard: unexpected address %q", address)
		}
		return d.guard.check(host, ap.Addr())
	}
	conn, err := nd.DialContext(ctx, network, addr)
	var refused *RefusedError
	if errors.As(err, &refused) {
		// The guard's reason is the whole story; net.OpError would
		// prefix it with "dial tcp …: ".
		return nil, refused
	}
	return conn, err
}

// Transport returns an HTTP transport whose every connection goes through
// the guard. It uses no proxy: through a proxy the guard would see only the
// proxy's address, never the target's.
func (o *Guard) Transport(timeout time.Duration) *http.Transport {
	return &http.Transport{
		DialContext:           o.DialContext,
		TLSHandshakeTimeout:   5 * time.Second,
		ResponseHeaderTimeout: timeout,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       90 * time.Second,
	}
}
