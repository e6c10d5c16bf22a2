package contract

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
)

// forward sends the request to StoreLink as it came, hop-by-hop headers
// aside, and reads at most maxBody+1 bytes of the answer.
func (p *Proxy) forward(r *http.Request, body []byte) (int, http.Header, []byte, error) {
	ctx, cancel := context.WithTimeout(r.Context(), p.cfg.Timeout)
	defer cancel()
	target := *p.upstream
	target.Path = p.upstream.Path + r.URL.Path
	target.RawPath = ""
	if r.URL.RawPath != "" {
		target.RawPath = p.upstream.Path + r.URL.RawPath
	}
	target.RawQuery = r.URL.RawQuery
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	out, err := http.NewRequestWithContext(ctx, r.Method, target.String(), rd)
	if err != nil {
		return 0, nil, nil, err
	}
	for name, values := range r.Header {
		if !hopByHop(name) {
			out.Header[name] = values
		}
	}
	if _, ok := r.Header["User-Agent"]; !ok {
		// Go would add its own; the request goes as it came.
		out.Header["User-Agent"] = nil
	}
	resp, err := p.client.Do(out)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return 0, nil, nil, fmt.Errorf("read the answer: %w", err)
	}
	return resp.StatusCode, resp.Header, data, nil
}

// hopByHop reports the headers that belong to one connection (RFC 9110
// 7.6.1), which a proxy does not pass on.
func hopByHop(name string) bool {
	switch http.CanonicalHeaderKey(name) {
	case "Connection", "Keep-Alive", "Proxy-Connection", "Proxy-Authenticate", "Proxy-Authorization",
		"Te", "Trailer", "Transfer-Encoding", "Upgrade":
		return true
	}
	return false
}

func gunzip(b []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	out, err := io.ReadAll(io.LimitReader(zr, maxBody+1))
	if err != nil {
		return nil, err
	}
	if len(out) > maxBody {
		return nil, errors.New("too large")
	}
	return out, nil
}

// writeProxyError answers for the proxy itself, in the contract's error
// envelope, when it cannot forward.
func writeProxyError(w http.ResponseWriter, status int, code, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"code": code, "message": message}})
}
