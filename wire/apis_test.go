package wire

import "testing"

func TestProductionTableHolds(t *testing.T) {
	if err := apis.check(); err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(apis); i++ {
		if apis[i-1].Key >= apis[i].Key {
			t.Fatalf("table not in key order at row %d", i)
		}
	}
	a := APIs()
	a[0].Advertised.Max = 99
	if apis[0].Advertised.Max == 99 {
		t.Fatal("APIs returned the table itself, not a copy")
	}
	// ApiVersions must include v0 (librdkafka's fallback) and is served in
	// full: it answers any version.
	idx, err := apis.index()
	if err != nil {
		t.Fatal(err)
	}
	v := idx.lookup(18)
	if v == nil || v.Advertised.Min != 0 || v.Served != v.Advertised {
		t.Fatalf("ApiVersions row %+v", v)
	}
}

func TestTableCheckRejectsBadRows(t *testing.T) {
	bad := map[string]apiTable{
		"unknown key":      {{Key: 999, Advertised: VersionRange{0, 0}, Served: VersionRange{0, 0}}},
		"negative key":     {{Key: -1, Advertised: VersionRange{0, 0}, Served: VersionRange{0, 0}}},
		"twice":            {{Key: 3, Advertised: VersionRange{0, 1}, Served: VersionRange{0, 1}}, {Key: 3, Advertised: VersionRange{0, 1}, Served: VersionRange{0, 1}}},
		"past kmsg":        {{Key: 3, Advertised: VersionRange{0, 99}, Served: VersionRange{0, 1}}},
		"negative min":     {{Key: 3, Advertised: VersionRange{-1, 1}, Served: VersionRange{0, 1}}},
		"empty":            {{Key: 3, Advertised: VersionRange{2, 1}, Served: VersionRange{2, 1}}},
		"served past adv":  {{Key: 3, Advertised: VersionRange{0, 5}, Served: VersionRange{0, 6}}},
		"served below adv": {{Key: 0, Advertised: VersionRange{3, 11}, Served: VersionRange{0, 11}}},
		"served empty":     {{Key: 0, Advertised: VersionRange{0, 11}, Served: VersionRange{5, 4}}},
	}
	for name, table := range bad {
		if _, err := table.index(); err == nil {
			t.Errorf("%s: accepted", name)
		}
		if _, err := newServer(DefaultConfig(), metadataHandler(), table); err == nil {
			t.Errorf("%s: newServer accepted", name)
		}
	}
	if _, err := testTable().index(); err != nil {
		t.Fatal(err)
	}
}

func TestIndexLookup(t *testing.T) {
	idx, err := testTable().index()
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []int16{-32768, -1, 1, 2, 4, 17, 19, 1000, 32767} {
		if idx.lookup(key) != nil {
			t.Errorf("key %d found", key)
		}
	}
	for _, key := range []int16{0, 3, 18} {
		if a := idx.lookup(key); a == nil || a.Key != key {
			t.Errorf("key %d: %+v", key, a)
		}
	}
	if apiKeyName(3) != "Metadata" || apiKeyName(999) != "Unknown(999)" || apiKeyName(-1) != "Unknown(-1)" {
		t.Fatalf("names %q %q %q", apiKeyName(3), apiKeyName(999), apiKeyName(-1))
	}
}
