package loadtest_test

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// serverEnv makes the test binary a page server instead of running tests,
// so that ab and we measure a server in another process, as in real use,
// not one sharing the test process's scheduler with the client under test.
const serverEnv = "LOADTEST_TEST_PAGE_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(serverEnv) == "1" {
		servePage()
		return
	}
	os.Exit(m.Run())
}

// servePage serves page on 127.0.0.1:0, prints its URL and serves until
// its stdin closes.
func servePage() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("http://%s/index.html\n", ln.Addr())
	go http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { writePage(w) }))
	bufio.NewReader(os.Stdin).ReadString('\n')
}

// MustServePageProcess starts the test binary as a page server in its own
// process and returns its URL; the server stops with the test.
func MustServePageProcess(tb testing.TB) string {
	tb.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), serverEnv+"=1")
	stdin, err := cmd.StdinPipe()
	require.NoError(tb, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(tb, err)
	cmd.Stderr = os.Stderr
	require.NoError(tb, cmd.Start())
	tb.Cleanup(func() { stdin.Close(); cmd.Wait() })
	url, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(tb, err)
	return strings.TrimSpace(url)
}
