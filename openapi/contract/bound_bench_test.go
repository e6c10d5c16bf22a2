package contract

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// wideSize is the size of the wide bodies: the most the check and the
// proxy read of an answer.
const wideSize = maxBody

// wideShapes are 4 MiB answers to the store list, one per shape a hostile
// StoreLink can send (ADR 0035).
var wideShapes = []struct {
	name string
	body func() []byte
}{
	// About 2 M items that break the item schema, and maxItems.
	{"wide-array", func() []byte { return repeated(`{"stores":[`, "1", `]}`) }},
	// About 1.4 M empty objects, each missing three required properties.
	{"wide-objects", func() []byte { return repeated(`{"stores":[`, "{}", `]}`) }},
	// About 300,000 properties the contract does not have.
	{"many-keys", func() []byte {
		n := 0
		return repeatedFunc(`{"stores":[],`, func() string { n++; return fmt.Sprintf(`"k%07d":0`, n) }, `}`)
	}},
	// Arrays nested 500 deep, side by side.
	{"deep", func() []byte {
		return repeated(`{"stores":[`, strings.Repeat("[", 500)+strings.Repeat("]", 500), `]}`)
	}},
	// One name of 4 MiB, against a maxLength of 200.
	{"long-string", func() []byte {
		head := `{"stores":[{"store_id":"47","timezone":"Europe/Prague","name":"`
		return []byte(head + strings.Repeat("x", wideSize-len(head)-4) + `"}]}`)
	}},
	// A first item that repeats a name 10,000 times, then 2 M items:
	// repeats cost the view nothing, so they cannot hide what follows.
	{"repeated-names", func() []byte {
		head := `{"stores":[{"store_id":"47","timezone":"Europe/Prague"` + strings.Repeat(`,"name":"a"`, itemised) + `}`
		return repeated(head+",", "1", `]}`)
	}},
	// The same first item, then one item that holds 2 M values.
	{"repeated-names-deep-item", func() []byte {
		head := `{"stores":[{"store_id":"47","timezone":"Europe/Prague"` + strings.Repeat(`,"name":"a"`, itemised) + `},{"store_id":"47","x":[`
		return repeated(head, "1", `]}]}`)
	}},
}

// repeated is head, then item separated by commas up to wideSize, then
// tail.
func repeated(head, item, tail string) []byte {
	return repeatedFunc(head, func() string { return item }, tail)
}

func repeatedFunc(head string, item func() string, tail string) []byte {
	var b strings.Builder
	b.WriteString(head)
	for i := 0; ; i++ {
		next := item()
		if b.Len()+len(next)+1+len(tail) > wideSize {
			break
		}
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(next)
	}
	b.WriteString(tail)
	return []byte(b.String())
}

// peakHeap samples the heap in use while it runs, every 2 ms; stop returns
// the highest sample.
func peakHeap() (stop func() uint64) {
	var peak atomic.Uint64
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > peak.Load() {
				peak.Store(ms.HeapAlloc)
			}
			select {
			case <-done:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	return func() uint64 {
		close(done)
		<-finished
		return peak.Load()
	}
}

// heapHeld is the heap in use after a collection.
func heapHeld() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// reportMemory adds the peak heap and the heap held after the runs to a
// benchmark's figures, in MB.
func reportMemory(b *testing.B, peak uint64) {
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
	b.ReportMetric(float64(heapHeld())/(1<<20), "held-heap-MB")
}

// wideServer answers every request with body.
func wideServer(b *testing.B, body []byte) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}))
	b.Cleanup(srv.Close)
	return srv
}

// BenchmarkWideBodyCheck runs one check of the store list against a
// StoreLink whose every answer is a 4 MiB body of one shape.
func BenchmarkWideBodyCheck(b *testing.B) {
	f := newFake()
	for _, shape := range wideShapes {
		b.Run(shape.name, func(b *testing.B) {
			srv := wideServer(b, shape.body())
			cfg := config(f, srv.URL)
			cfg.Operations = []string{opListStores}
			runtime.GC()
			stop := peakHeap()
			b.ReportAllocs()
			requests := 0
			for b.Loop() {
				rep, err := Check(context.Background(), cfg)
				if err != nil || rep.Aborted != "" || len(rep.Probes) == 0 {
					b.Fatalf("check: %v %+v", err, rep)
				}
				requests = rep.Requests
			}
			reportMemory(b, stop())
			b.ReportMetric(float64(requests), "requests")
		})
	}
}

// BenchmarkWideBodyProxy sends one store-list request through the proxy
// to a StoreLink whose answer is a 4 MiB body of one shape.
func BenchmarkWideBodyProxy(b *testing.B) {
	key := newFake().keys["47"]
	for _, shape := range wideShapes {
		b.Run(shape.name, func(b *testing.B) {
			body := shape.body()
			upstream := wideServer(b, body)
			p, err := NewProxy(ProxyConfig{Upstream: upstream.URL, Findings: io.Discard, Now: fixedNow})
			if err != nil {
				b.Fatal(err)
			}
			srv := httptest.NewServer(p)
			b.Cleanup(srv.Close)
			runtime.GC()
			stop := peakHeap()
			b.ReportAllocs()
			for b.Loop() {
				req, _ := http.NewRequest(http.MethodGet, srv.URL+"/v1/stores", nil)
				req.Header.Set("X-Korral-Store-Key", key)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				n, _ := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if n != int64(len(body)) {
					b.Fatalf("forwarded %d bytes of %d", n, len(body))
				}
			}
			reportMemory(b, stop())
			if s := p.Summary(); s.Findings == 0 {
				b.Fatalf("no finding for a wide body: %+v", s)
			}
		})
	}
}
