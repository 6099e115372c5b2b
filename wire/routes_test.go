package wire

import "testing"

// TestRoutes checks that the routes of handler.go and the API table of
// apis.go agree: every advertised API but ApiVersions (which wire serves
// itself) has a route, and every route serves an advertised API. A row
// without a route would be advertised and then close the connection of
// every client that used it (ErrNoRoute).
func TestRoutes(t *testing.T) {
	inTable := map[int16]bool{}
	for _, a := range apis {
		inTable[a.Key] = true
		if a.Key == apiVersionsKey {
			if _, ok := routes[a.Key]; ok {
				t.Errorf("ApiVersions (key %d) has a route; wire serves it itself", a.Key)
			}
			continue
		}
		if _, ok := routes[a.Key]; !ok {
			t.Errorf("%s (key %d) is advertised but has no route in handler.go", apiKeyName(a.Key), a.Key)
		}
	}
	for key := range routes {
		if !inTable[key] {
			t.Errorf("key %d has a route but no row in the API table (apis.go)", key)
		}
	}
}
