package metadata

import (
	"errors"
	"strings"
	"testing"
)

// TestOpBudget counts records and bytes against the bounds of one
// operation and refuses what would pass either.
func TestOpBudget(t *testing.T) {
	rec := TopicRecord{Name: strings.Repeat("t", 249), TopicID: UUID{1}}
	var b OpBudget
	for b.Add([]Record{rec}) {
	}
	if b.Records != MaxRecordsPerOp || b.Bytes > MaxOpBytes {
		t.Fatalf("budget full at %d records, %d bytes", b.Records, b.Bytes)
	}
	recs := make([]Record, MaxRecordsPerOp+1)
	for i := range recs {
		recs[i] = rec
	}
	if err := CheckOp(recs); !errors.Is(err, ErrOpTooLarge) {
		t.Fatalf("CheckOp of %d records: %v", len(recs), err)
	}
	if err := CheckOp(recs[:MaxRecordsPerOp]); err != nil {
		t.Fatalf("CheckOp of %d records: %v", MaxRecordsPerOp, err)
	}
	big := ConfigRecord{ResourceType: ResourceTopic, ResourceName: "t", Name: "x", Value: strings.Repeat("v", MaxOpBytes/2)}
	if err := CheckOp([]Record{big, big}); !errors.Is(err, ErrOpTooLarge) {
		t.Fatalf("CheckOp of %d bytes: %v", 2*len(big.Value), err)
	}
	b = OpBudget{}
	if !b.Add([]Record{big}) || b.Add([]Record{big}) || b.Records != 1 {
		t.Fatalf("byte bound: %+v", b)
	}
}
