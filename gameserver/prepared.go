package gameserver

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unsafe"
)

// Prepared responses: content that does not change while the server runs
// (a file snapshot, embedded assets) answered without calling a Handler.
// For such a request the loop makes no http.Request, header map or
// ResponseWriter, so it allocates nothing: a Handler gets fresh ones for
// each request because it may keep them, and nothing proves it did not.

// Prepared is a complete 200 OK response to GET and HEAD, built once by
// Prepare and sent as is by the loop for the requests a PreparedHandler
// has it for. It is immutable, so one may serve any number of requests,
// on any number of servers.
type Prepared struct {
	head      []byte // status line and header fields, Content-Length last
	body      []byte
	hasDate   bool
	hasServer bool
}

// Prepare returns the response 200 OK with the header fields of h and
// body, framed as a ResponseWriter would frame it when the handler writes
// body and returns: fields sorted by name, Content-Type sniffed from body
// if h has none (and no Content-Encoding), Content-Length from body (one in
// h is ignored, as are Transfer-Encoding and Connection), and Date,
// "Server: gameserver" and Connection added per request unless h has Date
// or Server. Neither h nor body may change afterwards: body is sent
// without a copy.
func Prepare(h http.Header, body []byte) *Prepared {
	w := response{header: h, declared: -1, status: http.StatusOK}
	head := appendStatusLine(nil, http.StatusOK)
	head = w.appendHandlerHeader(head, http.StatusOK)
	if ct := w.sniffHead(body); ct != "" {
		head = append(append(append(head, "Content-Type: "...), ct...), "\r\n"...)
	}
	head = append(strconv.AppendInt(append(head, "Content-Length: "...), int64(len(body)), 10), "\r\n"...)
	return &Prepared{head: slices.Clip(head), body: body, hasDate: w.hasDate, hasServer: w.hasServer}
}

// A PreparedHandler is a Handler with prepared responses for some paths.
// The loop sends the prepared response, instead of calling ServeHTTP, for
// a GET or HEAD request whose request-target is an origin-form path
// without a query (and without percent-encoding) that Prepared has a
// response for, with no body, and with none of the fields that ask for
// part of the content or make the answer conditional (Range, If-Range,
// If-Match, If-None-Match, If-Modified-Since, If-Unmodified-Since: RFC
// 9110 sections 13.1 and 14.2). The prepared response must therefore be
// the answer to every such request, whatever its other header fields.
// Every other request goes to ServeHTTP. Only Config.Handler itself is
// asked, not a Handler it wraps.
//
// The request is counted in Stats and written to Config.AccessLog as any
// other, and its wait attributed (WaitStats; route ""), but it does not
// reach the slow-request log (no handler runs).
type PreparedHandler interface {
	http.Handler
	// Prepared returns the response prepared for path, or nil to have
	// ServeHTTP answer. It runs on the loop, once per request, and must
	// not keep path, which is valid only during the call.
	Prepared(path []byte) *Prepared
}

// preparedHit is a request parse matched with a prepared response.
type preparedHit struct {
	resp    *Prepared
	head    bool // HEAD: no body
	proto11 bool // HTTP/1.1 or later: else "Connection: keep-alive" keeps the connection
	close   bool // the connection closes after the response (RFC 9112 section 9.3)
}

// prepared checks the header section hdr (request-line, field lines and
// the empty line) as readHeader would and, if it is a request a prepared
// response answers (see PreparedHandler), sets p.hit and reports true.
// Nothing it reads outlives the call: the strings it looks at alias hdr,
// which the caller reuses, so it keeps only flags. Any
// request readHeader would refuse, or that needs a Handler, reports false
// and goes to readHeader.
func (p *parser) prepared(hdr []byte, lookup func([]byte) *Prepared) bool {
	s := unsafe.String(unsafe.SliceData(hdr), len(hdr))
	line, s := cutLine(s)
	var r http.Request
	if parseRequestLine(&r, line) != nil {
		return false
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	path := r.RequestURI
	for i := 0; i < len(path); i++ {
		if !pathByte[path[i]] {
			return false // a query, percent-encoding, or no origin-form
		}
	}
	var f fieldInfo
	if path[0] != '/' || f.readFields(nil, s, 0, nil) != nil || f.checkHost(&r) != nil ||
		f.te != nil || f.contentLengths > 0 || f.expect100 || f.conditional {
		return false
	}
	resp := lookup(unsafe.Slice(unsafe.StringData(path), len(path)))
	if resp == nil {
		return false
	}
	p.hit = preparedHit{resp: resp, head: r.Method == http.MethodHead,
		proto11: r.ProtoMinor >= 1, close: f.close(r.ProtoMinor)}
	return true
}

// servePrepared answers the request parse matched with a prepared
// response; raw is the request's bytes, last is serveInput's (the last
// request of a draining connection).
func (l *loop) servePrepared(c *conn, h preparedHit, raw []byte, last bool) {
	var start int64
	if l.wait.on {
		start = l.clock()
		l.noteHandlerStart(start)
	}
	pr := h.resp
	l.count.Requests++
	c.closeAfter = c.closeAfter || h.close || last
	out := &c.out
	out.write(pr.head, l)
	switch {
	case c.closeAfter:
		out.write(connClose, l)
	case !h.proto11:
		out.write(connKeepAlive, l)
	}
	if !pr.hasDate {
		out.write(l.dateField, l)
	}
	if !pr.hasServer {
		out.write(serverField, l)
	}
	out.write(crlf, l)
	var sent int64
	if !h.head {
		sent = int64(len(pr.body))
		if len(pr.body) <= copyMax {
			out.write(pr.body, l)
		} else {
			out.pushShared(pr.body)
		}
	}
	l.count.countResponse(http.StatusOK)
	if l.access != nil {
		// The request-line as parse checked it: method SP target SP proto,
		// after any empty lines.
		line, _ := cutLine(strings.TrimLeft(unsafe.String(unsafe.SliceData(raw), len(raw)), "\r\n"))
		method, rest, _ := strings.Cut(line, " ")
		target, proto, _ := strings.Cut(rest, " ")
		l.access.line(c.remote, method, target, proto, http.StatusOK, sent)
	}
	if l.wait.on {
		l.noteWait(c, start, l.clock(), "")
	}
}

var (
	connClose     = []byte("Connection: close\r\n")
	connKeepAlive = []byte("Connection: keep-alive\r\n")
	serverField   = []byte("Server: gameserver\r\n")
)
