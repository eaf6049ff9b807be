//go:build !unix

package loadtest

import (
	"errors"
	"net"
	"time"
)

// rawIO is the raw-socket path, Unix only; elsewhere attach always reports
// false and the worker uses net.Conn's Write and Read.
type rawIO struct{ out []byte }

var errWriteBlocked = errors.New("loadtest: request write would block")

func (x *rawIO) attach(net.Conn) bool { return false }

func (x *rawIO) exchange(req, buf []byte) (time.Time, int, error, error) {
	panic("loadtest: raw I/O is not available on this system")
}

func (x *rawIO) read(buf []byte) (int, error) {
	panic("loadtest: raw I/O is not available on this system")
}
