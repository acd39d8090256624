package vlm

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// redacted replaces a secret wherever the client writes text: the request log, errors.
const redacted = "REDACTED"

// secretQueryKeys are the query parameters that carry an API key in the services that take
// one in the URL (Azure-style api-key, Google-style key, api_key, token).
var secretQueryKeys = []string{"api_key", "apikey", "api-key", "key", "token", "access_token", "auth", "sig", "code"}

// endpointURL is the chat completions URL of an endpoint: /chat/completions appended to the
// path of an API base, the query (an api_key, an api-version) kept in its place after it.
func endpointURL(endpoint string) (*url.URL, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		// url.Parse quotes the whole input in its error: say what is wrong without it.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("endpoint: not a URL (%v)", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("endpoint %s: want an http:// or https:// URL", redactURL(u))
	}
	if u.Host == "" {
		return nil, fmt.Errorf("endpoint %s: no host", redactURL(u))
	}
	p := strings.TrimRight(u.Path, "/")
	if !strings.HasSuffix(p, "/chat/completions") {
		p += "/chat/completions"
	}
	u.Path, u.RawPath = p, ""
	return u, nil
}

// redactURL writes a URL without its secrets: the user info and the values of secret query
// parameters become REDACTED; the rest, and the query's order, stay.
func redactURL(u *url.URL) string {
	c := *u
	if c.User != nil {
		c.User = url.User(redacted)
	}
	if c.RawQuery != "" {
		parts := strings.Split(c.RawQuery, "&")
		for i, p := range parts {
			k, _, hasValue := strings.Cut(p, "=")
			name, err := url.QueryUnescape(k)
			if err != nil {
				name = k
			}
			if hasValue && slices.Contains(secretQueryKeys, strings.ToLower(name)) {
				parts[i] = k + "=" + redacted
			}
		}
		c.RawQuery = strings.Join(parts, "&")
	}
	return c.String()
}

// secretsOf lists the literal secrets of a URL and an API key, longest first, for scrubbing
// text the client did not write itself (a server's error page may echo the URL it was
// asked for; Go's own errors quote it).
func secretsOf(u *url.URL, apiKey string) []string {
	var out []string
	add := func(s string) {
		if len(s) >= 4 && !slices.Contains(out, s) {
			out = append(out, s)
			if e := url.QueryEscape(s); e != s {
				out = append(out, e)
			}
		}
	}
	if u.User != nil {
		add(u.User.Username())
		if p, ok := u.User.Password(); ok {
			add(p)
		}
	}
	for k, vs := range u.Query() {
		if slices.Contains(secretQueryKeys, strings.ToLower(k)) {
			for _, v := range vs {
				add(v)
			}
		}
	}
	add(apiKey)
	slices.SortFunc(out, func(a, b string) int { return len(b) - len(a) })
	return out
}

// scrub replaces every secret in s.
func (c *Client) scrub(s string) string {
	for _, sec := range c.secrets {
		s = strings.ReplaceAll(s, sec, redacted)
	}
	return s
}
