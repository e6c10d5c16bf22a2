package statetest

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/korral/storelink/mcpserver/internal/state"
)

// verifier is shaped like what package approver stores; the register only
// requires the PHC form, not a valid hash.
const verifier = "$argon2id$v=19$m=65536,t=1,p=2$c2FsdHNhbHRzYWx0c2FsdA$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g"

func approverAddGetList(t *testing.T, o Opener) {
	ctx := ctxOf(t)
	s, reopen := o(t)
	got, err := s.AddApprover(ctx, state.Approver{Name: "Jana Nováková", Stores: []string{"102", "47", "102", "9"}, Verifier: verifier, CreatedAt: base})
	if err != nil {
		t.Fatal(err)
	}
	want := state.Approver{ID: got.ID, Name: "Jana Nováková", Stores: []string{"9", "47", "102"}, Verifier: verifier, CreatedAt: base}
	if diff := cmp.Diff(want, got); diff != "" || got.ID == 0 {
		t.Errorf("AddApprover returned (-want +got), id %d:\n%s", got.ID, diff)
	}
	all, err := s.AddApprover(ctx, state.Approver{Name: "eva.k", Verifier: verifier, CreatedAt: base.Add(time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	if all.Stores != nil || !all.Covers("47") || !all.Covers("180") || got.Covers("180") || !got.Covers("47") {
		t.Errorf("scopes: %v covers 47/180 = %v/%v; %v covers 47/180 = %v/%v", all.Stores, all.Covers("47"), all.Covers("180"), got.Stores, got.Covers("47"), got.Covers("180"))
	}
	// Another process sees the record; the name is found in any case, and
	// spelt in decomposed form too.
	other := reopen()
	for _, name := range []string{"Jana Nováková", "JANA NOVÁKOVÁ", "jana nova\u0301kova\u0301"} {
		g, found, err := other.GetApprover(ctx, name)
		if err != nil || !found {
			t.Fatalf("GetApprover(%q) = %v, %v", name, found, err)
		}
		if diff := cmp.Diff(want, g); diff != "" {
			t.Errorf("GetApprover(%q) (-want +got):\n%s", name, diff)
		}
	}
	if _, found, err := other.GetApprover(ctx, "Petr"); err != nil || found {
		t.Errorf("GetApprover of an unknown name = %v, %v; want not found", found, err)
	}
	list, err := other.ListApprovers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]state.Approver{all, want}, list); diff != "" {
		t.Errorf("ListApprovers, by name (-want +got):\n%s", diff)
	}
}

func approverNamesUnique(t *testing.T, o Opener) {
	ctx := ctxOf(t)
	s, _ := o(t)
	if _, err := s.AddApprover(ctx, state.Approver{Name: "Jana", Stores: []string{"47"}, Verifier: verifier, CreatedAt: base}); err != nil {
		t.Fatal(err)
	}
	before, _ := s.ListApprovers(ctx)
	for _, name := range []string{"Jana", "JANA", "jana"} {
		if _, err := s.AddApprover(ctx, state.Approver{Name: name, Verifier: verifier + "x", CreatedAt: base}); !errors.Is(err, state.ErrApproverExists) {
			t.Errorf("AddApprover(%q) with Jana active: err = %v, want ErrApproverExists", name, err)
		}
	}
	after, _ := s.ListApprovers(ctx)
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("a refused add changed the register (-before +after):\n%s", diff)
	}
}

func approverInvalidRefused(t *testing.T, o Opener) {
	ctx := ctxOf(t)
	s, _ := o(t)
	cases := []struct {
		name, why string
		a         state.Approver
	}{
		{"empty name", "empty", state.Approver{Name: "", Verifier: verifier}},
		{"too long", "at most 64", state.Approver{Name: strings.Repeat("a", 65), Verifier: verifier}},
		{"line break", "not '\\n'", state.Approver{Name: "jana\nApproved by: boss", Verifier: verifier}},
		{"terminal escape", "not '\\x1b'", state.Approver{Name: "jana\x1b[2J", Verifier: verifier}},
		{"zero-width space", "not '\\u200b'", state.Approver{Name: "ja\u200bna", Verifier: verifier}},
		{"leading space", "start with a letter or digit", state.Approver{Name: " jana", Verifier: verifier}},
		{"trailing space", "single spaces", state.Approver{Name: "jana ", Verifier: verifier}},
		{"two spaces", "single spaces", state.Approver{Name: "jana  k", Verifier: verifier}},
		{"markup", "not '<'", state.Approver{Name: "jana<b>", Verifier: verifier}},
		{"not UTF-8", "UTF-8", state.Approver{Name: "jana\xff", Verifier: verifier}},
		{"store not an id", `store id "x47"`, state.Approver{Name: "jana", Stores: []string{"x47"}, Verifier: verifier}},
		{"store too long", `store id "1234567"`, state.Approver{Name: "jana", Stores: []string{"1234567"}, Verifier: verifier}},
		{"secret instead of verifier", "not an encoded verifier", state.Approver{Name: "jana", Verifier: "Xq3v9LwP0sR7tY2uI5oA8eD1fG4hJ6kL"}},
		{"empty verifier", "not an encoded verifier", state.Approver{Name: "jana", Verifier: ""}},
		{"verifier with a space", "not an encoded verifier", state.Approver{Name: "jana", Verifier: "$argon2id$ x"}},
	}
	for _, tc := range cases {
		_, err := s.AddApprover(ctx, tc.a)
		if !errors.Is(err, state.ErrApproverInvalid) || !strings.Contains(err.Error(), tc.why) {
			t.Errorf("%s: err = %v, want ErrApproverInvalid saying %q", tc.name, err, tc.why)
		}
	}
	if list, err := s.ListApprovers(ctx); err != nil || len(list) != 0 {
		t.Errorf("after refusals the register holds %d records (%v); want none", len(list), err)
	}
	for _, name := range []string{"Jana Nováková", "o'Brien", "eva.k@store-47", "李娜", "Zoë_2"} {
		if _, err := s.AddApprover(ctx, state.Approver{Name: name, Verifier: verifier, CreatedAt: base}); err != nil {
			t.Errorf("AddApprover(%q): %v", name, err)
		}
	}
}

func approverRevokeAndRotate(t *testing.T, o Opener) {
	ctx := ctxOf(t)
	s, reopen := o(t)
	first, err := s.AddApprover(ctx, state.Approver{Name: "Jana", Stores: []string{"47"}, Verifier: verifier, CreatedAt: base})
	if err != nil {
		t.Fatal(err)
	}
	at := base.Add(time.Hour)
	rev, err := reopen().RevokeApprover(ctx, "jana", at)
	if err != nil {
		t.Fatal(err)
	}
	want := first
	want.RevokedAt = at
	if diff := cmp.Diff(want, rev); diff != "" || !rev.Revoked() {
		t.Errorf("RevokeApprover (-want +got):\n%s", diff)
	}
	if g, found, err := s.GetApprover(ctx, "Jana"); err != nil || !found || !g.RevokedAt.Equal(at) {
		t.Errorf("GetApprover of a revoked approver = %+v, %v, %v; want the revoked record", g, found, err)
	}
	if _, err := s.RevokeApprover(ctx, "Jana", at.Add(time.Hour)); !errors.Is(err, state.ErrApproverNotFound) {
		t.Errorf("revoking twice: err = %v, want ErrApproverNotFound", err)
	}
	if _, err := s.RevokeApprover(ctx, "Petr", at); !errors.Is(err, state.ErrApproverNotFound) {
		t.Errorf("revoking an unknown name: err = %v, want ErrApproverNotFound", err)
	}
	if g, _, _ := s.GetApprover(ctx, "Jana"); !g.RevokedAt.Equal(at) {
		t.Errorf("a refused revoke moved RevokedAt to %v", g.RevokedAt)
	}
	// Rotation: the same name again, with a new secret and record.
	second, err := s.AddApprover(ctx, state.Approver{Name: "Jana", Verifier: verifier + "2", CreatedAt: at.Add(time.Minute)})
	if err != nil {
		t.Fatalf("adding a revoked name again: %v", err)
	}
	if second.ID == first.ID {
		t.Errorf("the new record reuses id %d", first.ID)
	}
	g, found, err := s.GetApprover(ctx, "JANA")
	if err != nil || !found || g.ID != second.ID || g.Revoked() || g.Verifier != verifier+"2" {
		t.Errorf("GetApprover after rotation = %+v, %v, %v; want the new, active record", g, found, err)
	}
	list, err := s.ListApprovers(ctx)
	if err != nil || len(list) != 2 || list[0].ID != first.ID || list[1].ID != second.ID {
		t.Errorf("ListApprovers after rotation = %+v, %v; want both records, oldest first", list, err)
	}
	// A second revocation then a third add: the latest revoked record is
	// the one GetApprover finds while none is active.
	later := at.Add(2 * time.Hour)
	if _, err := s.RevokeApprover(ctx, "Jana", later); err != nil {
		t.Fatal(err)
	}
	if g, _, _ := s.GetApprover(ctx, "Jana"); g.ID != second.ID || !g.RevokedAt.Equal(later) {
		t.Errorf("GetApprover with two revoked records = %+v; want the later revoked", g)
	}
}

func approverAddRace(t *testing.T, o Opener) {
	ctx := ctxOf(t)
	s, reopen := o(t)
	handles := []state.Store{s, reopen()}
	const n = 12
	var wg sync.WaitGroup
	var mu sync.Mutex
	added, exists := 0, 0
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := handles[i%2].AddApprover(ctx, state.Approver{Name: "Jana", Verifier: verifier, CreatedAt: base})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				added++
			case errors.Is(err, state.ErrApproverExists):
				exists++
			default:
				t.Errorf("AddApprover: %v", err)
			}
		}()
	}
	wg.Wait()
	if added != 1 || exists != n-1 {
		t.Fatalf("%d of %d concurrent adds of one name succeeded, %d were told it exists; want 1 and %d", added, n, exists, n-1)
	}
}

// ApproversChangeOnlyByRevoking tampers with the register of approvers
// through plain SQL (exec, on the backend's own connection): each of edits
// must fail with an error containing refusal, each of inserts must fail,
// the register must be as before, and revoking through s must still work.
func ApproversChangeOnlyByRevoking(t *testing.T, s state.Store, exec func(ctx context.Context, stmt string) error, refusal string, edits, inserts []string) {
	t.Helper()
	ctx := ctxOf(t)
	for _, a := range []state.Approver{{Name: "Jana", Stores: []string{"47"}}, {Name: "Eva"}} {
		a.Verifier, a.CreatedAt = "$argon2id$v=19$a$b", base
		if _, err := s.AddApprover(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.RevokeApprover(ctx, "Eva", base.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	before, err := s.ListApprovers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range edits {
		if err := exec(ctx, stmt); err == nil || !strings.Contains(err.Error(), refusal) {
			t.Errorf("%s: err = %v, want the refusal", stmt, err)
		}
	}
	for _, stmt := range inserts {
		if err := exec(ctx, stmt); err == nil {
			t.Errorf("the database accepted %s", stmt)
		}
	}
	if after, err := s.ListApprovers(ctx); err != nil || !cmp.Equal(before, after) {
		t.Errorf("the register changed (%v):\n%s", err, cmp.Diff(before, after))
	}
	if _, err := s.RevokeApprover(ctx, "Jana", base.Add(2*time.Hour)); err != nil {
		t.Fatalf("revoke: %v", err)
	}
}
