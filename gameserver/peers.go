package gameserver

import "net/netip"

// Connections per client address (Config.MaxConnsPerAddr). One client
// that opens connections and never finishes a request on them would
// otherwise hold every connection MaxConns allows until each one's
// ReadHeaderTimeout, and lock every other client out; with a cap per
// address it holds at most its share, and the rest stay for the others.
// The count is kept at accept and close only, so a connection over the
// cap costs what one over MaxConns does: it is closed at once, before
// anything is read.

// peerConns counts the open connections of each client address that has
// any, while the per-address cap is on (Config.MaxConnsPerAddr > 0). It
// is the loop's.
type peerConns struct {
	max   int                // the cap; 0: off, nothing is counted
	count map[netip.Addr]int // open connections by peerKey
}

// peerKey is the address a connection from a counts against: an IPv4
// address itself (an IPv4-mapped IPv6 one as IPv4), an IPv6 address's /64
// prefix, which one host or home network usually holds whole, and the
// zero Addr, which is never counted, for a peer that is not IP (a Unix
// socket).
func peerKey(a netip.Addr) netip.Addr {
	a = a.Unmap()
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p.Addr()
	}
	return a
}

// full reports whether a connection from a would take its address over
// the cap.
func (p *peerConns) full(a netip.Addr) bool {
	if p.max <= 0 {
		return false
	}
	k := peerKey(a)
	return k.IsValid() && p.count[k] >= p.max
}

// add counts a connection from a, just admitted, and returns the key to
// give remove when it closes (the zero Addr if it is not counted).
func (p *peerConns) add(a netip.Addr) netip.Addr {
	if p.max <= 0 {
		return netip.Addr{}
	}
	k := peerKey(a)
	if k.IsValid() {
		if p.count == nil {
			p.count = make(map[netip.Addr]int)
		}
		p.count[k]++
	}
	return k
}

// remove uncounts a connection that add counted under k. An address
// whose last connection closes leaves the map, so it holds only the
// addresses with connections open.
func (p *peerConns) remove(k netip.Addr) {
	if !k.IsValid() {
		return
	}
	if n := p.count[k] - 1; n > 0 {
		p.count[k] = n
	} else {
		delete(p.count, k)
	}
}
