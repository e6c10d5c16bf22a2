package keyring

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/korral/storelink/mcpserver/internal/apperr"
)

const secretA = "sk-live-47-Zq9vN3pL0aX"

func TestKeyNeverPrintsSecret(t *testing.T) {
	k := NewKey(secretA)
	fp := k.Fingerprint()
	if !strings.HasPrefix(fp, "key:") || len(fp) != len("key:")+6 {
		t.Fatalf("Fingerprint() = %q, want key: and 6 hex digits", fp)
	}
	type holder struct {
		Exported Key
		hidden   Key
	}
	h := holder{Exported: k, hidden: k}
	js, err := json.Marshal(map[string]any{"k": k, "h": h})
	if err != nil {
		t.Fatal(err)
	}
	var logBuf bytes.Buffer
	slog.New(slog.NewJSONHandler(&logBuf, nil)).Info("m", "key", k, "holder", h)
	var textBuf bytes.Buffer
	slog.New(slog.NewTextHandler(&textBuf, nil)).Info("m", "key", k)
	text, _ := k.MarshalText()

	outputs := map[string]string{
		"String":      k.String(),
		"GoString":    k.GoString(),
		"%v":          fmt.Sprintf("%v", k),
		"%+v":         fmt.Sprintf("%+v", k),
		"%#v":         fmt.Sprintf("%#v", k),
		"%s":          fmt.Sprintf("%s", k),
		"%q":          fmt.Sprintf("%q", k),
		"%x":          fmt.Sprintf("%x", k),
		"%X":          fmt.Sprintf("%X", k),
		"%d":          fmt.Sprintf("%d", k),
		"holder %v":   fmt.Sprintf("%v", h),
		"holder %+v":  fmt.Sprintf("%+v", h),
		"holder %#v":  fmt.Sprintf("%#v", h),
		"holder ptr":  fmt.Sprintf("%+v", &h),
		"json":        string(js),
		"slog json":   logBuf.String(),
		"slog text":   textBuf.String(),
		"MarshalText": string(text),
		"errorf %w":   fmt.Errorf("with %v", k).Error(),
	}
	for name, out := range outputs {
		if strings.Contains(out, secretA) || strings.Contains(out, fmt.Sprintf("%x", secretA)) {
			t.Errorf("%s leaks the secret: %s", name, out)
		}
	}
	for _, name := range []string{"String", "%v", "%s", "%x", "json", "slog json", "slog text", "MarshalText"} {
		if !strings.Contains(outputs[name], fp) {
			t.Errorf("%s = %q, want it to show the fingerprint %s", name, outputs[name], fp)
		}
	}
	if got := k.Reveal(); got != secretA {
		t.Errorf("Reveal() = %q", got)
	}
}

func TestKeyFingerprintKnownValue(t *testing.T) {
	// sha256("abc") = ba7816bf...
	if got := NewKey("abc").Fingerprint(); got != "key:ba7816" {
		t.Errorf("Fingerprint(abc) = %q, want key:ba7816", got)
	}
	var zero Key
	if got := zero.Fingerprint(); got != "key:none" {
		t.Errorf("zero Fingerprint = %q", got)
	}
	if !zero.IsZero() || NewKey("x").IsZero() {
		t.Error("IsZero wrong")
	}
	if zero.Reveal() != "" {
		t.Error("zero Reveal not empty")
	}
}

func TestKeyEqual(t *testing.T) {
	var zero Key
	tests := []struct {
		a, b Key
		want bool
	}{
		{NewKey("a"), NewKey("a"), true},
		{NewKey("a"), NewKey("b"), false},
		{NewKey("a"), NewKey("ab"), false},
		{zero, zero, true},
		{zero, NewKey(""), false},
		{NewKey("a"), zero, false},
	}
	for i, tt := range tests {
		if got := tt.a.Equal(tt.b); got != tt.want {
			t.Errorf("case %d: Equal = %v, want %v", i, got, tt.want)
		}
	}
}

func TestParse(t *testing.T) {
	kr, err := Parse([]byte(`{"102": "key-b", "47": "key-a", "7": "key-c"}`))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"7", "47", "102"}, kr.StoreIDs()); diff != "" {
		t.Errorf("StoreIDs (-want +got):\n%s", diff)
	}
	if kr.Len() != 3 {
		t.Errorf("Len = %d", kr.Len())
	}
	k, ok := kr.Key("47")
	if !ok || k.Reveal() != "key-a" {
		t.Errorf("Key(47) = %v, %v", k, ok)
	}
	if _, ok := kr.Key("55"); ok {
		t.Error("Key(55) found")
	}
	ids := kr.StoreIDs()
	ids[0] = "999"
	if kr.StoreIDs()[0] != "7" {
		t.Error("StoreIDs exposes internal slice")
	}
	if s := fmt.Sprintf("%v %+v %s", kr, kr, kr); strings.Contains(s, "key-a") || !strings.Contains(s, "47:key:") {
		t.Errorf("keyring printing = %q", s)
	}
}

func TestParseErrors(t *testing.T) {
	long := strings.Repeat("k", MaxKeyLen+1)
	tests := []struct {
		name, in, want string
	}{
		{"empty input", ``, "keyring is empty"},
		{"blank input", "  \n", "keyring is empty"},
		{"not JSON", `store 47 = abc`, "not valid JSON"},
		{"array", `["abc"]`, "JSON array, not an object"},
		{"string", `"abc"`, "JSON string, not an object"},
		{"empty object", `{}`, "holds no stores"},
		{"id not digits", `{"store47": "sk-secret-1"}`, "entry 1: the store id is not 1 to 6 digits"},
		{"id too long", `{"47": "a", "1234567": "sk-secret-1"}`, "entry 2: the store id is not 1 to 6 digits"},
		{"empty id", `{"": "sk-secret-1"}`, "entry 1: the store id"},
		{"empty key", `{"47": ""}`, "store 47: the key is empty"},
		{"whitespace key", `{"47": " \t "}`, "store 47: the key is empty or only whitespace"},
		{"padded key", `{"47": " sk-secret-1"}`, "leading or trailing whitespace"},
		{"control char", `{"47": "sk-se\ncret-1"}`, "control character"},
		{"too long", `{"47": "` + long + `"}`, "longer than 512 bytes"},
		{"duplicate", `{"47": "sk-secret-1", "47": "sk-secret-2"}`, "store 47 appears twice"},
		{"shared key", `{"47": "sk-secret-1", "102": "sk-secret-1"}`, "stores 47 and 102 have the same key"},
		{"number value", `{"47": 12345}`, "store 47: the key is a JSON number, want a string"},
		{"null value", `{"47": null}`, "JSON null"},
		{"object value", `{"47": {"key": "sk-secret-1"}}`, "JSON object"},
		{"bool value", `{"47": true}`, "JSON boolean"},
		{"trailing data", `{"47": "sk-secret-1"} {}`, "data after the JSON object"},
		{"unclosed", `{"47": "sk-secret-1"`, "not closed"},
		{"invalid UTF-8 in a key", "{\"47\": \"sk-secret-\xff1\"}", "not valid UTF-8 (first bad byte at offset 18)"},
		{"invalid UTF-8 in an id", "{\"4\xc37\": \"sk-secret-1\"}", "not valid UTF-8 (first bad byte at offset 3)"},
		{"bad value JSON", `{"47": sk-secret-1}`, "store 47: the value is not valid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kr, err := Parse([]byte(tt.in))
			if err == nil {
				t.Fatalf("Parse(%q) = %v, want error", tt.in, kr)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "sk-secret") || strings.Contains(err.Error(), long) {
				t.Errorf("error echoes a key: %q", err)
			}
		})
	}
}

func TestResolve(t *testing.T) {
	one, err := Parse([]byte(`{"47": "a"}`))
	if err != nil {
		t.Fatal(err)
	}
	two, err := Parse([]byte(`{"102": "b", "47": "a"}`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		kr       *Keyring
		in       string
		want     string
		wantCode apperr.Code
		wantMsg  string
	}{
		{"one store default", one, "", "47", "", ""},
		{"one store explicit", one, "47", "47", "", ""},
		{"one store other id", one, "55", "", apperr.StoreNotAuthorized, "store 55 is not authorized for this deployment; authorized stores: 47"},
		{"two stores need id", two, "", "", apperr.StoreIDRequired, "store_id is required: this deployment is authorized for 2 stores (47, 102)"},
		{"two stores explicit", two, "102", "102", "", ""},
		{"two stores unknown", two, "55", "", apperr.StoreNotAuthorized, "store 55 is not authorized for this deployment; authorized stores: 47, 102"},
		{"malformed", two, "47; DROP", "", apperr.InvalidArgument, "store_id must be 1 to 6 digits, like \"47\""},
		{"too long", one, "1234567", "", apperr.InvalidArgument, "store_id must be 1 to 6 digits, like \"47\""},
		{"leading zero is another id", one, "047", "", apperr.StoreNotAuthorized, "store 047 is not authorized for this deployment; authorized stores: 47"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.kr.Resolve(tt.in)
			if tt.wantCode == "" {
				if err != nil || got != tt.want {
					t.Fatalf("Resolve(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
				}
				return
			}
			var ae *apperr.Error
			if !errors.As(err, &ae) {
				t.Fatalf("Resolve(%q) error = %v, want *apperr.Error", tt.in, err)
			}
			if got != "" || ae.Code != tt.wantCode || ae.Message != tt.wantMsg {
				t.Errorf("Resolve(%q) = %q, {%s %q}; want {%s %q}", tt.in, got, ae.Code, ae.Message, tt.wantCode, tt.wantMsg)
			}
			if ae.Remediation == "" || (tt.wantCode != apperr.InvalidArgument && !strings.Contains(ae.Remediation, "korral_list_authorized_stores")) {
				t.Errorf("remediation %q does not point to korral_list_authorized_stores", ae.Remediation)
			}
		})
	}
}

func TestResolveCapsLongLists(t *testing.T) {
	var b strings.Builder
	b.WriteString("{")
	for i := 1; i <= 30; i++ {
		if i > 1 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"%d": "key-%d"`, i, i)
	}
	b.WriteString("}")
	kr, err := Parse([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	_, err = kr.Resolve("")
	if !strings.Contains(err.Error(), "18, 19, 20 and 10 more") {
		t.Errorf("error = %q, want the list capped at 20 ids", err)
	}
}
