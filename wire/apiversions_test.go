package wire

import (
	"context"
	"math/rand/v2"
	"regexp"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// tableKeys is what ApiVersions must list for a table: its advertised
// ranges in key order.
func tableKeys(t apiTable) []kmsg.ApiVersionsResponseApiKey {
	var keys []kmsg.ApiVersionsResponseApiKey
	for _, a := range t {
		keys = append(keys, kmsg.ApiVersionsResponseApiKey{ApiKey: a.Key, MinVersion: a.Advertised.Min, MaxVersion: a.Advertised.Max})
	}
	return keys
}

func sameKeys(a, b []kmsg.ApiVersionsResponseApiKey) bool {
	return slices.EqualFunc(a, b, func(x, y kmsg.ApiVersionsResponseApiKey) bool {
		return x.ApiKey == y.ApiKey && x.MinVersion == y.MinVersion && x.MaxVersion == y.MaxVersion
	})
}

func TestApiVersionsEveryServedVersionListsTheTable(t *testing.T) {
	s, _ := startServer(t, DefaultConfig(), metadataHandler(), apis)
	c := dial(t, s)
	for v := int16(0); v <= 4; v++ {
		resp := c.apiVersions(v, int32(100+v))
		if resp.ErrorCode != 0 {
			t.Fatalf("v%d: error %d", v, resp.ErrorCode)
		}
		if !sameKeys(resp.ApiKeys, tableKeys(apis)) {
			t.Fatalf("v%d: keys %+v, want the table %+v", v, resp.ApiKeys, tableKeys(apis))
		}
		if v >= 3 && (len(resp.FinalizedFeatures) != 0 || len(resp.SupportedFeatures) != 0 || resp.FinalizedFeaturesEpoch != -1) {
			t.Fatalf("v%d: features %+v %+v epoch %d, want none", v, resp.SupportedFeatures, resp.FinalizedFeatures, resp.FinalizedFeaturesEpoch)
		}
	}
	if got := s.Stats().Requests; got != 5 {
		t.Fatalf("Stats.Requests %d, want 5", got)
	}
}

func TestApiVersionsListsEveryRowOfALargerTable(t *testing.T) {
	s, _ := startServer(t, DefaultConfig(), metadataHandler(), testTable())
	resp := dial(t, s).apiVersions(3, 1)
	if !sameKeys(resp.ApiKeys, tableKeys(testTable())) {
		t.Fatalf("keys %+v, want %+v", resp.ApiKeys, tableKeys(testTable()))
	}
	if resp.ApiKeys[0].MinVersion != 0 {
		t.Fatalf("Produce advertised from %d, want 0 (its advertised range, not its served one)", resp.ApiKeys[0].MinVersion)
	}
}

// An unsupported ApiVersions version gets a v0 body with
// UNSUPPORTED_VERSION and ApiVersions' own range, a v0 response header,
// and the connection stays open (docs/clients.md rule 3).
func TestApiVersionsUnsupportedVersionGetsV0Error(t *testing.T) {
	s, logs := startServer(t, DefaultConfig(), metadataHandler(), apis)
	c := dial(t, s)
	check := func(name string, corr int32) {
		t.Helper()
		resp := kmsg.NewPtrApiVersionsResponse()
		resp.Version = 0
		c.expectCorr(resp, corr)
		want := []kmsg.ApiVersionsResponseApiKey{{ApiKey: 18, MinVersion: 0, MaxVersion: 4}}
		if resp.ErrorCode != 35 || !sameKeys(resp.ApiKeys, want) {
			t.Fatalf("%s: error %d keys %+v, want 35 and %+v", name, resp.ErrorCode, resp.ApiKeys, want)
		}
	}

	// v5: kmsg knows it (kgo sends it first), the table does not serve it.
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version, req.ClientSoftwareName, req.ClientSoftwareVersion = 5, "kgo", "1.22.3"
	c.send(req, 7)
	check("v5", 7)

	// v9: a future version kmsg does not know; header by hand, flexible,
	// with a body nobody can parse. It must not be decoded.
	c.write(rawFrame(append(rawHeader(18, 9, 8, true), 0xde, 0xad, 0xbe, 0xef)))
	check("v9", 8)

	// A negative version is not served either.
	c.write(rawFrame(rawHeader(18, -1, 9, false)))
	check("v-1", 9)

	// The connection is still usable: the client retries with v3.
	if resp := c.apiVersions(3, 10); resp.ErrorCode != 0 {
		t.Fatalf("retry with v3: error %d", resp.ErrorCode)
	}
	if got := s.Stats().UnsupportedApiVersions; got != 3 {
		t.Fatalf("Stats.UnsupportedApiVersions %d, want 3", got)
	}
	if got := logs.lines("WARN"); len(got) != 0 {
		t.Fatalf("unexpected warnings: %q", got)
	}
}

func TestApiVersionsInvalidClientSoftwareIsInvalidRequest(t *testing.T) {
	s, _ := startServer(t, DefaultConfig(), metadataHandler(), apis)
	c := dial(t, s)
	for i, sw := range [][2]string{{"", "1.0"}, {"kgo", ""}, {"bad name", "1.0"}, {"kgo", "1.0-"}, {"-kgo", "1"}, {"ünïcode", "1"}} {
		for _, v := range []int16{3, 4} {
			req := kmsg.NewPtrApiVersionsRequest()
			req.Version, req.ClientSoftwareName, req.ClientSoftwareVersion = v, sw[0], sw[1]
			corr := int32(10*i) + int32(v)
			c.send(req, corr)
			resp := req.ResponseKind().(*kmsg.ApiVersionsResponse)
			c.expectCorr(resp, corr)
			if resp.ErrorCode != 42 || len(resp.ApiKeys) != 0 {
				t.Fatalf("v%d %q: error %d keys %d, want INVALID_REQUEST (42) and no keys", v, sw, resp.ErrorCode, len(resp.ApiKeys))
			}
		}
	}
	// Before v3 there is no software name to check.
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 2
	c.send(req, 99)
	resp := req.ResponseKind().(*kmsg.ApiVersionsResponse)
	c.expectCorr(resp, 99)
	if resp.ErrorCode != 0 {
		t.Fatalf("v2: error %d", resp.ErrorCode)
	}
}

// validSoftwareField is a hand-written form of Kafka's regex; check it
// against the regex itself.
func TestValidSoftwareFieldMatchesKafkasPattern(t *testing.T) {
	kafka := regexp.MustCompile(`^[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?$`)
	cases := []string{"", "a", "-", ".", "a-", "-a", "a.b", "a..b", "apache-kafka-java", "3.9.0", "1.0.0-SNAPSHOT", "a b", "a_b", "a\x00", "é", "a\nb", "A9"}
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "aZ09-._ é\n"
	for range 20000 {
		b := make([]byte, rng.IntN(6))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		cases = append(cases, string(b))
	}
	for _, s := range cases {
		if got, want := validSoftwareField(s), kafka.MatchString(s); got != want {
			t.Fatalf("validSoftwareField(%q) = %v, Kafka's pattern says %v", s, got, want)
		}
	}
}

// A real client, franz-go's kgo, negotiates ApiVersions with the server
// (it sends v5 first, gets the v0 error body, retries with v4) and gets the
// table back.
func TestKgoClientGetsTheTable(t *testing.T) {
	s, _ := startServer(t, DefaultConfig(), metadataHandler(), apis)
	cl, err := kgo.NewClient(kgo.SeedBrokers(s.Addr().String()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), ioTimeout)
	defer cancel()
	req := kmsg.NewPtrApiVersionsRequest()
	req.ClientSoftwareName, req.ClientSoftwareVersion = "kgo", "1.22.3"
	kresp, err := cl.SeedBrokers()[0].Request(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	resp := kresp.(*kmsg.ApiVersionsResponse)
	if resp.ErrorCode != 0 || !sameKeys(resp.ApiKeys, tableKeys(apis)) {
		t.Fatalf("kgo got error %d keys %+v, want the table %+v", resp.ErrorCode, resp.ApiKeys, tableKeys(apis))
	}
	if resp.Version != 4 {
		t.Fatalf("kgo settled on ApiVersions v%d, want 4 (the table's maximum)", resp.Version)
	}
	if got := s.Stats().UnsupportedApiVersions; got < 1 {
		t.Fatalf("kgo never sent its v5 first (Stats.UnsupportedApiVersions %d)", got)
	}
}
