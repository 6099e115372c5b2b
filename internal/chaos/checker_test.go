package chaos

import (
	"slices"
	"strings"
	"testing"
)

// logOf builds a one-partition log from values at offsets from 0.
func logOf(p int32, values ...string) Log {
	l := Log{}
	for i, v := range values {
		l[p] = append(l[p], Record{Partition: p, Offset: int64(i), Value: v})
	}
	return l
}

func acksOf(p int32, values ...string) []Ack {
	var out []Ack
	for i, v := range values {
		out = append(out, Ack{Partition: p, Offset: int64(i), Value: v})
	}
	return out
}

func TestValueRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		seq  int64
	}{{"franz", 0}, {"rd-kafka", 12345}, {"a-b-c", 999999999}} {
		v := Value(tc.name, tc.seq)
		name, seq, ok := ParseValue(v)
		if !ok || name != tc.name || seq != tc.seq {
			t.Errorf("ParseValue(%q) = %q, %d, %v; want %q, %d", v, name, seq, ok, tc.name, tc.seq)
		}
	}
	for _, bad := range []string{"", "x", "-1", "x-", "x-y"} {
		if _, _, ok := ParseValue(bad); ok {
			t.Errorf("ParseValue(%q) ok, want not", bad)
		}
	}
}

func TestCheck(t *testing.T) {
	a, b, c, d := Value("p", 0), Value("p", 1), Value("p", 2), Value("p", 3)
	q0, q1 := Value("q", 0), Value("q", 1)
	tests := []struct {
		name  string
		acks  []Ack
		log   Log
		check func(t *testing.T, r Report)
	}{
		{
			name: "clean",
			acks: acksOf(0, a, b, c),
			log:  logOf(0, a, b, c),
			check: func(t *testing.T, r Report) {
				if !r.OK() || r.Acked != 3 || r.Read != 3 || r.Unacked != 0 {
					t.Errorf("report %v, want clean with 3 acknowledged and read", r)
				}
			},
		},
		{
			name: "an unacknowledged record read is allowed",
			acks: acksOf(0, a, b),
			log:  logOf(0, a, b, c),
			check: func(t *testing.T, r Report) {
				if !r.OK() || r.Unacked != 1 {
					t.Errorf("report %v, want clean with 1 not acknowledged", r)
				}
			},
		},
		{
			name: "lost",
			acks: acksOf(0, a, b, c, d),
			log:  logOf(0, a, d),
			check: func(t *testing.T, r Report) {
				if got, want := r.LostValues(), []string{b, c}; !slices.Equal(got, want) {
					t.Errorf("lost %v, want %v", got, want)
				}
				// d acknowledged at offset 3 but read at 1: moved too.
				if len(r.Moved) != 1 || r.Moved[0].Ack.Value != d || r.Moved[0].At.Offset != 1 {
					t.Errorf("moved %v, want %s at offset 1", r.Moved, d)
				}
			},
		},
		{
			name: "duplicated",
			acks: acksOf(0, a, b),
			log:  logOf(0, a, b, b),
			check: func(t *testing.T, r Report) {
				if len(r.Duplicated) != 1 || r.Duplicated[0].Value != b || len(r.Duplicated[0].At) != 2 {
					t.Errorf("duplicated %v, want %s twice", r.Duplicated, b)
				}
				if len(r.Reordered) != 0 || len(r.Lost) != 0 || len(r.Moved) != 0 {
					t.Errorf("report %v, want only the duplicate", r)
				}
			},
		},
		{
			name: "reordered within one producer, interleaving producers allowed",
			acks: []Ack{{0, 0, q0}, {0, 1, b}, {0, 2, a}, {0, 3, q1}},
			log:  logOf(0, q0, b, a, q1),
			check: func(t *testing.T, r Report) {
				if len(r.Reordered) != 1 || r.Reordered[0].Earlier.Value != b || r.Reordered[0].Later.Value != a {
					t.Errorf("reordered %v, want %s after %s", r.Reordered, a, b)
				}
			},
		},
		{
			name: "wrong partition",
			acks: acksOf(0, a),
			log:  logOf(1, a),
			check: func(t *testing.T, r Report) {
				if len(r.Moved) != 1 || r.Moved[0].At.Partition != 1 {
					t.Errorf("moved %v, want %s read from partition 1", r.Moved, a)
				}
			},
		},
		{
			name: "offsets going backwards and foreign values",
			acks: nil,
			log:  Log{0: {{0, 5, a}, {0, 4, b}, {0, 6, "junk"}}},
			check: func(t *testing.T, r Report) {
				if len(r.Backwards) != 1 || r.Backwards[0].Offset != 4 {
					t.Errorf("backwards %v, want offset 4", r.Backwards)
				}
				if len(r.Foreign) != 1 || r.Foreign[0].Value != "junk" {
					t.Errorf("foreign %v, want junk", r.Foreign)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := Check(tc.acks, tc.log)
			tc.check(t, r)
			if !r.OK() && !strings.Contains(r.String(), "acknowledged") {
				t.Errorf("String() = %q", r.String())
			}
		})
	}
}

func TestCheckReportLists(t *testing.T) {
	var acks []Ack
	for i := range 30 {
		acks = append(acks, Ack{Partition: 2, Offset: int64(i), Value: Value("p", int64(i))})
	}
	r := Check(acks, Log{})
	s := r.String()
	if !strings.Contains(s, "30 lost") || !strings.Contains(s, "lost: p-000000000 (acknowledged at p2@0)") || !strings.Contains(s, "... 10 more") {
		t.Errorf("String() =\n%s", s)
	}
}

func TestCommitViolations(t *testing.T) {
	tests := []struct {
		name                 string
		prev, acked, fetched map[int32]int64
		want                 []string
	}{
		{"first fetch", nil, map[int32]int64{0: 5}, map[int32]int64{0: 7}, nil},
		{"monotone", map[int32]int64{0: 5, 1: 3}, map[int32]int64{0: 6, 1: 3}, map[int32]int64{0: 6, 1: 4}, nil},
		{"moved back", map[int32]int64{0: 5}, nil, map[int32]int64{0: 4}, []string{"p0: committed offset 4, earlier 5: moved back"}},
		{"lost", nil, map[int32]int64{1: 9}, map[int32]int64{1: 8}, []string{"p1: committed offset 8, but a commit of 9 was acknowledged: lost"}},
		{"missing", map[int32]int64{2: 1}, map[int32]int64{2: 1}, map[int32]int64{}, []string{
			"p2: committed offset -1, but a commit of 1 was acknowledged: lost", "p2: committed offset -1, earlier 1: moved back"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := CommitViolations(tc.prev, tc.acked, tc.fetched); !slices.Equal(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
