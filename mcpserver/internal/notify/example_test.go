package notify_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/korral/storelink/mcpserver/internal/notify"
)

// A receiver checks the signature over the raw body before trusting it and
// answers 2xx quickly. A notice may arrive twice; approval_id identifies it.
func ExampleVerify() {
	secret := []byte("whsec-example-0123456789")
	receive := func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 64<<10))
		if err != nil {
			http.Error(w, "unreadable body", http.StatusBadRequest)
			return
		}
		if err := notify.Verify(secret, r.Header.Get(notify.SignatureHeader), body, time.Now(), 5*time.Minute); err != nil {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		var p notify.Payload
		if err := json.Unmarshal(body, &p); err != nil {
			http.Error(w, "not a notice", http.StatusBadRequest)
			return
		}
		fmt.Println(p.ApprovalID, p.QuantityUnits, p.SKU)
	}

	// What the server sends, signed just now.
	body := `{"event":"approval.staged","approval_id":"apr-0011223344556677","store_id":"47","sku":"8594001234","quantity_units":24,"expires_at":"2026-11-28T16:30:00Z","text":"Order awaiting approval"}`
	req := httptest.NewRequest(http.MethodPost, "/hook", strings.NewReader(body))
	req.Header.Set(notify.SignatureHeader, notify.Sign(secret, time.Now(), []byte(body)))
	rec := httptest.NewRecorder()
	receive(rec, req)

	// A forgery, signed with another secret.
	req = httptest.NewRequest(http.MethodPost, "/hook", strings.NewReader(body))
	req.Header.Set(notify.SignatureHeader, notify.Sign([]byte("guessed"), time.Now(), []byte(body)))
	rec = httptest.NewRecorder()
	receive(rec, req)
	fmt.Println(rec.Code)
	// Output:
	// apr-0011223344556677 24 8594001234
	// 401
}
