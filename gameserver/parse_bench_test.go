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
