package gameserver

import (
	"io"
	"net/http"
	"strconv"
	"time"
)

// accessLog collects Common Log Format lines on the loop and writes them
// to Config.AccessLog once per loop turn, so a busy turn costs one write.
type accessLog struct {
	w      io.Writer
	buf    []byte
	date   []byte // "[30/Nov/2026:10:27:00 +0000]", refreshed once per second
	failed bool   // a write failed; reported once
}

// clfTime is the Common Log Format time stamp layout.
const clfTime = "[02/Jan/2006:15:04:05 -0700]"

func (a *accessLog) setDate(t time.Time) {
	a.date = t.AppendFormat(a.date[:0], clfTime)
}

// record appends one line: host ident authuser [date] "request line" status
// bytes. bytes is the body length sent, "-" for none, as Apache logs it.
// req is nil for a request refused before it was parsed.
func (a *accessLog) record(remote string, req *http.Request, status int, bytes int64) {
	if req == nil {
		a.line(remote, "", "", "", status, bytes)
		return
	}
	a.line(remote, req.Method, req.RequestURI, req.Proto, status, bytes)
}

// line appends one line for the request-line method target proto (method
// "": the request-line is "-"). It copies what it needs of the strings.
func (a *accessLog) line(remote, method, target, proto string, status int, bytes int64) {
	b := append(a.buf, hostOf(remote)...)
	b = append(b, " - - "...)
	b = append(b, a.date...)
	b = append(b, ` "`...)
	if method != "" {
		b = appendEscaped(b, method)
		b = append(b, ' ')
		b = appendEscaped(b, target)
		b = append(b, ' ')
		b = appendEscaped(b, proto)
	} else {
		b = append(b, '-')
	}
	b = append(b, `" `...)
	b = strconv.AppendInt(b, int64(status), 10)
	b = append(b, ' ')
	if bytes > 0 {
		b = strconv.AppendInt(b, bytes, 10)
	} else {
		b = append(b, '-')
	}
	a.buf = append(b, '\n')
}

// flush writes the buffered lines and reports the first failure.
func (a *accessLog) flush() error {
	if len(a.buf) == 0 {
		return nil
	}
	_, err := a.w.Write(a.buf)
	a.buf = a.buf[:0]
	if err != nil && !a.failed {
		a.failed = true
		return err
	}
	return nil
}

// logRemote is the address to log for req from the peer remote: the
// RemoteAddr the handler left in req (see Config.AccessLog), else remote.
func logRemote(remote string, req *http.Request) string {
	if req != nil && req.RemoteAddr != "" {
		return req.RemoteAddr
	}
	return remote
}

// hostOf returns the host part of an "ip:port" address, without brackets.
func hostOf(addr string) string {
	for i := len(addr) - 1; i >= 0; i-- {
		if addr[i] == ':' {
			addr = addr[:i]
			break
		}
	}
	if len(addr) > 1 && addr[0] == '[' && addr[len(addr)-1] == ']' {
		addr = addr[1 : len(addr)-1]
	}
	if addr == "" {
		return "-"
	}
	return addr
}

// appendEscaped appends s with quotes, backslashes and control bytes
// escaped as \xHH, so a request line cannot forge log lines.
func appendEscaped(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == '"' || c == '\\' || c >= 0x7f {
			b = append(b, '\\', 'x', hex[c>>4], hex[c&15])
			continue
		}
		b = append(b, c)
	}
	return b
}
