package storelinkclient_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/netip"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	sl "github.com/korral/storelink/storelinkclient"
	"github.com/korral/storelink/storelinkclient/rules"
)

// oddItem and oddShape hold what the generated types do not: nested
// arrays, a Go array, a map, bytes, an interface, a type that holds
// itself, types that decode themselves, unsigned and float numbers, two
// fields of one JSON name, names a JSON Pointer escapes, a non-ASCII
// name, and fields the walk never sees.
type oddItem struct {
	ID    string   `json:"id"`
	Count uint32   `json:"count,omitempty"`
	Tags  []string `json:"tags"`
}

type oddNode struct {
	Name string    `json:"name"`
	Kids []oddNode `json:"kids,omitempty"`
}

type oddShape struct {
	Grid     [][]oddItem        `json:"grid"`
	Pair     [2]oddItem         `json:"pair,omitempty"`
	ByName   map[string]oddItem `json:"by_name,omitempty"`
	Raw      json.RawMessage    `json:"raw,omitempty"`
	Blob     []byte             `json:"blob,omitempty"`
	Anything any                `json:"anything,omitempty"`
	Tree     *oddNode           `json:"tree,omitempty"`
	Addr     netip.Addr         `json:"addr,omitempty"`
	Ratio    float64            `json:"ratio"`
	Small    int8               `json:"small,omitempty"`
	Twice    string             `json:"twice,omitempty"`
	Slashed  string             `json:"a/b~c,omitempty"`
	Czech    string             `json:"čas,omitempty"`
	Skipped  string             `json:"-"`
	//lint:ignore U1000 a field the walk never sees
	unseen    string
	Untagged  string                   //
	Lists     map[string][]interface{} `json:"lists,omitempty"`
	Requested *oddItem                 `json:"requested"`
}

// scanTypes are the types every body is compared against.
func scanTypes() []any {
	return []any{&sl.Inventory{}, &sl.Store{}, &sl.StoreList{}, &sl.POSPage{}, &sl.SKU{}, &sl.Supplier{}, &sl.Order{},
		&oddShape{}, &oddNode{}, &[]sl.POSTransaction{}, new(string), sl.POSPage{}, twiceShape()}
}

// twiceShape is a struct of two fields of one JSON name, one of them
// required, and a field named "-", built at run time (go vet and
// staticcheck refuse such a type in source).
func twiceShape() any {
	t := reflect.StructOf([]reflect.StructField{
		{Name: "Twice", Type: reflect.TypeFor[string](), Tag: `json:"twice,omitempty"`},
		{Name: "TwiceToo", Type: reflect.TypeFor[*oddItem](), Tag: `json:"twice"`},
		{Name: "Grid", Type: reflect.TypeFor[[][]oddItem](), Tag: `json:"grid"`},
		{Name: "Dash", Type: reflect.TypeFor[int](), Tag: `json:"-,"`},
	})
	return reflect.New(t).Interface()
}

// sameFields fails when the scanner and the reference walk find other
// problems or other absent properties in body against v.
func sameFields(t *testing.T, what string, body []byte, v any) {
	t.Helper()
	got, want := sl.BodyFields(body, v), sl.ReferenceBodyFields(body, v)
	if !slices.Equal(want.Problems, got.Problems) || (want.Problems == nil) != (got.Problems == nil) {
		t.Errorf("%s against %T: problems (-reference +scanner):\n%s\nbody: %.300s", what, v, cmp.Diff(want.Problems, got.Problems), body)
	}
	if w, g := want.Absent.Pointers(), got.Absent.Pointers(); !slices.Equal(w, g) || want.Absent.Len() != got.Absent.Len() {
		t.Errorf("%s against %T: absent (-reference +scanner):\n%s\nbody: %.300s", what, v, cmp.Diff(w, g), body)
	}
}

// fixtures are the answers the rules' examples are built from, every
// example's bad answer, and bodies of the cases above the scanner.
func fixtures(t testing.TB) map[string][]byte {
	out := map[string][]byte{}
	for _, op := range []string{rules.OpListStores, rules.OpGetStore, rules.OpGetInventory, rules.OpListPOS,
		rules.OpCreateOrder, rules.OpGetOrder, rules.OpGetSKU, rules.OpGetSupplier} {
		b, err := json.Marshal(rules.Good(op, rules.ExampleQuery(op)))
		if err != nil {
			t.Fatal(err)
		}
		out["good "+op] = b
	}
	for i, ex := range rules.Examples() {
		out[fmt.Sprintf("example %d %s", i, ex.Rule)] = ex.Bad()
	}
	for name, body := range edgeBodies() {
		out[name] = []byte(body)
	}
	return out
}

// edgeBodies are bodies written by hand: escapes, unicode, repeated keys,
// wrong types, not JSON, and JSON that encoding/json reads only in part.
func edgeBodies() map[string]string {
	item := `{"id":"a","tags":["x"]}`
	return map[string]string{
		"escaped keys":        `{"store\u005fid":"47","sk\u0075":"1","on_hand_units":5,"counted_at":"2026-11-27T06:00:00+01:00","\u00e9t\u00e9":1,"a\"b":2,"\ud83d\ude00":3,"\ud800":4}`,
		"raw unicode":         `{"store_id":"47","skú":"1","čas":"x","on_hand_units":5,"counted_at":"2026-11-27T06:00:00+01:00","` + "\xff\xfe" + `":1}`,
		"repeated keys":       `{"transactions":[{"till":1}],"store_id":"47","transactions":[{"transaction_id":"T","units":1}],"x":1,"x":"s","x":null,"grid":[[{}]],"grid":[]}`,
		"repeated nested":     `{"opening_hours":{"monday":{}},"opening_hours":{"tuesday":{"closed":true}},"store_id":"1"}`,
		"odd everything":      `{"grid":[[` + item + `,{"id":"b"}],[],[{"tags":null,"extra":[1,2]}]],"pair":[` + item + `,{"x":1}],"by_name":{"k":{"nope":1}},"raw":{"q":1},"blob":"AA==","anything":{"z":1},"tree":{"name":"r","kids":[{"kids":[{"name":"c","kidz":[]}]}]},"addr":"127.0.0.1","ratio":1e-3,"small":-1,"twice":"s","a/b~c":"v","čas":"t","-":"dash","Untagged":"u","lists":{"a":[[1]]},"requested":null}`,
		"odd wrong types":     `{"grid":{"a":1},"pair":"x","by_name":[1],"tree":[],"addr":5,"ratio":"1","small":1.5,"twice":{"id":"i"},"requested":{"count":-1,"cnt":7,"tag":[]}}`,
		"odd renames":         `{"Grid":[],"RATIO":2,"small_":12345678901234567890,"cnt":18446744073709551615,"count_":-1,"req":{},"addr_":"s","a_b_c":"v","raw_":[1],"tree_x":{}}`,
		"candidates":          `{"grid":[],"ratio":1,"requested":{"id":"i","tags":[],"cnt":1e2,"c":0,"d":-0,"e":1.0,"f":18446744073709551616}}`,
		"wrong types":         `{"store_id":47,"sku":null,"on_hand_units":"5","counted_at":1700000000,"transactions":"none","stores":{"0":{}}}`,
		"nulls":               `{"store_id":null,"sku":null,"transactions":[null,{"transaction_id":null},null],"opening_hours":null,"stores":[null]}`,
		"nested arrays":       `{"transactions":[[{"units":1}],[[{}]]],"stores":[[],[{"name":"n"}]],"grid":[[[]],[[{"id":"x"}]]]}`,
		"whitespace":          " \t\r\n{ \"store_id\" : \"47\" ,\n\"sku\"\t:\"1\" , \"x\" : [ 1 , { } , [ ] ] } \n",
		"trailing garbage":    `{"store_id":"47"} trailing {`,
		"second value":        `{"store_id":"47"}{"sku":"1"}`,
		"number then letter":  `123abc`,
		"top zero then one":   `01`,
		"literal then letter": `truex`,
		"top string":          `"just a string"`,
		"top null":            `null`,
		"empty":               ``,
		"only space":          "  \n",
		"not JSON":            `<html>`,
		"cut short":           `{"store_id":"47","sku":`,
		"trailing comma":      `{"store_id":"47",}`,
		"bad escape":          `{"store_id":"4\x7"}`,
		"short unicode":       `{"store_id":"\u00g1"}`,
		"control character":   "{\"store_id\":\"4\x017\"}",
		"unit separator":      "{\"store_id\":\"4\x1f7\"}",
		"delete is allowed":   "{\"store_id\":\"4\x7f7 \"}",
		"hex digits":          `{"store_id":"\uaBcF\u09fA\u0000","\u0041":"\/\b\f\n\r\t\\\""}`,
		"hex out of range":    `{"store_id":"\u00G0"}`,
		"escape at the end":   `{"store_id":"\u00`,
		"lone backslash":      `{"store_id":"\`,
		"bad escape letter":   `{"store_id":"\a"}`,
		"numbers":             `{"on_hand_units":-0.0e+0,"x":[0,-1,1E5,2e-3,10.25,-0,1e01]}`,
		"minus alone":         `{"on_hand_units":-x}`,
		"bad number":          `{"on_hand_units":-}`,
		"leading zero":        `{"on_hand_units":012}`,
		"bare fraction":       `{"on_hand_units":1.}`,
		"bare exponent":       `{"on_hand_units":1e}`,
		"bad literal":         `{"chilled":tru}`,
		"single quotes":       `{'store_id':'47'}`,
		"unquoted key":        `{store_id:"47"}`,
		"missing colon":       `{"store_id" "47"}`,
		"missing comma":       `{"store_id":"47" "sku":"1"}`,
		"unclosed array":      `{"transactions":[{},{}`,
		"byte order mark":     "\xef\xbb\xbf{}",
	}
}

// TestScannerMatchesTheReferenceWalk: on every fixture, against every
// type, the scanner finds what the decode-and-walk it replaced found.
func TestScannerMatchesTheReferenceWalk(t *testing.T) {
	for name, body := range fixtures(t) {
		for _, v := range scanTypes() {
			sameFields(t, name, body, v)
		}
	}
	sameFields(t, "a nil type", []byte(`{}`), nil)
}

// TestScannerMatchesOnMutatedBodies: each property of each fixture
// renamed, left out, sent twice, given another value or another type, and
// the body reshaped as text, compared with the reference walk.
func TestScannerMatchesOnMutatedBodies(t *testing.T) {
	n := 0
	for name, body := range fixtures(t) {
		if !strings.HasPrefix(name, "good ") && !strings.HasPrefix(name, "odd ") && !strings.HasPrefix(name, "repeated") {
			continue
		}
		for i, m := range mutations(body) {
			for _, v := range scanTypes() {
				sameFields(t, fmt.Sprintf("%s, mutation %d", name, i), m, v)
			}
			n++
		}
	}
	if n < 1000 {
		t.Errorf("only %d mutated bodies", n)
	}
	t.Logf("%d mutated bodies, each against %d types", n, len(scanTypes()))
}

// mutations are variants of body: per property of every object in it,
// and over the whole text.
func mutations(body []byte) [][]byte {
	out := textMutations(body)
	n := len(objectsIn(decodeDoc(body)))
	values := []any{nil, "s", "", json.Number("1"), json.Number("-2"), json.Number("1.5"), json.Number("1e3"),
		json.Number("18446744073709551615"), true, []any{}, map[string]any{}, []any{map[string]any{}}, []any{[]any{}}}
	for i := range n {
		for _, key := range keysOf(objectsIn(decodeDoc(body))[i]) {
			edit := func(change func(obj map[string]any, value any)) []byte {
				doc := decodeDoc(body)
				obj := objectsIn(doc)[i]
				change(obj, obj[key])
				b, _ := json.Marshal(doc)
				return b
			}
			for _, renamed := range []string{key + "x", strings.ToUpper(key), camel(key), "x" + key} {
				out = append(out, edit(func(obj map[string]any, value any) { delete(obj, key); obj[renamed] = value }))
			}
			out = append(out, edit(func(obj map[string]any, _ any) { delete(obj, key) }))
			for _, v := range values {
				out = append(out, edit(func(obj map[string]any, _ any) { obj[key] = v }))
			}
			// The key sent twice, the other value first and then last.
			marked := edit(func(obj map[string]any, _ any) { obj[key] = "\x00twice" })
			quotedKey, _ := json.Marshal(key)
			original, _ := json.Marshal(objectsIn(decodeDoc(body))[i][key])
			at := string(quotedKey) + `:"\u0000twice"`
			for _, other := range []string{`{"zz":1}`, `[{"zz":[]}]`, `null`} {
				out = append(out, []byte(strings.Replace(string(marked), at, string(quotedKey)+":"+other+","+string(quotedKey)+":"+string(original), 1)),
					[]byte(strings.Replace(string(marked), at, string(quotedKey)+":"+string(original)+","+string(quotedKey)+":"+other, 1)))
			}
		}
	}
	return out
}

// textMutations reshape body as text: indented, keys and values escaped,
// cut short.
func textMutations(body []byte) [][]byte {
	var indented bytes.Buffer
	_ = json.Indent(&indented, body, "", "\t")
	return [][]byte{indented.Bytes(),
		bytes.ReplaceAll(body, []byte("_"), []byte(`\u005f`)),
		bytes.ReplaceAll(body, []byte(`":`), []byte(`\u0000":`)),
		bytes.ReplaceAll(body, []byte(`"s`), []byte(`"\u00e9`)),
		bytes.ReplaceAll(body, []byte(`":`), []byte(`" : `)),
		body[:len(body)/2], body[:max(len(body)-1, 0)], append(slices.Clone(body), " x"...),
	}
}

// decodeDoc is body as a generic document, numbers kept as their text.
func decodeDoc(body []byte) any {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var doc any
	if dec.Decode(&doc) != nil {
		return nil
	}
	return doc
}

// objectsIn lists the objects of doc depth first, keys in sorted order.
func objectsIn(doc any) []map[string]any {
	var out []map[string]any
	switch d := doc.(type) {
	case map[string]any:
		out = append(out, d)
		for _, k := range keysOf(d) {
			out = append(out, objectsIn(d[k])...)
		}
	case []any:
		for _, item := range d {
			out = append(out, objectsIn(item)...)
		}
	}
	return out
}

func keysOf(obj map[string]any) []string {
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// camel is a snake_case name in camelCase: on_hand_units, onHandUnits.
func camel(name string) string {
	parts := strings.Split(name, "_")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}

// TestScannerMatchesAtTheDepthLimit: encoding/json reads 10,000 levels of
// nesting and refuses 10,001; the scanner agrees, for arrays and objects,
// with items the walk looks into and items it skips.
func TestScannerMatchesAtTheDepthLimit(t *testing.T) {
	for _, depth := range []int{10000, 10001} {
		arrays := strings.Repeat("[", depth) + strings.Repeat("]", depth)
		// Objects the walk does not look into: a problem at every level
		// would make the walks (and their answers) grow with the square
		// of the depth.
		objects := strings.Repeat(`{"x":`, depth) + `1` + strings.Repeat("}", depth)
		tree := strings.Repeat(`{"name":"n","kids":[`, depth/2) + `{}` + strings.Repeat("]}", depth/2)
		for what, body := range map[string]string{"arrays": arrays, "objects": objects, "tree": tree,
			"in a page": `{"transactions":` + arrays + `}`} {
			for _, v := range []any{&oddNode{}, &sl.POSPage{}, &[]sl.POSTransaction{}} {
				sameFields(t, fmt.Sprintf("%s %d deep", what, depth), []byte(body), v)
			}
		}
	}
}

// TestScannerMatchesOnHugeArrays: a page of 100,000 lines, some lines
// with problems of their own, reports each problem once: 11 lines without
// a timestamp (line 0 with a till), 3 with unit for units, and no
// next_cursor.
func TestScannerMatchesOnHugeArrays(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"store_id":"47","sku":"1","since":"2026-11-27T06:00:00+01:00","total_count":100000,"transactions":[`)
	for i := range 100000 {
		if i > 0 {
			b.WriteByte(',')
		}
		switch {
		case i%9973 == 0:
			fmt.Fprintf(&b, `{"transaction_id":"T%d","units":1,"till":%d}`, i, i)
		case i%31337 == 0:
			fmt.Fprintf(&b, `{"transaction_id":"T%d","timestamp":"2026-11-27T07:00:00+01:00","unit":1}`, i)
		default:
			fmt.Fprintf(&b, `{"transaction_id":"T%d","units":1,"timestamp":"2026-11-27T07:00:00+01:00"}`, i)
		}
	}
	b.WriteString(`]}`)
	body := []byte(b.String())
	sameFields(t, "100,000 lines", body, &sl.POSPage{})
	if got := sl.BodyFields(body, &sl.POSPage{}); len(got.Problems) != 4 || got.Absent.Len() != 15 {
		t.Errorf("problems %v, %d absent; want 4 problems, 15 absent", got.Problems, got.Absent.Len())
	}
}

// FuzzBodyFields compares the scanner with the reference walk on any
// body, against every type; the seeds are the fixtures.
func FuzzBodyFields(f *testing.F) {
	for _, body := range fixtures(f) {
		f.Add(body)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		deep := bytes.Count(body, []byte("{")) > 64
		for _, v := range scanTypes() {
			// Against a type that holds itself, a body nested n deep has
			// up to n problems with paths of up to n steps, built level by
			// level: both walks take time cubic in n. No generated type
			// holds itself.
			switch v.(type) {
			case *oddNode, *oddShape:
				if deep {
					continue
				}
			}
			sameFields(t, "fuzzed", body, v)
		}
	})
}
