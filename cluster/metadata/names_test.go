package metadata

import (
	"errors"
	"strings"
	"testing"
)

func TestValidateTopicName(t *testing.T) {
	valid := []string{"a", "orders", "A-b_c.d", "0", strings.Repeat("x", 249), "...", "__consumer_offsets"}
	for _, name := range valid {
		if err := ValidateTopicName(name); err != nil {
			t.Errorf("%q: %v", name, err)
		}
	}
	invalid := []string{"", ".", "..", strings.Repeat("x", 250), "a b", "a/b", "ü", "a\x00", "__cluster_metadata", "a:b"}
	for _, name := range invalid {
		if err := ValidateTopicName(name); !errors.Is(err, ErrInvalidTopic) {
			t.Errorf("%q: %v, want ErrInvalidTopic", name, err)
		}
	}
}

func TestUUID(t *testing.T) {
	u := uuidN(4)
	s := u.String()
	if len(s) != 22 {
		t.Fatalf("%q is not 22 characters", s)
	}
	back, err := ParseUUID(s)
	if err != nil || back != u {
		t.Fatalf("ParseUUID(%q) = %v, %v", s, back, err)
	}
	if MetadataTopicID.String() != "AAAAAAAAAAAAAAAAAAAAAQ" {
		t.Errorf("MetadataTopicID = %s", MetadataTopicID)
	}
	for _, bad := range []string{"", "AAAA", "AAAAAAAAAAAAAAAAAAAAA=", "AAAAAAAAAAAAAAAAAAAAA/"} {
		if _, err := ParseUUID(bad); err == nil {
			t.Errorf("ParseUUID(%q) accepted", bad)
		}
	}
	if err := ValidateClusterID(UUID{}.String()); err == nil {
		t.Error("zero cluster id accepted")
	}
	if err := ValidateClusterID("MkU3OEVBNTcwNTJENDM2Qk"); err != nil {
		t.Errorf("Kafka's example cluster id: %v", err)
	}
}
