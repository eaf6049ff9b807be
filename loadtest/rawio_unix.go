//go:build unix

package loadtest

import (
	"errors"
	"io"
	"net"
	"syscall"
	"time"
)

// rawIO writes a request and reads its response on the socket itself,
// through syscall.RawConn, to save what net.Conn costs per request: a read
// attempt that fails with EAGAIN right after every write. The write is done
// inside RawConn.Read's callback, after the runtime has armed the read
// readiness, so the response's arrival cannot be missed; the callback then
// reports "not yet" and the goroutine parks in the netpoller until the
// response is there, with the connection's read deadline in force. The
// result is one write and one read per small response, as wrk does it.
type rawIO struct {
	rc      syscall.RawConn
	out     []byte // request bytes left to write
	buf     []byte // where the next read goes
	n       int
	err     error
	werr    error // the write failed (in the callback)
	written time.Time
	fn      func(fd uintptr) bool // rawIO.step, bound once
}

// errWriteBlocked means the socket would not take the whole request at
// once; the caller finishes it with net.Conn.Write.
var errWriteBlocked = errors.New("loadtest: request write would block")

// attach binds x to c; false when c has no raw socket (the caller then uses
// c's own Write and Read).
func (x *rawIO) attach(c net.Conn) bool {
	x.rc = nil
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	if x.fn == nil {
		x.fn = x.step
	}
	x.rc = rc
	return true
}

// exchange writes req and reads the first bytes of the answer into buf. A
// write error comes back as werr (with nothing read), a read error as err.
func (x *rawIO) exchange(req, buf []byte) (written time.Time, n int, werr, err error) {
	x.out, x.buf, x.n, x.err, x.werr = req, buf, 0, nil, nil
	if rerr := x.rc.Read(x.fn); rerr != nil {
		if len(x.out) > 0 {
			return time.Time{}, 0, rerr, nil
		}
		return x.written, 0, nil, rerr
	}
	return x.written, x.n, x.werr, x.err
}

// read reads into buf, waiting in the netpoller for data.
func (x *rawIO) read(buf []byte) (int, error) {
	x.out, x.buf, x.n, x.err = nil, buf, 0, nil
	if err := x.rc.Read(x.fn); err != nil {
		return 0, err
	}
	return x.n, x.err
}

// step is the RawConn.Read callback: write what is left of the request,
// then read; false means wait for the socket to become readable.
func (x *rawIO) step(fd uintptr) bool {
	if len(x.out) > 0 {
		return x.write(int(fd))
	}
	for {
		n, err := rawRead(int(fd), x.buf)
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			return false
		case err != nil:
			x.err = err
		case n == 0:
			x.err = io.EOF
		default:
			x.n = n
		}
		return true
	}
}

// write writes the request; on success it stamps the time and asks to wait
// for the response.
func (x *rawIO) write(fd int) bool {
	for len(x.out) > 0 {
		n, err := rawWrite(fd, x.out)
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			x.werr = errWriteBlocked
			return true
		case err != nil:
			x.werr = err
			return true
		}
		x.out = x.out[n:]
	}
	x.written = time.Now()
	return false
}
