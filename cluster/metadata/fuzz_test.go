package metadata

import (
	"reflect"
	"testing"
)

// FuzzDecodeRecord feeds arbitrary bytes to DecodeRecord. It must never
// panic; whatever it accepts must encode and decode back to the same
// record, and applying it to an image must give an image or an error,
// never a panic, and never change that image.
func FuzzDecodeRecord(f *testing.F) {
	for _, rec := range sampleRecords() {
		b, err := EncodeRecord(rec)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{envelopeHeader, byte(typePartition), 0, 0x97, 0xc4, 0x10})
	base := withTopic(f, threeBrokers(f), "orders", 1, 3, 3)
	before := base.Records()

	f.Fuzz(func(t *testing.T, data []byte) {
		rec, err := DecodeRecord(data)
		if err != nil {
			return
		}
		b, err := EncodeRecord(rec)
		if err != nil {
			t.Fatalf("decoded %v but cannot encode it: %v", rec, err)
		}
		again, err := DecodeRecord(b)
		if err != nil {
			t.Fatalf("cannot decode the re-encoding of %v: %v", rec, err)
		}
		if !reflect.DeepEqual(again, rec) {
			t.Fatalf("re-encoding changed the record:\n%#v\n%#v", rec, again)
		}
		next, err := base.Apply(rec, base.Offset()+1)
		if err == nil && next == nil {
			t.Fatal("Apply returned neither an image nor an error")
		}
		if !reflect.DeepEqual(base.Records(), before) {
			t.Fatalf("Apply(%v) changed the image it was applied to", rec)
		}
	})
}

// FuzzDecodeRequest feeds arbitrary bytes to DecodeRequest and
// DecodeResult. They must never panic, and whatever they accept must
// encode and decode back to the same message.
func FuzzDecodeRequest(f *testing.F) {
	for _, r := range sampleRequests() {
		b, err := EncodeRequest(r)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, r := range sampleResults() {
		b, err := EncodeResult(r)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if req, err := DecodeRequest(data); err == nil {
			b, err := EncodeRequest(req)
			if err != nil {
				t.Fatalf("decoded %#v but cannot encode it: %v", req, err)
			}
			again, err := DecodeRequest(b)
			if err != nil || !reflect.DeepEqual(again, req) {
				t.Fatalf("re-encoding changed the request: %#v, %#v, %v", req, again, err)
			}
		}
		if res, err := DecodeResult(data); err == nil {
			b, err := EncodeResult(res)
			if err != nil {
				t.Fatalf("decoded %#v but cannot encode it: %v", res, err)
			}
			again, err := DecodeResult(b)
			if err != nil || !reflect.DeepEqual(again, res) {
				t.Fatalf("re-encoding changed the result: %#v, %#v, %v", res, again, err)
			}
		}
	})
}
