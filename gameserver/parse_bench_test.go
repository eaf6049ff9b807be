package gameserver

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"testing"
)

// benchInputs are typical requests, from testdata/requests.
var benchInputs = []struct{ name, fixture string }{
	{"ab-GET", "ok-ab-get"},
	{"wrk-GET", "ok-wrk-get"},
	{"browser-GET", "ok-browser-get"},
	{"POST-form", "ok-post-form"},
	{"chunked", "ok-chunked-ext-trailer"},
}

func readBenchInput(b *testing.B, fixture string) []byte {
	b.Helper()
	in, err := os.ReadFile("testdata/requests/" + fixture + ".http")
	if err != nil {
		b.Fatal(err)
	}
	return in
}

// BenchmarkParse measures framing and parsing one request and reading its
// body, with net/http's http.ReadRequest on the same input as a baseline.
func BenchmarkParse(b *testing.B) {
	for _, bi := range benchInputs {
		in := readBenchInput(b, bi.fixture)
		b.Run("gameserver/"+bi.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(in)))
			var p parser
			for b.Loop() {
				req, n, err := p.parse(in, defaultLimits)
				if err != nil || n != len(in) {
					b.Fatalf("parse: n=%d err=%v", n, err)
				}
				if _, err := io.Copy(io.Discard, req.Body); err != nil {
					b.Fatal(err)
				}
				p.reset()
			}
		})
		b.Run("net-http/"+bi.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(in)))
			rd := bytes.NewReader(in)
			br := bufio.NewReader(rd)
			for b.Loop() {
				rd.Reset(in)
				br.Reset(rd)
				req, err := http.ReadRequest(br)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := io.Copy(io.Discard, req.Body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkParsePieces measures a browser request arriving in n pieces:
// the cost must grow with the bytes, not with the number of calls squared.
func BenchmarkParsePieces(b *testing.B) {
	in := readBenchInput(b, "ok-browser-get")
	for _, pieces := range []int{1, 16, len(in)} {
		b.Run(fmt.Sprintf("pieces=%d", pieces), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(in)))
			var p parser
			for b.Loop() {
				for i := 1; i <= pieces; i++ {
					req, _, err := p.parse(in[:len(in)*i/pieces], defaultLimits)
					if err != nil || (req != nil) != (i == pieces) {
						b.Fatalf("piece %d: req=%v err=%v", i, req != nil, err)
					}
				}
				p.reset()
			}
		})
	}
}

// BenchmarkParseWorstHeader measures the most header work one request can
// cost the loop under the default limits: the full field cap of distinct
// names, and a header section of the full DefaultMaxHeaderBytes that is
// refused at its end. (Under the old 1 MiB default, ~330,000 tiny fields
// took about 200 ms.)
func BenchmarkParseWorstHeader(b *testing.B) {
	var fields bytes.Buffer
	fields.WriteString("GET / HTTP/1.1\r\nHost: a\r\n")
	for i := range maxHeaderFields - 1 {
		fmt.Fprintf(&fields, "X-%d: a\r\n", i)
	}
	fields.WriteString("\r\n")
	long := append([]byte("GET / HTTP/1.1\r\nHost: a\r\nX: "), bytes.Repeat([]byte("a"), DefaultMaxHeaderBytes)...)
	for _, tc := range []struct {
		name string
		in   []byte
		want *protoError
	}{
		{"fields=256", fields.Bytes(), nil},
		{"bytes=64KiB", long, errHeaderTooLarge},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(tc.in)))
			for b.Loop() {
				var p parser
				_, _, err := p.parse(tc.in, defaultLimits)
				if tc.want == nil && err != nil || tc.want != nil && err != tc.want {
					b.Fatalf("err = %v, want %v", err, tc.want)
				}
			}
		})
	}
}
