package fetchsession

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

func TestNewContextCases(t *testing.T) {
	tests := []struct {
		name      string
		id, epoch int32
		wantKind  Kind
		wantCode  int16
		wantID    int32 // response session id
		wantAlive bool  // session 7 still alive afterwards
	}{
		{"sessionless", 0, -1, KindSessionless, 0, 0, true},
		{"sessionless odd epoch", 0, -5, KindSessionless, 0, 0, true},
		{"new session", 0, 0, KindFull, 0, 100, true},
		{"close and sessionless", 7, -1, KindSessionless, 0, 0, false},
		{"close and new", 7, 0, KindFull, 0, 100, false},
		{"close unknown, new", 9, 0, KindFull, 0, 100, true},
		{"incremental", 7, 1, KindIncremental, 0, 7, true},
		{"unknown id", 9, 1, KindError, ErrCodeFetchSessionIDNotFound, 0, true},
		{"id 0 incremental", 0, 3, KindError, ErrCodeFetchSessionIDNotFound, 0, true},
		{"stale epoch", 7, 2, KindError, ErrCodeInvalidFetchSessionEpoch, 0, true},
		{"negative epoch", 7, -2, KindError, ErrCodeInvalidFetchSessionEpoch, 0, true},
		{"negative epoch unknown", 9, -2, KindError, ErrCodeFetchSessionIDNotFound, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newTestCache(t, DefaultConfig(), 7, 100)
			if id := open(t, c, -1, 0, fp("a", 0, 0)); id != 7 {
				t.Fatalf("first session id = %d, want 7", id)
			}
			ctx := c.NewContext(&Request{SessionID: tt.id, SessionEpoch: tt.epoch, ReplicaID: -1,
				Partitions: []FetchPartition{fp("a", 0, 0)}, NowMs: 10})
			if ctx.Kind != tt.wantKind || ctx.ErrorCode != tt.wantCode {
				t.Fatalf("kind %v code %d, want %v %d", ctx.Kind, ctx.ErrorCode, tt.wantKind, tt.wantCode)
			}
			var results []PartitionResult
			if ctx.Kind != KindError {
				results = []PartitionResult{res("a", 0, 0, "")}
			}
			resp, err := c.Respond(ctx, 10, results)
			if err != nil {
				t.Fatal(err)
			}
			if resp.SessionID != tt.wantID || resp.ErrorCode != tt.wantCode {
				t.Fatalf("response id %d code %d, want %d %d", resp.SessionID, resp.ErrorCode, tt.wantID, tt.wantCode)
			}
			if ctx.Kind == KindError && len(resp.Partitions) != 0 {
				t.Fatalf("error response has partitions: %v", keys(resp.Partitions))
			}
			if _, ok := c.Session(7); ok != tt.wantAlive {
				t.Fatalf("session 7 alive = %v, want %v", ok, tt.wantAlive)
			}
		})
	}
}

func TestEpochAdvancesAndWraps(t *testing.T) {
	c := newTestCache(t, DefaultConfig(), 5)
	id := open(t, c, -1, 0, fp("a", 0, 0))
	s, _ := c.Session(id)
	if s.Epoch() != 1 {
		t.Fatalf("new session epoch %d, want 1", s.Epoch())
	}
	step := func(epoch int32) *Context {
		ctx := c.NewContext(&Request{SessionID: id, SessionEpoch: epoch, ReplicaID: -1})
		if _, err := c.Respond(ctx, 0, fullResults(ctx, 0)); err != nil {
			t.Fatal(err)
		}
		return ctx
	}
	if ctx := step(1); ctx.Kind != KindIncremental || s.Epoch() != 2 {
		t.Fatalf("after epoch 1: kind %v, next %d", ctx.Kind, s.Epoch())
	}
	if ctx := step(1); ctx.ErrorCode != ErrCodeInvalidFetchSessionEpoch {
		t.Fatalf("replayed epoch 1: code %d", ctx.ErrorCode)
	}
	s.epoch = math.MaxInt32
	if ctx := step(math.MaxInt32); ctx.Kind != KindIncremental || s.Epoch() != 1 {
		t.Fatalf("after MaxInt32: kind %v, next %d, want 1", ctx.Kind, s.Epoch())
	}
	if ctx := step(1); ctx.Kind != KindIncremental || s.Epoch() != 2 {
		t.Fatalf("after wrap: kind %v, next %d", ctx.Kind, s.Epoch())
	}
}

func TestIDsNonZeroAndNeverReused(t *testing.T) {
	// The source repeats 3 and offers 0: both are skipped.
	c := newTestCache(t, DefaultConfig(), 3, 0, 3, 3, 4)
	if id := open(t, c, -1, 0); id != 3 {
		t.Fatalf("first id %d, want 3", id)
	}
	if id := open(t, c, -1, 0); id != 4 {
		t.Fatalf("second id %d, want 4", id)
	}
	// The source is exhausted (only 0 now): no session, id 0.
	if id := open(t, c, -1, 0); id != 0 {
		t.Fatalf("exhausted source gave id %d, want 0", id)
	}
}

func TestRandomIDsDeterministic(t *testing.T) {
	a := RandomIDs(rand.New(rand.NewPCG(1, 2)))
	b := RandomIDs(rand.New(rand.NewPCG(1, 2)))
	for range 1000 {
		x, y := a(), b()
		if x != y || x <= 0 {
			t.Fatalf("ids %d %d", x, y)
		}
	}
	c, err := NewCache(DefaultConfig(), RandomIDs(rand.New(rand.NewPCG(3, 4))))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int32]bool{}
	for range 500 {
		id := open(t, c, -1, 0, fp("a", 0, 0))
		if id == 0 || seen[id] {
			t.Fatalf("id %d zero or reused", id)
		}
		seen[id] = true
	}
}

func TestConfigValidate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	if err := TestConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	for _, cfg := range []Config{{MaxSlots: -1}, {MinEvictionMs: -1}} {
		_, err := NewCache(cfg, nil)
		if !errors.Is(err, ErrInvalidConfig) {
			t.Fatalf("%+v: err %v, want ErrInvalidConfig", cfg, err)
		}
	}
}

func TestZeroSlotsDisablesSessions(t *testing.T) {
	c := newTestCache(t, Config{MaxSlots: 0, MinEvictionMs: 0}, 1)
	if id := open(t, c, -1, 0, fp("a", 0, 0)); id != 0 || c.Len() != 0 {
		t.Fatalf("id %d, len %d; want no session", id, c.Len())
	}
}

func TestEviction(t *testing.T) {
	cfg := Config{MaxSlots: 2, MinEvictionMs: 1000}
	two := []FetchPartition{fp("a", 0, 0), fp("a", 1, 0)}
	tests := []struct {
		name     string
		setup    func(t *testing.T, c *Cache) // fills both slots: ids 1 and 2
		replica  int32
		parts    []FetchPartition
		nowMs    int64
		wantID   int32 // new session id, 0 if none
		evicted  int32 // evicted id, 0 if none
		survivor int32
	}{
		{
			name: "full and young: no session",
			setup: func(t *testing.T, c *Cache) {
				open(t, c, -1, 0, two...)
				open(t, c, -1, 10, two...)
			},
			replica: -1, parts: two, nowMs: 500, wantID: 0,
		},
		{
			name: "stale LRU evicted",
			setup: func(t *testing.T, c *Cache) {
				open(t, c, -1, 0, two...)
				open(t, c, -1, 10, two...)
			},
			replica: -1, parts: two[:1], nowMs: 1001, wantID: 3, evicted: 1, survivor: 2,
		},
		{
			name: "young session protected by minimum age",
			setup: func(t *testing.T, c *Cache) {
				open(t, c, -1, 900, two[:1]...)
				open(t, c, -1, 900, two[:1]...)
			},
			replica: -1, parts: two, nowMs: 1000, wantID: 0,
		},
		{
			name: "old but used session evicted by bigger newcomer",
			setup: func(t *testing.T, c *Cache) {
				open(t, c, -1, 0, two[:1]...)
				open(t, c, -1, 0, two...)
				touch(t, c, 1, 1500)
				touch(t, c, 2, 1500)
			},
			replica: -1, parts: two, nowMs: 2000, wantID: 3, evicted: 1, survivor: 2,
		},
		{
			name: "equal size does not evict",
			setup: func(t *testing.T, c *Cache) {
				open(t, c, -1, 0, two...)
				open(t, c, -1, 0, two...)
				touch(t, c, 1, 1500)
				touch(t, c, 2, 1500)
			},
			replica: -1, parts: two, nowMs: 2000, wantID: 0,
		},
		{
			name: "follower evicts young consumer",
			setup: func(t *testing.T, c *Cache) {
				open(t, c, 2, 0, two[:1]...)
				open(t, c, -1, 0, two...)
			},
			replica: 3, parts: two[:1], nowMs: 10, wantID: 3, evicted: 2, survivor: 1,
		},
		{
			name: "consumer cannot evict follower",
			setup: func(t *testing.T, c *Cache) {
				open(t, c, 2, 0, two[:1]...)
				open(t, c, 2, 0, two[:1]...)
				touch(t, c, 1, 1500)
				touch(t, c, 2, 1500)
			},
			replica: -1, parts: append(two, fp("b", 0, 0)), nowMs: 2000, wantID: 0,
		},
		{
			name: "consumer evicted before follower",
			setup: func(t *testing.T, c *Cache) {
				open(t, c, 2, 0, two[:1]...)
				open(t, c, -1, 0, two...)
				touch(t, c, 1, 1500)
				touch(t, c, 2, 1500)
			},
			replica: 4, parts: two[:1], nowMs: 2000, wantID: 3, evicted: 2, survivor: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newTestCache(t, cfg, 1, 2, 3)
			tt.setup(t, c)
			if c.Len() != 2 {
				t.Fatalf("setup left %d sessions", c.Len())
			}
			got := open(t, c, tt.replica, tt.nowMs, tt.parts...)
			if got != tt.wantID {
				t.Fatalf("new session id %d, want %d", got, tt.wantID)
			}
			if tt.evicted != 0 {
				if _, ok := c.Session(tt.evicted); ok {
					t.Fatalf("session %d not evicted", tt.evicted)
				}
				if _, ok := c.Session(tt.survivor); !ok {
					t.Fatalf("session %d evicted", tt.survivor)
				}
			}
			if c.Len() > cfg.MaxSlots {
				t.Fatalf("cache holds %d > %d", c.Len(), cfg.MaxSlots)
			}
		})
	}
}

// touch runs one empty incremental fetch in session id at nowMs.
func touch(t *testing.T, c *Cache, id int32, nowMs int64) {
	t.Helper()
	s, ok := c.Session(id)
	if !ok {
		t.Fatalf("no session %d", id)
	}
	ctx := c.NewContext(&Request{SessionID: id, SessionEpoch: s.Epoch(), ReplicaID: -1, NowMs: nowMs})
	if ctx.Kind != KindIncremental {
		t.Fatalf("touch %d: kind %v code %d", id, ctx.Kind, ctx.ErrorCode)
	}
	if _, err := c.Respond(ctx, nowMs, fullResults(ctx, 0)); err != nil {
		t.Fatal(err)
	}
}

func TestRespondMissingResult(t *testing.T) {
	c := newTestCache(t, DefaultConfig(), 1)
	ctx := c.NewContext(&Request{SessionID: 0, SessionEpoch: -1, Partitions: []FetchPartition{fp("a", 0, 0)}})
	if _, err := c.Respond(ctx, 0, nil); !errors.Is(err, ErrMissingResult) {
		t.Fatalf("sessionless: err %v", err)
	}
	id := open(t, c, -1, 0, fp("a", 0, 0))
	ctx = c.NewContext(&Request{SessionID: id, SessionEpoch: 1})
	if _, err := c.Respond(ctx, 0, nil); !errors.Is(err, ErrMissingResult) {
		t.Fatalf("incremental: err %v", err)
	}
}
