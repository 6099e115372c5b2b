package transport

import (
	"errors"
	"reflect"
	"testing"

	"google.golang.org/protobuf/types/known/anypb"
)

func testCodec(tb testing.TB) *Transport {
	tb.Helper()
	c, err := newCodec(testTypes)
	if err != nil {
		tb.Fatal(err)
	}
	return &Transport{codec: c}
}

func TestEncodeDecode(t *testing.T) {
	tr := testCodec(t)
	for _, msg := range []any{
		&ping{Seq: -3, From: "n1"},
		&pong{},
		&rich{M: map[string]int32{"z": 26}, Nested: []inner{{ID: 9}}},
	} {
		a, err := tr.Encode(msg)
		if err != nil {
			t.Fatalf("encode %T: %v", msg, err)
		}
		back, err := tr.Decode(a)
		if err != nil {
			t.Fatalf("decode %s: %v", a.TypeUrl, err)
		}
		if !reflect.DeepEqual(back, msg) {
			t.Fatalf("%s: got %+v, want %+v", a.TypeUrl, back, msg)
		}
	}
	if a, _ := tr.Encode(&ping{}); a.TypeUrl != "weir/test.ping" {
		t.Fatalf("TypeUrl %q", a.TypeUrl)
	}
	for _, msg := range []any{&unregistered{}, ping{}, nil} {
		if _, err := tr.Encode(msg); !errors.Is(err, ErrUnknownType) {
			t.Fatalf("encode %T: %v", msg, err)
		}
	}
	for _, a := range []*anypb.Any{{TypeUrl: "weir/nosuch"}, {TypeUrl: "test.ping"}} {
		if _, err := tr.Decode(a); !errors.Is(err, ErrUnknownType) {
			t.Fatalf("decode %q: %v", a.TypeUrl, err)
		}
	}
	if _, err := tr.Decode(nil); err == nil {
		t.Fatal("decode nil: no error")
	}
}

// FuzzDecode feeds random bytes to every registered type (and an unknown
// one): Decode returns an error or a value of the named type, never panics.
func FuzzDecode(f *testing.F) {
	tr := testCodec(f)
	for i, msg := range []any{&ping{Seq: 1, From: "a"}, &pong{Seq: 2}, &rich{I64: 3, Names: []string{"b"}, ByKey: map[string][]byte{"c": {4}}}} {
		a, err := tr.Encode(msg)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(i), a.Value)
	}
	f.Add(uint8(9), []byte{0xdd, 0xff, 0xff, 0xff, 0xff}) // an array claiming 4 G elements
	urls := []string{"weir/test.ping", "weir/test.pong", "weir/test.rich", "weir/test.unencodable", "weir/nosuch"}
	f.Fuzz(func(t *testing.T, which uint8, value []byte) {
		url := urls[int(which)%len(urls)]
		msg, err := tr.Decode(&anypb.Any{TypeUrl: url, Value: value})
		if err != nil {
			return
		}
		if want := reflect.TypeOf(tr.codec.byURL[url].New()); reflect.TypeOf(msg) != want {
			t.Fatalf("%s decoded to %T", url, msg)
		}
	})
}
