package gameserver

import (
	"net/netip"
	"testing"
)

func TestPeerKey(t *testing.T) {
	// Ensure IPv4 addresses count on their own (mapped ones too), IPv6
	// ones by their /64, and what is not IP not at all.
	for _, tc := range []struct{ in, want string }{
		{"192.0.2.7", "192.0.2.7"},
		{"::ffff:192.0.2.7", "192.0.2.7"},
		{"2001:db8:1:2:aaaa::1", "2001:db8:1:2::"},
		{"2001:db8:1:2:bbbb::9", "2001:db8:1:2::"},
		{"::1", "::"},
	} {
		if got := peerKey(netip.MustParseAddr(tc.in)); got != netip.MustParseAddr(tc.want) {
			t.Errorf("peerKey(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
	if got := peerKey(netip.Addr{}); got.IsValid() {
		t.Errorf("peerKey of no address = %s, want none", got)
	}
	p := peerConns{max: 1}
	k := p.add(netip.MustParseAddr("2001:db8:1:2::5"))
	if !p.full(netip.MustParseAddr("2001:db8:1:2::6")) || p.full(netip.MustParseAddr("2001:db8:1:3::6")) {
		t.Errorf("a /64 with a connection open at cap 1 is not full, or another /64 is")
	}
	p.remove(k)
	if len(p.count) != 0 {
		t.Errorf("count after the last close = %v, want empty", p.count)
	}
}
