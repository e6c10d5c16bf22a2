package stdiotransport

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkRead reads typical tools/call lines through this transport and,
// for comparison, through the SDK's IOTransport: the per-message cost of
// framing and decoding, which every stdio call pays.
func BenchmarkRead(b *testing.B) {
	const n = 1000
	line := `{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"korral_check_stock_risk","arguments":{"sku":"8847291","store_id":"47","lookback_days":14}}}` + "\n"
	input := []byte(strings.Repeat(line, n))
	for _, tc := range []struct {
		name string
		tr   func(r io.Reader) mcp.Transport
	}{
		{"ours", func(r io.Reader) mcp.Transport { return &Transport{Reader: r, Writer: io.Discard} }},
		{"sdk-iotransport", func(r io.Reader) mcp.Transport {
			return &mcp.IOTransport{Reader: io.NopCloser(r), Writer: nopWriteCloser{io.Discard}}
		}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			ctx := context.Background()
			for b.Loop() {
				c, err := tc.tr(bytes.NewReader(input)).Connect(ctx)
				if err != nil {
					b.Fatal(err)
				}
				for range n {
					if _, err := c.Read(ctx); err != nil {
						b.Fatal(err)
					}
				}
				_ = c.Close()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/msg")
		})
	}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
