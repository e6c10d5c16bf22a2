package mockstorelink

import (
	"crypto/subtle"
	"encoding/json"
	"io"
	"net/http"
	"strings"
)

// adminHandler serves the control endpoint under /_admin/, outside the
// StoreLink API, for driving a mock that runs in another process:
//
//	GET    /_admin/keys                    every store's current key
//	POST   /_admin/keys/{store_id}/rotate  rotate a key; answers {"store_id","key"}
//	PUT    /_admin/keys/{store_id}         set a key from {"key": "..."}
//	GET    /_admin/faults                  the faults that can still fire
//	PUT    /_admin/faults                  replace all faults with a JSON array
//	DELETE /_admin/faults                  clear all faults
//	GET    /_admin/requests                the recorded API requests
//	DELETE /_admin/requests                forget them
//	GET    /_admin/orders                  every order
//	GET    /_admin/violations              contract violations of the mock itself
//
// Every call needs "Authorization: Bearer <token>"; with no token the
// endpoint is 404.
func (s *Server) adminHandler(token string) http.Handler {
	if token == "" {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			writeError(w, http.StatusNotFound, "not_found", "the admin endpoint is disabled")
		})
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /_admin/keys", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, s.Keys())
	})
	mux.HandleFunc("POST /_admin/keys/{store_id}/rotate", func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("store_id")
		if _, ok := s.world.store(id); !ok {
			writeError(w, http.StatusNotFound, "not_found", "store "+id+" not found")
			return
		}
		writeJSON(w, http.StatusOK, map[string]string{"store_id": id, "key": s.RotateKey(id)})
	})
	mux.HandleFunc("PUT /_admin/keys/{store_id}", func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Key string `json:"key"`
		}
		if !decodeAdmin(w, r, &body) {
			return
		}
		if strings.TrimSpace(body.Key) == "" {
			writeError(w, http.StatusBadRequest, "invalid_body", "key must not be empty")
			return
		}
		s.SetKey(r.PathValue("store_id"), body.Key)
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /_admin/faults", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, s.Faults())
	})
	mux.HandleFunc("PUT /_admin/faults", func(w http.ResponseWriter, r *http.Request) {
		data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRequestBody))
		if err != nil {
			writeError(w, http.StatusBadRequest, "invalid_body", err.Error())
			return
		}
		faults, err := ParseFaults(data)
		if err != nil {
			writeError(w, http.StatusBadRequest, "invalid_body", err.Error())
			return
		}
		s.SetFaults(faults...)
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("DELETE /_admin/faults", func(w http.ResponseWriter, r *http.Request) {
		s.ClearFaults()
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /_admin/requests", func(w http.ResponseWriter, r *http.Request) {
		type record struct {
			Method      string `json:"method"`
			Path        string `json:"path"`
			OperationID string `json:"operation_id"`
			StoreID     string `json:"store_id"`
			Status      int    `json:"status"`
			At          string `json:"at"`
		}
		reqs := s.Requests()
		out := make([]record, len(reqs))
		for i, rr := range reqs {
			out[i] = record{rr.Method, rr.Path, rr.OperationID, rr.StoreID, rr.Status, rr.At.Format("2006-01-02T15:04:05.000Z07:00")}
		}
		writeJSON(w, http.StatusOK, out)
	})
	mux.HandleFunc("DELETE /_admin/requests", func(w http.ResponseWriter, r *http.Request) {
		s.ResetRequests()
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /_admin/orders", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, s.Orders())
	})
	mux.HandleFunc("GET /_admin/violations", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, append([]string{}, s.Violations()...))
	})
	mux.HandleFunc("/_admin/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "not_found", "no such admin endpoint: "+r.Method+" "+r.URL.Path)
	})

	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := []byte(r.Header.Get("Authorization"))
		if subtle.ConstantTimeCompare(got, want) != 1 {
			writeError(w, http.StatusUnauthorized, "invalid_admin_token", "the admin token is missing or wrong")
			return
		}
		mux.ServeHTTP(w, r)
	})
}

func decodeAdmin(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxRequestBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_body", err.Error())
		return false
	}
	return true
}
