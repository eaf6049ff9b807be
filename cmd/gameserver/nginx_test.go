package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/statesecrets/server/internal/testkit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// selfSigned writes a certificate for host and 127.0.0.1, and its key, as
// PEM files in dir, and returns their paths and a pool trusting it.
func selfSigned(t *testing.T, dir, host string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: host},
		DNSNames:     []string{host},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	require.NoError(t, err)
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	require.NoError(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	require.NoError(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600))
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// portBase is STATESECRETS_TEST_PORT_BASE (make test PORT_BASE=N): when
// set, freePort hands out N, N+1, ... in turn instead.
var portBase = os.Getenv("STATESECRETS_TEST_PORT_BASE")

var portsGiven atomic.Int32

// freePort returns a loopback port for nginx, which cannot listen on port
// 0 and tell which it got: one the kernel chose free a moment ago, or the
// next from portBase.
func freePort(t *testing.T) int {
	t.Helper()
	if portBase != "" {
		base, err := strconv.Atoi(portBase)
		require.NoError(t, err, "STATESECRETS_TEST_PORT_BASE must be a port number")
		return base + int(portsGiven.Add(1)) - 1
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// deadUpstream returns the address of a game that is down: it closes
// every connection before reading a byte, and nginx answers 502. It holds
// its port until the test ends: a port merely found free (freePort) could
// be taken meanwhile by another test's game, which answered nginx with a
// redirect to the proxy's https://$host/ (no port) and failed this test.
func deadUpstream(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return l.Addr().String()
}

// replaceOnce replaces old, which must occur, in s.
func replaceOnce(t *testing.T, s, old, new string) string {
	t.Helper()
	require.Contains(t, s, old, "deploy/nginx.conf or nginx-statesecrets.conf changed: update the test's edits")
	return strings.ReplaceAll(s, old, new)
}

// startNginx runs nginx with the shipped site deploy/nginx-statesecrets.conf,
// edited only to listen on loopback ports, use the test's certificate and
// proxy to upstream; it returns the HTTPS and HTTP ports and nginx's access
// log path.
func startNginx(t *testing.T, upstream, certFile, keyFile string) (httpsPort, httpPort int, accessLog string) {
	t.Helper()
	bin, err := exec.LookPath("nginx")
	if err != nil {
		bin, err = exec.LookPath("/usr/sbin/nginx")
	}
	require.NoError(t, err, "nginx is needed: apt-get install -y nginx-light (.ci/run does)")
	dir := t.TempDir()
	site, err := os.ReadFile(filepath.Join("..", "..", "deploy", "nginx-statesecrets.conf"))
	require.NoError(t, err)
	httpsPort, httpPort = freePort(t), freePort(t)
	s := string(site)
	s = replaceOnce(t, s, "server 127.0.0.1:8080;", "server "+upstream+";")
	s = replaceOnce(t, s, "listen 443 ssl http2;", fmt.Sprintf("listen 127.0.0.1:%d ssl http2;", httpsPort))
	s = replaceOnce(t, s, "listen [::]:443 ssl http2;", "")
	s = replaceOnce(t, s, "listen 80;", fmt.Sprintf("listen 127.0.0.1:%d;", httpPort))
	s = replaceOnce(t, s, "listen [::]:80;", "")
	s = replaceOnce(t, s, "/etc/letsencrypt/live/game.example.org/fullchain.pem", certFile)
	s = replaceOnce(t, s, "/etc/letsencrypt/live/game.example.org/privkey.pem", keyFile)
	s = replaceOnce(t, s, "game.example.org", "game.test")
	accessLog = filepath.Join(dir, "access.log")
	s = strings.ReplaceAll(s, "/var/log/nginx/statesecrets.access.log", accessLog)
	s = strings.ReplaceAll(s, "/var/log/nginx/statesecrets.error.log", filepath.Join(dir, "statesecrets.error.log"))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "site.conf"), []byte(s), 0o600))
	// The shipped main configuration, deploy/nginx.conf, with its limits,
	// edited only for the test's folder. Run as root (CI), nginx's workers
	// would be nobody, who cannot reach the temporary folder for buffering
	// a large response: keep them root.
	main, err := os.ReadFile(filepath.Join("..", "..", "deploy", "nginx.conf"))
	require.NoError(t, err)
	user := ""
	if os.Geteuid() == 0 {
		user = "user root;"
	}
	conf := replaceOnce(t, string(main), "user www-data;", user)
	conf = replaceOnce(t, conf, "worker_processes auto;", "worker_processes 1;")
	conf = replaceOnce(t, conf, "pid /run/nginx.pid;", "pid "+dir+"/nginx.pid;")
	conf = replaceOnce(t, conf, "error_log /var/log/nginx/error.log;", "error_log "+dir+"/error.log;")
	conf = replaceOnce(t, conf, "include /etc/nginx/modules-enabled/*.conf;", "")
	conf = replaceOnce(t, conf, "include /etc/nginx/mime.types;", "")
	conf = replaceOnce(t, conf, "access_log /var/log/nginx/access.log;", "access_log "+dir+"/other.log;")
	conf = replaceOnce(t, conf, "include /etc/nginx/conf.d/*.conf;", fmt.Sprintf(`client_body_temp_path %[1]s/body;
    proxy_temp_path %[1]s/proxy;
    fastcgi_temp_path %[1]s/fastcgi;
    uwsgi_temp_path %[1]s/uwsgi;
    scgi_temp_path %[1]s/scgi;`, dir))
	conf = replaceOnce(t, conf, "include /etc/nginx/sites-enabled/*;", "include "+dir+"/site.conf;")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "nginx.conf"), []byte(conf), 0o600))
	cmd := exec.Command(bin, "-p", dir, "-e", filepath.Join(dir, "error.log"), "-c", filepath.Join(dir, "nginx.conf"), "-g", "daemon off;")
	out := &testkit.LogBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGQUIT) // nginx's graceful stop
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
		}
		if t.Failed() {
			logs, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			t.Logf("nginx output:\n%s\nerror.log:\n%s", out, logs)
		}
	})
	require.Eventually(t, func() bool {
		select {
		case err := <-done:
			logs, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			require.FailNow(t, "nginx exited", "%v\n%s\n%s", err, out, logs)
		default:
		}
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", httpsPort))
		if err == nil {
			c.Close()
		}
		return err == nil
	}, 20*time.Second, 20*time.Millisecond, "nginx never listened")
	return httpsPort, httpPort, accessLog
}

// TestBehindNginxTLS plays through the shipped nginx site with TLS, from
// client address 127.0.0.2: HTTP redirects to HTTPS; registering sets a
// Secure session cookie (X-Forwarded-Proto from the trusted proxy); the
// player's post reaches their live event stream through nginx (unbuffered)
// and the board; both access logs name 127.0.0.2, the game's through
// X-Forwarded-For.
func TestBehindNginxTLS(t *testing.T) {
	dir := t.TempDir()
	gameLog := filepath.Join(dir, "access.log")
	p := startProgram(t, "-db", filepath.Join(dir, "ss.db"), "-trust-proxy", "-access-log", gameLog)
	certFile, keyFile, pool := selfSigned(t, dir, "game.test")
	httpsPort, httpPort, nginxLog := startNginx(t, strings.TrimPrefix(p.base, "http://"), certFile, keyFile)

	// Every connection comes from 127.0.0.2 and goes to nginx, whatever
	// the URL's host says.
	dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}, Timeout: 10 * time.Second}
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	c := &http.Client{
		Jar:     jar,
		Timeout: 20 * time.Second,
		Transport: &http.Transport{
			TLSClientConfig:   &tls.Config{RootCAs: pool, ServerName: "game.test"},
			ForceAttemptHTTP2: true,
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				port := httpsPort
				if strings.HasSuffix(addr, ":80") {
					port = httpPort
				}
				return dialer.DialContext(ctx, "tcp", fmt.Sprintf("127.0.0.1:%d", port))
			},
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	const base = "https://game.test"

	resp, err := c.Get("http://game.test/game?function=hq")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusMovedPermanently, resp.StatusCode)
	assert.Equal(t, base+"/game?function=hq", resp.Header.Get("Location"), "plain HTTP goes to HTTPS")

	resp, page := getBody(t, c, base+"/register")
	require.Equal(t, http.StatusOK, resp.StatusCode, page)
	assert.Equal(t, "HTTP/2.0", resp.Proto, "HTTP/2 on the TLS side")
	assert.Contains(t, resp.Header.Get("Strict-Transport-Security"), "max-age=")
	m := csrfField.FindStringSubmatch(page)
	require.NotNil(t, m, "a form token on the register form")
	resp, err = c.PostForm(base+"/register", url.Values{"csrf": {m[1]}, "name": {"frohike"}, "password": {"lone-gunmen-1"}, "faction": {"FBI"}})
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	var session *http.Cookie
	for _, ck := range resp.Cookies() {
		if ck.Name == "ss_session" {
			session = ck
		}
	}
	require.NotNil(t, session, "registering logs in")
	assert.True(t, session.Secure, "the session cookie is Secure behind the TLS proxy")

	resp, page = getBody(t, c, base+"/game?function=board")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, page, "frohike", "logged in by the cookie")
	m = csrfField.FindStringSubmatch(page)
	require.NotNil(t, m)
	events, _ := openEvents(t, c, base+"/game/events")
	resp, err = c.PostForm(base+"/game", url.Values{"csrf": {m[1]}, "function": {"post"}, "body": {"Trust no one, not even nginx."}})
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	post := events.Wait(t, 5*time.Second, func(ev testkit.Event) bool { return ev.Event == "post" })
	assert.Contains(t, post.Data, "Trust no one, not even nginx.", "the post, live through nginx")
	_, page = getBody(t, c, base+"/game?function=board")
	assert.Contains(t, page, "Trust no one, not even nginx.")
	const fakeTid = "0123456789abcdef0123456789abcdef"
	resp, _ = getBody(t, c, base+"/game?function=hq&tid="+fakeTid) // a session id no longer valid: to the login form
	assert.Equal(t, http.StatusSeeOther, resp.StatusCode)

	require.NoError(t, p.stop()) // flushes the game's access log
	logged, err := os.ReadFile(gameLog)
	require.NoError(t, err)
	assert.Regexp(t, `(?m)^127\.0\.0\.2 - - \[[^]]+\] "POST /register HTTP/1\.1" 303 `, string(logged), "the game logs the client, not nginx")
	assert.NotContains(t, string(logged), "127.0.0.1 - -", "no line names the proxy")
	require.Eventually(t, func() bool {
		b, _ := os.ReadFile(nginxLog)
		return strings.Contains(string(b), `127.0.0.2 - - `) && strings.Contains(string(b), `"POST /game HTTP/2.0" 303`) &&
			strings.Contains(string(b), `"GET /game HTTP/2.0" 303`)
	}, 5*time.Second, 20*time.Millisecond, "nginx's access log")
	b, err := os.ReadFile(nginxLog)
	require.NoError(t, err)
	assert.NotContains(t, string(b), fakeTid, "nginx logs no session id")
	assert.NotContains(t, string(b), "?", "nor any query string")
}

// TestNginxLogsNoSessionID: with the game down (the upstream address
// closes every connection unanswered), requests carrying a session id
// through the shipped site get nginx's 502, and no log nginx keeps (the
// site's access and error logs, the main ones) holds the id: nginx writes
// the request line, query string and all, into the error it logs for each.
func TestNginxLogsNoSessionID(t *testing.T) {
	dir := t.TempDir()
	upstream := deadUpstream(t)
	certFile, keyFile, pool := selfSigned(t, dir, "game.test")
	httpsPort, _, accessLog := startNginx(t, upstream, certFile, keyFile)
	c := &http.Client{Timeout: 20 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "game.test"}, ForceAttemptHTTP2: true}}
	const tid = "feedfacecafebeef0123456789abcdef"
	base := fmt.Sprintf("https://127.0.0.1:%d", httpsPort)
	for _, target := range []string{"/game?function=hq&tid=" + tid, "/game/events?tid=" + tid, "/?TID=" + tid, "/game?t%69d=" + tid} {
		resp, err := c.Get(base + target)
		require.NoError(t, err)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		assert.Equal(t, http.StatusBadGateway, resp.StatusCode, target)
	}
	resp, err := c.PostForm(base+"/game?tid="+tid, url.Values{"function": {"post"}, "body": {"x"}})
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusBadGateway, resp.StatusCode)

	logs := filepath.Dir(accessLog)
	require.Eventually(t, func() bool {
		b, _ := os.ReadFile(accessLog)
		return strings.Count(string(b), " 502 ") == 5
	}, 10*time.Second, 20*time.Millisecond, "nginx's access log")
	entries, err := os.ReadDir(logs)
	require.NoError(t, err)
	var read []string
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".log") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(logs, e.Name()))
		require.NoError(t, err)
		read = append(read, e.Name())
		assert.Equal(t, 0, strings.Count(string(b), tid), "%s holds the session id:\n%s", e.Name(), b)
	}
	assert.Contains(t, read, "error.log")
}

// TestRestartBehindNginx: -reload replaces the workers behind the shipped
// nginx site while clients send GETs and POSTs through it over HTTPS, on
// HTTP/2 and HTTP/1.1, and nginx answers none of them 5xx (a POST on an
// upstream connection the old worker closed was a 502: nginx does not
// send a POST again).
func TestRestartBehindNginx(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "ss.db")
	tid := mustNewPlayer(t, db, "spender")
	g := startGroup(t, 2, "-db", db, "-trust-proxy", "-metrics-addr", "127.0.0.1:0")
	certFile, keyFile, pool := selfSigned(t, dir, "game.test")
	httpsPort, _, _ := startNginx(t, strings.TrimPrefix(g.base, "http://"), certFile, keyFile)
	base := fmt.Sprintf("https://127.0.0.1:%d", httpsPort)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	var ok int
	var failures []string
	var wg sync.WaitGroup
	for i := range 8 {
		tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "game.test"}, ForceAttemptHTTP2: i%2 == 0}
		if i%2 == 1 {
			tr.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{} // HTTP/1.1
		}
		c := &http.Client{Transport: tr, Timeout: 20 * time.Second,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		wg.Go(func() {
			defer tr.CloseIdleConnections()
			for ctx.Err() == nil {
				var resp *http.Response
				var err error
				if i < 4 {
					resp, err = c.Get(base + "/game?function=hq&tid=" + tid)
				} else { // a form without its token: 403 from the game, never 5xx from nginx
					resp, err = c.PostForm(base+"/game?tid="+tid, url.Values{"function": {"post"}, "body": {"x"}})
				}
				if err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode >= 500 {
						err = fmt.Errorf("%s: status %d", resp.Request.Method, resp.StatusCode)
					}
				}
				mu.Lock()
				if err != nil {
					failures = append(failures, err.Error())
				} else {
					ok++
				}
				mu.Unlock()
			}
		})
	}
	count := func() int { mu.Lock(); defer mu.Unlock(); return ok }
	require.Eventually(t, func() bool { return count() >= 50 }, 60*time.Second, 10*time.Millisecond, "requests before the restart")
	require.NoError(t, run(context.Background(), []string{"-db", db, "-reload"}, io.Discard, io.Discard))
	g.waitLog(t, regexp.MustCompile(`msg="worker stopped"`), 2, "the old workers stopped")
	after := count()
	require.Eventually(t, func() bool { return count() >= after+50 }, 60*time.Second, 10*time.Millisecond, "requests after the restart")
	cancel()
	wg.Wait()
	assert.Empty(t, failures, "failed through nginx")
	t.Logf("%d requests through nginx, %d failed", count(), len(failures))
}
