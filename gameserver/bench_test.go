package gameserver_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/statesecrets/server/gameserver"
)

// Full requests over loopback, client and server in one process: the
// client is a raw connection that allocates nothing per request, so
// allocs/op is the server's. Each benchmark has a net/http twin serving
// the same handler, so the ratio shows in one run:
//
//	go test -run '^$' -bench Serve -benchmem ./gameserver

// benchSizes are response body sizes: empty, the 2159-byte page of the
// nginx comparison (shared/bench/www/index.html), and larger bodies.
var benchSizes = []int{0, 2159, 16 << 10, 256 << 10}

// bodyHandler answers every request with a body of size bytes. Like a
// static file server (cmd/fileserver/memfs), it prepares its header values
// once, so allocs/op is the server's alone.
func bodyHandler(size int) http.Handler {
	body := bytes.Repeat([]byte("x"), size)
	contentType := []string{"text/html; charset=utf-8"}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Content-Type"] = contentType
		w.Write(body)
	})
}

// serveBench starts the server under test (gameserver, or net/http when
// stdlib is set) on 127.0.0.1:0 and returns its address.
func serveBench(b *testing.B, h http.Handler, stdlib bool) string {
	b.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	if stdlib {
		s := &http.Server{Handler: h, ErrorLog: nil}
		go s.Serve(l)
		b.Cleanup(func() { s.Close() })
		return l.Addr().String()
	}
	s := gameserver.New(gameserver.Config{Handler: h, Logger: slog.New(slog.DiscardHandler)})
	go s.Serve(l)
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.Shutdown(ctx)
	})
	return l.Addr().String()
}

// BenchmarkServeKeepAlive: one persistent connection, one request at a
// time (the wrk pattern, with one connection). Its ns/op is a round trip's
// latency, so it moves with the machine's load; allocs/op is the stable
// figure. CPU per request is measured against nginx by make bench-nginx.
//
// server=prepared is gameserver answering with a prepared response
// (PreparedHandler, as cmd/fileserver's snapshot does): 0 allocs/op.
func BenchmarkServeKeepAlive(b *testing.B) {
	for _, size := range benchSizes {
		for _, srv := range []string{"gameserver", "prepared", "net-http"} {
			b.Run(fmt.Sprintf("server=%s/size=%d", srv, size), func(b *testing.B) {
				h := bodyHandler(size)
				if srv == "prepared" {
					h = preparedHandler{h, prepareBody(size)}
				}
				addr := serveBench(b, h, srv == "net-http")
				benchKeepAlive(b, addr)
			})
		}
	}
}

// preparedHandler answers every GET with one prepared response.
type preparedHandler struct {
	http.Handler
	resp *gameserver.Prepared
}

func (h preparedHandler) Prepared([]byte) *gameserver.Prepared { return h.resp }

// prepareBody is bodyHandler's response to a plain GET, prepared.
func prepareBody(size int) *gameserver.Prepared {
	h := http.Header{"Content-Type": {"text/html; charset=utf-8"}}
	return gameserver.Prepare(h, bytes.Repeat([]byte("x"), size))
}

func benchKeepAlive(b *testing.B, addr string) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	req := []byte("GET /index.html HTTP/1.1\r\nHost: bench\r\nUser-Agent: bench\r\n\r\n")
	buf := make([]byte, 512<<10)
	n, err := roundTrip(c, req, buf, 0) // learn the response length
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(n))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := roundTrip(c, req, buf, n); err != nil {
			b.Fatal(err)
		}
	}
}

// roundTrip writes req and reads one response: want bytes, or, when want is
// 0, a header section and its Content-Length body. It returns the length.
func roundTrip(c net.Conn, req, buf []byte, want int) (int, error) {
	if _, err := c.Write(req); err != nil {
		return 0, err
	}
	got := 0
	for want == 0 || got < want {
		n, err := c.Read(buf[got:])
		if err != nil {
			return got, err
		}
		got += n
		if want == 0 {
			want = responseLength(buf[:got])
		}
	}
	return got, nil
}

// responseLength returns the full length of the response starting buf, or
// 0 while its header section is incomplete.
func responseLength(buf []byte) int {
	end := bytes.Index(buf, []byte("\r\n\r\n"))
	if end < 0 {
		return 0
	}
	head := string(buf[:end])
	i := bytes.Index(bytes.ToLower(buf[:end]), []byte("content-length: "))
	if i < 0 {
		return end + 4
	}
	j := i + len("content-length: ")
	k := j
	for k < len(head) && head[k] >= '0' && head[k] <= '9' {
		k++
	}
	n, _ := strconv.Atoi(head[j:k])
	return end + 4 + n
}

// BenchmarkServeKeepAliveParallel: 12 persistent connections (wrk -c12,
// ab -c 12), each sending its next request when its response is in.
func BenchmarkServeKeepAliveParallel(b *testing.B) {
	for _, srv := range []string{"gameserver", "net-http"} {
		b.Run("server="+srv, func(b *testing.B) {
			addr := serveBench(b, bodyHandler(2159), srv == "net-http")
			req := []byte("GET /index.html HTTP/1.1\r\nHost: bench\r\nUser-Agent: bench\r\n\r\n")
			b.ReportAllocs()
			b.SetParallelism(6) // 2 cores x 6 = 12 connections
			b.RunParallel(func(pb *testing.PB) {
				c, err := net.Dial("tcp", addr)
				if err != nil {
					b.Error(err)
					return
				}
				defer c.Close()
				buf := make([]byte, 64<<10)
				n := 0
				for pb.Next() {
					if n, err = roundTrip(c, req, buf, n); err != nil {
						b.Error(err) // not Fatal: this is not the benchmark's goroutine
						return
					}
				}
			})
		})
	}
}

// BenchmarkServeNewConn: a new connection per request, closed by the server
// after its response (the ab pattern without -k).
func BenchmarkServeNewConn(b *testing.B) {
	for _, srv := range []string{"gameserver", "net-http"} {
		b.Run("server="+srv, func(b *testing.B) {
			addr := serveBench(b, bodyHandler(2159), srv == "net-http")
			req := []byte("GET /index.html HTTP/1.0\r\nHost: bench\r\nUser-Agent: bench\r\n\r\n")
			b.ReportAllocs()
			for b.Loop() {
				c, err := net.Dial("tcp", addr)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := c.Write(req); err != nil {
					b.Fatal(err)
				}
				if _, err := io.Copy(io.Discard, c); err != nil {
					b.Fatal(err)
				}
				c.Close()
			}
		})
	}
}
