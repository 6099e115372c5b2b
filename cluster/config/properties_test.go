package config

import (
	"strings"
	"testing"
)

func TestReadProperties(t *testing.T) {
	in := "# a comment\nacks=all\n  linger.ms : 5\n! another\nbatch.size 16384\nclient.id=a\\\n  b\n\nunknown.name=x\n"
	props, err := ReadProperties(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []Property{{"acks", "all", 2}, {"linger.ms", "5", 3}, {"batch.size", "16384", 5}, {"client.id", "ab", 6}, {"unknown.name", "x", 9}}
	if len(props) != len(want) {
		t.Fatalf("got %+v, want %+v", props, want)
	}
	for i := range want {
		if props[i] != want[i] {
			t.Errorf("property %d: %+v, want %+v", i, props[i], want[i])
		}
	}
}
