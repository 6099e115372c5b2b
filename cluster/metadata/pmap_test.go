package metadata

import (
	"maps"
	"math/rand/v2"
	"testing"
)

func TestPmapMatchesMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	var m pmap[int, int]
	want := map[int]int{}
	var own pmapOwner
	var frozen []pmap[int, int]
	var frozenWant []map[int]int
	for i := 0; i < 5000; i++ {
		k := rng.IntN(300)
		if rng.IntN(3) == 0 {
			m.delete(&own, k)
			delete(want, k)
		} else {
			m.set(&own, k, i)
			want[k] = i
		}
		if rng.IntN(50) == 0 { // publish: later writes must copy again
			frozen = append(frozen, m)
			frozenWant = append(frozenWant, maps.Clone(want))
			own = pmapOwner{}
		}
	}
	frozen = append(frozen, m)
	frozenWant = append(frozenWant, want)
	for i, f := range frozen {
		if f.len() != len(frozenWant[i]) {
			t.Fatalf("version %d: len %d, want %d", i, f.len(), len(frozenWant[i]))
		}
		got := map[int]int{}
		for k, v := range f.all() {
			got[k] = v
		}
		if !maps.Equal(got, frozenWant[i]) {
			t.Fatalf("version %d differs from its reference", i)
		}
		for k, v := range frozenWant[i] {
			if g, ok := f.get(k); !ok || g != v {
				t.Fatalf("version %d: get(%d) = %d, %v", i, k, g, ok)
			}
		}
	}
}

func TestPmapEmpty(t *testing.T) {
	var m pmap[string, int]
	if _, ok := m.get("x"); ok || m.len() != 0 {
		t.Fatal("empty pmap not empty")
	}
	for range m.all() {
		t.Fatal("empty pmap yields")
	}
	var own pmapOwner
	m.delete(&own, "x")
	if m.shards != nil {
		t.Fatal("deleting an absent key copied the shards")
	}
}
