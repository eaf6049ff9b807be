package handlers_test

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCrossOriginProtection(t *testing.T) {
	// Ensure net/http's CrossOriginProtection, in front of every form
	// handler, refuses a browser's cross-origin POST before any handler runs
	// (the form token is right in every case here, so only it decides), and
	// lets through same-origin browsers and clients that send neither
	// Sec-Fetch-Site nor Origin (curl, ab). Host is what the server sees:
	// behind nginx, proxy_set_header Host $host, the site's name without
	// its port.
	e := newEnv(t)
	for i, tc := range []struct {
		name   string
		host   string
		header map[string]string
		status int // 303: registered; 403: refused
	}{
		{"CurlOrAb", "game.example", nil, http.StatusSeeOther},
		{"SameOrigin", "game.example", map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": "https://game.example"}, http.StatusSeeOther},
		{"TypedURL", "game.example", map[string]string{"Sec-Fetch-Site": "none"}, http.StatusSeeOther},
		{"OldBrowserSameHost", "game.example", map[string]string{"Origin": "https://game.example"}, http.StatusSeeOther},
		{"CrossSite", "game.example", map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"}, http.StatusForbidden},
		{"SameSiteOtherOrigin", "game.example", map[string]string{"Sec-Fetch-Site": "same-site", "Origin": "https://forum.game.example"}, http.StatusForbidden},
		{"OldBrowserCrossSite", "game.example", map[string]string{"Origin": "https://evil.example"}, http.StatusForbidden},
		{"OriginNull", "game.example", map[string]string{"Origin": "null"}, http.StatusForbidden},
		// Behind a proxy on a port other than 443, Host ($host) loses the
		// port the Origin keeps: a browser without Sec-Fetch-Site (before
		// 2023) is refused, a current one is not.
		{"ProxyPortOldBrowser", "game.example", map[string]string{"Origin": "https://game.example:8443"}, http.StatusForbidden},
		{"ProxyPortCurrentBrowser", "game.example", map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": "https://game.example:8443"}, http.StatusSeeOther},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := e.client()
			_, page := c.get("/register")
			name := fmt.Sprintf("agent%02d", i)
			req := formRequest("/register", url.Values{"csrf": {csrf(t, page)}, "name": {name}, "password": {"tangerine orbit quill"}, "faction": {"FBI"}})
			req.Host = tc.host
			for k, v := range tc.header {
				req.Header.Set(k, v)
			}
			resp, page := c.do(req)
			require.Equal(t, tc.status, resp.StatusCode, page)
			assert.Equal(t, tc.status == http.StatusSeeOther, e.registered(name))
			if tc.status == http.StatusForbidden {
				assert.Contains(t, page, "another site", "the cross-origin refusal, not the token's")
			}
		})
	}
}
