package handlers

import (
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statesecrets/server/game"
)

func TestParseActionRefusesBadForms(t *testing.T) {
	// Ensure a count of 0 or less is refused (the rules would read 0 as
	// one order), and a message or post that is not plain UTF-8 text is
	// refused naming the field, while a text area's line breaks pass.
	for _, tc := range []struct {
		form url.Values
		want string // "" for accepted
	}{
		{url.Values{"function": {"recruit"}, "count": {"0"}}, `"count" must be a whole number of orders, 1 to 24, not "0"`},
		{url.Values{"function": {"recruit"}, "count": {"-3"}}, `not "-3"`},
		{url.Values{"function": {"recruit"}, "count": {"2"}}, ""},
		{url.Values{"function": {"message"}, "to": {"bob"}, "body": {"a\x00b"}}, `"body" holds a control character (U+0000)`},
		{url.Values{"function": {"message"}, "to": {"bob"}, "body": {"\xff\xfe"}}, `"body" must be text (UTF-8)`},
		{url.Values{"function": {"post"}, "body": {"bell\a"}}, `"body" holds a control character (U+0007)`},
		{url.Values{"function": {"post"}, "body": {"two\r\nlines\tand é"}}, ""},
	} {
		_, err := parseAction(tc.form)
		if tc.want == "" {
			assert.NoError(t, err, "%v", tc.form)
			continue
		}
		require.Error(t, err, "%v", tc.form)
		assert.Contains(t, game.ErrorMessage(err), tc.want, "%v", tc.form)
	}
}
