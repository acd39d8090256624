package store

import (
	"encoding/json"
	"strings"
	"testing"
)

// jsonArrayCases are image lists of every kind: none, plain paths, and strings encoding/json
// escapes (quotes, backslashes, HTML characters, control characters, non-ASCII, U+2028,
// invalid UTF-8).
var jsonArrayCases = [][]string{
	nil, {}, {""}, {"img/1.png"}, {"a.png", "b c/d.jpg", "https://x.org/a?b=c;d=e#f"},
	{`a"b`}, {`a\b`}, {"<img>"}, {"a&b"}, {"tab\there"}, {"图像.png"}, {"é"}, {"\u2028"}, {"\xff"}, {"\x7f"},
	{"plain", "then <escaped>"}, {strings.Repeat("x", 5000)},
}

// TestJSONArrayMatchesEncodingJSON: the images column holds encoding/json's text, byte for
// byte, whichever way jsonArray writes it (a different byte would change stored rows).
func TestJSONArrayMatchesEncodingJSON(t *testing.T) {
	for _, c := range jsonArrayCases {
		checkJSONArray(t, c)
	}
}

func FuzzJSONArray(f *testing.F) {
	for _, c := range jsonArrayCases {
		f.Add(strings.Join(c, "\x00"))
	}
	f.Fuzz(func(t *testing.T, joined string) { checkJSONArray(t, strings.Split(joined, "\x00")) })
}

func checkJSONArray(t *testing.T, s []string) {
	want, err := json.Marshal(nonNil(s))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := jsonArray(s); err != nil || got != string(want) {
		t.Errorf("%q: got %s (%v), want %s", s, got, err, want)
	}
}
