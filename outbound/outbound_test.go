package outbound_test

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"testing"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/outbound"
)

func TestOutbound_Blocked(t *testing.T) {
	for _, tc := range []struct {
		addr    string
		blocked bool
	}{
		{"127.0.0.1", true},
		{"127.9.9.9", true},
		{"::1", true},
		{"10.1.2.3", true},
		{"172.16.0.1", true},
		{"172.31.255.255", true},
		{"192.168.1.1", true},
		{"169.254.169.254", true}, // cloud metadata
		{"fe80::1", true},
		{"fc00::1", true},
		{"fd12:3456::1", true},
		{"0.0.0.0", true},
		{"::", true},
		{"224.0.0.1", true},
		{"ff02::1", true},
		{"100.64.0.1", true},
		{"100.127.255.255", true},
		{"255.255.255.255", true},
		{"::ffff:127.0.0.1", true},       // IPv4-mapped loopback
		{"::ffff:169.254.169.254", true}, // IPv4-mapped metadata
		{"64:ff9b::a9fe:a9fe", true},     // NAT64 of 169.254.169.254
		{"2002:7f00:1::", true},          // 6to4 of 127.0.0.1
		{"8.8.8.8", false},
		{"172.32.0.1", false},
		{"100.128.0.1", false},
		{"2606:4700:4700::1111", false},
		{"64:ff9b::808:808", false}, // NAT64 of 8.8.8.8
	} {
		t.Run(tc.addr, func(t *testing.T) {
			is := is.New(t)
			is.Equal(outbound.Blocked(netip.MustParseAddr(tc.addr)), tc.blocked) // refused by default or not
		})
	}
}

func TestOutbound_ParseAllow(t *testing.T) {
	for _, tc := range []struct {
		name, list string
		ok         bool
	}{
		{"OKEmpty", "", true},
		{"OKCIDRsAndNames", " 127.0.0.0/8, ::1 ,receiver.internal, 10.0.0.5,", true},
		{"ErrPrefixTooLong", "10.0.0.0/33", false},
		{"ErrBadAddress", "10.0.0.300", false},
		{"ErrSpaceInName", "my host", false},
		{"ErrURL", "http://example.com", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			_, err := outbound.ParseAllow(tc.list)
			is.Equal(err == nil, tc.ok) // accepted or refused
		})
	}
}

// TestOutbound_Dial checks the address dialled, after resolution.
func TestOutbound_Dial(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	for _, tc := range []struct {
		name, allow, host string
		ok                bool
	}{
		{"ErrLoopback", "", "127.0.0.1", false},
		{"ErrLocalhost", "", "localhost", false},
		{"ErrOtherNameAllowed", "example.com", "localhost", false},
		{"OKCIDR", "127.0.0.1/32", "localhost", true},
		{"OKName", "localhost", "localhost", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			guard, err := outbound.ParseAllow(tc.allow)
			is.NoErr(err) // allow list parsed
			conn, err := guard.DialContext(context.Background(), "tcp", net.JoinHostPort(tc.host, port))
			if tc.ok {
				is.NoErr(err) // allowed
				conn.Close()
				return
			}
			var refused *outbound.RefusedError
			is.True(errors.As(err, &refused)) // refused by the guard, not by the network
		})
	}
}
