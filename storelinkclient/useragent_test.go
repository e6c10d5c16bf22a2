package storelinkclient_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sl "github.com/korral/storelink/storelinkclient"
)

// agentDoer is a doer that is not an *http.Client, to show the default
// User-Agent does not depend on the client's own transport.
type agentDoer struct{ next *http.Client }

func (d agentDoer) Do(req *http.Request) (*http.Response, error) { return d.next.Do(req) }

func TestDefaultUserAgent(t *testing.T) {
	ua := sl.DefaultUserAgent()
	// Inside this repository the build records no version of the module.
	if want := "storelinkclient/devel (+github.com/korral/storelink/storelinkclient)"; ua != want {
		t.Errorf("DefaultUserAgent() = %q, want %q", ua, want)
	}
	rec := &recorder{}
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)
	for name, opts := range map[string][]sl.ClientOption{
		"default doer":      nil,
		"caller's client":   {sl.WithHTTPClient(srv.Client())},
		"caller's doer":     {sl.WithHTTPClient(agentDoer{srv.Client()})},
		"with limit":        {sl.WithResponseLimit(sl.DefaultResponseLimit)},
		"limit then client": {sl.WithResponseLimit(sl.DefaultResponseLimit), sl.WithHTTPClient(srv.Client())},
	} {
		c, err := sl.NewClientWithResponses(srv.URL, opts...)
		if err != nil {
			t.Fatal(err)
		}
		rec.agents = nil
		if _, err := c.ListStoresWithResponse(context.Background(), sl.WithStoreKey(testKey)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := c.GetStoreWithResponse(context.Background(), "47", sl.WithStoreKey(testKey)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(rec.agents) != 2 || rec.agents[0] != ua || rec.agents[1] != ua {
			t.Errorf("%s: User-Agents %q, want %q on each request", name, rec.agents, ua)
		}
	}
}

func TestUserAgentOverrides(t *testing.T) {
	rec := &recorder{}
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)
	mine := "replenish-bot/1.4 " + sl.DefaultUserAgent()
	setUA := func(ua string) sl.RequestEditorFn {
		return func(_ context.Context, req *http.Request) error {
			req.Header.Set("User-Agent", ua)
			return nil
		}
	}
	for _, tc := range []struct {
		name    string
		opts    []sl.ClientOption
		perCall []sl.RequestEditorFn
		want    string
	}{
		{"option", []sl.ClientOption{sl.WithUserAgent(mine)}, nil, mine},
		{"client-wide editor", []sl.ClientOption{sl.WithRequestEditorFn(setUA("edited/1"))}, nil, "edited/1"},
		{"per-call editor wins over option", []sl.ClientOption{sl.WithUserAgent(mine)}, []sl.RequestEditorFn{setUA("call/2")}, "call/2"},
	} {
		c, err := sl.NewClientWithResponses(srv.URL, append([]sl.ClientOption{sl.WithHTTPClient(srv.Client())}, tc.opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		rec.agents = nil
		if _, err := c.GetStoreWithResponse(context.Background(), "47", append(tc.perCall, sl.WithStoreKey(testKey))...); err != nil {
			t.Fatal(err)
		}
		if len(rec.agents) != 1 || rec.agents[0] != tc.want {
			t.Errorf("%s: User-Agent %q, want %q", tc.name, rec.agents, tc.want)
		}
	}
	for _, bad := range []string{"", "  ", "bot/1\r\nX-Korral-Store-Key: " + testKey} {
		_, err := sl.NewClientWithResponses(srv.URL, sl.WithUserAgent(bad))
		if err == nil {
			t.Errorf("WithUserAgent(%q) was accepted", bad)
		} else if strings.Contains(err.Error(), testKey) {
			t.Errorf("error %q repeats the value", err)
		}
	}
}
